# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible.builtin.file, with a path already as the step wants it found by one shell command."""

from __future__ import annotations

import shlex

from ansible_collections.pharos.hpc.plugins.action.copy import NAME, wanted_mode
from ansible_collections.pharos.hpc.plugins.action.user import InPlaceModule
from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_on_host

# What `stat -c %F` calls each kind of file a step may want.
KINDS = {"directory": {"directory"}, "file": {"regular file", "regular empty file"}}


def plain_owner(value):
    """A name or the digits of an ID, as given; None when not given; False otherwise."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    if isinstance(value, str) and (value.isdigit() or NAME.fullmatch(value)):
        return value
    return False


def same_id(wanted, name, number):
    """Whether an owner or group given by name or by digits is the one found."""
    return wanted is None or wanted == (number if wanted.isdigit() else name)


def path_read(path):
    """The shell command that reads a path's kind, owners and mode, or "absent", without following it."""
    quoted = shlex.quote(path)
    return (f"if [ -e {quoted} ] || [ -L {quoted} ]; then stat -c '%F|%U|%G|%u|%g|%a' -- {quoted}; "
            f"else echo absent; fi")


class ActionModule(InPlaceModule):
    """On a converged host every directory and file a step keeps is already as it wants, and the
    builtin module then costs about half a CPU second of Python on the host to say so. A plain
    step's path is read with one shell command instead; only where it is not as wanted does the
    builtin module run, with the same arguments."""

    MODULE = "ansible.builtin.file"
    PLAIN = {"path", "state", "owner", "group", "mode"}

    def _in_place(self):
        """The step's result when its path is as wanted, else None."""
        args = self._task.args
        path, state, mode = args.get("path"), args.get("state"), wanted_mode(args.get("mode"))
        owner, group = plain_owner(args.get("owner")), plain_owner(args.get("group"))
        if (not set(args) <= self.PLAIN or state not in (None, "directory", "file", "absent") or mode is False
                or owner is False or group is False or not isinstance(path, str) or not path.startswith("/")):
            return None
        probe = run_on_host(self, path_read(path))
        found = probe["stdout"].strip()
        if probe["rc"] != 0:
            return None
        if found == "absent":
            return {"changed": False, "in_place": True, "path": path, "state": "absent"} if state == "absent" else None
        fields = found.split("|")
        if state == "absent" or len(fields) != 6:
            return None
        kind, owner_name, group_name, uid, gid, found_mode = fields
        if (kind not in KINDS[state or "file"]
                or not same_id(owner, owner_name, uid) or not same_id(group, group_name, gid)
                or mode not in (None, int(found_mode, 8))):
            return None
        return {"changed": False, "in_place": True, "path": path, "state": "directory" if kind == "directory" else "file",
                "owner": owner_name, "group": group_name, "uid": int(uid), "gid": int(gid),
                "mode": "0%03o" % int(found_mode, 8)}
