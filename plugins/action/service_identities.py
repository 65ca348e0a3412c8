# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""pharos.hpc.service_identities, with the host's accounts and groups read by one shell command."""

from __future__ import annotations

import shlex

from ansible.plugins.action import ActionBase

from ansible_collections.pharos.hpc.plugins.module_utils.identities import ARGUMENT_SPEC, Lookups, Planned, conflicts
from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_on_host

DATABASE = {"user": "passwd", "group": "group"}


def identities_read(planned):
    """The shell command that asks NSS for each planned name and ID, each answer under its label."""
    commands = []
    for index, item in enumerate(planned):
        database = DATABASE[item.kind]
        commands += [f"echo '@{index} name'", f"getent {database} {shlex.quote(item.name)} || true",
                     f"echo '@{index} id'", f"getent {database} {int(item.id)} || true"]
    return " ; ".join(commands)


def parse_identities(planned, stdout):
    """The NSS answers of identities_read's output, as Lookups."""
    answers, section = {}, None
    for line in stdout.splitlines():
        if line.startswith("@"):
            section = tuple(line[1:].split(" ", 1))
            continue
        fields = line.split(":")
        if section is not None and section not in answers and len(fields) >= 4:
            answers[section] = fields
    ids = {(item.kind, item.name): int(answers[(str(index), "name")][2])
           for index, item in enumerate(planned) if (str(index), "name") in answers}
    holders = {(item.kind, item.id): answers[(str(index), "id")][0]
               for index, item in enumerate(planned) if (str(index), "id") in answers}
    return Lookups(lambda kind, name: ids.get((kind, name)), lambda kind, number: holders.get((kind, number)))


def judge_identities(action, args, planned, probe, task_vars):
    """The identities' result from their read: the conflicts found by the module's rules where the
    read succeeded, in place; otherwise the module's own result, run on the host."""
    if probe["rc"] != 0:
        return action._execute_module(module_name="pharos.hpc.service_identities", module_args=args,
                                      task_vars=task_vars)
    return {"changed": False, "in_place": True, "conflicts": conflicts(planned, parse_identities(planned, probe["stdout"]))}


class ActionModule(ActionBase):
    """Every run checks the service identities on every host before any change, and the module
    costs each host about half a CPU second of Python to read a few names. The same lookups run
    through NSS with one `getent` command per name and per ID, and the module's own rules judge
    what they find; where the command fails, the module runs."""

    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        planned = [Planned(**item) for item in args["identities"]]
        result.update(judge_identities(self, args, planned, run_on_host(self, identities_read(planned)), task_vars))
        return result
