#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: file
short_description: Keep a directory's or a file's owner, group and mode, or its absence, reading a path already as wanted with one shell command
version_added: 0.3.0
description:
  - M(ansible.builtin.file), with one difference on a host where the path is already as the step wants it.
    There the builtin module costs about half a CPU second of Python on the host to say so; this action
    reads the path with one shell command (C(stat)) and reports it in place, with no module run.
  - The path is read in place only for a plain step - O(path) absolute, O(state) left out or V(directory),
    V(file) or V(absent), and O(owner), O(group) and O(mode) each left out or given plainly (a name or the
    digits of an ID, an octal mode) - and only when the path is of that kind (not a link), with the same
    owner, group and mode where they are given, or is absent for V(absent). A step that leaves O(state) out
    is read in place only where the path is a regular file.
  - Everything else runs the builtin module with the same arguments - a path to make, mend or remove,
    any other option of M(ansible.builtin.file), a host where the command fails - so check mode, diff and
    every option behave as the builtin's.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.builtin_in_place
attributes:
  check_mode:
    support: full
    description: As M(ansible.builtin.file); a path as wanted is reported in place.
  diff_mode:
    support: full
    description: As M(ansible.builtin.file); a path as wanted has nothing to diff.
options:
  path:
    description: The path on the host, absolute.
    type: path
    required: true
  state:
    description:
      - V(directory), V(file) (an existing file's attributes) or V(absent); read in place only these.
      - Left out, the path's attributes as it is (M(ansible.builtin.file)'s own default).
    type: str
  owner:
    description: The owner, by name or by the digits of its UID.
    type: str
  group:
    description: The group, by name or by the digits of its GID.
    type: str
  mode:
    description:
      - The mode, best as a quoted octal string like C("0750").
    type: raw
notes:
  - Any other option of M(ansible.builtin.file) is given to it as it is, and the path is then not read in place.
seealso:
  - module: ansible.builtin.file
"""

EXAMPLES = r"""
- name: Keep the directory of slurmd's unit drop-in
  pharos.hpc.file:
    path: /etc/systemd/system/slurmd.service.d
    state: directory
    owner: root
    group: root
    mode: "0755"

- name: Remove a local slurm.conf, which would shadow the controller's
  pharos.hpc.file:
    path: /etc/slurm/slurm.conf
    state: absent
"""

RETURN = r"""
in_place:
  description: True when the path was found as wanted by one shell command and no module ran on the host.
  returned: when the path is as wanted
  type: bool
  sample: true
state:
  description: What the path is, V(directory), V(file) or V(absent).
  returned: success
  type: str
  sample: directory
"""
