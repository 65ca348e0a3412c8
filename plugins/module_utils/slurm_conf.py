# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A Site's own slurm.conf, read as Slurm reads it, for the adopt mode's checks.

In adopt mode the Site owns slurm.conf and Pharos owns one file that slurm.conf takes in with
``Include``. Before any change, the Site's settings that Pharos needs are checked (preconditions:
reported with the line to change, never changed), and a Site line that already means something
else for what Pharos would write stops the run (conflicts). Each finding names its file and line.

Slurm reads ``Key=Value`` with case-insensitive keys, ``#`` comments, several pairs on the
``NodeName`` and ``PartitionName`` lines, and ``Include <path>`` (relative to slurm.conf's
directory). Debian's Slurm 24.11 has no glob support in ``Include``, and refuses to start when
an included file is missing. Every ``Prolog`` line adds a program: Slurm 24.11 runs them all, in
the order read. Any other key set twice takes the value read last, an included file's lines
counting where its ``Include`` stands (Slurm's parser reads an included file in place, into the
same table, and keeps the latest value of a key).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

RECORD_KEYS = ("nodename", "partitionname", "nodeset", "frontendname", "downnodes")


class SlurmConfError(Exception):
    """slurm.conf, or a file it includes, cannot be read."""


@dataclass(frozen=True)
class Line:
    path: str
    number: int
    key: str
    value: str
    pairs: tuple[tuple[str, str], ...] = ()

    @property
    def where(self) -> str:
        return f"{self.path} line {self.number}"

    def option(self, key: str) -> str | None:
        for name, value in self.pairs:
            if name == key.lower():
                return value
        return None


@dataclass
class SlurmConf:
    lines: list[Line] = field(default_factory=list)
    includes: list[Line] = field(default_factory=list)
    # Each file left unread (Pharos's own), with the index in ``lines`` where Slurm reads it.
    skipped: list[tuple[int, Line]] = field(default_factory=list)

    def read_at(self, path: str) -> int | None:
        """Where Slurm reads a file left unread, as an index in ``lines``: its last Include."""
        found = [index for index, include in self.skipped if include.value == path]
        return found[-1] if found else None

    def last(self, key: str) -> Line | None:
        found = [line for line in self.lines if line.key == key.lower()]
        return found[-1] if found else None

    def all(self, key: str) -> list[Line]:
        return [line for line in self.lines if line.key == key.lower()]

    def records(self, key: str) -> dict[str, Line]:
        """NodeName or PartitionName lines by each name they define (a hostlist is expanded)."""
        named = {}
        for line in self.all(key):
            for name in expand_hostlist(line.value):
                named[name] = line
        return named


def _pairs(text: str) -> list[tuple[str, str]]:
    pairs = []
    for word in shlex.split(text, comments=False, posix=True):
        key, sep, value = word.partition("=")
        if sep:
            pairs.append((key.lower(), value))
    return pairs


def _strip_comment(text: str) -> str:
    # "\#" is a literal hash in slurm.conf; anything else from "#" on is a comment.
    return re.sub(r"(?<!\\)#.*", "", text).replace("\\#", "#").strip()


def read(path: str, skip: tuple[str, ...] = (), _depth: int = 0) -> SlurmConf:
    """Read slurm.conf and every file it includes. Files in ``skip`` are not read: Pharos's own."""
    if _depth > 10:
        raise SlurmConfError(f"{path}: more than 10 levels of Include; is a file including itself?")
    conf = SlurmConf()
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise SlurmConfError(f"cannot read {path}: {error.strerror}") from error
    for number, raw in enumerate(text.splitlines(), start=1):
        content = _strip_comment(raw)
        if not content:
            continue
        words = content.split(None, 1)
        if words[0].lower() == "include" and len(words) == 2:
            target = words[1].strip()
            if not os.path.isabs(target):
                target = os.path.join(os.path.dirname(path), target)
            line = Line(path, number, "include", target)
            conf.includes.append(line)
            if target in skip:
                conf.skipped.append((len(conf.lines), line))
            elif os.path.exists(target):
                included = read(target, skip, _depth + 1)
                offset = len(conf.lines)
                conf.lines.extend(included.lines)
                conf.includes.extend(included.includes)
                conf.skipped.extend((offset + index, include) for index, include in included.skipped)
            continue
        pairs = _pairs(content)
        if not pairs:
            # The line itself is left out: slurm.conf and slurmdbd.conf may hold a password.
            raise SlurmConfError(f"{path} line {number} is not Key=Value (nor 'Include <path>')")
        key, value = pairs[0]
        record = key in RECORD_KEYS
        conf.lines.append(Line(path, number, key, value, tuple(pairs) if record else ()))
        if not record:
            conf.lines.extend(Line(path, number, k, v) for k, v in pairs[1:])
    return conf


def expand_hostlist(text: str) -> list[str]:
    """Slurm's host lists: ``cn[001-003,007],dtn01`` names cn001, cn002, cn003, cn007, dtn01."""
    names = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*", text):
        match = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", part)
        if not match:
            names.append(part)
            continue
        prefix, ranges, suffix = match.groups()
        for piece in ranges.split(","):
            low, _dash, high = piece.partition("-")
            width = len(low)
            names.extend(
                f"{prefix}{number:0{width}d}{suffix}"
                for number in range(int(low), int(high or low) + 1)
            )
    return names


def seconds(text: str) -> int | None:
    """Slurm's time formats: minutes, M:S, H:M:S, D-H, D-H:M and D-H:M:S."""
    days, _dash, clock = text.strip().rpartition("-") if "-" in text else ("0", "", text.strip())
    try:
        day_count = int(days)
        fields = [int(part) for part in clock.split(":")]
    except ValueError:
        return None
    if "-" in text:
        fields += [0] * (3 - len(fields))
        hours, minutes, secs = fields[:3]
    elif len(fields) == 1:
        hours, minutes, secs = 0, fields[0], 0
    elif len(fields) == 2:
        hours, (minutes, secs) = 0, fields
    else:
        hours, minutes, secs = fields[:3]
    return ((day_count * 24 + hours) * 60 + minutes) * 60 + secs


@dataclass(frozen=True)
class Finding:
    where: str
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.where}: {self.problem} {self.fix}"


@dataclass(frozen=True)
class AdoptWants:
    """What Pharos adds to a Site's Slurm: its own file, the staging partition and Prologs."""

    include: str
    staging_partition: str
    staging_nodes: tuple[str, ...]
    prologs: tuple[str, ...]
    private_data: tuple[str, ...] = ("accounts", "jobs", "reservations", "usage", "users")


def _value_check(conf, path, key, wanted, holds, default, reason):
    line = conf.last(key)
    if line is None:
        if holds(default):
            return None
        return Finding(path, f"no {key} line (the default is {default}); {reason}",
                       f"Add the line '{key}={wanted}'.")
    if holds(line.value):
        return None
    return Finding(line.where, f"{key}={line.value}; {reason}",
                   f"Change the line to '{key}={wanted}'.")


def preconditions(conf: SlurmConf, path: str, wants: AdoptWants) -> list[Finding]:
    """The Site's settings Pharos needs and never changes: each one that does not hold."""
    unmet = []
    if not any(line.value == wants.include for line in conf.includes):
        unmet.append(Finding(
            path,
            f"no 'Include {wants.include}' line; Pharos's partition and Prologs reach Slurm "
            "through that file alone.",
            f"On every node, create the file empty first (install -m 0644 /dev/null "
            f"{wants.include}; slurmctld does not start while an Include names a missing "
            f"file), then add the line 'Include {wants.include}' at the end of {path}.",
        ))
    limits = "Pharos's node-hour allocations are association limits (GrpTRESMins)"
    checks = [
        ("AccountingStorageType", "accounting_storage/slurmdbd",
         lambda v: v == "accounting_storage/slurmdbd", "none",
         "the associations live in slurmdbd."),
        ("AccountingStorageEnforce", "associations,limits,qos",
         lambda v: "limits" in v.lower().split(","), "none",
         f"{limits}, which Slurm enforces only with 'limits'; keep the values already there."),
        ("PriorityType", "priority/multifactor",
         lambda v: v == "priority/multifactor", "priority/multifactor",
         "the usage an allocation spends is counted by the multifactor plugin."),
        ("PriorityDecayHalfLife", "0", lambda v: seconds(v) == 0, "7-0",
         f"{limits}: spent node-hours must not decay."),
        ("PriorityUsageResetPeriod", "NONE", lambda v: v.upper() == "NONE", "NONE",
         f"{limits}: spent node-hours must not be reset by the calendar."),
        ("PriorityCalcPeriod", "1", lambda v: seconds(v) == 60, "5",
         "usage is counted every minute, so that a spent allocation stops new jobs promptly."),
    ]
    for key, wanted, holds, default, reason in checks:
        finding = _value_check(conf, path, key, wanted, holds, default, reason)
        if finding:
            unmet.append(finding)
    nodes = conf.records("NodeName")
    for node in wants.staging_nodes:
        if node not in nodes:
            unmet.append(Finding(
                path, f"no NodeName line defines the staging node {node}.",
                f"Add {node} to the Site's nodes, as for any node that runs jobs.",
            ))
    alternatives = conf.last("AuthAltTypes")
    if alternatives and not takes_jwt(conf):
        kept = [item for item in alternatives.value.split(",") if item]
        unmet.append(Finding(
            alternatives.where,
            f"AuthAltTypes={alternatives.value} has no auth/jwt; slurmrestd takes member "
            "tokens as JWTs.",
            f"Change the line to 'AuthAltTypes={','.join(kept + ['auth/jwt'])}'.",
        ))
    unmet.extend(token_trust(conf, path, wants.include))
    unmet.extend(flags_check(conf, path, "PrivateData", wants.private_data,
                             "members would see each other's jobs, associations and usage."))
    unmet.extend(flags_check(conf, path, "AccountingStoreFlags", ("job_comment",),
                             "the Runtime finds a job in accounting by its comment."))
    return unmet


def dbd_preconditions(conf: SlurmConf, path: str, wants: AdoptWants) -> list[Finding]:
    """What Pharos needs of the Site's slurmdbd.conf: the same privacy and token trust."""
    return [*flags_check(conf, path, "PrivateData", wants.private_data,
                         "members would read each other's jobs, associations and usage from accounting."),
            *token_trust(conf, path)]


def flags_check(conf, path, key, wanted, reason) -> list[Finding]:
    """A comma-separated set of flags holds each of ``wanted``; the Site's other flags stay."""
    line = conf.last(key)
    present = [flag for flag in (line.value.split(",") if line else []) if flag]
    if key.lower() == "privatedata" and "all" in (flag.lower() for flag in present):
        return []
    missing = [flag for flag in wanted if flag not in (item.lower() for item in present)]
    if not missing:
        return []
    if line is None:
        return [Finding(path, f"no {key} line; {reason}", f"Add the line '{key}={','.join(wanted)}'.")]
    return [Finding(line.where, f"{key}={line.value} lacks {','.join(missing)}; {reason}",
                    f"Change the line to '{key}={','.join(present + missing)}'.")]


def takes_jwt(conf: SlurmConf) -> bool:
    """Whether the Site's own lines turn JWTs on: its AuthAltTypes read last names auth/jwt."""
    alternatives = conf.last("AuthAltTypes")
    return alternatives is not None and "auth/jwt" in alternatives.value.split(",")


TRUST_REASON = "Member tokens are HS256, and only the Site's issuer mints them."


def _trust_problems(value: str) -> list[str]:
    """What makes a value of AuthAltParameters trust more than the HS256 key, as Slurm reads it.

    Slurm 24.11's auth/jwt takes ``jwks=`` from the start of a comma-separated item and finds
    ``userclaimfield=`` anywhere in the value, both in lower case; the check takes them in any
    case too. slurmctld finds ``disable_token_creation`` anywhere in the value, in lower case
    alone; the check wants it as an item of its own, exactly so."""
    items = [item for item in value.split(",") if item]
    problems = []
    if any(item.strip().lower().startswith("jwks=") for item in items):
        problems.append("jwks= makes slurmctld take tokens that another issuer signed")
    if "userclaimfield=" in value.lower():
        problems.append("userclaimfield= takes the user from a claim another issuer fills")
    if "disable_token_creation" not in items:
        problems.append("without disable_token_creation every user and job may run 'scontrol token'")
    return problems


def _trusted(value: str) -> str:
    """The value with what trusts another issuer taken out and disable_token_creation in."""
    items = [item for item in value.split(",") if item]
    kept = [item for item in items
            if not item.strip().lower().startswith("jwks=") and "userclaimfield=" not in item.lower()]
    if "disable_token_creation" not in kept:
        kept.append("disable_token_creation")
    return ",".join(kept)


def token_trust(conf: SlurmConf, path: str, include: str | None = None) -> list[Finding]:
    """The Site's HS256 key alone is trusted, and only root and SlurmUser mint a Slurm token.

    ``jwks=`` makes slurmctld take tokens that an identity provider signed, ``userclaimfield=``
    takes the user from a claim the provider fills (a provider's name ``slurm`` becomes that
    account), and without ``disable_token_creation`` every user and job runs ``scontrol token``.

    Every AuthAltParameters line of the Site's is checked, wherever it stands and whether or not
    the Site sets AuthAltTypes: adopt mode always turns JWTs on, and a line that another one
    overrides today is the value Slurm takes once that other line moves. ``include`` is Pharos's
    own file, read where its Include stands: when the Site sets no AuthAltTypes, that file sets
    AuthAltTypes and AuthAltParameters with Pharos's key, and a Site AuthAltParameters line
    after the Include replaces Pharos's (Slurm takes the value read last)."""
    pharos_at = conf.read_at(include) if include and not takes_jwt(conf) else None
    found = []
    for index, line in enumerate(conf.lines):
        if line.key != "authaltparameters":
            continue
        problems = _trust_problems(line.value)
        if pharos_at is not None and index >= pharos_at:
            problems.insert(0, f"it stands after 'Include {include}' while the Site sets no AuthAltTypes, so "
                               "Slurm takes it in place of the AuthAltParameters in Pharos's file (Pharos's "
                               "HS256 key, disable_token_creation and max_token_lifespan)")
            fix = ("Remove the line: while the Site sets no AuthAltTypes, Pharos's file sets AuthAltParameters. "
                   "To keep a key of the Site's own instead, add the line 'AuthAltTypes=auth/jwt' and change "
                   f"this one to 'AuthAltParameters={_trusted(line.value)}'.")
        else:
            fix = f"Change the line to 'AuthAltParameters={_trusted(line.value)}'."
        if problems:
            found.append(Finding(line.where, f"AuthAltParameters={line.value}: {'; '.join(problems)}. {TRUST_REASON}", fix))
    if takes_jwt(conf) and conf.last("AuthAltParameters") is None:
        problems = "; ".join(_trust_problems(""))
        found.append(Finding(path, f"no AuthAltParameters line: {problems}. {TRUST_REASON}",
                             "Add the line 'AuthAltParameters=disable_token_creation'."))
    return found


def conflicts(conf: SlurmConf, wants: AdoptWants) -> list[Finding]:
    """Site lines that already mean something else for what Pharos would write."""
    found = []
    partition = conf.records("PartitionName").get(wants.staging_partition)
    if partition:
        found.append(Finding(
            partition.where,
            f"the Site already defines a partition named {wants.staging_partition}, the "
            "name of Pharos's staging partition.",
            "Rename one of the two (slurm_staging_partition names Pharos's).",
        ))
    plugins = conf.last("JobSubmitPlugins")
    if plugins:
        found.append(Finding(
            plugins.where,
            f"the Site runs job submit plugins of its own (JobSubmitPlugins={plugins.value}); "
            f"Pharos keeps its service accounts from running jobs with the lua plugin and a "
            f"job_submit.lua of its own, named in {wants.include}, and Slurm takes one "
            "JobSubmitPlugins line.",
            "Remove the line if the Site can do without those plugins; adopt mode cannot merge "
            "them with Pharos's yet (docs/production.md, \"Conflicts\").",
        ))
    for line in conf.all("Prolog"):
        if line.value in wants.prologs:
            found.append(Finding(
                line.where,
                f"the Site runs {line.value} as a Prolog of its own; Pharos installs its own "
                "program at that path.",
                "Remove the line, or move the Site's program to another path.",
            ))
    return found


def jwt_key_path(conf: SlurmConf) -> str | None:
    """The HS256 key a Site's slurmctld already trusts, or None when it takes no JWT."""
    if not takes_jwt(conf):
        return None
    parameters = conf.last("AuthAltParameters")
    for item in (parameters.value.split(",") if parameters else []):
        key, _equals, value = item.partition("=")
        if key == "jwt_key":
            return value
    state = conf.last("StateSaveLocation")
    return os.path.join(state.value if state else "/var/spool/slurmctld", "jwt_hs256.key")
