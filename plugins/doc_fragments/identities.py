# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:
    # The identities option of pharos.hpc.service_identities and pharos.hpc.host_check, as
    # module_utils/identities.py's ARGUMENT_SPEC validates it for both.
    DOCUMENTATION = r"""
options:
  identities:
    description: The accounts and groups the run will keep on this host.
    type: list
    elements: dict
    required: true
    suboptions:
      kind:
        description: An account (C(user)) or a group.
        type: str
        choices: [user, group]
        required: true
      name:
        description: Its name.
        type: str
        required: true
      id:
        description: The UID or GID the Site plans for it.
        type: int
        required: true
      setting:
        description: The Site value that chose the ID, named in the fix.
        type: str
        required: true
"""
