#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: service_freshness
short_description: Find a running service whose files changed after it last read them
version_added: 0.1.0
description:
  - A task that changes a service's file notifies a handler that restarts or reloads the service.
    When the run stops between the two (a failed task, a lost connection, a killed controller), the
    next run finds the file already as wanted, notifies nothing, and the service keeps running
    what it read before, an old password or key included.
  - This module compares the time the unit last read its files with the time each file last
    changed. The unit read them when its main process started (a socket, when it last became
    active), or at the last reload recorded
    with O(state=applied). A file changed since then makes the module report C(changed), meaning a
    restart or reload is due, and a task using the module notifies the same handler as the task that
    writes the file.
  - A unit that does not run is never stale; its next start reads the files.
  - An action plugin on the controller answers a plain step (O(state=current), one unit by its name,
    absolute O(paths)) with one shell command, without running this module on the host, when the unit
    does not run or when every file changed more than a tenth of a second before the unit took its
    files in (and, with O(unit_definition), systemd needs no C(daemon-reload)). Any other case, a stale
    unit included, runs the module.
  - See C(docs/production.md), "Rotating a secret", for how the roles use it.
author: Pharos HPC engineering (@pharos-ai-factory)
attributes:
  check_mode:
    support: full
    description: O(state=current) reads only and reports the same in check mode; O(state=applied) records nothing in check mode.
  diff_mode:
    support: none
    description: It changes no file a service reads.
  action:
    support: full
    description: An action plugin on the controller reads a plain step's unit and files with one shell command.
options:
  unit:
    description:
      - The systemd unit, for example C(slurmdbd) or C(ssh), or a pattern such as
        C(waldur-site-agent@*.service) for every running instance of a template.
    type: str
    required: true
  paths:
    description:
      - The files the unit reads when it starts or reloads. A file that does not exist is skipped.
      - Used with O(state=current).
    type: list
    elements: path
    default: []
  unit_definition:
    description:
      - Also count the unit's own definition, for a unit whose unit file or drop-in the role writes.
        A running unit whose definition changed since systemd loaded it is then stale, as systemd runs
        it by the old one until a C(daemon-reload); the handler must reload systemd and restart it.
    type: bool
    default: false
  state:
    description:
      - C(current) reports whether the unit runs every file as it is now; C(changed) means it does not.
      - C(applied) records that the unit has just read its files, for a reload, which leaves the
        main process's start time as it was. The record is kept under C(/run/pharos-hpc/applied),
        so it ends with the boot that the unit's next start belongs to. It never reports C(changed).
    type: str
    choices: [current, applied]
    default: current
requirements:
  - systemd on the managed host.
"""

EXAMPLES = r"""
- name: Restart slurmdbd when its files changed after it started
  pharos.hpc.service_freshness:
    unit: slurmdbd
    paths: [/etc/slurm/slurmdbd.conf, /etc/slurm/jwt_hs256.key]
  notify: Restart slurmdbd

# In handlers/main.yml, after the handler that reloads sshd:
- name: Record that sshd runs its files
  pharos.hpc.service_freshness:
    unit: ssh
    state: applied
  listen: Reload sshd
"""

RETURN = r"""
running:
  description: The units that run (one, or each running instance a pattern names).
  returned: always
  type: list
  elements: str
stale:
  description:
    - The running units that read their files before one of them changed, or whose unit file
      changed since systemd loaded it; not empty exactly when C(changed).
  returned: always
  type: list
  elements: str
needs_daemon_reload:
  description:
    - With O(unit_definition), the running units whose unit file or drop-in changed since systemd
      loaded it (C(NeedDaemonReload)); otherwise empty.
  returned: always
  type: list
  elements: str
changed_since:
  description: The files changed after the unit last read them.
  returned: always
  type: list
  elements: str
in_place:
  description: True when one shell command answered and the module did not run on the host.
  returned: when the unit does not run, or plainly runs its files as they are
  type: bool
  sample: true
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.pharos.hpc.plugins.module_utils.service_freshness import (
    files_modified_at,
    freshness,
    main_process_started_at,
    parse_show,
    record_applied,
    recorded_applied_at,
)


def running_units(module: AnsibleModule, systemctl: str, unit: str) -> list[str]:
    if not any(character in unit for character in "*?["):
        return [unit]
    rc, out, err = module.run_command(
        [systemctl, "list-units", "--plain", "--no-legend", "--state=running", "--", unit]
    )
    if rc != 0:
        module.fail_json(msg=f"systemctl could not list the units {unit}: {err.strip() or out.strip()}")
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def read_unit(module: AnsibleModule, systemctl: str, unit: str) -> dict[str, str]:
    rc, out, err = module.run_command([
        systemctl, "show",
        "--property=ActiveState,ExecMainStartTimestampMonotonic,ActiveEnterTimestampMonotonic,NeedDaemonReload",
        "--", unit])
    if rc != 0:
        module.fail_json(msg=f"systemctl could not show the unit {unit}: {err.strip() or out.strip()}")
    return parse_show(out)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "unit": {"type": "str", "required": True},
            "paths": {"type": "list", "elements": "path", "default": []},
            "unit_definition": {"type": "bool", "default": False},
            "state": {"type": "str", "choices": ["current", "applied"], "default": "current"},
        },
        supports_check_mode=True,
    )
    systemctl = module.get_bin_path("systemctl", required=True)
    shown = {unit: read_unit(module, systemctl, unit) for unit in running_units(module, systemctl, module.params["unit"])}
    starts = {unit: main_process_started_at(properties, time.time(), time.monotonic())
              for unit, properties in shown.items()}
    running = sorted(unit for unit, start in starts.items() if start is not None)
    # systemd still runs a unit by the definition it loaded before its unit file changed.
    reload_due = sorted(unit for unit in running if shown[unit].get("NeedDaemonReload") == "yes"
                        and module.params["unit_definition"])

    if module.params["state"] == "applied":
        if not module.check_mode:
            for unit in running:
                record_applied(unit)
        module.exit_json(changed=False, running=running, stale=[], changed_since=[], needs_daemon_reload=reload_due)

    files = files_modified_at(module.params["paths"])
    found = {unit: freshness(start, recorded_applied_at(unit), files) for unit, start in starts.items()}
    stale = sorted({unit for unit, result in found.items() if result.stale} | set(reload_due))
    changed_since = sorted({changed.path for result in found.values() for changed in result.changed_since})
    message = (
        f"{', '.join(stale)} read their files before {', '.join(changed_since) or 'their unit files'} changed: "
        "a restart or reload is due"
        if stale
        else f"{module.params['unit']} runs its files as they are"
    )
    module.exit_json(changed=bool(stale), running=running, stale=stale, changed_since=changed_since,
                     needs_daemon_reload=reload_due, msg=message)


if __name__ == "__main__":
    main()
