#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: service_identities
short_description: Check that the service accounts and groups Pharos keeps fit the host's own
version_added: 0.2.0
description:
  - Reads the host's accounts and groups through NSS, as C(id) and C(getent) do, and changes
    nothing.
  - Each planned account or group must be absent, or present with exactly the planned ID, and no
    other name may hold that ID. Otherwise Ansible's user and group modules would renumber the
    account, leaving its files with the old number, or fail half-way through the run.
  - Returns each conflict with the name, the ID, who holds it and the fix, so that the play
    stops before any host changes (both modes; see C(docs/production.md)).
  - An action plugin on the controller reads the same names and IDs with one C(getent) command per
    lookup and judges them by the same rules; this module runs on the host only where that command
    fails.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.identities
attributes:
  check_mode:
    support: full
    description: It reads only.
  diff_mode:
    support: none
    description: It changes nothing.
  action:
    support: full
    description: An action plugin on the controller reads the host's accounts and groups with one shell command.
"""

EXAMPLES = r"""
- name: Check the Site agent's account and group before any change
  pharos.hpc.service_identities:
    identities:
      - {kind: user, name: pharos-agent, id: 4100001, setting: pharos_agent_uid}
      - {kind: group, name: pharos-agent, id: 4100001, setting: pharos_agent_gid}
  register: identities

- name: Stop on any conflict
  ansible.builtin.fail:
    msg: "{{ identities.conflicts | join(' ') }}"
  when: identities.conflicts
"""

RETURN = r"""
conflicts:
  description: Each planned identity that the host holds otherwise, with the fix.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.pharos.hpc.plugins.module_utils.identities import ARGUMENT_SPEC, Planned, conflicts


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        supports_check_mode=True,
    )
    planned = [Planned(**item) for item in module.params["identities"]]
    module.exit_json(changed=False, conflicts=conflicts(planned))


if __name__ == "__main__":
    main()
