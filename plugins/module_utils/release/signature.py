# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A release archive's signature, checked before anything in the archive is read.

SHA256SUMS and the pip hashes travel inside the archive, so they prove nothing about who made
it: an archive repacked with fresh sums would pass them. The release signer signs, with
Ed25519, a short statement that names the archive's SHA-256; the Site pins the signer's
public key and checks the detached signature, ``<archive>.sig``, before it opens the archive.
The signature file holds the signature in base64 on one line.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii

from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import sha256_bytes, sha256_file

try:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
except ImportError:  # pragma: no cover - checked where the key is loaded
    serialization = None

SIGNATURE_SUFFIX = ".sig"
STATEMENT = b"pharos-hpc-release-signature/1\nsha256 %s\n"
MAX_SIGNATURE_BYTES = 512


class SignatureError(Exception):
    """An archive whose signature cannot be trusted; str() says why and what to do."""


def statement(path):
    """What the signer signs for the archive at path."""
    return STATEMENT % sha256_file(path).encode("ascii")


def _require_cryptography():
    if serialization is None:
        raise SignatureError("checking a release signature needs the Python package cryptography "
                             "(Debian: python3-cryptography)")


def signer_fingerprint(public_key):
    """sha256:<hex> of the raw public key, to compare with the one the release signer publishes."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return sha256_bytes(raw)


def load_signer(pem, source):
    """The pinned Ed25519 public key from PEM text; source names where it came from."""
    _require_cryptography()
    try:
        key = serialization.load_pem_public_key(pem if isinstance(pem, bytes) else pem.encode("ascii"))
    except (ValueError, UnicodeEncodeError, TypeError):
        raise SignatureError("%s is not a PEM public key. Fix: pin the release signer's public key "
                             "(BEGIN PUBLIC KEY), as the platform publishes it." % source)
    if not isinstance(key, Ed25519PublicKey):
        raise SignatureError("%s is not an Ed25519 public key; release signatures are Ed25519." % source)
    return key


def sign(path, private_pem):
    """The signature file's text for the archive at path."""
    _require_cryptography()
    key = serialization.load_pem_private_key(private_pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureError("the signing key is not an Ed25519 private key")
    return base64.b64encode(key.sign(statement(path))).decode("ascii") + "\n"


def verify(path, signer_pem, signer_source):
    """Check path + SIGNATURE_SUFFIX against the pinned signer; return the signer's fingerprint."""
    signer = load_signer(signer_pem, signer_source)
    signature_path = path + SIGNATURE_SUFFIX
    try:
        with open(signature_path, "rb") as handle:
            text = handle.read(MAX_SIGNATURE_BYTES + 1)
    except OSError:
        raise SignatureError("%s has no signature: %s is missing. Fix: take the archive and its %s "
                             "from the release channel together." % (path, signature_path, SIGNATURE_SUFFIX))
    try:
        if len(text) > MAX_SIGNATURE_BYTES:
            raise ValueError("too long")
        signature = base64.b64decode(text.strip(), validate=True)
    except (ValueError, binascii.Error):
        raise SignatureError("%s is not a release signature (one line of base64)." % signature_path)
    try:
        signer.verify(signature, statement(path))
    except InvalidSignature:
        raise SignatureError(
            "%s is not signed by the pinned release signer (%s, %s): it was changed after signing, or "
            "signed by another key. Nothing in it was read. Fix: take the archive and its %s from the "
            "release channel again, and check the pinned key." % (path, signer_source, signer_fingerprint(signer),
                                                                  SIGNATURE_SUFFIX))
    return signer_fingerprint(signer)


def new_key_pair():
    """(private PEM, public PEM) of a new Ed25519 signing key."""
    _require_cryptography()
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public
