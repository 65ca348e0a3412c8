#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: read_command
short_description: Run a command that only reads, and return its output, without a module run on the host
version_added: 0.3.0
description:
  - Runs the command on the host as the connection's own command line, each argument quoted so that no
    shell interprets it, and returns its exit status and output as M(ansible.builtin.command) does.
    M(ansible.builtin.command) costs the host about half a CPU second of Python around the command; this
    costs the command alone.
  - For a command that changes nothing, such as C(ldapsearch), C(getent) or C(sacctmgr show). It runs in
    check mode as well, as a read must for a dry run to predict, and never reports C(changed).
  - A non-zero exit status fails the step, as with M(ansible.builtin.command); C(failed_when) takes it as
    an answer.
  - Give no secret in the command, and read none with it. The command line is visible to the host's other
    processes while it runs, and Ansible's debug log (C(ANSIBLE_DEBUG)) shows the output of the
    connection's commands, which C(no_log) does not hide; read a secret with M(ansible.builtin.slurp) and
    C(no_log).
author: Pharos HPC engineering (@pharos-ai-factory)
attributes:
  check_mode:
    support: full
    description: It reads only, and runs in check mode as in a real run.
  diff_mode:
    support: none
    description: It changes nothing.
  action:
    support: full
    description: An action plugin on the controller; no module runs on the host.
  async:
    support: none
    description: Not asynchronous.
options:
  argv:
    description:
      - The command and its arguments, as a list.
    type: list
    elements: str
    required: true
notes:
  - The command runs through the connection's shell (C(/bin/sh -c)) with every argument quoted; use
    C(sh -c) in O(argv) for a pipeline of your own.
seealso:
  - module: ansible.builtin.command
"""

EXAMPLES = r"""
- name: Read the clusters accounting knows
  pharos.hpc.read_command:
    argv: [sacctmgr, --noheader, --parsable2, show, cluster, format=Cluster]
  register: known_clusters
  failed_when: false

- name: Read the database's suffix
  pharos.hpc.read_command:
    argv: [ldapsearch, -LLL, -Q, -Y, EXTERNAL, -H, "ldapi:///", -s, base, -b, "olcDatabase={1}mdb,cn=config", olcSuffix]
  register: current_suffix
"""

RETURN = r"""
cmd:
  description: The command and its arguments.
  returned: always
  type: list
  elements: str
rc:
  description: The command's exit status.
  returned: always
  type: int
  sample: 0
stdout:
  description: The command's standard output, without its last line break.
  returned: always
  type: str
stdout_lines:
  description: RV(stdout), line by line.
  returned: always
  type: list
  elements: str
stderr:
  description: The command's standard error, without its last line break.
  returned: always
  type: str
stderr_lines:
  description: RV(stderr), line by line.
  returned: always
  type: list
  elements: str
"""
