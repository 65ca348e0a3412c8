#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: predicted
short_description: Run a step, or in check mode report the change it would make where it cannot run yet
version_added: 0.2.0
description:
  - Some steps cannot run in check mode on a host that a real run would change first. systemd knows no
    unit for a package that is not installed yet; a database does not answer before its server is
    installed; a file cannot be checked in a directory that does not exist yet; a command never runs
    in check mode. Run there, such a step fails, or is skipped and hides the change a real run would make.
  - This action runs the step given by O(module) and O(args) as its own task would, check mode and
    diff included. Only in check mode, and only when O(pending) is true, it does not run the step and
    reports C(changed) with O(prediction) as its message instead.
  - Without O(module) it only reports the prediction, for a step that cannot be one task, such as an
    C(include_tasks) whose C(when) leaves it out in check mode while O(pending) holds. Outside check mode,
    or when O(pending) is false, it is then skipped.
  - The step's arguments are templated with the task, before the action decides, so they must be defined
    even where the step is pending.
  - The step's module must be installed on the controller, also where the step is pending. A dry run
    fails, naming the module and its collection, where the real run would fail for want of them.
  - Module defaults (C(module_defaults)) of the play do not reach the step.
  - The commonest steps of a converged host are first looked for with one shell command, without
    running their module on the host. An C(ansible.builtin.apt) step with only C(name) (plain package
    names), C(state=present), C(update_cache) and C(cache_valid_time) is in place when C(dpkg-query) finds every
    package installed. An C(ansible.builtin.systemd_service) step with C(state=started), C(enabled=true) and
    no C(daemon_reload) is in place when the unit is active or activating and C(systemctl is-enabled) succeeds,
    as the module itself reads a unit. An C(ansible.builtin.command) step with only C(cmd) or C(argv) and
    C(creates), an absolute path without a glob, is in place when that path exists. Then the step reports no
    change, and an apt step does not refresh apt's package lists; anything else runs the module.
  - In check mode, such an apt step on a host without package lists at all (a container made from a Debian
    image) reports O(prediction) when a package is not installed, since apt cannot look it up there and a real
    run refreshes the lists first. Nothing else is needed from the role for that case.
author: Pharos HPC engineering (@pharos-ai-factory)
attributes:
  check_mode:
    support: full
    description: The step runs in check mode, unless O(pending) is true; then only the prediction is reported.
  diff_mode:
    support: full
    description: The step's own diff is returned.
  action:
    support: full
    description: An action plugin on the controller that runs the step's own action or module.
  async:
    support: none
    description: The step cannot run asynchronously.
options:
  pending:
    description:
      - True when the step cannot run in check mode yet, because an earlier task of the run would have
        made what it needs (typically C(<registered> is changed) of the task that installs a package).
    type: bool
    default: false
  prediction:
    description:
      - What a real run would do, in words an administrator reads in the check mode output.
    type: str
    required: true
  module:
    description:
      - The step's module, by its full name, for example C(ansible.builtin.systemd_service).
      - A module with its own action plugin, such as C(ansible.builtin.copy) or C(ansible.builtin.template),
        runs through it.
    type: str
  args:
    description:
      - The step's arguments, as its own task would give them.
    type: dict
    default: {}
  restart_if_stale:
    description:
      - For an C(ansible.builtin.systemd_service) step that starts a unit (C(state=started)), first ask
        M(pharos.hpc.service_freshness) whether the unit runs every file of O(restart_if_stale.paths) as it is
        now, and restart it instead where one changed after the unit read it (with C(daemon_reload) where the
        unit's definition changed). A run stopped between a file's change and its service's restart is
        mended by the next run's start step, with no step of its own.
      - A step that restarts the unit anyway (C(state=restarted)) asks nothing.
      - Given to a step that does not start a unit, the task fails before either step runs.
      - In check mode the freshness is read as in a real run, and the restart is reported as a change.
    type: dict
    suboptions:
      paths:
        description: The files the unit reads when it starts, as M(pharos.hpc.service_freshness) takes them.
        type: list
        elements: str
        required: true
      unit_definition:
        description: Also count the unit's own definition (M(pharos.hpc.service_freshness)'s O(pharos.hpc.service_freshness#module:unit_definition)).
        type: bool
        default: false
  then:
    description:
      - A second step, run after the first in the same worker, such as the start of the service whose
        package the first installs. It is read in place and run as the first is.
      - In check mode, where the first step would change the host, the second is not run but predicted
        with O(prediction). Where the first fails or is skipped, the second does not run.
      - The result is C(changed) when either step is, and holds each step's own result in C(results),
        the first's first.
    type: dict
    suboptions:
      module:
        description: The second step's module, by its full name.
        type: str
        required: true
      args:
        description: The second step's arguments.
        type: dict
        default: {}
      restart_if_stale:
        description: As O(restart_if_stale), for the second step.
        type: dict
        suboptions:
          paths:
            description: The files the unit reads when it starts.
            type: list
            elements: str
            required: true
          unit_definition:
            description: Also count the unit's own definition.
            type: bool
            default: false
seealso:
  - name: Check mode in the collection
    description: How each role predicts the changes of a run on a new host.
    link: https://github.com/pharos-ai-factory/pharos-hpc/blob/main/docs/production.md#check-mode-on-a-new-host
"""

EXAMPLES = r"""
- name: Install munge
  ansible.builtin.apt:
    name: munge
  register: munge_package

- name: Start munge and enable it at boot
  pharos.hpc.predicted:
    pending: "{{ munge_package is changed }}"
    prediction: munge would be installed, started and enabled at boot.
    module: ansible.builtin.systemd_service
    args:
      name: munge
      state: started
      enabled: true

# The install and the start as one step: in check mode, where munge would be installed, the
# start is predicted.
- name: Install munge, start it and enable it at boot
  pharos.hpc.predicted:
    prediction: munge would be installed, started and enabled at boot.
    module: ansible.builtin.apt
    args:
      name: [munge]
    then:
      module: ansible.builtin.systemd_service
      args:
        name: munge
        state: started
        enabled: true
  register: munge_service

# A start that restarts slurmd where its options changed after it started, as a run stopped
# before its handler would leave it.
- name: Start slurmd and enable it at boot, restarted where its options changed after it started
  pharos.hpc.predicted:
    prediction: slurmd would be installed, started and enabled at boot.
    module: ansible.builtin.systemd_service
    args:
      name: slurmd
      state: started
      enabled: true
    restart_if_stale:
      paths: [/etc/default/slurmd]

# An include cannot be wrapped: leave it out in check mode while the step is pending, and
# report the prediction beside it.
- name: Configure the directory
  ansible.builtin.include_tasks: directory.yml
  when: not (ansible_check_mode and openldap_packages is changed)

- name: Configure the directory (predicted, slapd is not installed yet)
  pharos.hpc.predicted:
    pending: "{{ openldap_packages is changed }}"
    prediction: slapd would be installed and its directory configured.
"""

RETURN = r"""
predicted:
  description: True when the step did not run and the result is the prediction.
  returned: when the step is pending in check mode
  type: bool
  sample: true
in_place:
  description: True when the step was found already made, by one shell command, and its module did not run.
  returned: when a plain package install, service start or command's file is already in place
  type: bool
  sample: true
results:
  description: With O(then), each step's own result, the first's first; C(changed) is either's.
  returned: when O(then) is given and the first step neither failed nor was skipped
  type: list
  elements: dict
  sample:
    - {changed: false, in_place: true, msg: "Already installed: munge."}
    - {changed: false, in_place: true, msg: "Already running and enabled at boot: munge."}
stale:
  description: With O(restart_if_stale), the unit, where it was restarted because it ran files that changed since it read them.
  returned: when O(restart_if_stale) restarted the unit
  type: list
  elements: str
  sample: [slurmd]
changed_since:
  description: With O(restart_if_stale), the files that changed since the unit read them.
  returned: when O(restart_if_stale) restarted the unit
  type: list
  elements: str
  sample: [/etc/default/slurmd]
msg:
  description: The prediction, where the step did not run; what was found in place; otherwise what the step returned.
  returned: sometimes
  type: str
  sample: munge would be installed, started and enabled at boot.
"""
