# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rsa_public_key_problems: what keeps a text of PEM blocks from being a token issuer's RS256
public keys, as sentences, with nothing of the text quoted back. An empty list means the text
holds one or two RSA public keys of at least 2048 bits and nothing else.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.errors import AnsibleFilterError

try:
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
except ImportError:  # pragma: no cover - ansible-core itself depends on cryptography
    load_pem_public_key = None

BLOCK = re.compile(r"-----BEGIN ([A-Z ]+)-----.*?-----END \1-----", re.S)
MIN_BITS = 2048
MAX_KEYS = 2


def rsa_public_key_problems(text):
    if load_pem_public_key is None:
        raise AnsibleFilterError("rsa_public_key_problems needs the Python package cryptography on the Ansible controller")
    if not isinstance(text, str):
        return ["it is not text"]
    blocks = list(BLOCK.finditer(text))
    problems = []
    if "PRIVATE KEY" in text:
        problems.append("it holds a private key: give only the issuer's public keys, and keep the private key with the issuer")
    if BLOCK.sub("", text).strip():
        problems.append("it holds text outside PEM blocks")
    if not blocks:
        problems.append("it holds no PEM block")
    if len(blocks) > MAX_KEYS:
        problems.append("it holds %d keys; give one, or two while the issuer rolls its key" % len(blocks))
    for number, block in enumerate(blocks, start=1):
        if block.group(1) != "PUBLIC KEY":
            problems.append("block %d is a %s, not a PUBLIC KEY" % (number, block.group(1)))
            continue
        try:
            key = load_pem_public_key(block.group(0).encode("ascii"))
        except (ValueError, UnicodeEncodeError):
            problems.append("block %d is not a readable public key" % number)
            continue
        if not isinstance(key, rsa.RSAPublicKey):
            problems.append("block %d is not an RSA key (member tokens are RS256)" % number)
        elif key.key_size < MIN_BITS:
            problems.append("block %d is an RSA key of %d bits; at least %d are needed" % (number, key.key_size, MIN_BITS))
    return problems


class FilterModule(object):
    def filters(self):
        return {"rsa_public_key_problems": rsa_public_key_problems}
