"""Records, for each task on each host, what it cost: a JSON line per (host, task) result.

Enabled by benchmarks/cluster_scale.py (ANSIBLE_CALLBACK_PLUGINS, ANSIBLE_CALLBACKS_ENABLED), which
reads the file named by PHAROS_TASK_PROFILE back into its profile: per kind of host and per role,
the tasks that ran, the modules they ran on the host, and their seconds.
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: task_profile
type: aggregate
short_description: one JSON line per task result, for the benchmarks' profile
description: Writes each task result's host, role, task, action, status, seconds and module runs.
options: {}
"""

# Actions that run on the controller alone: they cost the controller a fork, never a round trip
# to the host. pharos.hpc.predicted runs its module on the host, except for a pending step in
# check mode (controller alone) and a step it found in place with a shell command (no module).
# A no_log step's result arrives censored, without in_place: it counts as a module run here.
CONTROLLER_ACTIONS = {
    "assert", "debug", "fail", "set_fact", "include_role", "include_tasks", "import_role", "import_tasks",
    "meta", "add_host", "group_by", "set_stats", "validate_argument_spec", "pause",
}

STEP_ACTIONS = {"pharos.hpc.predicted", "pharos.hpc.keep"}


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_profile"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._started = {}
        self._output = open(os.environ["PHAROS_TASK_PROFILE"], "a", encoding="utf-8")  # noqa: SIM115

    def v2_runner_on_start(self, host, task):
        self._started[(host.get_name(), task._uuid)] = time.monotonic()

    def _record(self, result, status):
        task, host = result._task, result._host.get_name()
        started = self._started.pop((host, task._uuid), None)
        action = task.action.removeprefix("ansible.builtin.").removeprefix("ansible.legacy.")
        on_controller = action in CONTROLLER_ACTIONS or (
            task.delegate_to is not None and task.delegate_to in ("localhost", "127.0.0.1"))
        # A loop's items, and the steps of pharos.hpc.predicted and pharos.hpc.keep, each ran a
        # module or were found in place; a module's own results (ldap_entries' entries) came from one.
        items = result._result.get("results") if task.loop or action in STEP_ACTIONS else None
        no_module = (result._result.get("predicted") or result._result.get("in_place")
                     or action == "pharos.hpc.read_command")
        runs = 0 if status == "skipped" or on_controller or no_module else (
            sum(1 for item in items if not (item.get("skipped") or item.get("in_place") or item.get("predicted")))
            if isinstance(items, list) else 1)
        self._output.write(json.dumps({
            "host": host, "role": task._role.get_name() if task._role else "", "task": task.get_name(),
            "action": action, "status": status,
            "seconds": round(time.monotonic() - started, 3) if started is not None else None,
            "module_runs": runs}) + "\n")
        self._output.flush()

    def v2_runner_on_ok(self, result):
        self._record(result, "changed" if result._result.get("changed") else "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._record(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._record(result, "unreachable")
