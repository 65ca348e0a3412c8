# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Applying a release plan to a host, and restoring the predecessor when activation fails.

Every change is remembered in memory with what it replaced. When a step or the health check
fails, the changes are undone in reverse order: previous and current links, component links,
unit files (written back byte for byte, or removed), a daemon-reload, then the units that ran
before are restarted and the others stopped (docs/release.md, "Rollback on failure"). Nothing
is journalled on disk: the links and /var/lib/pharos-hpc/active-release, written only after
health held, are the record.
"""

from __future__ import annotations

import json
import os
import tempfile

from ansible_collections.pharos.hpc.plugins.module_utils.release.health import HealthError
from ansible_collections.pharos.hpc.plugins.module_utils.release.layout import component_link_target, release_link_target


def replace_symlink(path, target):
    """Point path at target atomically: a new link under a temporary name, then rename(2) over path,
    so path names the old target or the new one at every instant, never nothing."""
    temporary = "%s.pharos-new-%d" % (path, os.getpid())
    if os.path.lexists(temporary):
        os.unlink(temporary)
    os.symlink(target, temporary)
    os.replace(temporary, path)


def restore_symlink(path, target):
    if target is None:
        if os.path.lexists(path):
            os.unlink(path)
    else:
        replace_symlink(path, target)


def write_atomically(path, data, mode=0o644):
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o755, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".pharos-new-", dir=directory)
    try:
        with os.fdopen(handle, "wb") as output:
            output.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _read_or_none(path):
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as handle:
        return handle.read()


class Activation:
    """Applies steps to layout through systemd, remembering how to undo each."""

    def __init__(self, layout, systemd, release_id, units_before):
        self.layout = layout
        self.systemd = systemd
        self.release_id = release_id
        self.units_before = units_before      # {unit: {"active": ..., "enabled": ...}} as read before the run
        self.undo = []                        # (what, argument) in the order applied
        self.done = []

    def apply(self, steps, health=None):
        """Apply the steps in order; health() runs before record_active and returns the failed probes."""
        for step in steps:
            if step["step"] == "record_active" and health is not None:
                failures = health()
                if failures:
                    raise HealthError(failures)
            getattr(self, "_" + step["step"])(step)
            self.done.append(step["step"])

    def _stage(self, step):
        raise AssertionError("stage runs before activation, not through it: %s" % step)

    def _record_previous(self, step):
        self.undo.append(("symlink", (self.layout.previous, os.readlink(self.layout.previous)
                                      if os.path.lexists(self.layout.previous) else None)))
        replace_symlink(self.layout.previous, release_link_target(step["release_id"]))

    def _switch_current(self, step):
        self.undo.append(("symlink", (self.layout.current, os.readlink(self.layout.current)
                                      if os.path.lexists(self.layout.current) else None)))
        replace_symlink(self.layout.current, release_link_target(step["release_id"]))

    def _link_component(self, step):
        path = self.layout.component_link(step["component"])
        self.undo.append(("symlink", (path, os.readlink(path) if os.path.islink(path) else None)))
        replace_symlink(path, component_link_target(step["component"]))

    def _install_unit(self, step):
        path = self.layout.unit_file(step["unit_file"])
        self.undo.append(("unit_file", (path, _read_or_none(path))))
        source = os.path.join(self.layout.release_files(self.release_id), "units", step["unit_file"])
        with open(source, "rb") as handle:
            write_atomically(path, handle.read())

    def _daemon_reload(self, step):
        del step
        self.systemd.daemon_reload()

    def _enable_units(self, step):
        self.undo.append(("enabled", step["units"]))
        self.systemd.enable(step["units"])

    def _disable_units(self, step):
        self.systemd.disable(step["units"])

    def _restart_units(self, step):
        self.undo.append(("restarted", step["units"]))
        self.systemd.restart(step["units"])

    def _stop_units(self, step):
        self.undo.append(("stopped", step["units"]))
        self.systemd.stop(step["units"])

    def _record_active(self, step):
        write_atomically(self.layout.active_record, (json.dumps(step["record"], sort_keys=True) + "\n").encode())

    _record_stopped = _record_active

    def restore(self):
        """Undo what was applied; returns the sentences that say what was restored."""
        said, touched_units, files_changed = [], [], False
        for what, argument in reversed(self.undo):
            if what == "symlink":
                path, target = argument
                restore_symlink(path, target)
                said.append("%s %s" % (path, "-> " + target if target else "removed"))
            elif what == "unit_file":
                path, data = argument
                if data is None:
                    if os.path.exists(path):
                        os.unlink(path)
                else:
                    write_atomically(path, data)
                files_changed = True
                said.append("%s %s" % (path, "removed" if data is None else "written back"))
            elif what == "enabled":
                back = [unit for unit in argument if self.units_before.get(unit, {}).get("enabled") != "enabled"]
                if back:
                    self.systemd.disable(back)
            else:
                touched_units.extend(unit for unit in argument if unit not in touched_units)
        if files_changed:
            self.systemd.daemon_reload()
        ran = [unit for unit in touched_units if self.units_before.get(unit, {}).get("active") == "active"]
        idle = [unit for unit in touched_units if unit not in ran]
        if ran:
            self.systemd.restart(ran)
            said.append("restarted %s" % ", ".join(ran))
        if idle:
            self.systemd.stop(idle)
            said.append("stopped %s (not running before)" % ", ".join(idle))
        return said
