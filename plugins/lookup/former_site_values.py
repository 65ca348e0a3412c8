# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: former_site_values
author: Pharos HPC engineering (@pharos-ai-factory)
short_description: The Site values still set under their former icarus_hpc_* names
version_added: 0.3.0
description:
  - The Site's values were named C(icarus_hpc_*) before 0.3.0 and are named C(pharos_*) since.
    The former names are accepted until 0.4.0.
  - Returns each former name that the host's variables set while the new name is not set, with
    its new name, so that the collection's playbooks can take its value under the new name.
  - Shows a deprecation warning for every former name set, naming the new one. A former name set
    beside its new name is ignored, and its warning says so.
options: {}
"""

EXAMPLES = r"""
- name: Take each Site value set under its former name under its new name
  ansible.builtin.set_fact:
    "{{ item.name }}": "{{ lookup('ansible.builtin.vars', item.former) }}"
  loop: "{{ query('pharos.hpc.former_site_values') }}"
  run_once: true
"""

RETURN = r"""
_raw:
  description: Each former name to take, as C(former) and its new C(name).
  type: list
  elements: dict
"""

from ansible.plugins.lookup import LookupBase
from ansible.utils.display import Display

FORMER_PREFIX = "icarus_hpc_"
PREFIX = "pharos_"
SITE_VALUES = (
    "agent_gid", "agent_uid", "cache_seconds", "key_window_seconds", "ldap_suffix", "member_gid_max",
    "member_gid_min", "member_uid_max", "member_uid_min", "project_gid_max", "project_gid_min", "scratch_group",
    "scratch_group_gid", "scratch_members", "scratch_root", "scratch_runtime_uid", "site_mode",
    "slurm_compute_max_time_hours", "slurm_staging_cpus", "slurm_staging_memory_mib",
    "slurm_staging_time_minutes", "ssh_access_gid", "ssh_access_poll_seconds", "ssh_access_uid",
)

display = Display()


def deprecated(message):
    display.deprecated(message, version="0.4.0", collection_name="pharos.hpc")


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        variables = variables or {}
        taken = []
        for value in SITE_VALUES:
            former, name = FORMER_PREFIX + value, PREFIX + value
            if former not in variables:
                continue
            if name in variables:
                deprecated("The Site value %s is set beside %s, its new name, and is ignored. Remove %s."
                           % (former, name, former))
                continue
            deprecated("The Site value %s is now named %s. Rename it in the inventory; the former name is accepted "
                       "until pharos.hpc 0.4.0." % (former, name))
            taken.append({"former": former, "name": name})
        return taken
