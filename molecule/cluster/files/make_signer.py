"""Make the scenario's stand-in identity provider: an RSA key and its public JWKS.

Usage: make_signer.py DIRECTORY. Writes signer.pem (private, 0600) and jwks.json, keeping an
existing key so that a second prepare changes nothing.
"""

import base64
import json
import os
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

KEY_ID = "pharos-scenario-signer"


def b64url_uint(number):
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def main(directory):
    pem_path = os.path.join(directory, "signer.pem")
    if os.path.exists(pem_path):
        with open(pem_path, "rb") as pem:
            key = serialization.load_pem_private_key(pem.read(), password=None)
        changed = False
    else:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        descriptor = os.open(pem_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as pem:
            pem.write(key.private_bytes(serialization.Encoding.PEM,
                                        serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()))
        changed = True
    public = key.public_key().public_numbers()
    jwks = {"keys": [{"kty": "RSA", "kid": KEY_ID, "use": "sig", "alg": "RS256",
                      "n": b64url_uint(public.n), "e": b64url_uint(public.e)}]}
    with open(os.path.join(directory, "jwks.json"), "w", encoding="utf-8") as out:
        json.dump(jwks, out)
    print("changed" if changed else "kept")


if __name__ == "__main__":
    main(sys.argv[1])
