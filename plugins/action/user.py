# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible.builtin.user, with an account already in place found by one shell command."""

from __future__ import annotations

import re
import shlex

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_on_host

NAME = re.compile(r"[a-z_][a-z0-9_.-]*\$?")
PATH = re.compile(r"/[A-Za-z0-9_./+-]*")


def plain_id(value):
    """An ID given as a number or its digits, as digits; None when not given; False otherwise."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if value >= 0 else False
    if isinstance(value, str) and value.isdigit():
        return str(int(value))
    return False


def local_files_read(passwd_names=(), group_names=()):
    """The shell command that reads the lines of /etc/passwd and /etc/group for these names."""
    commands = [f"getent -s files passwd {shlex.quote(name)} || true" for name in passwd_names]
    commands += [f"getent -s files group {shlex.quote(name)} || true" for name in group_names]
    return " ; ".join(commands)


def other_groups(args):
    """An account step's other groups, as a list of what it gives."""
    groups = args.get("groups") or []
    if isinstance(groups, str):
        return [part.strip() for part in groups.split(",") if part.strip()]
    return list(groups)


def wanted_groups(args):
    """An account step's primary group, then its other groups."""
    return ([args["group"]] if args.get("group") else []) + other_groups(args)


def read_local_files(action, passwd_names=(), group_names=()):
    """The lines of /etc/passwd and /etc/group for these names, read with one shell command, as
    {"passwd": {name: fields}, "group": {name: fields}}; None when the command fails."""
    probe = run_on_host(action, local_files_read(passwd_names, group_names))
    if probe["rc"] != 0:
        return None
    found = {"passwd": {}, "group": {}}
    for line in probe["stdout"].splitlines():
        fields = line.split(":")
        if len(fields) == 7 and fields[0] in passwd_names:
            found["passwd"][fields[0]] = fields
        elif len(fields) == 4 and fields[0] in group_names:
            found["group"][fields[0]] = fields
    return found


class InPlaceModule(ActionBase):
    """A module's step whose result is read on the host by `_in_place` when the host already holds
    what the step wants; otherwise the module runs with the same arguments."""

    MODULE = ""

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        found = self._in_place()
        if found is None:
            found = self._execute_module(module_name=self.MODULE, module_args=self._task.args, task_vars=task_vars)
        result.update(found)
        return result

    def _in_place(self):
        """The step's result when the host already holds what it wants, else None."""
        raise NotImplementedError


class ActionModule(InPlaceModule):
    """On a converged host every account is already as the step wants it, and the builtin module
    then costs about half a CPU second of Python on the host to say so. A plain step's account is
    read from the host's own files with one shell command instead; only where it is not in place
    does the builtin module run, with the same arguments."""

    MODULE = "ansible.builtin.user"
    # Options that only matter when the account is made.
    AT_CREATION = {"system", "create_home"}
    PLAIN = {"name", "state", "uid", "group", "groups", "append", "shell", "home"} | AT_CREATION

    def _in_place(self):
        """The step's result when its account is in place, else None."""
        args = self._task.args
        name, uid, group = args.get("name"), plain_id(args.get("uid")), args.get("group")
        groups = other_groups(args)
        if (not set(args) <= self.PLAIN or args.get("state", "present") != "present" or uid is False
                or not isinstance(name, str) or not NAME.fullmatch(name)
                or (group is not None and not (isinstance(group, str) and NAME.fullmatch(group)))
                or not all(isinstance(extra, str) and NAME.fullmatch(extra) for extra in groups)
                or (groups and not boolean(args.get("append", False), strict=False))
                or any(args.get(key) is not None and not (isinstance(args[key], str) and PATH.fullmatch(args[key]))
                       for key in ("shell", "home"))):
            return None
        found = read_local_files(self, [name], wanted_groups(args))
        if found is None or name not in found["passwd"]:
            return None
        found_uid, found_gid, found_home, found_shell = (found["passwd"][name][index] for index in (2, 3, 5, 6))
        if (uid not in (None, found_uid)
                or (group and (group not in found["group"] or found["group"][group][2] != found_gid))
                or any(extra not in found["group"] or name not in found["group"][extra][3].split(",") for extra in groups)
                or args.get("shell") not in (None, found_shell) or args.get("home") not in (None, found_home)):
            return None
        return {"changed": False, "in_place": True, "name": name, "state": "present", "uid": int(found_uid),
                "group": int(found_gid), "home": found_home, "shell": found_shell}
