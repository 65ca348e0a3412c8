#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: keep
short_description: Keep several groups, accounts, paths and files in one step, each read in place with one shell command
version_added: 0.3.0
description:
  - Runs the collection's M(pharos.hpc.group), M(pharos.hpc.user), M(pharos.hpc.file), M(pharos.hpc.copy),
    M(pharos.hpc.template) and M(pharos.hpc.replace) as one step, in the order given. Each step behaves as
    it would as a task of its own, check mode and diff included, and reads its resource in place where it
    is already as wanted.
  - On a converged node each such task costs the controller a worker process, the host's variables and a
    result of its own, most of what the step costs; the roles keep the resources of one part of a node in
    one step to run a Site of many nodes with less controller CPU (docs/slurm.md, "How a run scales with
    the nodes").
  - A V(fail) step, with O(steps[].when), refuses the host, in check mode too, with its message alone.
    Placed first, it keeps a host whose state the role cannot trust from any change, as M(ansible.builtin.fail)
    would as a task of its own before the others.
  - The first step that fails stops the rest; the error names it. A re-run starts again from the first
    step, each of which finds what an earlier run made in place.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.builtin_in_place
attributes:
  check_mode:
    support: full
    description: Each step in check mode, as its own module; nothing on the host changes.
  diff_mode:
    support: full
    description: The diff of each step that changes, in order.
options:
  steps:
    description:
      - The steps, each a mapping with one key, the module's short name (V(group), V(user), V(file),
        V(copy), V(template) or V(replace)), whose value is that module's arguments; or V(fail), whose value
        holds V(msg) alone.
      - A step may also hold O(steps[].when), a boolean; a step whose V(when) is false is passed over.
    type: list
    elements: dict
    required: true
    suboptions:
      when:
        description:
          - Whether the step runs. A boolean, such as the result of a template like
            C("{{ seen == 'absent' }}"); a string is refused, since a bare condition would always be true.
        type: bool
        default: true
notes:
  - Loops, C(register) and C(notify) belong to the task, not to its steps. A step's template is found as the
    task's own would be, in the role's C(templates/).
  - Under C(no_log) the whole result is censored, every step's included.
seealso:
  - module: pharos.hpc.file
  - module: pharos.hpc.template
"""

EXAMPLES = r"""
- name: Keep munge's group, its account and the key's directory, on a host whose key directory is no link
  pharos.hpc.keep:
    steps:
      - fail:
          msg: /etc/munge is a link, so nothing was written. Move it aside and run again.
        when: "{{ munge_key_directory_seen == 'link' }}"
      - group:
          name: munge
          system: true
      - user:
          name: munge
          group: munge
          system: true
          home: /nonexistent
          create_home: false
          shell: /usr/sbin/nologin
      - file:
          path: /etc/munge
          state: directory
          owner: munge
          group: munge
          mode: "0700"
        when: "{{ munge_key_directory_kept }}"
"""

RETURN = r"""
results:
  description:
    - Each step's result as its module returns it, in order, with the step's kind and resource in
      C(step) and the resource's C(name), C(path) or C(dest) as the step gave it. A step passed over
      has none.
  returned: always
  type: list
  elements: dict
  sample:
    - {changed: false, in_place: true, name: munge, gid: 996, step: group munge}
    - {changed: true, path: /etc/munge, mode: "0700", step: file /etc/munge}
diff:
  description: The diffs of the steps that changed, in order.
  returned: when a step changed and diff mode is on
  type: list
  elements: dict
"""
