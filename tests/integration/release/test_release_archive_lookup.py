"""The pharos.hpc.release_archive lookup on the real built release, as the release role's
preflight calls it on the controller: what it says of a sound archive; that an archive not
signed by the pinned signer is refused before anything in it is read; and that a tampered one
the signer signed all the same is refused naming the altered file."""

import io
import shutil
import sys
import tarfile
from pathlib import Path

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils import site_env_rules
from ansible_collections.pharos.hpc.plugins.module_utils.release import archive as release_archive, contents as release, signature as release_signature

sys.path.append(str(Path(__file__).resolve().parents[2] / "unit"))

# pylint: disable=wrong-import-position
from lookup_playbook import lookup_results  # noqa: E402

PROJECT = Path(__file__).resolve().parents[3]
SITE_ENV = PROJECT / "docs" / "examples" / "site.env.example"


def tampered_copy(archive, destination):
    """The archive with one unit file altered and its SHA256SUMS left as they were."""
    with tarfile.open(archive) as original, tarfile.open(destination, "w:gz") as copy:
        for member in original.getmembers():
            data = original.extractfile(member) if member.isfile() else None
            if member.name.endswith("units/pharos-ssh-access-agent.service"):
                content = data.read().replace(b"NoNewPrivileges=yes", b"NoNewPrivileges=no")
                member.size, data = len(content), io.BytesIO(content)
            copy.addfile(member, data)
    return destination


def sign(path, private, release_id):
    (path.parent / (path.name + ".sig")).write_text(release_signature.sign(str(path), private, release_id),
                                                    encoding="ascii")
    return path


@pytest.fixture(scope="module")
def results(archive, tmp_path_factory):
    directory = tmp_path_factory.mktemp("lookup")
    private, public = release_signature.new_key_pair()
    other_private = release_signature.new_key_pair()[0]
    signer_key = directory / "release-signer.pem"
    signer_key.write_bytes(public)
    release_id = archive.name[:-len(".tar.gz")]
    sound = sign(Path(shutil.copyfile(archive, directory / archive.name)), private, release_id)
    unsigned = Path(shutil.copyfile(archive, directory / "unsigned.tar.gz"))
    foreign = sign(Path(shutil.copyfile(archive, directory / "foreign.tar.gz")), other_private, release_id)
    # Validly signed, but as another release: the signature's id is not the manifest's.
    another_release = sign(Path(shutil.copyfile(archive, directory / "2026.01.0.tar.gz")), private, "2026.01.0")
    # Repacked after signing: it keeps the sound archive's signature.
    repacked = tampered_copy(archive, directory / "repacked.tar.gz")
    shutil.copyfile(str(sound) + ".sig", str(repacked) + ".sig")
    calls = {"sound": sound, "unsigned": unsigned, "signed by another key": foreign, "repacked": repacked,
             "signed as another release": another_release,
             "tampered, signed all the same": sign(tampered_copy(archive, directory / "tampered.tar.gz"), private,
                                                   release_id)}
    return lookup_results(directory, {
        name: "lookup('pharos.hpc.release_archive', '%s', signer_key='%s', site_env='%s')" % (path, signer_key, SITE_ENV)
        for name, path in calls.items()}, timeout=300)


def test_a_sound_archive_gives_its_release_components_and_the_install_fingerprint(results, archive, tmp_path):
    found = results["sound"]["msg"]
    manifest = release.verify(release_archive.unpack(str(archive), str(tmp_path)))
    values = site_env_rules.check_file(str(SITE_ENV), list(manifest["components"]), manifest["dependency_mode"])
    assert found["release_id"] == manifest["release_id"]
    assert found["components"] == ["site-agent", "ssh-access"]
    assert found["fingerprint"] == release.fingerprint(manifest, values)
    assert found["signer"].startswith("sha256:")
    assert found["archive_sha256"] == release_signature.archive_digest(str(archive))
    assert found["issued"].endswith("Z")


def test_an_archive_signed_as_another_release_is_refused_naming_both_ids(results, archive):
    failed = results["signed as another release"]
    assert failed.get("failed") is True
    assert ("holds release %s, but its signature names release 2026.01.0" % archive.name[:-len(".tar.gz")]
            in failed["msg"])


@pytest.mark.parametrize(("case", "reason"), [
    ("unsigned", "unsigned.tar.gz.sig is missing"),
    ("signed by another key", "foreign.tar.gz is not signed by the pinned release signer"),
    ("repacked", "repacked.tar.gz is not signed by the pinned release signer"),
])
def test_an_archive_the_pinned_signer_did_not_sign_is_refused(results, case, reason):
    failed = results[case]
    assert failed.get("failed") is True
    assert reason in failed["msg"]
    assert "SHA256SUMS" not in failed["msg"]


def test_a_tampered_archive_is_refused_naming_the_altered_file(results):
    failed = results["tampered, signed all the same"]
    assert failed.get("failed") is True
    assert "units/pharos-ssh-access-agent.service does not match its SHA-256 in SHA256SUMS" in failed["msg"]
