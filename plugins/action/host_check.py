# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""pharos.hpc.host_check: a host the collection supports, whose service identities fit, or a stop
naming every reason, read with one shell command."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.pharos.hpc.plugins.action.service_identities import identities_read, judge_identities
from ansible_collections.pharos.hpc.plugins.module_utils.identities import ARGUMENT_SPEC, Planned
from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_all_on_host

# os-release names the release; systemd is the init where it booted the host (/run/systemd/system)
# as PID 1. Two lines: "ID|NAME|VERSION_ID|VERSION_CODENAME", then the init.
OS_READ = (
    "if [ -r /etc/os-release ]; then . /etc/os-release; elif [ -r /usr/lib/os-release ]; then . /usr/lib/os-release; fi; "
    'echo "${ID:-}|${NAME:-an unknown system}|${VERSION_ID:-}|${VERSION_CODENAME:-}"; '
    "init=$(cat /proc/1/comm); "
    'if [ "$init" = systemd ] && [ ! -d /run/systemd/system ]; then init="systemd, not booted,"; fi; '
    'echo "$init"'
)


def unsupported(os_lines):
    """Why the collection does not support the host, or None when it does."""
    release = ((os_lines[0] if os_lines else "") or "|unknown||").split("|") + ["", "", "", ""]
    init = os_lines[1] if len(os_lines) > 1 else "unknown"
    if release[0] == "debian" and release[2] == "13" and init == "systemd":
        return None
    system = "Debian" if release[0] == "debian" else release[1]
    return (f"pharos.hpc supports Debian 13 (trixie) with systemd as its init, and this host runs {system} "
            f"{release[2]} ({release[3]}) with {init} as its init. Run it as a Debian 13 host booted with systemd, "
            "or leave it out of the inventory (docs/production.md, \"Supported hosts\").")


class ActionModule(ActionBase):
    """The roles use Debian 13's packages, paths and systemd units, and keep accounts and groups with
    the Site's IDs: on another release or init, or where an identity is held otherwise, a run would
    fail half-way, after some roles had changed the host. One shell command reads both; a host that
    fails either is stopped with every reason at once."""

    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        planned = [Planned(**item) for item in args["identities"]]
        reads = [OS_READ] + ([identities_read(planned)] if planned else [])
        made = run_all_on_host(self, reads)
        if OS_READ not in made or made[OS_READ]["rc"] != 0:
            return dict(result, failed=True,
                        msg=f"Could not read the operating system of {self._inventory_name(task_vars)} (/etc/os-release "
                            "and /proc/1/comm) with one shell command. Check that the host runs a POSIX shell "
                            "and that the connection's user may read both, and run again.")
        os_lines = made[OS_READ]["stdout"].splitlines()
        judged = (judge_identities(self, args, planned, made[reads[1]], task_vars) if planned
                  else {"in_place": True, "conflicts": []})
        found = judged.get("conflicts", [])
        findings = [reason for reason in (unsupported(os_lines),) if reason]
        if found:
            findings.append("The service accounts and groups Pharos keeps must be absent or have the Site's IDs "
                            f"(docs/production.md, \"Service identities\"): {' '.join(found)}")
        result.update(changed=False, in_place=judged.get("in_place", False), conflicts=found,
                      os_release=os_lines[0] if os_lines else "", init=os_lines[1] if len(os_lines) > 1 else "")
        if findings:
            result.update(failed=True, msg=f"Stopped before any change on {self._inventory_name(task_vars)}: "
                                           f"{' '.join(findings)}")
        return result

    @staticmethod
    def _inventory_name(task_vars):
        return (task_vars or {}).get("inventory_hostname", "this host")
