"""The Site API's stand-in for SSH keys, and the SSH access agent's stand-in reading it.

The routes answer as DRF does (401 without or with an unknown credential, 403 to a token on a
route it may not use, 400 with field errors); the agent's plan writes granted keys, removes only
those it wrote, and leaves others' alone. Its LDAP writes are proved on real slapd, SSSD and sshd
by the journey scenario."""

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from waldur_simulator import SiteApiStandIn

PROJECT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(PROJECT / "tests" / "fixtures" / "ssh_access_agent"))

# pylint: disable=wrong-import-position
from pharos_ssh_access_standin import plan  # noqa: E402

ALICE_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAlicealicealicealicealicealicealicealiceal alice"
BOB_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBobbobbobbobbobbobbobbobbobbobbobbobbobbob bob"
HAND_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHandhandhandhandhandhandhandhandhandhandha hand"


@pytest.fixture
def site_api(pki):
    stand_in = SiteApiStandIn(pki)
    yield stand_in
    stand_in.close()


def call(site_api, pki, method, path, token=None, body=None):
    headers = {"Authorization": "Bearer " + token} if token else {}
    return httpx.request(method, "https://127.0.0.1:%d%s" % (site_api.port, path), headers=headers, json=body,
                         verify=str(pki.ca_file), timeout=5)


def test_the_keys_route_refuses_a_request_without_a_credential_or_with_an_unknown_one(site_api, pki):
    assert call(site_api, pki, "GET", "/v1/site/ssh-access/keys").status_code == 401
    assert call(site_api, pki, "GET", "/v1/site/ssh-access/keys", token="not-a-token").json() == {
        "detail": "Invalid token."}


def test_each_token_has_its_own_route(site_api, pki):
    assert call(site_api, pki, "GET", "/v1/site/ssh-access/keys", token=site_api.operator_token).status_code == 403
    assert call(site_api, pki, "PUT", "/stand-in/members/alice/keys", token=site_api.access_token,
                body={"keys": [ALICE_KEY]}).status_code == 403
    assert call(site_api, pki, "GET", "/v1/site/commands/next", token=site_api.access_token).status_code == 404


def test_the_bearer_the_agent_is_rotated_to_reads_the_keys_and_nothing_else(site_api, pki):
    assert call(site_api, pki, "GET", "/v1/site/ssh-access/keys", token=site_api.next_access_token).status_code == 200
    assert call(site_api, pki, "PUT", "/stand-in/members/alice/keys", token=site_api.next_access_token,
                body={"keys": [ALICE_KEY]}).status_code == 403


def test_submitted_keys_are_granted_and_an_empty_list_revokes_them(site_api, pki):
    for member, key in (("alice", ALICE_KEY), ("bob", BOB_KEY)):
        assert call(site_api, pki, "PUT", "/stand-in/members/%s/keys" % member, token=site_api.operator_token,
                    body={"keys": [key]}).status_code == 200
    assert call(site_api, pki, "PUT", "/stand-in/members/bob/keys", token=site_api.operator_token,
                body={"keys": []}).status_code == 200
    granted = call(site_api, pki, "GET", "/v1/site/ssh-access/keys", token=site_api.access_token)
    assert granted.json() == {"members": [{"username": "alice", "keys": [ALICE_KEY]}]}


def test_a_value_that_is_not_an_openssh_public_key_is_refused_with_its_index(site_api, pki):
    answer = call(site_api, pki, "PUT", "/stand-in/members/alice/keys", token=site_api.operator_token,
                  body={"keys": [ALICE_KEY, "-----BEGIN OPENSSH PRIVATE KEY-----"]})
    assert (answer.status_code, answer.json()) == (400, {"keys": {"1": ["Not an OpenSSH public key."]}})


def test_the_agent_reads_its_grants_with_its_bearer_and_names_the_directory_when_it_cannot_write(
        site_api, pki, tmp_path):
    call(site_api, pki, "PUT", "/stand-in/members/alice/keys", token=site_api.operator_token, body={"keys": [ALICE_KEY]})
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "ssh-access-site-token").write_text(site_api.access_token + "\n")
    completed = subprocess.run(
        [sys.executable, "-m", "pharos_ssh_access_standin", "--once"], capture_output=True, text=True, timeout=60,
        check=False, env=dict(PATH=os.environ["PATH"], PYTHONPATH=str(PROJECT / "tests/fixtures/ssh_access_agent"),
                              CREDENTIALS_DIRECTORY=str(credentials), STATE_DIRECTORY=str(tmp_path),
                              CENTRAL_SITE_API_URL="https://127.0.0.1:%d" % site_api.port,
                              SITE_API_CA_FILE=str(pki.ca_file), LDAP_URI="ldapi://%2Fnonexistent%2Fldapi",
                              LDAP_PEOPLE_DN="ou=people,ou=pharos,dc=example"))
    assert completed.returncode == 1
    event = json.loads(completed.stdout)
    assert (event["event"], event["stage"]) == ("error", "directory")
    assert site_api.access_token not in completed.stdout + completed.stderr
    assert not (tmp_path / "managed-keys.json").exists()


def test_the_plan_adds_granted_keys_and_the_key_class_where_it_is_missing():
    changes, managed, waiting, unmanaged = plan({"alice": (set(), False)}, {"alice": {ALICE_KEY}}, {})
    assert changes == {"alice": ({ALICE_KEY}, set(), True)}
    assert (managed, waiting, unmanaged) == ({"alice": {ALICE_KEY}}, [], {})


def test_the_plan_removes_a_revoked_key_it_wrote_and_leaves_a_key_someone_else_wrote():
    entries = {"bob": ({BOB_KEY, HAND_KEY}, True)}
    changes, managed, waiting, unmanaged = plan(entries, {}, {"bob": {BOB_KEY}})
    assert changes == {"bob": (set(), {BOB_KEY}, False)}
    assert managed == {} and waiting == [] and unmanaged == {"bob": {HAND_KEY}}


def test_the_plan_keeps_keys_for_a_member_without_an_entry_waiting_and_changes_nothing_when_in_step():
    entries = {"alice": ({ALICE_KEY}, True)}
    changes, managed, waiting, unmanaged = plan(entries, {"alice": {ALICE_KEY}, "carol": {BOB_KEY}},
                                                {"alice": {ALICE_KEY}})
    assert changes == {} and managed == {"alice": {ALICE_KEY}} and waiting == ["carol"] and unmanaged == {}
