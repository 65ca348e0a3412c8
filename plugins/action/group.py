# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible.builtin.group, with a group already in place found by one shell command."""

from __future__ import annotations

from ansible_collections.pharos.hpc.plugins.action.user import NAME, InPlaceModule, plain_id, read_local_files


class ActionModule(InPlaceModule):
    """As pharos.hpc.user: a plain step's group is read from the host's /etc/group with one shell
    command; only where it is not in place does the builtin module run, with the same arguments."""

    MODULE = "ansible.builtin.group"
    PLAIN = {"name", "state", "gid", "system"}

    def _in_place(self):
        """The step's result when its group is in place, else None."""
        args = self._task.args
        name, gid = args.get("name"), plain_id(args.get("gid"))
        if (not set(args) <= self.PLAIN or args.get("state", "present") != "present" or gid is False
                or not isinstance(name, str) or not NAME.fullmatch(name)):
            return None
        found = read_local_files(self, group_names=[name])
        if found is None or name not in found["group"] or gid not in (None, found["group"][name][2]):
            return None
        return {"changed": False, "in_place": True, "name": name, "state": "present",
                "gid": int(found["group"][name][2])}
