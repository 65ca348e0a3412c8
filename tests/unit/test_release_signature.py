"""A release archive's signature (module_utils/release/signature.py): what verifies, and that
every other archive, signature or key is refused with the reason and the fix."""

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


def signed(path, private=SIGNER_PRIVATE):
    (path.parent / (path.name + ".sig")).write_text(release_signature.sign(str(path), private), encoding="ascii")
    return path


def refusal(path, signer=SIGNER_PUBLIC):
    with pytest.raises(SignatureError) as refused:
        release_signature.verify(str(path), signer, "release-signer.pem")
    return str(refused.value)


def test_an_archive_signed_by_the_pinned_signer_verifies_and_names_the_signer(archive):
    fingerprint = release_signature.verify(str(signed(archive)), SIGNER_PUBLIC, "release-signer.pem")
    assert fingerprint.startswith("sha256:") and len(fingerprint) == 71


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


@pytest.mark.parametrize("content", [b"not base64 !!", b"", b"A" * 600], ids=["garbage", "empty", "too long"])
def test_a_signature_file_that_is_not_one_is_refused(archive, content):
    (archive.parent / (archive.name + ".sig")).write_bytes(content)
    message = refusal(archive)
    assert "is not a release signature" in message or "is not signed by the pinned release signer" in message


def test_a_signature_over_the_archive_bytes_instead_of_the_statement_is_refused(archive):
    key = serialization.load_pem_private_key(SIGNER_PRIVATE, password=None)
    (archive.parent / (archive.name + ".sig")).write_text(base64.b64encode(key.sign(archive.read_bytes())).decode())
    assert "is not signed by the pinned release signer" in refusal(archive)


@pytest.mark.parametrize("signer", ["private key", "RSA key", "not a key"])
def test_a_pinned_key_that_is_not_an_ed25519_public_key_is_refused(archive, signer):
    rsa_public = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    pinned = {"private key": SIGNER_PRIVATE, "RSA key": rsa_public, "not a key": b"hello"}[signer]
    message = refusal(signed(archive), signer=pinned)
    assert "release-signer.pem is not" in message
