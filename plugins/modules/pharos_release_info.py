#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: pharos_release_info
short_description: What the Site agents' releases are on a host, changing nothing
version_added: 0.1.0
description:
  - Reports the current and previous releases, every installed release, the record of the last
    activation and the state of each unit it selected, as M(pharos.hpc.pharos_release) reads them.
author: Pharos HPC engineering (@pharos-ai-factory)
attributes:
  check_mode:
    support: full
    description: Reads only; the result is the same in check mode.
  diff_mode:
    support: none
    description: It changes nothing, so there is nothing to diff.
options:
  root:
    description:
      - Directory every managed path is below. Leave it at C(/) on a host; tests give a temporary directory.
    type: path
    default: /
  site_env:
    description:
      - The Site's C(site.env). Defaults to C(etc/pharos-hpc/site.env) below O(root).
    type: path
  probes:
    description:
      - Health probes to run against what the last activation left, as M(pharos.hpc.pharos_release) runs
        them, without its settle time. V(units) - every unit it selected is active. V(offering) - the
        offering reads Active in Waldur through the Site agent's own token and CA (from C(site.env) and
        C(/etc/pharos-hpc)). V(site_api) - the Site API origin answers over TLS verified against its CA.
      - None by default. A probe that fails is reported in RV(health), not as a failure of the module.
    type: list
    elements: str
    choices: [units, offering, site_api]
    default: []
  probe_timeout:
    description:
      - Seconds each network probe waits for an answer.
    type: float
    default: 10.0
  journal_lines:
    description:
      - Read this many of the last lines of each unit's journal, and report in RV(journal) each
        unit's last line, its last cycle that did not fail, and its last error.
      - V(0), the default, reads no journal.
      - What is reported of a line is masked and cut to 300 characters. Every secret found in
        C(/etc/pharos-hpc/secrets) and in O(token_directory) (each token file's lines, and the values
        of the Site agent's configuration whose keys name a secret) is masked as Ansible masks a
        C(no_log) value, and whatever has the shape of a secret (a bearer or token header, a JWT, a
        C(token=) or C(password=) value, a password in a URL) is replaced by C([redacted]).
    type: int
    default: 0
  token_directory:
    description:
      - The directory on the host the central step wrote the agents' token files into
        (C(pharos_token_directory)), whose secrets are masked in RV(journal) as well. Read only when
        O(journal_lines) is above 0.
    type: path
requirements:
  - systemd and PyYAML (Debian C(python3-yaml)) on the managed host.
  - httpx on the managed host for the V(offering) and V(site_api) probes.
seealso:
  - module: pharos.hpc.pharos_release
"""

EXAMPLES = r"""
- name: What is active
  pharos.hpc.pharos_release_info:
  register: releases

- name: Say which release runs
  ansible.builtin.debug:
    msg: "{{ releases.current }} (previous {{ releases.previous }})"

- name: Is what runs healthy
  pharos.hpc.pharos_release_info:
    probes: [units, offering, site_api]
  register: health
"""

RETURN = r"""
current:
  description: The release C(/opt/pharos-hpc/current) points at, or null.
  returned: always
  type: str
previous:
  description: The recorded previous release, or null.
  returned: always
  type: str
installed:
  description: Every installed release id.
  returned: always
  type: list
  elements: str
active_record:
  description: The record of the last activation or stop (C(/var/lib/pharos-hpc/active-release)), or null.
  returned: always
  type: dict
unit_states:
  description: Each recorded unit with its C(active) and C(enabled) state.
  returned: always
  type: dict
units:
  description: The units of the last activation.
  returned: always
  type: list
  elements: str
health:
  description: Each probe asked for, as C(probe), C(ok) and C(message) (what failed and the fix, or C(holds)).
  returned: when O(probes) is given
  type: list
  elements: dict
journal:
  description:
    - For each unit of the last activation, from its journal's last O(journal_lines) lines -
      C(last_log), its last line with its time; C(last_good_cycle), when the last cycle that
      did not fail ended; C(last_error), the time and message of the last error; and
      C(last_cycle_failed), true when the most recent cycle failed. Messages are masked and cut
      as O(journal_lines) says.
    - A cycle of the Site agent is one pass over its offerings, which failed when the agent logged
      a traceback in it (a pass it could not finish); an error without one is the last error, but
      its pass went on. The SSH access agent logs one line a cycle, C(cycle) or C(error). Times are
      ISO 8601 in UTC; each is null when the lines read hold none.
  returned: when O(journal_lines) is above 0
  type: dict
"""

import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.pharos.hpc.plugins.module_utils.release.agent_secrets import SECRETS_DIRECTORY, read_secrets
from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import YAML_IMPORT_ERROR
from ansible_collections.pharos.hpc.plugins.module_utils.release.cycles import journal_entries, redact, summary
from ansible_collections.pharos.hpc.plugins.module_utils.release.systemd import Systemctl
from ansible_collections.pharos.hpc.plugins.module_utils.release.run import PROBES, RunError, run, token_reader

REPORTED = ("current", "previous", "installed", "active_record", "unit_states", "units")


def journal(module, unit):
    argv = [module.get_bin_path("journalctl") or "journalctl", "--unit", unit, "--lines",
            str(module.params["journal_lines"]), "--output", "json", "--output-fields", "MESSAGE", "--no-pager",
            "--quiet"]
    rc, out, err = module.run_command(argv)
    if rc != 0:
        detail = redact((err or out).strip(), module.no_log_values)
        module.fail_json(msg="%s failed (exit %d): %s" % (" ".join(argv), rc, detail))
    return summary(journal_entries(out), module.no_log_values)


def hide_agent_secrets(module):
    """Every secret of the agents found on the host joins the module's no_log values, so that
    Ansible masks it wherever it appears in the result, and journal() masks it before cutting."""
    directories = [os.path.join(module.params["root"], SECRETS_DIRECTORY.lstrip("/"))]
    if module.params["token_directory"]:
        directories.append(module.params["token_directory"])
    module.no_log_values.update(read_secrets(directories))


def main():
    module = AnsibleModule(argument_spec=dict(
        root=dict(type="path", default="/"), site_env=dict(type="path"),
        probes=dict(type="list", elements="str", choices=list(PROBES), default=[]),
        probe_timeout=dict(type="float", default=10.0), journal_lines=dict(type="int", default=0),
        token_directory=dict(type="path")),
        supports_check_mode=True)
    if YAML_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib("PyYAML (Debian: python3-yaml)"), exception=YAML_IMPORT_ERROR)
    params = dict(state="info", root=module.params["root"], site_env=module.params["site_env"], archive=None,
                  release_id=None, components=None, instances=None, probes=module.params["probes"],
                  health_timeout=module.params["probe_timeout"], health_settle=0.0)

    systemd = Systemctl(module.run_command, module.get_bin_path("systemctl") or "systemctl")
    try:
        result = run(params, systemd, module.run_command, True, read_token=token_reader(module.no_log_values))
    except RunError as error:
        module.fail_json(msg=str(error))
    reported = dict((key, result.get(key)) for key in REPORTED)
    if "health" in result:
        reported["health"] = result["health"]
    if module.params["journal_lines"] > 0:
        hide_agent_secrets(module)
        reported["journal"] = dict((unit, journal(module, unit)) for unit in reported["units"] or [])
    module.exit_json(changed=False, **reported)


if __name__ == "__main__":
    main()
