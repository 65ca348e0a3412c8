"""Make the scenario's stand-in for the Pharos member token issuer: an RSA key and its public
half.

Usage: make_signer.py DIRECTORY. Writes signer.pem (private, 0600) and signer.pub.pem, keeping
an existing key so that a second prepare changes nothing.
"""

import os
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


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
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    with open(os.path.join(directory, "signer.pub.pem"), "wb") as out:
        out.write(public)
    print("changed" if changed else "kept")


if __name__ == "__main__":
    main(sys.argv[1])
