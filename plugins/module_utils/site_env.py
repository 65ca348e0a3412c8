# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The strict reader of site.env, the one file that carries every Site value (docs/release.md).

site.env is never sourced and never substituted, and no value is taken from the calling
environment: the reader sees the file's bytes and nothing else. A line is blank, a comment
(``#`` first on the line) or ``KEY=value`` with the key at the start of the line and no spaces
around ``=``. The value is everything after the first ``=``, taken literally.

Characters that a shell or systemd's EnvironmentFile= would read differently from this reader
are refused rather than interpreted, so the file means the same to every reader that may
ever see it: quotes, ``$`` and backticks (substitution), backslashes (escapes, continuations),
``#`` inside a value (an inline comment elsewhere), leading or trailing whitespace, control
characters and carriage returns. No Site value needs any of them.

parse() returns every line it could read and every violation at once; validate() (in
site_env_rules) adds the Site's rules. Each violation names the key, the line, the rule and
the fix.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import unicodedata
from collections import OrderedDict, namedtuple

SOURCE_NAME = "site.env"

# Every key site.env may carry, with its meaning. site.env.example documents each one: the collection's
# docs/examples/site.env.example, and the copy in each release.
KNOWN_KEYS = OrderedDict([
    ("WALDUR_API_URL", "Waldur's REST API that the Site agent calls (https, no credentials in the URL)"),
    ("CENTRAL_OFFERING_UUID", "UUID of the Site's Waldur offering, 32 lowercase hex characters without dashes"),
    ("CENTRAL_SITE_API_URL", "origin of the Site API edge (https://host[:port]); the agents append /v1/site/... themselves"),
    ("LDAP_BASE_DN", "suffix of the Site's directory, for example dc=icarus-hpc,dc=pharos"),
    ("NATIVE_SITE_AGENT_LDAP_URI", "the Site agent's directory: ldap:// on loopback (the upstream agent binds simply)"),
    ("NATIVE_SSH_ACCESS_LDAP_URI", "the SSH access agent's directory: ldapi:// only (SASL EXTERNAL, no password)"),
    ("SLURMRESTD_URL", "slurmrestd, on host loopback only"),
    ("SLURM_COMPUTE_PARTITION", "the offline partition members' compute jobs run in"),
    ("SLURM_STAGING_PARTITION", "the Internet-enabled partition for stage-in and stage-out jobs; differs from compute"),
    ("PHAROS_AGENT_UID", "UID of the fixed service account pharos-agent (Site agent)"),
    ("PHAROS_AGENT_GID", "GID of the group pharos-agent"),
    ("PHAROS_SSH_ACCESS_UID", "UID of the fixed service account pharos-ssh-access (SSH access agent)"),
    ("PHAROS_SSH_ACCESS_GID", "GID of the group pharos-ssh-access"),
    ("MEMBER_UID_MIN", "first UID of Waldur's POSIX pool for members"),
    ("MEMBER_UID_MAX", "last UID of Waldur's POSIX pool for members"),
    ("MEMBER_GID_MIN", "first GID of the members' primary groups (Waldur's POSIX pool)"),
    ("MEMBER_GID_MAX", "last GID of the members' primary groups"),
    ("PROJECT_GID_MIN", "first GID of the project groups the Site agent creates"),
    ("PROJECT_GID_MAX", "last GID of the project groups the Site agent creates"),
    ("SITE_AGENT_MODES", "the Site agent's modes, separated by spaces: order_process membership_sync report"),
    ("ACTIVATION_COMPONENTS", "the release's components to activate, separated by spaces, e.g. site-agent ssh-access"),
    ("PYTHON_INDEX_URL", "the approved Python index (https) for a release built with dependency_mode: index"),
])
OPTIONAL_KEYS = frozenset(["PYTHON_INDEX_URL"])

KEY_PATTERN = re.compile(r"[A-Z][A-Z0-9_]*\Z")
# What a message may quote of a line: a short text made of words (waldur_api_url, event_process,
# login01.example.org), each word in one case with at most a few digits after it, or a small
# number. A token pasted into site.env (base64, base32, hex) is none of these and is never
# quoted, nor is a URL, whose password may sit anywhere a reader splits it.
SHOWN_LIMIT = 32
SHOWN_TEXT = re.compile(r"[A-Za-z0-9_.:-]+\Z")
SHOWN_WORD = re.compile(r"(?:(?:[a-z]{1,12}|[A-Z]{1,12}|[A-Z][a-z]{1,11})[0-9]{0,3}|[0-9]{1,5})\Z")
WORD_SEPARATORS = re.compile(r"[_.:-]")
# Of a line that is not KEY=value, at most this many characters of its first word are quoted.
OPENING_LIMIT = 10
# Unicode's control (C0, DEL and C1), format (invisible, such as bidirectional overrides),
# line and paragraph separator, surrogate, private use and unassigned characters: some reader
# takes each as a line break or shows it as nothing.
INVISIBLE_CATEGORIES = frozenset(["Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"])
# (character test, what it is, why it is refused); the first match is reported, with the
# character's code point where the character itself cannot be seen.
REFUSED_IN_VALUES = (
    (lambda c: c in "\"'", "a quote", "a shell or systemd would strip it and this reader would keep it; write the value without quotes"),
    (lambda c: c in "$`", "substitution syntax ($ or `)", "site.env is never substituted; write the literal value"),
    (lambda c: c == "\\", "a backslash", "escapes and line continuations are not read; write the literal value"),
    (lambda c: c == "#", "a #", "other readers take it as the start of a comment; put comments on their own line"),
    (lambda c: unicodedata.category(c) in INVISIBLE_CATEGORIES, "a control or invisible character (U+%04X)",
     "remove it: other readers may take it as a line break or show nothing"),
    (lambda c: c.isspace() and c != " ", "a space other than the ASCII space (U+%04X)",
     "write the ASCII space: other readers split lists on it, or do not"),
)

Line = namedtuple("Line", "key value number")


class Violation(namedtuple("Violation", "key line rule fix")):
    """One broken rule. str() is a sentence an administrator can act on; it never holds a value
    that could be a secret (site.env holds none, but a token pasted into it must not be printed
    back): it quotes a key or a word of a line only when shown() allows it."""

    def __str__(self):
        where = "%s line %d" % (SOURCE_NAME, self.line) if self.line else SOURCE_NAME
        subject = "%s: %s" % (where, self.key) if self.key else where
        return "%s %s; %s." % (subject, self.rule, self.fix)


class SiteEnvError(ValueError):
    """site.env breaks rules; str() lists every violation, one per line."""

    def __init__(self, violations):
        self.violations = list(violations)
        super().__init__("site.env is refused (%d problem%s):\n%s" % (
            len(self.violations), "" if len(self.violations) == 1 else "s",
            "\n".join("- " + str(violation) for violation in self.violations)))


def _suggestion(key):
    close = difflib.get_close_matches(key, list(KNOWN_KEYS), n=1)
    return "did you mean %s? " % close[0] if close else ""


def shown(text, limit=SHOWN_LIMIT):
    """text when a message may quote it (short, and words rather than a token), else None."""
    if not text or len(text) > limit or not SHOWN_TEXT.match(text):
        return None
    words = [word for word in WORD_SEPARATORS.split(text) if word]
    return text if words and all(SHOWN_WORD.match(word) for word in words) else None


def _key(key):
    """The key as a message names it: a known key always, any other only when it may be shown."""
    return key if key in KNOWN_KEYS else shown(key)


def _opening(text):
    """' (it begins X)' with at most the first few characters of a line's first word, or '' when
    that word could be a secret."""
    words = text.split()
    first = shown(words[0], limit=64) if words else None
    if first is None:
        return ""
    return " (it begins %s)" % (first if len(first) <= OPENING_LIMIT else first[:OPENING_LIMIT] + "...")


def _read_line(number, text, violations):
    """A Line, or None after recording why the line is not KEY=value."""
    if "=" not in text:
        violations.append(Violation(None, number, "is not KEY=value, a comment or blank%s" % _opening(text),
                                    "write KEY=value, or start a comment with # at the beginning of the line"))
        return None
    key, value = text.split("=", 1)
    if key.startswith("export "):
        violations.append(Violation(_key(key[7:].strip()), number, "starts with export",
                                    "remove export: site.env is read, never sourced"))
        return None
    if key != key.strip() or (value and value[0] in " \t"):
        violations.append(Violation(_key(key.strip()), number, "has spaces around the key or =",
                                    "write KEY=value with no spaces around ="))
        return None
    if not KEY_PATTERN.match(key):
        quoted = _key(key)
        rule = ("is not a key (capital letters, digits and _)" if quoted
                else "does not start with a key: the text before its first = is not one (capital letters, digits and _)")
        violations.append(Violation(quoted, number, rule, "write KEY=value with a key from the collection's docs/examples/site.env.example"))
        return None
    for test, what, fix in REFUSED_IN_VALUES:
        found = next((character for character in value if test(character)), None)
        if found is not None:
            violations.append(Violation(_key(key), number, "holds %s" % (what % ord(found) if "%" in what else what), fix))
            return None
    if value != value.rstrip():
        violations.append(Violation(_key(key), number, "ends with whitespace", "remove the trailing spaces"))
        return None
    return Line(key, value, number)


def parse(text):
    """(OrderedDict key -> Line, [Violation]) for the whole text, every problem at once
    (SiteEnvError for bytes that are not UTF-8).

    Duplicate keys, unknown keys, lines that are not KEY=value, comments or blank, and values
    holding characters another reader would interpret are violations.
    """
    lines, violations = OrderedDict(), []
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            # Nothing can be read: refuse now rather than report every key as missing.
            raise SiteEnvError([Violation(None, None, "is not UTF-8 text (byte %d)" % error.start, "save it as UTF-8")])
    for number, raw in enumerate(text.split("\n"), start=1):
        if "\r" in raw:
            violations.append(Violation(None, number, "ends with a carriage return",
                                        "save the file with Unix line endings (LF)"))
            continue
        if raw.strip() == "":
            continue
        if raw.lstrip().startswith("#"):
            continue
        line = _read_line(number, raw, violations)
        if line is None:
            continue
        if line.key not in KNOWN_KEYS:
            quoted = shown(line.key)
            violations.append(Violation(quoted, number, "is not a site.env key" if quoted else "starts with a name that is not a site.env key",
                                        "%sremove the line or use a key from the collection's docs/examples/site.env.example"
                                        % _suggestion(line.key)))
        elif line.key in lines:
            violations.append(Violation(line.key, number, "is set again (first on line %d)" % lines[line.key].number,
                                        "keep one of the two lines"))
        elif line.value == "":
            violations.append(Violation(line.key, number, "is empty", "give it a value or remove the line"))
        else:
            lines[line.key] = line
    return lines, violations


FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
              (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def read_bytes(path):
    """(the bytes of the regular file at path, [Violation] of its mode).

    Opened without blocking, so a FIFO in its place is refused rather than waited on; a file
    that every user may write is a violation, since whoever writes site.env chooses the Site's
    values. SiteEnvError when path is not a regular file."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            kind = next((name for test, name in FILE_KINDS if test(status.st_mode)), "not a regular file")
            raise SiteEnvError([Violation(None, None, "is %s, not a regular file" % kind,
                                          "point the path at the site.env file itself")])
        with os.fdopen(descriptor, "rb") as handle:
            descriptor = None
            data = handle.read()
    finally:
        if descriptor is not None:
            os.close(descriptor)
    violations = []
    if status.st_mode & stat.S_IWOTH:
        violations.append(Violation(None, None, "is writable by every user (mode %04o)" % stat.S_IMODE(status.st_mode),
                                    "run chmod o-w on it: whoever writes site.env chooses the Site's values"))
    return data, violations


def read(path):
    """parse() of the file at path, read as bytes: nothing comes from the environment."""
    data, file_violations = read_bytes(path)
    lines, violations = parse(data)
    return lines, file_violations + violations


def values(lines):
    """The plain {key: value} of parsed lines, in file order."""
    return OrderedDict((key, line.value) for key, line in lines.items())
