# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a step, or in check mode report the change it would make where it cannot run yet."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

ARGUMENT_SPEC = dict(
    pending=dict(type="bool", required=True),
    prediction=dict(type="str", required=True),
    module=dict(type="str"),
    args=dict(type="dict", default={}),
)


class ActionModule(ActionBase):
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, options = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)

        # Also where the step is pending: a dry run that predicts a step its real run could not
        # make, for want of a collection on this controller, would pass and mislead.
        found = self._find_module(options["module"]) if options["module"] else None
        if self._task.check_mode and options["pending"]:
            result.update(changed=True, predicted=True, msg=options["prediction"], _ansible_verbose_always=True)
            return result
        if found is None:
            result.update(skipped=True, msg="Nothing to predict: the step this stands for runs as a task of its own.")
            return result
        result.update(self._run_step(found, options["args"], task_vars))
        return result

    def _find_module(self, module):
        found = self._shared_loader_obj.module_loader.find_plugin_with_context(
            module, collection_list=self._task.collections)
        if not found.resolved:
            collection = ".".join(module.split(".")[:2]) if module.count(".") >= 2 else None
            install = (f" If it is right, install the collection {collection} on this controller "
                       f"(ansible-galaxy collection install {collection}, or the ansible package, which holds it)."
                       if collection else "")
            raise AnsibleActionFail(f"pharos.hpc.predicted: no module named {module!r} is installed on this controller, "
                                    f"so a real run could not make this step. Give the step's module by its full name, "
                                    f"like ansible.builtin.copy.{install}")
        return found

    def _run_step(self, found, args, task_vars):
        """Run the step as its own task would: through its action plugin if it has one."""
        collections = self._task.collections
        module = found.resolved_fqcn
        step = self._task.copy()
        step.action = found.resolved_fqcn
        step.args = args
        step._resolved_action = found.resolved_fqcn

        if found.action_plugin:
            handler_name = found.action_plugin
        elif self._shared_loader_obj.action_loader.has_plugin(found.resolved_fqcn, collection_list=collections):
            handler_name = found.resolved_fqcn
        else:
            handler_name = "ansible.legacy.normal"
        handler = self._shared_loader_obj.action_loader.get(
            handler_name,
            task=step,
            connection=self._connection,
            play_context=self._play_context,
            loader=self._loader,
            templar=self._templar,
            shared_loader_obj=self._shared_loader_obj,
        )
        if handler is None:
            raise AnsibleActionFail(f"pharos.hpc.predicted: no action plugin {handler_name!r} for {module!r}.")
        return handler.run(task_vars=task_vars)
