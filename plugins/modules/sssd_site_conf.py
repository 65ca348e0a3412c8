#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: sssd_site_conf
short_description: Check a Site's own SSSD and NSS settings before Pharos joins them (adopt mode)
version_added: 0.3.0
description:
  - In adopt mode the Site owns C(sssd.conf) and C(/etc/nsswitch.conf), and Pharos adds one SSSD
    domain in a snippet of its own. This module reads C(sssd.conf) and its C(conf.d) snippets as
    SSSD does, and C(nsswitch.conf), on the host, and changes nothing.
  - It returns only its findings, each naming the file, the line where there is one, and the fix;
    never a line of the Site's files. C(sssd.conf) holds the Site's bind password.
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
    description: The Site's C(sssd.conf); its snippets are the C(*.conf) files of C(conf.d) beside it.
    type: path
    default: /etc/sssd/sssd.conf
  snippet:
    description: Pharos's own snippet, whose domain is not a conflict and whose settings are not the Site's.
    type: path
    default: /etc/sssd/conf.d/50-pharos.conf
  nsswitch:
    description: The Site's C(nsswitch.conf), whose passwd and group lines must ask SSSD.
    type: path
    default: /etc/nsswitch.conf
  cache_seconds:
    description: The longest SSSD's fast cache may keep an entry (the Site's C(pharos_cache_seconds)).
    type: int
    required: true
  host:
    description: The host's name as the findings give it (its inventory name).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Check the Site's SSSD and NSS
  pharos.hpc.sssd_site_conf:
    cache_seconds: 60
    host: "{{ inventory_hostname }}"
  register: site_sssd

- name: Stop on a conflict or a precondition that does not hold
  ansible.builtin.fail:
    msg: "{{ (site_sssd.conflicts + site_sssd.unmet) | join(' ') }}"
  when: site_sssd.conflicts or site_sssd.unmet
"""

RETURN = r"""
unmet:
  description: Each precondition that does not hold, with its file, line and fix.
  returned: always
  type: list
  elements: str
conflicts:
  description: Each Site file that already defines the domain Pharos adds, with the fix.
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.pharos.hpc.plugins.module_utils.sssd_conf import (
    AdoptWants,
    conflicts,
    preconditions,
    read,
    snippet_paths,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", default="/etc/sssd/sssd.conf"),
            snippet=dict(type="path", default="/etc/sssd/conf.d/50-pharos.conf"),
            nsswitch=dict(type="path", default="/etc/nsswitch.conf"),
            cache_seconds=dict(type="int", required=True),
            host=dict(type="str", required=True),
        ),
        supports_check_mode=True,
    )
    params = module.params
    wants = AdoptWants(host=params["host"], snippet=params["snippet"], cache_seconds=params["cache_seconds"])
    main_file = read(params["path"])
    snippets = [read(path) for path in snippet_paths(os.path.join(os.path.dirname(params["path"]), "conf.d"))]
    files = [sssd_file for sssd_file in [main_file] + snippets if sssd_file is not None]
    try:
        with open(params["nsswitch"], encoding="utf-8", errors="replace") as handle:
            nsswitch = handle.read()
    except FileNotFoundError:
        nsswitch = ""
    module.exit_json(changed=False, unmet=preconditions(params["path"], files, nsswitch, wants),
                     conflicts=conflicts(files, wants))


if __name__ == "__main__":
    main()
