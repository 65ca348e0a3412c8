# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible.builtin.copy, with a file already in place found by one shell command."""

from __future__ import annotations

import hashlib
import re
import shlex

from ansible.errors import AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.plugins.action.copy import ActionModule as CopyAction

from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_on_host

# The arguments of a step that only puts a file's bytes, owner, group and mode in place.
PLAIN = {"src", "content", "dest", "owner", "group", "mode", "follow"}
OCTAL_MODE = re.compile(r"0?[0-7]{3,4}")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\$?")


def wanted_mode(mode):
    """The mode as a number, None when not given, or False when it is not a plain octal mode."""
    if mode is None:
        return None
    if isinstance(mode, int) and not isinstance(mode, bool):
        return mode
    if isinstance(mode, str) and OCTAL_MODE.fullmatch(mode):
        return int(mode, 8)
    return False


def file_read(dest):
    """The shell command that reads a file's kind, owner, group, mode and checksum."""
    quoted = shlex.quote(dest)
    return f"stat -c '%F|%U|%G|%a' -- {quoted} && sha1sum -- {quoted}"


class InPlaceCopy(CopyAction):
    """On a converged host nearly every file is already as the step wants it, and the builtin
    action then runs two modules there (stat, then file for the attributes), each about half a CPU
    second of Python on the host. A plain step's file is read with one shell command instead; only
    where it is not in place does the builtin action run."""

    def run(self, tmp=None, task_vars=None):
        found = self._in_place(task_vars)
        if found is None:
            return super().run(tmp, task_vars)
        # The builtin makes its remote temporary directory before anything else: two more round
        # trips (the remote home, then mkdir) and a third to remove it. A file in place needs none.
        self.TRANSFERS_FILES = False
        result = ActionBase.run(self, tmp, task_vars)
        result.update(found)
        return result

    def _in_place(self, task_vars):
        """The step's result when its file is in place, else None."""
        args = self._task.args
        dest, mode = args.get("dest"), wanted_mode(args.get("mode"))
        owner, group = args.get("owner"), args.get("group")
        if (not set(args) <= PLAIN or boolean(args.get("follow", False), strict=False) or mode is False
                or not isinstance(dest, str) or not dest.startswith("/") or dest.endswith("/")
                or any(name is not None and not (isinstance(name, str) and NAME.fullmatch(name))
                       for name in (owner, group))):
            return None
        data = self._wanted_bytes(args)
        if data is None:
            return None
        probe = run_on_host(self, file_read(dest))
        lines = probe["stdout"].splitlines()
        if probe["rc"] != 0 or len(lines) != 2:
            return None
        kind, found_owner, found_group, found_mode = lines[0].split("|")
        checksum = hashlib.sha1(data).hexdigest()  # noqa: S324 - the checksum the builtin action compares
        if (kind != "regular file" or lines[1].split()[0] != checksum or owner not in (None, found_owner)
                or group not in (None, found_group) or mode not in (None, int(found_mode, 8))):
            return None
        return {"changed": False, "in_place": True, "dest": dest, "path": dest, "checksum": checksum,
                "owner": found_owner, "group": found_group, "mode": "0%03o" % int(found_mode, 8), "state": "file",
                "msg": f"Already in place: {dest}."}

    def _wanted_bytes(self, args):
        """The bytes the step would write, or None when they are not plain to read here."""
        if "content" in args:
            return args["content"].encode("utf-8") if isinstance(args["content"], str) and "src" not in args else None
        if not isinstance(args.get("src"), str):
            return None
        try:
            source = self._find_needle("files", args["src"])
            with open(source, "rb") as handle:
                return handle.read()
        except (AnsibleError, OSError):
            return None  # a directory, or a source the builtin action reports better


ActionModule = InPlaceCopy
