# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The values each of several roles gets on a host, checked against the role's argument spec in one step."""

from __future__ import annotations

from pathlib import Path

import yaml
from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.parameters import remove_values
from ansible.plugins.action import ActionBase

# This collection's roles, beside its plugins whether it runs from a checkout or installed.
ROLES = Path(__file__).resolve().parents[2] / "roles"
SpecLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def role_options(role, entry_point):
    """The options of the role's entry point, as its meta/argument_specs.yml gives them."""
    spec_file = ROLES / role / "meta" / "argument_specs.yml"
    try:
        specs = yaml.load(spec_file.read_text(), Loader=SpecLoader)["argument_specs"]  # noqa: S506 (a safe loader)
        return specs[entry_point].get("options") or {}
    except (OSError, KeyError, TypeError) as error:
        raise AnsibleActionFail(f"pharos.hpc.{role} has no argument spec for the entry point {entry_point!r} "
                                f"({spec_file}): name a role of this collection and one of its entry points.") from error


class ActionModule(ActionBase):
    """Ansible checks a role's values against its argument spec in a step of its own, on each host,
    when the role starts. A node that runs four roles pays four steps for it, each a worker the
    controller forks, and the checks of a role come after the roles before it changed the host.
    This step checks them all at once, where a playbook puts it before any host changes, by the
    same rules: each option the host's variables give is rendered and validated as Ansible's role
    check does."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _VALID_ARGS = frozenset(("roles",))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        problems, refusing, checked = [], [], []
        for role, entry_point in self._roles():
            options = role_options(role, entry_point)
            given = self._templar.template({name: task_vars[name] for name in options if name in task_vars})
            found = ArgumentSpecValidator(options).validate(given, validate_role_argument_spec=True)
            secrets = found._no_log_values  # noqa: SLF001 (the validator keeps them under this name alone)
            problems += [f"pharos.hpc.{role} ({entry_point}): {remove_values(message, secrets)}"
                         for message in found.error_messages]
            refusing += [f"ansible-doc -t role pharos.hpc.{role}"] if found.error_messages else []
            checked.append(f"{role}:{entry_point}")
        result.update(changed=False, checked=checked)
        if problems:
            result.update(failed=True, msg=(
                f"A role's value on {task_vars.get('inventory_hostname')} does not hold its argument spec, and the "
                f"roles do not run: {' '.join(problems)} Set each as its role documents it ({', '.join(refusing)}) "
                "where the inventory or the command line gives it."))
        return result

    def _roles(self):
        """Each role to check, with its entry point: 'slurm' or 'slurm:node'."""
        roles = self._task.args.get("roles")
        if not isinstance(roles, list) or not all(isinstance(role, str) and role for role in roles):
            raise AnsibleActionFail("pharos.hpc.role_values takes roles: a list of this collection's roles, each as "
                                    "NAME or NAME:ENTRY_POINT (slurm, slurm:node); "
                                    f"this step gives {type(roles).__name__}.")
        return [tuple(role.split(":", 1)) if ":" in role else (role, "main") for role in roles]
