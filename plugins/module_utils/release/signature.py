# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A release archive's signature, checked before anything in the archive is read.

SHA256SUMS and the pip hashes travel inside the archive, so they prove nothing about who made
it: an archive repacked with fresh sums would pass them. The release signer signs, with
Ed25519, a statement that names the release id, the archive's SHA-256 and when it was signed;
the Site pins the signer's public key and checks the detached signature, ``<archive>.sig``,
before it opens the archive: on the controller, and again on the host that installs it. The
release id binds the archive to the release it claims to be, and the signing time orders
releases, so that an older archive, validly signed, is not taken for a newer one.

The signature file is the statement followed by one line, ``signature <base64>``::

    pharos-hpc-release-signature/2
    release 2026.11.0
    archive sha256:<hex>
    issued 2026-11-30T12:00:00Z
    signature <base64 of the Ed25519 signature over the four lines above>
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import re
import time
from collections import namedtuple

from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import RELEASE_ID, sha256_bytes, sha256_file

try:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
except ImportError:  # pragma: no cover - checked where the key is loaded
    serialization = None

SIGNATURE_SUFFIX = ".sig"
FORMAT = "pharos-hpc-release-signature/2"
MAX_SIGNATURE_BYTES = 1024
ISSUED = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\Z")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}\Z")
ISSUED_FORMAT = "%Y-%m-%dT%H:%M:%SZ"

# What a verified signature says: release_id and archive (sha256:<hex>) as signed, issued (UTC,
# ISO 8601, so that text order is time order), the statement's exact text, and the signer's
# fingerprint.
Signed = namedtuple("Signed", "release_id archive issued statement signer")


class SignatureError(Exception):
    """An archive whose signature cannot be trusted; str() says why and what to do."""


def statement(release_id, archive_digest, issued):
    """The text the signer signs."""
    return "%s\nrelease %s\narchive %s\nissued %s\n" % (FORMAT, release_id, archive_digest, issued)


def issued_of(text):
    """The signing time a statement names, or None when it names none."""
    return next((line.split(" ", 1)[1] for line in text.splitlines() if line.startswith("issued ")), None)


def archive_digest(path):
    """sha256:<hex> of the archive's bytes, as the statement names it."""
    return "sha256:" + sha256_file(path)


def _require_cryptography():
    if serialization is None:
        raise SignatureError("checking a release signature needs the Python package cryptography "
                             "(Debian: python3-cryptography)")


def signer_fingerprint(public_key):
    """sha256:<hex> of the raw public key, to compare with the one the release signer publishes."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return sha256_bytes(raw)


def check_fingerprint(value, source):
    """value when it is a signer fingerprint as signer_fingerprint() writes it; SignatureError
    naming source otherwise."""
    if not isinstance(value, str) or not DIGEST.match(value):
        raise SignatureError("%s is %r, which is not a release signer fingerprint: it must be sha256: and 64 "
                             "lowercase hexadecimal digits, as the platform publishes it (docs/release.md, "
                             "\"Signature\")." % (source, value))
    return value


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


def sign(path, private_pem, release_id, issued=None):
    """The signature file's text for the archive at path, which holds release release_id."""
    _require_cryptography()
    if not RELEASE_ID.match(release_id):
        raise SignatureError("%r is not a release id (1-64 characters of a-z, 0-9, . _ -)" % release_id)
    key = serialization.load_pem_private_key(private_pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureError("the signing key is not an Ed25519 private key")
    text = statement(release_id, archive_digest(path), issued or time.strftime(ISSUED_FORMAT, time.gmtime()))
    return text + "signature %s\n" % base64.b64encode(key.sign(text.encode("ascii"))).decode("ascii")


def _read(path):
    """(statement text, release id, archive digest, issued, signature bytes) of the archive's
    signature file, each line checked; SignatureError naming the file otherwise."""
    signature_path = path + SIGNATURE_SUFFIX
    try:
        with open(signature_path, "rb") as handle:
            raw = handle.read(MAX_SIGNATURE_BYTES + 1)
    except OSError:
        raise SignatureError("%s has no signature: %s is missing. Fix: take the archive and its %s "
                             "from the release channel together." % (path, signature_path, SIGNATURE_SUFFIX))
    try:
        lines = raw.decode("ascii").split("\n") if len(raw) <= MAX_SIGNATURE_BYTES else []
    except UnicodeDecodeError:
        lines = []
    if lines[:1] != [FORMAT]:
        raise SignatureError(
            "%s is not a release signature of this collection (its first line must be %s). A signature of "
            "the earlier format (/1) names no release and is not accepted. Fix: sign the archive again with "
            "scripts/pharos-release-sign, or take it and its %s from the release channel again."
            % (signature_path, FORMAT, SIGNATURE_SUFFIX))
    fields = dict(line.split(" ", 1) for line in lines[1:5] if " " in line)
    values = [fields.get(name, "") for name in ("release", "archive", "issued", "signature")]
    release_id, digest, issued, encoded = values
    if (list(fields) != ["release", "archive", "issued", "signature"] or lines[5:] != [""]
            or not RELEASE_ID.match(release_id) or not DIGEST.match(digest) or not ISSUED.match(issued)):
        raise SignatureError("%s is not a release signature: after its first line it must hold the lines release, "
                             "archive, issued and signature, in that order, and nothing else." % signature_path)
    try:
        signature = base64.b64decode(encoded, validate=True)
    except (ValueError, binascii.Error):
        raise SignatureError("%s is not a release signature: its signature line is not base64." % signature_path)
    return statement(release_id, digest, issued), release_id, digest, issued, signature


def verify(path, signer_pem, signer_source, pinned_fingerprint=None, fingerprint_source=None):
    """Check path + SIGNATURE_SUFFIX against the pinned signer and the archive's bytes; return Signed.
    With pinned_fingerprint, the key itself must have that fingerprint first: a key file that
    someone replaced is refused before the signature is read."""
    signer = load_signer(signer_pem, signer_source)
    if pinned_fingerprint is not None and signer_fingerprint(signer) != pinned_fingerprint:
        raise SignatureError(
            "The release signer key %s has the fingerprint %s, but %s pins %s: it is not the release signer's "
            "key, and nothing in %s was read. Fix: put the platform's public key back at %s; if the platform "
            "rotated its key, confirm the new fingerprint with the platform and set it in %s."
            % (signer_source, signer_fingerprint(signer), fingerprint_source, pinned_fingerprint, path,
               signer_source, fingerprint_source))
    text, release_id, digest, issued, signature = _read(path)
    try:
        signer.verify(signature, text.encode("ascii"))
        if archive_digest(path) != digest:
            raise InvalidSignature()
    except InvalidSignature:
        raise SignatureError(
            "%s is not signed by the pinned release signer (%s, %s): it was changed after signing, or signed by "
            "another key. Nothing in it was read. Fix: take the archive and its %s from the release channel again, "
            "and check the pinned key." % (path, signer_source, signer_fingerprint(signer), SIGNATURE_SUFFIX))
    return Signed(release_id, digest, issued, text, signer_fingerprint(signer))


def public_pem(private_pem):
    """The PEM public half of a PEM Ed25519 private key."""
    _require_cryptography()
    key = serialization.load_pem_private_key(private_pem, password=None)
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def new_key_pair():
    """(private PEM, public PEM) of a new Ed25519 signing key."""
    _require_cryptography()
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public
