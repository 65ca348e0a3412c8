# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Several of the collection's in-place steps as one step: one worker and one result for them all."""

from __future__ import annotations

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase

from ansible_collections.pharos.hpc.plugins.action.copy import file_read
from ansible_collections.pharos.hpc.plugins.action.file import path_read
from ansible_collections.pharos.hpc.plugins.action.replace import text_read
from ansible_collections.pharos.hpc.plugins.action.user import local_files_read, wanted_groups
from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_all_on_host

# The collection's actions a step may name: each reads its own resource in place with one shell
# command and runs its builtin module only where the resource is not as wanted. A fail step is a
# refusal: where it is not passed over, it fails with its message and no step after it runs.
KINDS = ("fail", "group", "user", "file", "copy", "template", "replace")
# What names each kind's resource in a step's label and its error.
SUBJECTS = {"fail": None, "group": "name", "user": "name", "file": "path", "copy": "dest", "template": "dest", "replace": "path"}
# The shell command each kind's action reads its resource with, from the step's arguments.
READS = {
    "group": lambda args: local_files_read(group_names=[args["name"]]),
    "user": lambda args: local_files_read([args["name"]], wanted_groups(args)),
    "file": lambda args: path_read(args["path"]),
    "copy": lambda args: file_read(args["dest"]),
    "template": lambda args: file_read(args["dest"]),
    "replace": lambda args: text_read(args["path"]),
}


def step_problem(index, step):
    """Why a step cannot run, in the words of the fix; None when it can."""
    # A step's arguments may hold a secret (a copy's content): the error names its keys alone.
    kinds = [key for key in step if key != "when"] if isinstance(step, dict) else []
    if len(kinds) != 1 or kinds[0] not in KINDS or not isinstance(step[kinds[0]], dict):
        given = f"the keys {', '.join(map(str, step))}" if isinstance(step, dict) else f"a {type(step).__name__}"
        return (f"steps[{index}] must name one of {', '.join(KINDS)} with its arguments as a mapping "
                f"(and optionally when: true or false), not {given}.")
    if kinds[0] == "fail" and (set(step["fail"]) != {"msg"} or not isinstance(step["fail"]["msg"], str)):
        return f"steps[{index}] is a fail step: give it msg, the words it fails with, and nothing else."
    if not isinstance(step.get("when", True), bool):
        return (f"steps[{index}].when must be true or false, not a {type(step['when']).__name__}: write it as a template "
                "that gives a boolean, such as \"{{ path_seen == 'absent' }}\".")
    return None


def step_read(kind, args):
    """The command the step's action would read its resource with; None where it cannot be told."""
    try:
        return READS[kind](args)
    except (KeyError, TypeError, AttributeError):
        return None  # the action judges the step's arguments itself


def step_label(kind, args):
    """The step's kind and the resource it keeps, as its result and an error name it."""
    return f"{kind} {args.get(SUBJECTS[kind], '') if SUBJECTS[kind] else ''}".rstrip()


class ActionModule(ActionBase):
    """A converged node holds every group, account, path and file its roles keep. Each kept as its
    own step costs the controller a worker, the task's variables and a result of its own, and that,
    not the read on the host, is most of what such a step costs. Here the steps of one role run in
    order in one worker: each is the collection's own action, as it would run as a step, with its
    check mode and its diff; the first that fails stops the rest. Their reads are one shell command
    on the host, made before the first step; after a step changes the host, each later step reads
    its resource again itself."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("steps",))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        steps = self._task.args.get("steps")
        if not isinstance(steps, list) or not steps:
            return dict(result, failed=True, msg=f"steps must be a non-empty list of steps, not {steps and type(steps).__name__ or 'empty'}.")
        problems = [problem for index, step in enumerate(steps) if (problem := step_problem(index, step))]
        if problems:
            return dict(result, failed=True, msg=" ".join(problems))
        kept = [(next(key for key in step if key != "when"), step) for step in steps if step.get("when", True)]
        reads = [read for kind, step in kept if (read := step_read(kind, step[kind]))]
        reads_made = run_all_on_host(self, reads) if len(reads) > 1 else {}
        results = []
        for kind, step in kept:
            outcome = self._run_step(kind, step[kind], task_vars, reads_made)
            if outcome.get("changed") and not self._task.check_mode:
                reads_made.clear()
            # Each result names its resource as the step gave it, as a loop's results do: a check
            # mode result of copy or template carries no dest of its own.
            if SUBJECTS[kind]:
                outcome.setdefault(SUBJECTS[kind], step[kind].get(SUBJECTS[kind]))
            outcome["step"] = step_label(kind, step[kind])
            results.append(outcome)
            if outcome.get("failed"):
                named = "" if kind == "fail" else f"{outcome['step']}: "
                result.update(failed=True, msg=f"{named}{outcome.get('msg', 'failed')}")
                break
        result["results"] = results
        result["changed"] = any(outcome.get("changed") for outcome in results)
        diffs = [diff for outcome in results if outcome.get("changed") for diff in as_list(outcome.get("diff"))]
        if diffs:
            result["diff"] = diffs
        return result

    def _run_step(self, kind, args, task_vars, reads_made):
        """One step's result, run by the collection's action for its kind in this worker."""
        if kind == "fail":
            return {"failed": True, "msg": args["msg"]}
        task = self._task.copy()
        task.args = dict(args)
        action = self._shared_loader_obj.action_loader.get(
            f"pharos.hpc.{kind}", task=task, connection=self._connection, play_context=self._play_context,
            loader=self._loader, templar=self._templar, shared_loader_obj=self._shared_loader_obj)
        action.reads_made = reads_made
        try:
            return action.run(task_vars=task_vars)
        except AnsibleError as error:  # as a task of its own would fail; the steps before it stand
            return {"failed": True, "msg": to_text(error)}


def as_list(diff):
    """A step's diff as a list of diffs (copy and template give a list, file a mapping)."""
    if not diff:
        return []
    return list(diff) if isinstance(diff, list) else [diff]
