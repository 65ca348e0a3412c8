#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: slurm_site_conf
short_description: Check a Site's own slurm.conf before Pharos joins it (adopt mode)
version_added: 0.1.0
description:
  - In adopt mode the Site owns C(slurm.conf), and Pharos writes one file of its own that
    C(slurm.conf) takes in with C(Include). This module reads C(slurm.conf) and every file it includes,
    as Slurm does, and changes nothing.
  - It reports the preconditions that do not hold, the Site's settings that Pharos needs and never
    changes (in C(slurmdbd.conf) too, on the host that holds it), and the conflicts, Site lines
    that already mean something else for what Pharos would write. Each finding names the file,
    the line and the fix.
  - Every C(AuthAltParameters) line of the Site's is checked, wherever it stands and whether or not
    the Site sets C(AuthAltTypes); Pharos's own file counts where its C(Include) stands, as Slurm
    takes the value of a key that it reads last.
  - It also returns the Site's cluster name and the HS256 key its slurmctld already trusts, if any.
  - See C(docs/production.md), "Full or adopt".
author: Pharos HPC engineering (@pharos-ai-factory)
attributes:
  check_mode:
    support: full
    description: It reads only.
  diff_mode:
    support: none
    description: It changes nothing.
options:
  path:
    description: The Site's C(slurm.conf).
    type: path
    default: /etc/slurm/slurm.conf
  include:
    description:
      - Pharos's own file, which C(slurm.conf) must include. Its lines are Pharos's and are not
        checked.
    type: path
    default: /etc/slurm/pharos.conf
  staging_partition:
    description: The name of Pharos's staging partition; a Site partition of that name is a conflict.
    type: str
    required: true
  staging_nodes:
    description: The Slurm names of the staging nodes, which the Site's C(NodeName) lines must define.
    type: list
    elements: str
    default: []
  prologs:
    description:
      - The paths of Pharos's Prologs. A Site C(Prolog) at one of these paths is a conflict; other
        Site Prologs stay, as Slurm 24.11 runs every C(Prolog) line in turn.
    type: list
    elements: path
    default: []
  private_data:
    description:
      - What a member may not see of others, which the Site's C(PrivateData) must hold in
        C(slurm.conf) and in C(slurmdbd.conf). The Site's other values stay.
    type: list
    elements: str
    default: [accounts, jobs, reservations, usage, users]
  dbd_path:
    description:
      - The Site's C(slurmdbd.conf), checked for C(PrivateData) and token trust on the host that
        holds it. A host without it skips that check and says so in RV(dbd_found); the role stops
        the run when no host holds it (docs/production.md, "Preconditions").
    type: path
    default: /etc/slurm/slurmdbd.conf
  dbd_only:
    description:
      - Check O(dbd_path) alone, on a host of the Site's that runs slurmdbd and is none of the Slurm
        cluster's nodes. C(slurm.conf) is not read, and RV(cluster_name) is empty.
    type: bool
    default: false
requirements:
  - Slurm 24.11 or later on the Site, for a list of Prologs.
"""

EXAMPLES = r"""
- name: Check the Site's slurm.conf
  pharos.hpc.slurm_site_conf:
    staging_partition: staging
    staging_nodes: [dtn01]
    prologs: [/etc/slurm/pharos-scratch-prolog.sh]
  register: site_slurm

- name: Stop on a conflict or a precondition that does not hold
  ansible.builtin.fail:
    msg: "{{ (site_slurm.conflicts + site_slurm.unmet) | join(' ') }}"
  when: site_slurm.conflicts or site_slurm.unmet
"""

RETURN = r"""
cluster_name:
  description: The Site's C(ClusterName), in lower case as slurmdbd keeps it.
  returned: always
  type: str
jwt_key_path:
  description: The HS256 key the Site's slurmctld already trusts, or null when it takes no JWT.
  returned: always
  type: str
dbd_found:
  description: Whether the host holds O(dbd_path); its findings are then in RV(unmet).
  returned: always
  type: bool
unmet:
  description: Each precondition that does not hold, with its file, line and fix.
  returned: always
  type: list
  elements: str
conflicts:
  description: Each Site line that conflicts with what Pharos would write, with its file, line and fix.
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.pharos.hpc.plugins.module_utils.slurm_conf import (
    AdoptWants,
    SlurmConfError,
    conflicts,
    dbd_preconditions,
    jwt_key_path,
    preconditions,
    read,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", default="/etc/slurm/slurm.conf"),
            include=dict(type="path", default="/etc/slurm/pharos.conf"),
            staging_partition=dict(type="str", required=True),
            staging_nodes=dict(type="list", elements="str", default=[]),
            prologs=dict(type="list", elements="path", default=[]),
            private_data=dict(type="list", elements="str",
                              default=["accounts", "jobs", "reservations", "usage", "users"]),
            dbd_path=dict(type="path", default="/etc/slurm/slurmdbd.conf"),
            dbd_only=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    wants = AdoptWants(
        include=params["include"],
        staging_partition=params["staging_partition"],
        staging_nodes=tuple(params["staging_nodes"]),
        prologs=tuple(params["prologs"]),
        private_data=tuple(params["private_data"]),
    )
    dbd_found = os.path.exists(params["dbd_path"])
    dbd_unmet = []
    if dbd_found:
        try:
            dbd_unmet = dbd_preconditions(read(params["dbd_path"]), params["dbd_path"], wants)
        except SlurmConfError as error:
            module.fail_json(msg=f"{error}. slurmdbd reads it the same way.")
    if params["dbd_only"]:
        module.exit_json(changed=False, cluster_name="", jwt_key_path=None, dbd_found=dbd_found,
                         unmet=[str(finding) for finding in dbd_unmet], conflicts=[])
    try:
        conf = read(params["path"], skip=(wants.include,))
    except SlurmConfError as error:
        module.fail_json(msg=f"{error}. Adopt mode joins a cluster whose slurm.conf exists and reads.")
    unmet = preconditions(conf, params["path"], wants) + dbd_unmet
    name = conf.last("ClusterName")
    if name is None:
        module.fail_json(msg=f"{params['path']} has no ClusterName line: Slurm needs one, and "
                             "Pharos's associations go under that cluster.")
    module.exit_json(
        changed=False,
        cluster_name=name.value.lower(),
        jwt_key_path=jwt_key_path(conf),
        dbd_found=dbd_found,
        unmet=[str(finding) for finding in unmet],
        conflicts=[str(finding) for finding in conflicts(conf, wants)],
    )


if __name__ == "__main__":
    main()
