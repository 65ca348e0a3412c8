# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading Slurm's association tree with sacctmgr, and values compared the way Slurm stores them.

Slurm folds names, descriptions and organisations to lower case, prints memory TRES with a
unit (``mem=1G``), prints wall limits as ``[days-]hours:minutes:seconds`` and leaves an
unset limit empty. Every value read or declared goes through the same normalisers here, so
that a declared ``GrpTRES: mem=1024`` equals a stored ``mem=1G`` and no run reports a change
that Slurm would not make.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.pharos.hpc.plugins.module_utils.bounded_command import CommandTimeout

ACCOUNT_ROOT = "root"

TRES_LIMITS = ("GrpTRESMins", "GrpTRES")
COUNT_LIMITS = ("MaxSubmitJobs", "GrpSubmitJobs")
LIMITS = TRES_LIMITS + COUNT_LIMITS + ("MaxWall", "QOS")

# WOPLimits: each association's own limits, not those it inherits from its parents.
ASSOCIATION_FIELDS = ("Account", "User", "ParentName", "Partition", "Fairshare") + LIMITS
ACCOUNT_FIELDS = ("Account", "Description", "Organization", "Coordinators")
USER_FIELDS = ("User", "DefaultAccount", "AdminLevel")

MEMORY_UNITS_MIB = {"": 1, "m": 1, "g": 1024, "t": 1024 * 1024, "p": 1024 * 1024 * 1024}
MEMORY_TRES = ("mem", "vmem")


class SlurmValueError(ValueError):
    """A declared value Slurm would not accept; the message names it and says why."""


def read_commands(sacctmgr, cluster):
    """The three reads of the whole tree: associations, accounts with coordinators, users."""
    base = [sacctmgr, "--noheader", "--parsable2"]
    return {
        "associations": base + ["show", "associations", "WOPLimits",
                                "format=" + ",".join(ASSOCIATION_FIELDS), "where", "cluster=" + cluster],
        "accounts": base + ["show", "accounts", "withcoord", "format=" + ",".join(ACCOUNT_FIELDS)],
        # DefaultAccount is per cluster: without the condition sacctmgr shows another cluster's.
        "users": base + ["show", "users", "format=" + ",".join(USER_FIELDS), "where", "cluster=" + cluster],
    }


def targeted_read_commands(sacctmgr, cluster, accounts, users):
    """Reads of only the named accounts and users: their associations, accounts and user records."""
    base = [sacctmgr, "--noheader", "--parsable2"]
    association_read = base + ["show", "associations", "WOPLimits", "format=" + ",".join(ASSOCIATION_FIELDS),
                               "where", "cluster=" + cluster]
    commands = {}
    if accounts:
        names = ",".join(sorted(accounts))
        commands["associations of accounts"] = association_read + ["accounts=" + names]
        commands["accounts"] = base + ["show", "accounts", "withcoord", "format=" + ",".join(ACCOUNT_FIELDS),
                                       "where", "names=" + names]
    if users:
        names = ",".join(sorted(users))
        commands["associations of users"] = association_read + ["users=" + names]
        commands["users"] = base + ["show", "users", "format=" + ",".join(USER_FIELDS),
                                    "where", "cluster=" + cluster, "names=" + names]
    return commands


def parse_rows(text, fields):
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        values = line.split("|")
        if len(values) != len(fields):
            raise SlurmValueError("sacctmgr printed %d fields where %d were asked (%s): %r"
                                  % (len(values), len(fields), ",".join(fields), line))
        rows.append(dict(zip(fields, values)))
    return rows


def lower_name(name):
    return str(name).strip().lower()


def normalise_count(value, what="a count"):
    """None when unset; -1 (Slurm's "clear") is unset too."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise SlurmValueError("%s must be an integer, not %r" % (what, value))
    try:
        number = int(str(value).strip())
    except ValueError:
        raise SlurmValueError("%s must be an integer, not %r" % (what, value))
    if number < -1:
        raise SlurmValueError("%s must be 0 or more (or -1 to clear it), not %r" % (what, value))
    return None if number == -1 else number


def _tres_amount(name, amount, what):
    amount = str(amount).strip().lower()
    if name in MEMORY_TRES:
        match = re.match(r"^(-?\d+)([mgtp]?)$", amount)
        if not match:
            raise SlurmValueError("%s: %s=%s is not a memory size (a number of MiB, or with M, G, T)"
                                  % (what, name, amount))
        number = int(match.group(1))
        return number if number == -1 else number * MEMORY_UNITS_MIB[match.group(2)]
    if not re.match(r"^-?\d+$", amount):
        raise SlurmValueError("%s: %s=%s is not an integer" % (what, name, amount))
    return int(amount)


def normalise_tres(value, what="a TRES limit"):
    """A TRES limit as {name: amount}; memory in MiB; a name set to -1 is left out (cleared).

    Accepts Slurm's text (``cpu=4,mem=1G,gres/gpu=2``) or a mapping. None when nothing is set.
    """
    if value is None or str(value).strip() in ("", "-1"):
        return None
    if isinstance(value, dict):
        pairs = list(value.items())
    else:
        pairs = []
        for item in str(value).split(","):
            if not item.strip():
                continue
            if "=" not in item:
                raise SlurmValueError("%s: %r is not name=amount (for example node=600)" % (what, item.strip()))
            pairs.append(item.split("=", 1))
    tres = {}
    for name, amount in pairs:
        name = lower_name(name)
        number = _tres_amount(name, amount, what)
        if number < -1:
            raise SlurmValueError("%s: %s=%s must be 0 or more (or -1 to clear it)" % (what, name, amount))
        if number != -1:
            tres[name] = number
    return tres or None


def normalise_minutes(value, what="MaxWall"):
    """A wall limit in minutes, from minutes or Slurm's [days-]hours:minutes[:seconds] forms."""
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return None if value == -1 else value
    text = str(value).strip()
    if text in ("-1", "UNLIMITED", "INFINITE"):
        return None
    match = re.match(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$", text)
    if not match:
        raise SlurmValueError("%s: %r is not a time (minutes, or [days-]hours:minutes:seconds)" % (what, value))
    days, first, second, third = match.groups()
    if days is None and second is None:
        return int(first)  # plain minutes
    if days is None and third is None:
        return int(first) + (1 if int(second) else 0)  # minutes:seconds, rounded up as Slurm does
    hours = int(first)
    minutes = int(second or 0)
    seconds = int(third or 0)
    return int(days or 0) * 1440 + hours * 60 + minutes + (1 if seconds else 0)


def normalise_qos(value):
    if value is None or value == "":
        return None
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    names = sorted({lower_name(item) for item in items if str(item).strip()})
    return tuple(names) or None


def normalise_fairshare(value):
    if value is None or value == "":
        return None
    if str(value).strip().lower() == "parent":
        return "parent"
    try:
        number = int(str(value).strip())
    except ValueError:
        raise SlurmValueError("fairshare must be a positive integer or 'parent', not %r" % (value,))
    if number < 0:
        raise SlurmValueError("fairshare must be a positive integer or 'parent', not %r" % (value,))
    return number


LIMIT_NORMALISERS = {
    "GrpTRESMins": normalise_tres,
    "GrpTRES": normalise_tres,
    "MaxSubmitJobs": normalise_count,
    "GrpSubmitJobs": normalise_count,
    "MaxWall": normalise_minutes,
    "QOS": lambda value, what=None: normalise_qos(value),
}

LIMIT_NAMES_BY_LOWER = {name.lower(): name for name in LIMITS}


def normalise_limits(limits, owner):
    """Declared limits keyed by Slurm's names (any case); only the keys given are managed."""
    normalised = {}
    for key, value in (limits or {}).items():
        name = LIMIT_NAMES_BY_LOWER.get(str(key).lower())
        if name is None:
            raise SlurmValueError("%s: unknown limit %r; the module manages %s"
                                  % (owner, key, ", ".join(LIMITS)))
        normalised[name] = LIMIT_NORMALISERS[name](value, "%s %s" % (owner, name))
    return normalised


def stored_limits(row):
    """An association row's own limits, every managed limit present (None when unset)."""
    return {name: LIMIT_NORMALISERS[name](row[name], "stored %s" % name) for name in LIMITS}


def format_limit(name, value):
    """A limit as Slurm's text for sacctmgr's load files and commands; -1 clears it."""
    if value is None:
        return "-1"
    if name in TRES_LIMITS:
        return ",".join("%s=%d" % (tres, amount) for tres, amount in sorted(value.items()))
    if name == "QOS":
        return ",".join(value)
    return str(value)


def format_tres_change(old, new):
    """The TRES text that turns old into new: names only in old are cleared with -1."""
    merged = dict((name, -1) for name in (old or {}) if name not in (new or {}))
    merged.update(new or {})
    return ",".join("%s=%d" % (tres, amount) for tres, amount in sorted(merged.items())) or None


def describe_limit(name, value):
    if value is None:
        return "unset"
    if name == "MaxWall":
        return "%d minutes" % value
    return format_limit(name, value)


def read_tree(rows_by_read):
    """The current tree from the three reads' output: accounts, user associations, users."""
    accounts = {}
    associations = {}
    descriptions = {}
    for row in parse_rows(rows_by_read["accounts"], ACCOUNT_FIELDS):
        coordinators = set(filter(None, row["Coordinators"].split(",")))
        descriptions[row["Account"]] = (row["Description"], row["Organization"], coordinators)
    for row in parse_rows(rows_by_read["associations"], ASSOCIATION_FIELDS):
        if row["Partition"]:
            continue  # partition associations are not part of the managed tree
        if row["User"]:
            associations[(row["User"], row["Account"])] = {
                "fairshare": normalise_fairshare(row["Fairshare"]),
                "limits": stored_limits(row),
            }
        else:
            description, organization, coordinators = descriptions.get(row["Account"], ("", "", set()))
            accounts[row["Account"]] = {
                "parent": row["ParentName"] or None,
                "description": description,
                "organization": organization,
                "fairshare": normalise_fairshare(row["Fairshare"]),
                "limits": stored_limits(row),
                "coordinators": coordinators,
            }
    users = {}
    for row in parse_rows(rows_by_read["users"], USER_FIELDS):
        users[row["User"]] = {"default_account": row["DefaultAccount"] or None,
                              "admin_level": row["AdminLevel"].lower()}
    return {"accounts": accounts, "associations": associations, "users": users}


def merge_tree(current, fresh, accounts, users):
    """current, with everything it knew of the named accounts and users replaced by fresh's.

    fresh is a tree read with targeted_read_commands: what is missing from it is gone from Slurm.
    """
    accounts, users = set(accounts), set(users)
    merged = {
        "accounts": dict((name, spec) for name, spec in current["accounts"].items() if name not in accounts),
        "associations": dict((key, spec) for key, spec in current["associations"].items()
                             if key[0] not in users and key[1] not in accounts),
        "users": dict((name, spec) for name, spec in current["users"].items() if name not in users),
    }
    for part in merged:
        merged[part].update(fresh[part])
    return merged


class SacctmgrError(RuntimeError):
    """A Slurm command failed; the message names the command's purpose and Slurm's answer."""


class SlurmClient:
    """The Slurm commands of the module, through run_command(argv, data=None, timeout=None) -> (rc, out, err).

    run_command is bounded_command.run_bounded in the module and a recording in the unit tests;
    it raises CommandTimeout when a command outlives ``timeout`` seconds.
    Nothing secret travels: sacctmgr authenticates with munge as the Unix user running it.
    """

    def __init__(self, run_command, cluster, sacctmgr="sacctmgr", squeue="squeue", scancel="scancel", timeout=None):
        self.run_command = run_command
        self.cluster = cluster
        self.sacctmgr = sacctmgr
        self.squeue = squeue
        self.scancel = scancel
        self.timeout = timeout
        self.processes = 0

    def _run(self, argv, purpose, data=None):
        self.processes += 1
        return self._call(argv, purpose, data)

    def _call(self, argv, purpose, data=None):
        try:
            rc, out, err = self.run_command(argv, data=data, timeout=self.timeout)
        except CommandTimeout as error:
            raise SacctmgrError("%s: %s. Slurm did not answer in time: check that slurmdbd and slurmctld answer "
                                "(sacctmgr show cluster; sdiag), or raise command_timeout if Slurm is only slow"
                                % (purpose, error))
        if rc != 0:
            raise SacctmgrError("%s failed (exit %s): %s" % (purpose, rc, (err or out).strip()))
        return out

    def read(self, accounts=None, users=None):
        """The whole tree; or, given names, only what Slurm holds of those accounts and users."""
        if accounts is None and users is None:
            commands = read_commands(self.sacctmgr, self.cluster)
        else:
            commands = targeted_read_commands(self.sacctmgr, self.cluster, accounts, users)
        # Side by side: slurmdbd answers each read on a connection of its own, and the slowest
        # read (the users of a large cluster) then sets the time of all three.
        self.processes += len(commands)
        with ThreadPoolExecutor(max_workers=max(1, len(commands))) as pool:
            running = dict((name, pool.submit(self._call, argv, "reading Slurm's %s" % name))
                           for name, argv in commands.items())
            outputs = dict((name, future.result()) for name, future in running.items())
        association_reads = [outputs.get("associations", ""), outputs.pop("associations of accounts", ""),
                             outputs.pop("associations of users", "")]
        outputs["associations"] = "\n".join(association_reads)
        outputs.setdefault("accounts", "")
        outputs.setdefault("users", "")
        return read_tree(outputs)

    def load(self, text, purpose):
        # sacctmgr reads the flat file from its standard input: nothing lands on disk.
        self._run([self.sacctmgr, "--immediate", "load", "/dev/stdin"], purpose, data=text)

    def session(self, commands, purpose):
        self._run([self.sacctmgr, "--immediate"], purpose, data="\n".join(commands) + "\n")

    def active_jobs(self, accounts):
        """(account, user, job id) of every job pending or running under the accounts."""
        if not accounts:
            return []
        out = self._run([self.squeue, "--noheader", "--format=%a|%u|%i", "--account=" + ",".join(sorted(accounts))],
                        "listing the jobs of %s" % ", ".join(sorted(accounts)))
        return [tuple(line.strip().split("|", 2)) for line in out.splitlines() if line.count("|") == 2]

    def cancel(self, job_ids):
        self._run([self.scancel] + sorted(job_ids), "cancelling jobs %s" % ", ".join(sorted(job_ids)))
