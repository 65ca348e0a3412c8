"""The release signer pinned on the host and on the controller (docs/release.md, "Signature").

The key that checks an archive travels with it from the controller's files/, so whoever can
write there could sign an archive of their own: the host records the signer's fingerprint at
its first install and refuses another key unless the run names a rotation, and the controller
refuses a key file whose fingerprint is not the one the inventory pins. A release that kept no
signed statement (installed by an earlier version of the collection) still goes through the
downgrade check."""

import calendar
import os
import stat
import time
from pathlib import Path

import pytest
from lookup_playbook import lookup_results
from release_host_support import (
    SIGNER_PUBLIC, Clock, RecordingSystemd, install_release, no_token, pack_release, params, tree, write_site_env)

from ansible_collections.pharos.hpc.plugins.module_utils.release import run as release_run_module
from ansible_collections.pharos.hpc.plugins.module_utils.release import signature as release_signature
from ansible_collections.pharos.hpc.plugins.module_utils.release.layout import Layout
from ansible_collections.pharos.hpc.plugins.module_utils.release.run import RunError, run

SIGNER = release_signature.signer_fingerprint(release_signature.load_signer(SIGNER_PUBLIC, "the tests' signer"))
# The key that whoever can write the controller's files/ would put in place of the signer's.
OTHER_PRIVATE, OTHER_PUBLIC = release_signature.new_key_pair()
OTHER = release_signature.signer_fingerprint(release_signature.load_signer(OTHER_PUBLIC, "another key"))


def release_run(root, check=False, **overrides):
    clock = Clock()
    layout = Layout(str(root))
    return run(params(root, **overrides), RecordingSystemd(layout), None, check, no_token, sleep=clock.sleep,
               clock=clock)


def signed_by_other_key(tmp_path, release_id, issued=None):
    """An archive as the tests' signer packs one, signed again by the other key."""
    archive = pack_release(tmp_path, release_id, issued=issued)
    Path(str(archive) + release_signature.SIGNATURE_SUFFIX).write_text(
        release_signature.sign(str(archive), OTHER_PRIVATE, release_id, issued), encoding="ascii")
    return archive


@pytest.fixture
def staged(monkeypatch):
    """Staging leaves the release as the stage step does, without pip (installing packages for real
    is the integration tests' job): the steps around it run as they are."""
    def stage(layout, _archive, fingerprint, _command, _python, _index_url=None, statement=None):
        release_id = statement.split("\n")[1].split(" ", 1)[1]
        install_release(layout.root, release_id, fingerprint=fingerprint, issued=release_signature.issued_of(statement))
    monkeypatch.setattr(release_run_module, "stage", stage)


def installed_from_archive(root, tmp_path, release_id="r1"):
    """A host where the first install of this collection installed release_id from its archive,
    signed by the tests' signer."""
    write_site_env(root, ACTIVATION_COMPONENTS="ssh-access")
    return release_run(root, state="present", archive=str(pack_release(tmp_path / "channel", release_id)))


def test_the_first_install_records_the_signers_fingerprint_read_only(root, tmp_path, staged):
    result = installed_from_archive(root, tmp_path)
    layout = Layout(str(root))
    assert [step["step"] for step in result["steps"]] == ["stage", "record_signer"]
    assert Path(layout.signer).read_text() == SIGNER + "\n"
    assert stat.S_IMODE(os.stat(layout.signer).st_mode) == 0o444
    assert result["diff"]["before"]["signer"] is None and result["diff"]["after"]["signer"] == SIGNER


@pytest.mark.parametrize("check", [False, True], ids=["run", "check mode"])
def test_an_archive_signed_by_a_second_key_is_refused_naming_both_fingerprints_and_nothing_changes(
        root, tmp_path, staged, check):
    installed_from_archive(root, tmp_path)
    archive = signed_by_other_key(tmp_path, "r2")
    before = tree(str(root))
    with pytest.raises(RunError) as raised:
        release_run(root, check=check, archive=str(archive), signer_key=OTHER_PUBLIC.decode("ascii"))
    message = str(raised.value)
    assert "This host trusts the release signer %s, recorded in %s" % (SIGNER, Layout(str(root)).signer) in message
    assert "is signed by another key, %s" % OTHER in message
    assert "nothing was changed" in message
    assert "-e pharos_release_rotate_signer=true" in message
    assert tree(str(root)) == before


def test_a_named_rotation_accepts_the_new_key_records_it_and_refuses_the_old_one_after(root, tmp_path, staged):
    installed_from_archive(root, tmp_path)
    layout = Layout(str(root))
    archive = signed_by_other_key(tmp_path, "r2")
    other_key = OTHER_PUBLIC.decode("ascii")
    rotated = release_run(root, archive=str(archive), signer_key=other_key, rotate_signer=True)
    assert {"step": "record_signer", "summary": "record the release signer %s (was %s)" % (OTHER, SIGNER),
            "signer": OTHER, "was": SIGNER} in rotated["steps"]
    assert Path(layout.signer).read_text() == OTHER + "\n" and os.readlink(layout.current) == "releases/r2"
    again = release_run(root, archive=str(archive), signer_key=other_key)
    assert "record_signer" not in [step["step"] for step in again["steps"]]
    with pytest.raises(RunError, match="This host trusts the release signer %s" % OTHER):
        release_run(root, archive=str(pack_release(tmp_path / "old", "r3")))


def test_check_mode_predicts_the_rotation_in_the_diff_and_writes_nothing(root, tmp_path, staged):
    installed_from_archive(root, tmp_path)
    archive = signed_by_other_key(tmp_path, "r2")
    before = tree(str(root))
    predicted = release_run(root, check=True, archive=str(archive), signer_key=OTHER_PUBLIC.decode("ascii"),
                            rotate_signer=True)
    assert [step["step"] for step in predicted["steps"]][:2] == ["stage", "record_signer"]
    assert (predicted["diff"]["before"]["signer"], predicted["diff"]["after"]["signer"]) == (SIGNER, OTHER)
    assert tree(str(root)) == before


def test_a_recorded_signer_that_is_a_link_is_refused_before_anything_changes(root, tmp_path):
    write_site_env(root, ACTIVATION_COMPONENTS="ssh-access")
    layout = Layout(str(root))
    os.makedirs(layout.base)
    os.symlink("/etc/hostname", layout.signer)
    with pytest.raises(RunError, match="signer is not a file, so pharos_release did not write it"):
        release_run(root, archive=str(pack_release(tmp_path, "r1")))
    assert not os.path.exists(layout.release("r1"))


# A release installed by an earlier version of the collection kept no signed statement.
def legacy_active(root, installed):
    """A host whose active release r1 was installed by an earlier version of the collection, at installed."""
    write_site_env(root, ACTIVATION_COMPONENTS="ssh-access")
    layout = install_release(root, "r1", issued=None)
    release_run(root, release_id="r1")
    moment = calendar.timegm(time.strptime(installed, "%Y-%m-%dT%H:%M:%SZ"))
    os.utime(layout.fingerprint_file("r1"), (moment, moment))
    return layout


def test_a_release_signed_before_the_legacy_active_release_was_installed_is_refused_as_a_possible_downgrade(
        root, tmp_path):
    layout = legacy_active(root, "2026-11-15T12:00:00Z")
    older = pack_release(tmp_path, "r0", issued="2026-11-10T12:00:00Z")
    before = tree(str(root))
    with pytest.raises(RunError) as raised:
        release_run(root, archive=str(older))
    message = str(raised.value)
    assert ("Release r0 was signed at 2026-11-10T12:00:00Z, and the active release r1 was installed by an earlier "
            "version of the collection, which kept no signing time, at 2026-11-15T12:00:00Z" in message)
    assert "refused as a possible downgrade, and nothing was changed" in message
    assert "allow_downgrade: true" in message
    assert tree(str(root)) == before and os.readlink(layout.current) == "releases/r1"
    allowed = release_run(root, check=True, archive=str(older), allow_downgrade=True)
    assert allowed["diff"]["after"]["current"] == "r0"


def test_the_first_upgrade_from_a_legacy_release_to_one_signed_after_its_install_needs_no_flag(root, tmp_path):
    legacy_active(root, "2026-11-15T12:00:00Z")
    newer = pack_release(tmp_path, "r2", issued="2026-11-20T12:00:00Z")
    predicted = release_run(root, check=True, archive=str(newer))
    assert predicted["diff"]["after"]["current"] == "r2"


def test_a_legacy_release_is_not_activated_over_a_signed_one_without_the_flag_but_rolled_back_to(root):
    write_site_env(root, ACTIVATION_COMPONENTS="ssh-access")
    layout = install_release(root, "r2", issued="2026-11-30T12:00:00Z")
    install_release(root, "r1", issued=None)
    release_run(root, release_id="r2")
    with pytest.raises(RunError) as raised:
        release_run(root, release_id="r1")
    message = str(raised.value)
    assert "Release r1 was installed by an earlier version of the collection, which kept no signing time" in message
    assert "refused as a possible downgrade, and nothing was changed" in message
    assert "rollback.yml" in message and "allow_downgrade: true" in message
    assert os.readlink(layout.current) == "releases/r2"
    release_run(root, state="rolled_back", release_id="r1")
    assert os.readlink(layout.current) == "releases/r1"


@pytest.fixture(scope="module")
def lookups(tmp_path_factory):
    """The controller's check of one archive, signed by the other key, whose key file sits where
    the signer's was, with the inventory pinning the signer's fingerprint, the other key's, or a
    value that is no fingerprint."""
    directory = tmp_path_factory.mktemp("pinned")
    archive = signed_by_other_key(directory, "r1")
    key_file = directory / "release-signer.pem"
    key_file.write_bytes(OTHER_PUBLIC)
    call = "lookup('pharos.hpc.release_archive', '%s', signer_key='%s', signer_fingerprint=%%s)" % (archive, key_file)
    return lookup_results(directory, {"pinned signer": call % repr(SIGNER), "pinned other": call % repr(OTHER),
                                      "not a fingerprint": call % repr("SHA256:" + SIGNER[7:].upper()),
                                      "unset": call % "''"})


def test_the_lookup_refuses_a_signer_key_whose_fingerprint_is_not_the_pinned_one_naming_both(lookups):
    refused = lookups["pinned signer"]
    assert refused["failed"] is True
    message = " ".join(refused["msg"].split())
    assert "has the fingerprint %s, but pharos_release_signer_fingerprint pins %s" % (OTHER, SIGNER) in message
    assert "nothing in" in message and "was read" in message


def test_the_lookup_takes_a_key_whose_fingerprint_is_the_pinned_one_or_none_pinned(lookups):
    for name in ("pinned other", "unset"):
        assert not lookups[name].get("failed"), lookups[name]
        assert lookups[name]["msg"]["signer"] == OTHER


def test_the_lookup_refuses_a_pinned_value_that_is_no_fingerprint_naming_the_variable(lookups):
    refused = lookups["not a fingerprint"]
    assert refused["failed"] is True
    assert "pharos_release_signer_fingerprint is 'SHA256:" in refused["msg"]
    assert "which is not a release signer fingerprint" in refused["msg"]
