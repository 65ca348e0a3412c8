#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: user
short_description: Keep a local account, reading one already in place with one shell command
version_added: 0.3.0
description:
  - M(ansible.builtin.user), with one difference on a host where the account is already as the step wants
    it. There the builtin module costs about half a CPU second of Python on the host to say so; this action
    reads the account from the host's own C(/etc/passwd) and C(/etc/group) with one shell command
    (C(getent -s files)) and reports it in place, with no module run.
  - The account is read in place only for a plain step - O(name), O(state=present), and O(uid), O(group),
    O(groups) with O(append=true), O(shell) and O(home) each left out or given plainly - and only when the
    local files hold the account with the same UID, primary group, shell and home, and list it in each of
    O(groups). O(system) and O(create_home) only matter when the account is made.
  - Everything else runs the builtin module with the same arguments - an account to make or to mend, one
    that only the directory holds, any other option of M(ansible.builtin.user) - so check mode and every
    option behave as the builtin's.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.builtin_in_place
attributes:
  check_mode:
    support: full
    description: As M(ansible.builtin.user); an account in place is reported in place.
  diff_mode:
    support: none
    description: As M(ansible.builtin.user), which shows no diff.
options:
  name:
    description: The account's name.
    type: str
    required: true
  state:
    description: Only V(present) is read in place.
    type: str
    default: present
  uid:
    description: The account's UID.
    type: int
  group:
    description: The account's primary group, by name.
    type: str
  groups:
    description: Supplementary groups, by name; read in place only with O(append=true).
    type: list
    elements: str
  append:
    description: Add O(groups) to the account's groups rather than replace them.
    type: bool
    default: false
  shell:
    description: The account's login shell.
    type: str
  home:
    description: The account's home directory.
    type: path
  system:
    description: Make a system account, when the account is made.
    type: bool
    default: false
  create_home:
    description: Make the home directory, when the account is made.
    type: bool
    default: true
notes:
  - Any other option of M(ansible.builtin.user) is given to it as it is, and the account is then not read in place.
seealso:
  - module: ansible.builtin.user
  - module: pharos.hpc.group
"""

EXAMPLES = r"""
- name: Keep the Runtime's account, without a shell or a home, in the scratch group
  pharos.hpc.user:
    name: pharos-runtime
    uid: 4801
    group: pharos-runtime
    groups: [pharos-users]
    append: true
    shell: /usr/sbin/nologin
    home: /nonexistent
    create_home: false
    system: true
"""

RETURN = r"""
in_place:
  description: True when the account was found in place by one shell command and no module ran on the host.
  returned: when the account is in place
  type: bool
  sample: true
uid:
  description: The account's UID.
  returned: success
  type: int
  sample: 4801
"""
