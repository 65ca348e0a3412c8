#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
module: replace
short_description: Replace what a pattern matches in a file, reading a file where it matches nowhere with one shell command
version_added: 0.3.0
description:
  - M(ansible.builtin.replace), with one difference on a host where the pattern matches nowhere in the file.
    There the builtin module costs about half a CPU second of Python on the host to say so; this action
    reads the file with one shell command (C(head)), searches it on the controller as the builtin does
    (Python's C(re), multiline), and reports it in place, with no module run.
  - The file is read in place only for a plain step - O(path) absolute, O(regexp) and O(replace) - and only
    when the file is UTF-8 text of at most 1 MiB.
  - Everything else runs the builtin module with the same arguments - a pattern that matches, a file that
    cannot be read, any other option of M(ansible.builtin.replace) - so check mode, diff and every option
    behave as the builtin's.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.builtin_in_place
attributes:
  check_mode:
    support: full
    description: As M(ansible.builtin.replace); a file where the pattern matches nowhere is reported in place.
  diff_mode:
    support: full
    description: As M(ansible.builtin.replace); a file read in place has nothing to diff.
options:
  path:
    description: The file on the host, absolute.
    type: path
    required: true
  regexp:
    description: The Python regular expression to look for, matched line by line as in M(ansible.builtin.replace).
    type: str
    required: true
  replace:
    description: What replaces each match; back-references as in M(ansible.builtin.replace).
    type: str
    default: ''
notes:
  - Any other option of M(ansible.builtin.replace) is given to it as it is, and the file is then not read in place.
seealso:
  - module: ansible.builtin.replace
"""

EXAMPLES = r"""
- name: Resolve users and groups from the recorded members after the local files
  pharos.hpc.replace:
    path: /etc/nsswitch.conf
    regexp: '^((?:passwd|group):\s+files)\b(?!.*\bextrausers\b)'
    replace: '\1 extrausers'
"""

RETURN = r"""
in_place:
  description: True when the pattern was found to match nowhere by one shell command and no module ran on the host.
  returned: when the pattern matches nowhere
  type: bool
  sample: true
"""
