#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: copy
short_description: Copy a file or a text to a host, reading a file already in place with one shell command
version_added: 0.3.0
description:
  - M(ansible.builtin.copy), with one difference on a host where the file is already as the step wants
    it. There the builtin action runs two modules on the host (C(stat), then C(file) for the
    attributes), each about half a CPU second of Python; this action reads the file with one shell
    command (C(stat) and C(sha1sum)) and reports it in place, with no module run.
  - The file is read in place only for a plain step - O(dest) an absolute path, O(src) or O(content), and
    O(owner), O(group) and O(mode) each left out or given plainly (a name, an octal mode) - and only when
    O(dest) is a regular file (not a link) with the same bytes (the same SHA-1), and the same owner, group and
    mode where they are given.
  - Everything else runs the builtin action with the same arguments - a file to write or to mend, any
    other option of M(ansible.builtin.copy), a host where the command fails - so check mode, diff and every
    option behave as the builtin's.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.builtin_in_place
attributes:
  check_mode:
    support: full
    description: As M(ansible.builtin.copy); a file in place is reported in place.
  diff_mode:
    support: full
    description: As M(ansible.builtin.copy); a file in place has nothing to diff.
options:
  src:
    description:
      - A file on the controller, looked up in a role's C(files/) first, as ansible.builtin.copy looks it up.
    type: str
  content:
    description:
      - The text to write, where O(src) is not given.
    type: str
  dest:
    description:
      - The file on the host, by its absolute path.
    type: str
    required: true
  owner:
    description:
      - The file's owner, by name.
    type: str
  group:
    description:
      - The file's group, by name.
    type: str
  mode:
    description:
      - The file's mode, best as a quoted octal string like C("0640").
    type: raw
notes:
  - Any other option of M(ansible.builtin.copy) is given to it as it is, and the file is then not read in place.
seealso:
  - module: ansible.builtin.copy
"""

EXAMPLES = r"""
- name: Install the scratch Prolog
  pharos.hpc.copy:
    src: pharos-scratch-prolog.sh
    dest: /etc/slurm/pharos-scratch-prolog.sh
    owner: root
    group: root
    mode: "0755"
"""

RETURN = r"""
in_place:
  description: True when the file was found in place by one shell command and no module ran on the host.
  returned: when the file is in place
  type: bool
  sample: true
checksum:
  description: The SHA-1 of the file's bytes.
  returned: success
  type: str
  sample: 2aae6c35c94fcfb415dbe95f408b9ce91ee846ed
"""
