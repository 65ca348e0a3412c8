# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A release's unit files read as systemd reads them, and the rules each must keep
(docs/release.md, "The unit files").

A check that matches lines as written can be passed by a line systemd reads otherwise: a
second User= after the first, spaces around =, an Exec prefix after a space. So a unit is
parsed first, as systemd does, and the rules are asked of what systemd would run.
"""

from __future__ import annotations

import posixpath
import re

# The accounts the collection's roles make for a release's units (site_agent, ssh_access_agent).
RELEASE_ACCOUNTS = ("pharos-agent", "pharos-ssh-access")
# Units a role of this collection installs on the same hosts: a release never replaces them.
ROLE_UNITS = ("pharos-member-token@.service", "pharos-slurm-resolve-users.service")
# Where a release unit's credentials come from: the root-only files the roles write.
SECRETS_DIRECTORY = "/etc/pharos-hpc/secrets/"
# Settings that may only be reset (given empty): any value gives the unit a privilege.
EMPTY_ONLY = ("AmbientCapabilities", "CapabilityBoundingSet", "SupplementaryGroups")
# Credential settings other than LoadCredential= reach beyond the secrets directory.
OTHER_CREDENTIALS = ("LoadCredentialEncrypted", "ImportCredential", "SetCredential", "SetCredentialEncrypted")
# Exec prefixes (systemd.service(5), "Command lines"); + and ! run with full privileges.
EXEC_PREFIXES = "@-:+!|"
PRIVILEGED_PREFIXES = "+!"
ENTRY = re.compile(r"([A-Za-z][A-Za-z0-9]*)\s*=\s*(.*)\Z")
TRUE = ("1", "yes", "y", "true", "t", "on")


def parse(text):
    """{section: [(key, value), ...]} in the order systemd reads them: comments (# and ;) and
    blank lines skipped, a line ending in a backslash continued on the next, whitespace
    around = and the value dropped, sections of one name merged."""
    sections = {}
    current = None
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line[0] in "#;"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        matched = ENTRY.match(line)
        if matched and current is not None:
            current.append((matched.group(1), matched.group(2).strip()))
    return sections


def exec_prefix(value):
    """The prefix characters of an Exec command line."""
    prefix = ""
    for character in value:
        if character not in EXEC_PREFIXES:
            break
        prefix += character
    return prefix


def problems(name, text):
    """What in the unit file named name would let a release run beyond its account."""
    found = []
    if posixpath.basename(name) in ROLE_UNITS:
        found.append("%s is a unit the collection's roles install: a release cannot replace it" % name)
    service = parse(text).get("Service", [])
    values = {}
    for key, value in service:
        values.setdefault(key, []).append(value)
    user = values.get("User", [""])[-1]
    if user not in RELEASE_ACCOUNTS:
        found.append("%s runs as User=%s: a release's units run as one of %s, the accounts the roles make"
                     % (name, user or "(none, so root)", ", ".join(RELEASE_ACCOUNTS)))
    group = values.get("Group", [user])[-1]
    if group != user:
        found.append("%s runs in Group=%s: a release's unit runs in its account's own group (%s)" % (name, group, user))
    for key, value in service:
        if key.startswith("Exec") and set(exec_prefix(value)) & set(PRIVILEGED_PREFIXES):
            found.append("%s runs %s=%s with full privileges: remove the + or ! prefix" % (name, key, value))
        elif key in EMPTY_ONLY and value:
            found.append("%s sets %s=%s: a release's unit gets no capability and no other group; leave it empty"
                         % (name, key, value))
        elif key in OTHER_CREDENTIALS:
            found.append("%s sets %s=: a release's unit takes credentials by LoadCredential= from %s only"
                         % (name, key, SECRETS_DIRECTORY))
        elif key == "LoadCredential" and not _is_secret_file(value):
            found.append("%s loads the credential %s: a release's unit loads only files in %s"
                         % (name, value, SECRETS_DIRECTORY))
        elif key == "PermissionsStartOnly" and value.lower() in TRUE:
            found.append("%s sets PermissionsStartOnly=%s, which runs its other commands as root" % (name, value))
    return found


def _is_secret_file(value):
    path = value.partition(":")[2]
    return (path.startswith(SECRETS_DIRECTORY) and posixpath.normpath(path) == path
            and len(path) > len(SECRETS_DIRECTORY))
