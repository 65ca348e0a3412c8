#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: role_values
short_description: Check the values several of the collection's roles get on a host against their argument specs, in one step
version_added: 0.3.0
description:
  - For each role named, reads the role's argument spec (C(meta/argument_specs.yml)) for the entry point
    named, renders each of its options that the host's variables give, and validates them as Ansible's own
    check of a role's arguments does when the role starts.
  - Fails, naming each role, its entry point, every value that does not hold and the role's documentation.
    A value marked C(no_log) in a spec never appears in the message.
  - One step for all the roles a host runs, where a playbook puts it before any host changes; the roles
    then start with O(ansible.builtin.import_role#module:rolespec_validate=false), their values checked
    already. Give this step the same variables the roles' plays give them, so that it checks what the roles
    will see.
  - An option that the host's variables do not give is left to the role's own defaults, and not checked.
author: Pharos HPC engineering (@pharos-ai-factory)
attributes:
  check_mode:
    support: full
    description: It reads only, and stops a dry run as it stops a real one.
  diff_mode:
    support: none
    description: It changes nothing.
  action:
    support: full
    description: An action plugin on the controller; it contacts no host.
  async:
    support: none
    description: Not asynchronous.
options:
  roles:
    description:
      - The collection's roles to check, each as C(NAME) (its C(main) entry point) or C(NAME:ENTRY_POINT).
    type: list
    elements: str
    required: true
seealso:
  - module: ansible.builtin.validate_argument_spec
"""

EXAMPLES = r"""
- name: Check the values of the roles this node runs, before any host changes
  pharos.hpc.role_values:
    roles: [munge, job_identity:checked, scratch, slurm:node]
"""

RETURN = r"""
checked:
  description: Each role and entry point checked, as C(NAME:ENTRY_POINT).
  returned: always
  type: list
  elements: str
  sample: [munge:main, slurm:node]
"""
