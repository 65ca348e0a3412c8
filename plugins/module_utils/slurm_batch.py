# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A plan written to Slurm in a fixed number of sacctmgr processes, whatever its size.

Additions go in one ``sacctmgr load`` and changed values of existing objects in a second:
a load that both adds and modifies was seen to drop its modifications while reporting them
(Slurm 24.11.5). Moves, removals and coordinators go as commands on one sacctmgr's standard
input. The cost of a write is the commits inside slurmdbd, so a load (one commit for all)
is also by far the fastest way (docs/slurm_account.md) for many objects.

A load first reads the cluster's whole tree: 4.6 s at 5,000 associations, where one
``modify`` command costs about 50 ms. A few changed values therefore go as ``modify``
commands on one sacctmgr's standard input instead: as many as a fiftieth of the tree's
associations, at least one.
"""

from __future__ import annotations

from ansible_collections.pharos.hpc.plugins.module_utils.sacctmgr import (
    LIMITS, TRES_LIMITS, format_limit, format_tres_change,
)

LOAD_KEYS = {"MaxWall": "MaxWallDurationPerJob"}
MODIFICATIONS = ("modify_account", "modify_association", "set_default_account")
ASSOCIATIONS_PER_MODIFY_COMMAND = 50


def _load_limits(settings, command=False):
    """Fields for the limits among {field: (old, new)}; a cleared limit or TRES gets -1.

    For a load file by default; for the ``set`` clause of a ``modify`` command with command=True.
    """
    fields = []
    for name, (old, new) in sorted(settings.items()):
        if name not in LIMITS:
            continue
        key = name if command else LOAD_KEYS.get(name, name)
        if name in TRES_LIMITS:
            text = format_tres_change(old, new)
            if text:
                fields.append("%s=%s" % (key, text))
        elif name == "QOS":
            if command:
                fields.append("QOS=%s" % (format_limit(name, new) if new else ""))
            else:
                fields.append("QOS='%s'" % format_limit(name, new) if new else "QOS=''")
        else:
            fields.append("%s=%s" % (key, format_limit(name, new)))
    return fields


def _settings_from_values(values):
    return dict((name, (None, value)) for name, value in values.items())


def _common_fields(values):
    """Description, organisation and fairshare, each when given."""
    fields = ["%s='%s'" % (key, values[field]) for field, key in (("description", "Description"), ("organization", "Organization"))
              if values.get(field) is not None]
    if values.get("fairshare") is not None:
        fields.append("Fairshare=%s" % values["fairshare"])
    return fields


def _new_values(settings):
    return dict((name, new) for name, (_old, new) in settings.items())


def _line(kind, name, fields):
    return ":".join(["%s - '%s'" % (kind, name)] + fields)


def _load_file(cluster, blocks):
    """blocks: [(parent, line)], grouped under each parent in the order first seen."""
    if not blocks:
        return None
    lines = ["Cluster - '%s'" % cluster]
    parents = []
    grouped = {}
    for parent, line in blocks:
        if parent not in grouped:
            parents.append(parent)
            grouped[parent] = []
        grouped[parent].append(line)
    for parent in parents:
        lines.append("Parent - '%s'" % parent)
        lines.extend(grouped[parent])
    return "\n".join(lines) + "\n"


def additions_file(cluster, changes):
    blocks = []
    for change in changes:
        if change["action"] == "add_account":
            fields = _common_fields(change) + _load_limits(_settings_from_values(change["limits"]))
            blocks.append((change["parent"], _line("Account", change["account"], fields)))
    for change in changes:
        if change["action"] == "add_association":
            fields = ["DefaultAccount='%s'" % change["default_account"]] + _common_fields(change)
            fields += _load_limits(_settings_from_values(change["limits"]))
            blocks.append((change["account"], _line("User", change["user"], fields)))
    return _load_file(cluster, blocks)


def modifications_file(cluster, changes, current):
    blocks = []
    for change in changes:
        if change["action"] == "modify_account":
            fields = _common_fields(_new_values(change["settings"])) + _load_limits(change["settings"])
            parent = current["accounts"][change["account"]]["parent"]
            blocks.append((parent, _line("Account", change["account"], fields)))
        elif change["action"] == "modify_association":
            fields = _common_fields(_new_values(change["settings"])) + _load_limits(change["settings"])
            blocks.append((change["account"], _line("User", change["user"], fields)))
        elif change["action"] == "set_default_account":
            blocks.append((change["to"], _line("User", change["user"], ["DefaultAccount='%s'" % change["to"]])))
    return _load_file(cluster, blocks)


def modification_commands(cluster, changes):
    """The changed values of existing objects as ``modify`` commands, one per object."""
    commands = []
    for change in changes:
        if change["action"] == "modify_account":
            fields = _common_fields(_new_values(change["settings"])) + _load_limits(change["settings"], command=True)
            commands.append("modify account where name=%s cluster=%s set %s" % (change["account"], cluster, " ".join(fields)))
        elif change["action"] == "modify_association":
            fields = _common_fields(_new_values(change["settings"])) + _load_limits(change["settings"], command=True)
            commands.append("modify user where name=%s account=%s cluster=%s set %s"
                            % (change["user"], change["account"], cluster, " ".join(fields)))
        elif change["action"] == "set_default_account":
            commands.append("modify user where name=%s cluster=%s set DefaultAccount=%s"
                            % (change["user"], cluster, change["to"]))
    return commands


def modify_by_commands(changes, current):
    """Whether the plan's changed values cost less as modify commands than as a load of the tree."""
    count = sum(1 for change in changes if change["action"] in MODIFICATIONS)
    tree = len(current["accounts"]) + len(current["associations"])
    return count <= max(1, tree // ASSOCIATIONS_PER_MODIFY_COMMAND)


def session_commands(cluster, changes):
    """Commands for one sacctmgr reading its standard input, in the order they must run."""
    commands = []
    for change in changes:
        if change["action"] == "move_account":
            commands.append("modify account where name=%s cluster=%s set parent=%s"
                            % (change["account"], cluster, change["to"]))
    by_accounts = {}
    for change in changes:
        if change["action"] == "remove_associations":
            by_accounts.setdefault(tuple(change["accounts"]), []).append(change["user"])
    for accounts, users in sorted(by_accounts.items()):
        commands.append("delete user where name=%s account=%s cluster=%s"
                        % (",".join(sorted(users)), ",".join(accounts), cluster))
    whole_users = sorted(change["user"] for change in changes if change["action"] == "remove_user")
    if whole_users:
        commands.append("delete user where name=%s cluster=%s" % (",".join(whole_users), cluster))
    for change in changes:
        if change["action"] == "remove_accounts":
            # deepest first: an account is removed only once nothing hangs below it
            for account in change["accounts"]:
                commands.append("delete account where name=%s cluster=%s" % (account, cluster))
    for change in changes:
        if change["action"] == "add_coordinators":
            commands.append("add coordinator account=%s names=%s" % (change["account"], ",".join(change["users"])))
        elif change["action"] == "remove_coordinators":
            commands.append("delete coordinator account=%s names=%s" % (change["account"], ",".join(change["users"])))
    return commands


def batches(cluster, changes, current):
    """The writes of a plan, in this order: additions (a load), modifications (a load, or
    modify commands on one sacctmgr), then moves, removals and coordinators (one sacctmgr)."""
    by_commands = modify_by_commands(changes, current)
    return {
        "additions": additions_file(cluster, changes),
        "modifications": None if by_commands else modifications_file(cluster, changes, current),
        "modification_commands": modification_commands(cluster, changes) if by_commands else [],
        "session": session_commands(cluster, changes),
    }
