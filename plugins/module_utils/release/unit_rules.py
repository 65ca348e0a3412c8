# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A release's unit files read as systemd reads them, and the rules each must keep
(docs/release.md, "The unit files").

A check that matches lines as written can be passed by a line systemd reads otherwise: a
second User= after the first, spaces around =, an Exec prefix after a space, a form feed that
Python ends a line at and systemd does not. So a unit is parsed first, as systemd does, and the
rules are asked of what systemd would run. What systemd's versions read differently, or what
this reading and systemd's could take apart, is refused rather than guessed.
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
TRUE = ("1", "yes", "y", "true", "t", "on")
# [Install] settings by which enabling a unit reaches beyond its own name.
OTHER_NAMES = {"Alias": "would link another unit's name (ssh.service) to it",
               "Also": "would enable other units with it"}
# Directories systemd creates under /var/lib, /run, /var/cache, /var/log or /etc and, when they
# exist, hands to the unit's user with everything in them (systemd.exec(5)).
EXEC_DIRECTORIES = ("StateDirectory", "RuntimeDirectory", "CacheDirectory", "LogsDirectory",
                    "ConfigurationDirectory")
# Directories of those trees the roles make and root keeps (/etc/pharos-hpc, /var/lib/pharos-hpc,
# /run/pharos-hpc, /var/lib/pharos-keys, /run/pharos-member-token.socket) and the laboratory's
# state (/var/lib/pharos-lab): never a release's.
RESERVED_DIRECTORIES = ("pharos-hpc", "pharos-keys", "pharos-member-token", "pharos-lab")
# A release's own directory, then optional subdirectories, the unit's instance (%i) allowed there.
OWN_DIRECTORY = re.compile(r"pharos-[a-z0-9][a-z0-9-]*\Z")
SUBDIRECTORY = re.compile(r"(?:[A-Za-z0-9_.-]|%i)+\Z")

# systemd's own whitespace (its WHITESPACE); Python's str.strip() also drops \x0b, \x0c, \x1c-\x1f
# and more, which systemd keeps as part of a line.
WHITESPACE = " \t\r\n"
COMMENTS = "#;"
# systemd before 235 read a line 2047 bytes at a time and took the rest for a new line.
LINE_BYTES = 2000
KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]*[ \t]*=")


def read_lines(text):
    """(logical lines, unclear): the lines as systemd 240 and later joins them, after comments
    (# and ;, after whitespace) are dropped, a line ending in an unescaped backslash continued on
    the next, comment lines inside a continuation skipped, whitespace stripped; and what in the
    text systemd's versions, or systemd and this reading, could take apart, as sentences.

    systemd ends a line only at \\n (and at \\r or NUL, which are refused here): a form feed, a
    vertical tab or U+2028 are part of the line, and of the comment they follow."""
    lines, unclear = [], []
    physical_lines = text.split("\n")
    if physical_lines[-1] == "":
        physical_lines.pop()
    pending = None
    for number, physical in enumerate(physical_lines, 1):
        if physical.endswith("\r"):
            physical = physical[:-1]
        unclear.extend("line %d has the character %s, which systemd and this check could read differently: "
                       "remove it" % (number, reason) for reason in _odd_characters(physical))
        if len(physical.encode("utf-8", "surrogatepass")) > LINE_BYTES:
            unclear.append("line %d is longer than %d bytes, which systemd before 235 reads as several lines; "
                           "continue it on the next line with a backslash" % (number, LINE_BYTES))
        first = physical.lstrip(WHITESPACE)[:1]
        if first and first in COMMENTS:
            if pending is not None:
                unclear.append("line %d is a comment inside a continued line, which systemd 240 and later skip "
                               "and earlier versions join to it; move the comment out" % number)
            elif _continues(physical):
                unclear.append("line %d is a comment ending in a backslash, which systemd before 240 continues "
                               "into the next line; remove the backslash" % number)
            continue
        joined = physical if pending is None else pending + physical
        if _continues(physical):
            pending = joined[:-1] + " "
            continue
        pending = None
        lines.append((number, joined.strip(WHITESPACE)))
    if pending is not None:
        unclear.append("ends in a line continued by a backslash, which older systemd versions drop: remove the "
                       "backslash")
        lines.append((len(physical_lines), pending.strip(WHITESPACE)))
    for number, line in lines:
        if line and not (line.startswith("[") and line.endswith("]")) and not KEY.match(line):
            unclear.append("line %d is neither a [section], a Key=value setting nor a comment, which systemd "
                           "ignores, refuses or (an old one, by .include) reads another file for: remove it" % number)
    return lines, unclear


def parse(text):
    """{section: [(key, value), ...]} in the order systemd reads them (read_lines()): whitespace around
    = and the value dropped, sections of one name merged."""
    sections = {}
    current = None
    for _number, line in read_lines(text)[0]:
        if not line:
            continue
        if line.startswith("["):
            current = sections.setdefault(line[1:-1], []) if line.endswith("]") else None
            continue
        key, equals, value = line.partition("=")
        if equals and current is not None:
            current.append((key.strip(WHITESPACE), value.strip(WHITESPACE)))
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
    found.extend("%s %s" % (name, reason) for reason in read_lines(text)[1])
    sections = parse(text)
    service = sections.get("Service", [])
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
        elif key in EXEC_DIRECTORIES and not _is_own_directory_list(value):
            found.append("%s sets %s=%s: systemd hands that directory and all in it to the unit's user; name only "
                         "the release's own, pharos-<component>[/subdirectory], none of %s"
                         % (name, key, value, ", ".join(RESERVED_DIRECTORIES)))
    for key, value in sections.get("Install", []):
        if key in OTHER_NAMES:
            found.append("%s sets %s=%s in [Install]: enabling it %s; a release's unit is enabled under its own "
                         "name only, remove %s=" % (name, key, value, OTHER_NAMES[key], key))
    return [_shown(problem) for problem in found]


def _odd_characters(line):
    """What each character of the line that systemd and Python could read differently is."""
    for character in line:
        kind = _odd(character)
        if kind:
            yield "U+%04X, %s" % (ord(character), kind)


def _odd(character):
    """Control characters (a form feed ends a line for str.splitlines(), not for systemd; \\r and
    NUL end one for systemd), Unicode line and paragraph separators, a byte order mark (systemd
    drops it from a line's start), and what stands for bytes that are not UTF-8."""
    code = ord(character)
    if character == "\t":
        return None
    if code < 0x20 or 0x7F <= code <= 0x9F or character in "\u2028\u2029":
        return "a control character or line separator"
    if character == "\ufeff":
        return "a byte order mark"
    if character == "\ufffd" or 0xD800 <= code <= 0xDFFF:
        return "where the file is not UTF-8"
    return None


def _shown(problem):
    """The problem with odd characters written as escapes, so that a terminal shows what is there."""
    return "".join(character.encode("unicode_escape").decode("ascii") if _odd(character) else character
                   for character in problem)


def _continues(line):
    """systemd continues a line that ends in a backslash no other backslash escapes: an odd run."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _is_own_directory_list(value):
    """A space-separated list of directories, each optionally ':' and a symlink's name, every one
    a release's own: pharos-<component>, not reserved, then subdirectories with no '..'."""
    for word in re.split("[ \t]+", value):
        if not word:
            continue
        names = word.split(":")
        if len(names) > 2 or not all(_is_own_directory(name) for name in names):
            return False
    return True


def _is_own_directory(path):
    top, _slash, below = path.partition("/")
    if not OWN_DIRECTORY.match(top) or top in RESERVED_DIRECTORIES:
        return False
    return not below or all(SUBDIRECTORY.match(part) and part not in (".", "..") for part in below.split("/"))


def _is_secret_file(value):
    path = value.partition(":")[2]
    return (path.startswith(SECRETS_DIRECTORY) and posixpath.normpath(path) == path
            and len(path) > len(SECRETS_DIRECTORY))
