"""A release archive's signature (module_utils/release/signature.py): what verifies and what it
states (the release id, the archive's digest, when it was signed), and that every other archive,
signature or key is refused with the reason and the fix."""

import base64

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from ansible_collections.pharos.hpc.plugins.module_utils.release import signature as release_signature
from ansible_collections.pharos.hpc.plugins.module_utils.release.signature import SignatureError

SIGNER_PRIVATE, SIGNER_PUBLIC = release_signature.new_key_pair()
OTHER_PRIVATE, OTHER_PUBLIC = release_signature.new_key_pair()


@pytest.fixture
def archive(tmp_path):
    path = tmp_path / "2026.11.0.tar.gz"
    path.write_bytes(b"release archive bytes" * 1000)
    return path


def signed(path, private=SIGNER_PRIVATE, release_id="2026.11.0", issued=None):
    (path.parent / (path.name + ".sig")).write_text(release_signature.sign(str(path), private, release_id, issued),
                                                    encoding="ascii")
    return path


def signature_lines(path):
    return (path.parent / (path.name + ".sig")).read_text(encoding="ascii").splitlines()


def write_signature(path, lines):
    (path.parent / (path.name + ".sig")).write_text("".join(line + "\n" for line in lines), encoding="ascii")


def refusal(path, signer=SIGNER_PUBLIC):
    with pytest.raises(SignatureError) as refused:
        release_signature.verify(str(path), signer, "release-signer.pem")
    return str(refused.value)


def test_an_archive_signed_by_the_pinned_signer_verifies_and_says_what_was_signed(archive):
    found = release_signature.verify(str(signed(archive, issued="2026-11-30T12:00:00Z")), SIGNER_PUBLIC,
                                     "release-signer.pem")
    assert found.signer.startswith("sha256:") and len(found.signer) == 71
    assert (found.release_id, found.issued) == ("2026.11.0", "2026-11-30T12:00:00Z")
    assert found.archive == release_signature.archive_digest(str(archive))
    assert found.statement.startswith("pharos-hpc-release-signature/2\nrelease 2026.11.0\n")


@pytest.mark.parametrize("line, value", [(1, "release 2026.10.0"), (2, "archive sha256:" + "0" * 64),
                                         (3, "issued 2027-01-01T00:00:00Z")],
                         ids=["another release id", "another digest", "a later signing time"])
def test_a_statement_changed_after_signing_is_refused(archive, line, value):
    lines = signature_lines(signed(archive))
    lines[line] = value
    write_signature(archive, lines)
    assert "is not signed by the pinned release signer" in refusal(archive)


def test_a_signature_of_the_earlier_format_which_names_no_release_is_refused_with_the_fix(archive):
    key = serialization.load_pem_private_key(SIGNER_PRIVATE, password=None)
    earlier = b"pharos-hpc-release-signature/1\nsha256 %s\n" % release_signature.sha256_file(str(archive)).encode()
    (archive.parent / (archive.name + ".sig")).write_text(base64.b64encode(key.sign(earlier)).decode() + "\n")
    message = refusal(archive)
    assert "names no release and is not accepted" in message
    assert "sign the archive again with scripts/pharos-release-sign" in message


def test_an_archive_changed_after_signing_is_refused(archive):
    signed(archive)
    archive.write_bytes(archive.read_bytes() + b"\0")
    message = refusal(archive)
    assert "is not signed by the pinned release signer (release-signer.pem, sha256:" in message
    assert "Nothing in it was read" in message


def test_an_archive_signed_by_another_key_is_refused(archive):
    assert "is not signed by the pinned release signer" in refusal(signed(archive, OTHER_PRIVATE))


def test_another_archives_signature_is_refused(archive, tmp_path):
    other = tmp_path / "other.tar.gz"
    other.write_bytes(b"another release")
    signed(other)
    (tmp_path / (archive.name + ".sig")).write_bytes((tmp_path / "other.tar.gz.sig").read_bytes())
    assert "is not signed by the pinned release signer" in refusal(archive)


def test_an_archive_without_its_signature_is_refused_with_the_fix(archive):
    message = refusal(archive)
    assert "has no signature" in message and archive.name + ".sig is missing" in message
    assert "from the release channel together" in message


@pytest.mark.parametrize("content", [b"not base64 !!", b"", b"A" * 1100], ids=["garbage", "empty", "too long"])
def test_a_signature_file_that_is_not_one_is_refused(archive, content):
    (archive.parent / (archive.name + ".sig")).write_bytes(content)
    message = refusal(archive)
    assert "is not a release signature" in message or "is not signed by the pinned release signer" in message


def test_a_signature_over_the_archive_bytes_instead_of_the_statement_is_refused(archive):
    key = serialization.load_pem_private_key(SIGNER_PRIVATE, password=None)
    lines = signature_lines(signed(archive))
    lines[4] = "signature " + base64.b64encode(key.sign(archive.read_bytes())).decode()
    write_signature(archive, lines)
    assert "is not signed by the pinned release signer" in refusal(archive)


@pytest.mark.parametrize("change", ["a line more", "lines swapped", "a release id with a space"])
def test_a_signature_file_out_of_shape_is_refused_naming_the_lines(archive, change):
    lines = signature_lines(signed(archive))
    if change == "a line more":
        lines.insert(4, "note hello")
    elif change == "lines swapped":
        lines[1], lines[2] = lines[2], lines[1]
    else:
        lines[1] = "release 2026.11.0 extra"
    write_signature(archive, lines)
    assert "must hold the lines release, archive, issued and signature, in that order" in refusal(archive)


def test_a_release_id_that_is_not_one_is_never_signed(archive):
    with pytest.raises(SignatureError, match="is not a release id"):
        release_signature.sign(str(archive), SIGNER_PRIVATE, "2026.11.0\nissued 2099-01-01T00:00:00Z")


@pytest.mark.parametrize("signer", ["private key", "RSA key", "not a key"])
def test_a_pinned_key_that_is_not_an_ed25519_public_key_is_refused(archive, signer):
    rsa_public = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    pinned = {"private key": SIGNER_PRIVATE, "RSA key": rsa_public, "not a key": b"hello"}[signer]
    message = refusal(signed(archive), signer=pinned)
    assert "release-signer.pem is not" in message
