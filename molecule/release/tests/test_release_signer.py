"""The release signer pinned on the login node (docs/release.md, "Signature"): the key file on the
controller travels with the archive, so a second key put where the first was, with an archive it
signed, passes the controller's check (the scenario's inventory pins no fingerprint) and is
refused by the login node, which recorded the first key at its first install. A rotation named in
check mode shows the new signer in the diff and writes nothing. Runs after
test_release_install_only.py (file order), with release-a active, and leaves the host as it was."""

import hashlib
import shutil
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import serialization
from scenario import PROJECT, RELEASES, activation, configuration_digest, current, rebuilt_release_b, run_playbook

testinfra_hosts = ["ansible://login"]

SIGNER_RECORD = "/opt/pharos-hpc/signer"
RELEASE_D = "/opt/pharos-hpc/releases/release-d"
INCOMING_D = "/var/lib/pharos-hpc/incoming/release-d.tar.gz"


def fingerprint(public_pem):
    """sha256:<hex> of the raw Ed25519 public key, as the collection names a signer."""
    key = serialization.load_pem_public_key(public_pem)
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def sign(archive, private_key):
    signed = subprocess.run([sys.executable, str(PROJECT / "scripts" / "pharos-release-sign"), "--key",
                             str(private_key), str(archive)], capture_output=True, text=True, check=False)
    assert signed.returncode == 0, signed.stderr


@pytest.fixture
def second_key_in_place(host, tmp_path):
    """A second signing key whose public half is put where the inventory's key file is, and
    release-d signed by it; the first key file is put back afterwards. Yields (archive, first
    fingerprint, second fingerprint)."""
    made = subprocess.run([sys.executable, str(PROJECT / "scripts" / "pharos-release-sign"), "--new-key",
                           str(tmp_path / "second")], capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    archive = rebuilt_release_b(tmp_path / "release-d.tar.gz", release_id="release-d")
    sign(archive, tmp_path / "second.pem")
    pinned = RELEASES / "signer.pub.pem"
    shutil.copyfile(pinned, tmp_path / "first.pub.pem")
    first, second = fingerprint(pinned.read_bytes()), fingerprint((tmp_path / "second.pub.pem").read_bytes())
    assert first != second
    shutil.copyfile(tmp_path / "second.pub.pem", pinned)
    try:
        yield archive, first, second
    finally:
        shutil.copyfile(tmp_path / "first.pub.pem", pinned)
        host.check_output("rm -f %s %s.sig" % (INCOMING_D, INCOMING_D))


def test_an_archive_signed_by_a_second_key_put_where_the_first_was_is_refused_on_the_login_node(
        host, second_key_in_place):
    archive, first, second = second_key_in_place
    record = host.file(SIGNER_RECORD)
    assert record.content_string == first + "\n"
    assert (record.user, record.mode) == ("root", 0o444)
    before = configuration_digest(host), current(host)

    rc, output = run_playbook("release.yml", succeed=False, extra_vars={"pharos_release_archive": str(archive)})
    assert rc != 0
    message = " ".join(output.split())
    assert "This host trusts the release signer %s, recorded in %s" % (first, SIGNER_RECORD) in message, output[-3000:]
    assert "is signed by another key, %s" % second in message
    assert "nothing was changed" in message and "-e pharos_release_rotate_signer=true" in message
    assert not host.file(RELEASE_D).exists
    # Refused by the preflight, before the archive is copied to the host.
    assert not host.file(INCOMING_D).exists
    assert (configuration_digest(host), current(host)) == before
    assert host.file(SIGNER_RECORD).content_string == first + "\n"


def test_a_rotation_named_in_check_mode_shows_the_new_signer_and_writes_nothing(host, second_key_in_place):
    archive, first, second = second_key_in_place
    before = configuration_digest(host), current(host)
    predicted = activation(run_playbook("release.yml", "--check", "--diff", as_json=True, extra_vars={
        "pharos_release_archive": str(archive), "pharos_release_rotate_signer": True}))
    assert (predicted["diff"]["before"]["signer"], predicted["diff"]["after"]["signer"]) == (first, second)
    assert "record_signer" in [step["step"] for step in predicted["steps"]]
    assert predicted["diff"]["after"]["current"] == "release-d"
    assert host.file(SIGNER_RECORD).content_string == first + "\n"
    assert not host.file(RELEASE_D).exists
    assert (configuration_digest(host), current(host)) == before
