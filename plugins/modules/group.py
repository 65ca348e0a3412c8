#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: group
short_description: Keep a local group, reading one already in place with one shell command
version_added: 0.3.0
description:
  - M(ansible.builtin.group), with one difference on a host where the group is already as the step wants
    it. There the builtin module costs about half a CPU second of Python on the host to say so; this action
    reads the group from the host's own C(/etc/group) with one shell command (C(getent -s files)) and reports
    it in place, with no module run.
  - The group is read in place only for a plain step - O(name), O(state=present), O(gid) left out or a
    number - and only when the local file holds the group with that GID. O(system) only matters when the
    group is made.
  - Everything else runs the builtin module with the same arguments, so check mode and every option behave
    as the builtin's.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.builtin_in_place
attributes:
  check_mode:
    support: full
    description: As M(ansible.builtin.group); a group in place is reported in place.
  diff_mode:
    support: none
    description: As M(ansible.builtin.group), which shows no diff.
options:
  name:
    description: The group's name.
    type: str
    required: true
  state:
    description: Only V(present) is read in place.
    type: str
    default: present
  gid:
    description: The group's GID.
    type: int
  system:
    description: Make a system group, when the group is made.
    type: bool
    default: false
notes:
  - Any other option of M(ansible.builtin.group) is given to it as it is, and the group is then not read in place.
seealso:
  - module: ansible.builtin.group
  - module: pharos.hpc.user
"""

EXAMPLES = r"""
- name: Keep the scratch group
  pharos.hpc.group:
    name: pharos-users
    gid: 4800
"""

RETURN = r"""
in_place:
  description: True when the group was found in place by one shell command and no module ran on the host.
  returned: when the group is in place
  type: bool
  sample: true
gid:
  description: The group's GID.
  returned: success
  type: int
  sample: 4800
"""
