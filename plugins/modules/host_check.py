#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: host_check
short_description: Stop before any change on a host the collection does not support or whose service identities do not fit
version_added: 0.3.0
description:
  - Reads the host's release (C(/etc/os-release)) and init (PID 1, booted where C(/run/systemd/system) exists),
    and the accounts and groups the run will keep through NSS, with one shell command; changes nothing.
  - Fails, naming every reason at once, where the host is not Debian 13 (trixie) booted with systemd, or where
    a planned account or group exists with another ID or its ID belongs to another name, by the rules of
    M(pharos.hpc.service_identities). A run of the roles would otherwise fail half-way, after some had changed
    the host.
  - Where the NSS read fails, M(pharos.hpc.service_identities) runs on the host to judge the identities.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.identities
attributes:
  check_mode:
    support: full
    description: It reads only, and stops a dry run as it stops a real one.
  diff_mode:
    support: none
    description: It changes nothing.
  action:
    support: full
    description: An action plugin on the controller.
  async:
    support: none
    description: Not asynchronous.
seealso:
  - module: pharos.hpc.service_identities
"""

EXAMPLES = r"""
- name: Check each host and its service identities before any host changes
  pharos.hpc.host_check:
    identities:
      - {kind: user, name: pharos-agent, id: 4100001, setting: pharos_agent_uid}
      - {kind: group, name: pharos-agent, id: 4100001, setting: pharos_agent_gid}
"""

RETURN = r"""
os_release:
  description: The host's os-release C(ID), C(NAME), C(VERSION_ID) and C(VERSION_CODENAME), separated by C(|).
  returned: always
  type: str
  sample: debian|Debian GNU/Linux|13|trixie
init:
  description: The host's PID 1, with C(systemd, not booted,) where systemd runs but did not boot the host.
  returned: always
  type: str
  sample: systemd
conflicts:
  description: Each planned identity that the host holds otherwise, with the fix.
  returned: always
  type: list
  elements: str
"""
