# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""pharos.hpc.service_freshness, with a unit that plainly runs its files as they are found by one
shell command."""

from __future__ import annotations

import re
import shlex

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.pharos.hpc.plugins.action.user import InPlaceModule
from ansible_collections.pharos.hpc.plugins.module_utils.service_freshness import (
    ChangedFile,
    applied_record_path,
    freshness,
    main_process_started_at,
    parse_show,
)
from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_on_host

UNIT = re.compile(r"[A-Za-z0-9:_.@-]+")
PATH = re.compile(r"/[A-Za-z0-9_./@+-]*")
# The wall clock is read first and /proc/uptime a moment later, to a hundredth of a second, so the
# unit's start is found at most a hundredth late; a file changed less than this before it is
# left to the module, which never finds it stale where this finds it fresh.
MARGIN_SECONDS = 0.1
PROPERTIES = "ActiveState,ExecMainStartTimestampMonotonic,ActiveEnterTimestampMonotonic,NeedDaemonReload"


class ActionModule(InPlaceModule):
    """On a converged host every unit runs its files as they are, and the module costs about half a
    CPU second of Python on the host to say so. A plain step's unit and files are read with one
    shell command instead. Only a unit that does not run, or one whose files all changed well
    before it took them in, is answered here; any doubt, a stale unit included, runs the module,
    which says which files changed."""

    MODULE = "pharos.hpc.service_freshness"
    PLAIN = {"unit", "paths", "unit_definition", "state"}

    def _in_place(self):
        """The step's result when the unit plainly runs its files as they are, else None."""
        args = self._task.args
        unit, paths = args.get("unit"), args.get("paths") or []
        if (not set(args) <= self.PLAIN or args.get("state", "current") != "current"
                or not isinstance(unit, str) or not UNIT.fullmatch(unit) or not isinstance(paths, list)
                or not all(isinstance(path, str) and PATH.fullmatch(path) for path in paths)):
            return None
        # The clocks first: the unit's start is on the monotonic clock, which /proc/uptime counts
        # too (with time suspended, which only makes a start look earlier).
        commands = ["date +%s.%N", "cut -d ' ' -f 1 /proc/uptime",
                    self._modified_at(applied_record_path(unit)),
                    *(self._modified_at(path) for path in paths),
                    f"systemctl show --property={PROPERTIES} -- {shlex.quote(unit)}"]
        probe = run_on_host(self, " && ".join(commands))
        lines = probe["stdout"].splitlines()
        if probe["rc"] != 0 or len(lines) < 3 + len(paths):
            return None
        try:
            now, now_monotonic = float(lines[0]), float(lines[1])
            recorded_at, *modified = (None if line == "absent" else float(line) for line in lines[2:3 + len(paths)])
        except ValueError:
            return None
        properties = parse_show("\n".join(lines[3 + len(paths):]))
        if "ActiveState" not in properties:
            return None
        started_at = main_process_started_at(properties, now, now_monotonic)
        if started_at is None:
            return {"changed": False, "in_place": True, "running": [], "stale": [], "changed_since": [],
                    "needs_daemon_reload": [], "msg": f"{unit} does not run: its next start reads its files."}
        files = [ChangedFile(path, at + MARGIN_SECONDS) for path, at in zip(paths, modified) if at is not None]
        definition_counts = boolean(args.get("unit_definition", False), strict=False)
        reload_due = definition_counts and properties.get("NeedDaemonReload") == "yes"
        if reload_due or freshness(started_at, recorded_at, files).stale:
            return None
        return {"changed": False, "in_place": True, "running": [unit], "stale": [], "changed_since": [],
                "needs_daemon_reload": [], "msg": f"{unit} runs its files as they are"}

    @staticmethod
    def _modified_at(path):
        quoted = shlex.quote(path)
        return f"{{ if [ -e {quoted} ]; then stat -c %.9Y -- {quoted}; else echo absent; fi; }}"
