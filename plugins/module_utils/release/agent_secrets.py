# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The agents' secrets as they lie on a host, so that what is read from their journals can be
masked before anyone sees it (docs/release.md, "Status").

An agent that logs its own token (an HTTP client's debug line, a traceback that shows a
request) would otherwise print it in status.yml's table and in its JSON. The secrets are read
from the root-only directory the roles adopt them into and from the token directory the central
step wrote: each token file's lines, and in the Site agent's configuration every value whose
key names a secret (its Waldur token, its LDAP password). Certificates are public and skipped.
Reading is best effort: a file that cannot be read costs only its masking, and the journal's
lines are still redacted by shape (cycles.redact).

Pure Python (PyYAML only), importable without Ansible.
"""

from __future__ import annotations

import os
import re
import stat

try:
    import yaml
except ImportError:  # only where the module runs; the module reports it before reading anything
    yaml = None

SECRETS_DIRECTORY = "/etc/pharos-hpc/secrets"
# A token or password file is a line or two; anything larger is not one of the agents' secrets.
LARGEST_FILE = 64 * 1024
SECRET_KEY = re.compile(r"token|password|passwd|secret|credential|private|api_?key", re.IGNORECASE)
CERTIFICATE = "-----BEGIN "


def _read(path):
    """The text of a regular file, not through a link, or None."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_size > LARGEST_FILE:
            return None
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            return handle.read(LARGEST_FILE).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _secret_values(document):
    """Every string under a key that names a secret, at any depth (a number or a flag there, such
    as a token's lifetime, is no secret, and masking it would blank that number everywhere)."""
    found = []
    if isinstance(document, dict):
        for key, value in document.items():
            if SECRET_KEY.search(str(key)) and isinstance(value, str):
                found.append(value)
            else:
                found += _secret_values(value)
    elif isinstance(document, list):
        for item in document:
            found += _secret_values(item)
    return found


def file_secrets(name, text):
    """The secrets one file holds: a configuration's secret values, a token file's lines."""
    if text.lstrip().startswith(CERTIFICATE):
        return []
    if name.endswith((".yaml", ".yml")):
        if yaml is None:
            return []
        try:
            return _secret_values(yaml.safe_load(text))
        except yaml.YAMLError:
            return []
    return [line.strip() for line in text.splitlines()]


def read_secrets(directories):
    """The set of the secrets found in the files directly inside each directory."""
    secrets = set()
    for directory in directories:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            text = _read(os.path.join(directory, name))
            if text is not None:
                secrets.update(value for value in file_secrets(name, text) if value)
    return secrets
