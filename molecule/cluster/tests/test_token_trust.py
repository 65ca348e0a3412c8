"""Member tokens, attacked. Slurm trusts only the controller's HS256 key and acts as any name a
token carries, so the Site's issuer (pharos-member-token.socket) is the guard: it signs a Slurm
token only for a directory member, from a member token that the Pharos issuer signed for this
Site's Slurm. prepare.yml's signer stands in for the Pharos issuer.

Every refused case also goes straight to slurmrestd, which must refuse it too: the Pharos
issuer's key, and any identity provider's, mean nothing to Slurm itself."""

import json
import os
import shlex
import tempfile
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

testinfra_hosts = ["ansible://pharos-cluster-login"]

ACCOUNT = "pharos_a_test"
ISSUER = "https://issuer.pharos.test"
AUDIENCE = "slurm:pharos"
SUBMIT_URL = "http://127.0.0.1:6820/slurm/v0.0.42/job/submit"
MEMBERS = {"pharosalice": 5000001, "pharosbob": 5000002}
FORBIDDEN_NAMES = ["slurm", "root", "0", "pharos-agent", "pharos-runtime"]
NAME_CLAIMS = ["sun", "username", "preferred_username"]


@pytest.fixture(scope="module")
def issuer_key():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "signer.pem"), "rb") as pem:
        return serialization.load_pem_private_key(pem.read(), password=None)


def member_token(key, lifetime=300, **claims):
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "iat": now - 30, "exp": now + lifetime}
    body.update(claims)
    return jwt.encode({name: value for name, value in body.items() if value is not None}, key, algorithm="RS256")


def put_root_only(host, name, text):
    """A file only root reads, written without the text in any command line."""
    path = f"/root/{name}"
    with tempfile.NamedTemporaryFile("w", suffix=".secret") as local:
        local.write(text)
        local.flush()
        written = host.ansible("copy", f"src={local.name} dest={path} mode=0600", check=False)
    assert not written.get("failed"), "could not write " + path
    return path


def exchange(host, token, asker="pharos-runtime"):
    """Ask the Site's issuer, as asker, for the Slurm token of the member token's member."""
    path = put_root_only(host, "member-token", token)
    return host.run(f"runuser -u {asker} -- pharos-member-token < {path}; status=$?; rm -f {path}; exit $status")


def submit(host, token, member):
    """Submit through slurmrestd with the token; (HTTP status, answer). The token goes by file."""
    headers = put_root_only(host, "rest-headers", f"X-SLURM-USER-NAME: {member}\nX-SLURM-USER-TOKEN: {token}\n")
    body = {"job": {"script": "#!/bin/bash\nid -u\n", "name": "member-token", "partition": "compute",
                    "account": ACCOUNT, "current_working_directory": "/tmp", "environment": ["PATH=/bin:/usr/bin"]}}
    result = host.run(f"curl -s -w '\\n%{{http_code}}' -H @{headers} -H 'Content-Type: application/json' "
                      f"-d {shlex.quote(json.dumps(body))} {SUBMIT_URL}; rm -f {headers}")
    assert result.rc == 0, result.stderr
    text, _, status = result.stdout.rpartition("\n")
    return int(status), json.loads(text)


def all_jobs(host):
    return set(host.run("squeue -h -t all -o %i").stdout.split())


def new_jobs(host, before):
    """Jobs slurmctld knows now and did not before. Finished jobs leave its memory after
    MinJobAge, so the set may also shrink; only an addition is a job the token made."""
    return all_jobs(host) - before


def assert_refused_everywhere(host, token, member):
    """The Site's issuer gives no Slurm token for it, and slurmrestd takes no job with it."""
    before = all_jobs(host)
    exchanged = exchange(host, token)
    assert exchanged.rc != 0
    assert exchanged.stdout.strip() == ""
    assert "refused" in exchanged.stderr
    status, answer = submit(host, token, member)
    assert status != 200 and answer["errors"], answer
    assert not new_jobs(host, before)
    return exchanged.stderr


def wait_for_end(host, job):
    for _ in range(60):
        shown = host.run(f"scontrol -o show job {job}").stdout
        if "JobState=COMPLETED" in shown or "JobState=FAILED" in shown:
            return shown
        time.sleep(1)
    return shown


def test_a_member_token_exchanged_at_the_site_submits_as_that_member(host, issuer_key):
    issued = member_token(issuer_key, sun="pharosalice")
    exchanged = exchange(host, issued)
    assert exchanged.rc == 0, exchanged.stderr
    slurm_token = exchanged.stdout.strip()
    # The Slurm token names the member alone, and lives no longer than the member token.
    claims = jwt.decode(slurm_token, options={"verify_signature": False})
    assert claims["sun"] == "pharosalice"
    assert claims["exp"] <= jwt.decode(issued, options={"verify_signature": False})["exp"]
    status, answer = submit(host, slurm_token, "pharosalice")
    assert status == 200 and not answer["errors"], answer["errors"]
    shown = wait_for_end(host, answer["job_id"])
    assert f"UserId=pharosalice({MEMBERS['pharosalice']})" in shown
    assert "JobState=COMPLETED" in shown


@pytest.mark.parametrize("claim", NAME_CLAIMS)
@pytest.mark.parametrize("name", FORBIDDEN_NAMES)
def test_a_token_naming_a_system_or_service_account_is_refused(host, issuer_key, name, claim):
    refusal = assert_refused_everywhere(host, member_token(issuer_key, **{claim: name}), name)
    assert name in refusal or "names no member in 'sun'" in refusal


@pytest.mark.parametrize("claim", ["username", "preferred_username"])
def test_a_token_whose_name_claims_disagree_is_refused(host, issuer_key, claim):
    refusal = assert_refused_everywhere(host, member_token(issuer_key, sun="pharosalice", **{claim: "root"}),
                                        "pharosalice")
    assert f"the token's '{claim}' names someone other than its 'sun'" in refusal


@pytest.mark.parametrize("case", ["identity provider's key", "another Site's audience", "another issuer",
                                  "expired", "lives longer than allowed"])
def test_a_member_token_not_issued_for_this_sites_slurm_is_refused(host, issuer_key, case):
    provider = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = {
        # What a relying party of the identity provider could replay.
        "identity provider's key": member_token(provider, sun="pharosalice", preferred_username="pharosalice"),
        "another Site's audience": member_token(issuer_key, sun="pharosalice", aud="slurm:another-site"),
        "another issuer": member_token(issuer_key, sun="pharosalice", iss="https://idp.example.org"),
        "expired": member_token(issuer_key, lifetime=-120, sun="pharosalice"),
        "lives longer than allowed": member_token(issuer_key, lifetime=86400, sun="pharosalice"),
    }[case]
    assert_refused_everywhere(host, token, "pharosalice")


def test_member_as_token_of_another_member_is_refused_by_slurm(host, issuer_key):
    exchanged = exchange(host, member_token(issuer_key, sun="pharosalice"))
    assert exchanged.rc == 0, exchanged.stderr
    before = all_jobs(host)
    status, answer = submit(host, exchanged.stdout.strip(), "pharosbob")
    assert status != 200 and answer["errors"], answer
    assert not new_jobs(host, before)


def test_a_member_cannot_reach_the_sites_issuer(host, issuer_key):
    asked = exchange(host, member_token(issuer_key, sun="pharosalice"), asker="pharosalice")
    assert asked.rc != 0
    assert asked.stdout.strip() == ""
    assert "Permission denied" in asked.stderr


@pytest.mark.parametrize("who", ["nobody", "pharosalice", "pharos-runtime", "pharosalice's job"])
def test_no_member_job_or_service_mints_a_slurm_token(host, who):
    if who == "pharosalice's job":
        command = f"runuser -u pharosalice -- timeout 60 srun -A {ACCOUNT} -p compute -t 1 scontrol token"
    else:
        command = f"runuser -u {who} -- scontrol token"
    minted = host.run(command)
    assert minted.rc != 0
    assert "SLURM_JWT=" not in minted.stdout
    assert "denied" in minted.stderr.lower(), minted.stderr


def test_slurm_trusts_the_hs256_key_alone_and_limits_token_lifetimes(host):
    parameters = host.run("scontrol show config | grep '^AuthAltParameters'").stdout
    assert "disable_token_creation" in parameters
    assert "max_token_lifespan=900" in parameters
    assert "jwks" not in parameters
    assert "userclaimfield" not in parameters
    assert not host.file("/etc/slurm/jwks.json").exists
