# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""systemd as pharos_release drives it: systemctl with the unit names after --, states read
in one call, and every failure an error that names the command and its output."""

from __future__ import annotations


class SystemdError(Exception):
    """systemctl failed; the message names the command and its output."""


class Systemctl:
    """systemd through systemctl. run(argv) -> (rc, stdout, stderr), like AnsibleModule.run_command."""

    PROPERTIES = "Id,ActiveState,UnitFileState"

    def __init__(self, run, systemctl="systemctl"):
        self._run = run
        self.systemctl = systemctl

    def _call(self, *arguments):
        argv = [self.systemctl] + list(arguments)
        rc, out, err = self._run(argv)
        if rc != 0:
            raise SystemdError("%s failed (exit %d): %s" % (" ".join(argv), rc, (err or out).strip()[-600:]))
        return out

    def states(self, units):
        """{unit: {"active": ActiveState, "enabled": UnitFileState}} in one systemctl call."""
        out = self._call("show", "--property=" + self.PROPERTIES, "--", *units)
        return parse_show(out, units)

    def daemon_reload(self):
        self._call("daemon-reload")

    def enable(self, units):
        self._call("enable", "--", *units)

    def disable(self, units):
        self._call("disable", "--", *units)

    def restart(self, units):
        self._call("restart", "--", *units)

    def stop(self, units):
        self._call("stop", "--", *units)


def parse_show(text, units):
    """systemctl show's blocks (Key=Value lines, a blank line between units) as states by unit."""
    found = {}
    for block in text.strip().split("\n\n"):
        fields = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        if fields.get("Id"):
            found[fields["Id"]] = {"active": fields.get("ActiveState") or "inactive",
                                   "enabled": fields.get("UnitFileState") or "not-found"}
    return {unit: found.get(unit, {"active": "inactive", "enabled": "not-found"}) for unit in units}
