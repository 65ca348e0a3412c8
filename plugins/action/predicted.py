# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a step, or in check mode report the change it would make where it cannot run yet."""

from __future__ import annotations

import re
import shlex

from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.pharos.hpc.plugins.action.keep import as_list
from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_on_host

RESTART_IF_STALE = dict(type="dict", options=dict(paths=dict(type="list", elements="str", required=True),
                                                  unit_definition=dict(type="bool", default=False)))
ARGUMENT_SPEC = dict(
    pending=dict(type="bool", default=False),
    prediction=dict(type="str", required=True),
    module=dict(type="str"),
    args=dict(type="dict", default={}),
    restart_if_stale=RESTART_IF_STALE,
    then=dict(type="dict", options=dict(module=dict(type="str", required=True), args=dict(type="dict", default={}),
                                        restart_if_stale=RESTART_IF_STALE)),
)

# By the name a module resolves to: a module of the playbook's own library/ keeps its bare name.
APT = {"ansible.builtin.apt", "ansible.legacy.apt", "apt"}
APT_PLAIN = {"name", "state", "update_cache", "cache_valid_time"}
PACKAGE_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")
SYSTEMD = {"ansible.builtin.systemd_service", "ansible.builtin.systemd", "ansible.legacy.systemd_service",
           "ansible.legacy.systemd", "systemd_service", "systemd"}
SYSTEMD_PLAIN = {"name", "state", "enabled", "daemon_reload"}
COMMAND = {"ansible.builtin.command", "ansible.legacy.command", "command"}
COMMAND_PLAIN = {"cmd", "argv", "creates"}


class ActionModule(ActionBase):
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, options = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        then = options["then"]
        if then and not options["module"]:
            raise AnsibleActionFail("pharos.hpc.predicted: then follows the step's own module; give module and args too.")
        # Each step's module is found before either step runs, also where the step is pending: a dry
        # run that predicts a step its real run could not make, for want of a collection on this
        # controller, would pass and mislead. So is a misplaced restart_if_stale, which would
        # otherwise fail after the first step changed the host.
        found = self._find_module(options["module"]) if options["module"] else None
        then_found = self._find_module(then["module"]) if then else None
        for step_found, step in ((found, options), (then_found, then or {})):
            if step.get("restart_if_stale"):
                self._check_restart_if_stale(step_found, step["args"])
        first = self._step(found, options["args"], options["pending"], options["prediction"], task_vars,
                           options["restart_if_stale"])
        if not then or first.get("failed") or first.get("skipped"):
            result.update(first)
            return result
        # In check mode the second step cannot run after a first that would change the host: the
        # service of a package that would be installed has no unit to ask yet.
        second = self._step(then_found, then["args"], self._task.check_mode and bool(first.get("changed")),
                            options["prediction"], task_vars, then["restart_if_stale"])
        result.update(changed=bool(first.get("changed") or second.get("changed")), results=[first, second],
                      msg=" ".join(step["msg"] for step in (first, second) if step.get("msg")))
        diffs = [diff for step in (first, second) if step.get("changed") for diff in as_list(step.get("diff"))]
        if diffs:
            result["diff"] = diffs
        if second.get("failed"):
            result["failed"] = True
        if first.get("predicted") or second.get("predicted"):
            result.update(predicted=True, _ansible_verbose_always=True)
        return result

    def _step(self, found, args, pending, prediction, task_vars, restart_if_stale=None):
        """One step's result, its module as found on this controller: run, found in place, or predicted."""
        predicted = dict(changed=True, predicted=True, msg=prediction, _ansible_verbose_always=True)
        if self._task.check_mode and pending:
            return predicted
        if found is None:
            return dict(skipped=True, msg="Nothing to predict: the step this stands for runs as a task of its own.")
        stale = self._stale(args, restart_if_stale, task_vars) if restart_if_stale else None
        if stale:
            reload_due = bool(args.get("daemon_reload")) or bool(stale.get("needs_daemon_reload"))
            restart = self._run_step(found, dict(args, state="restarted", daemon_reload=reload_due), task_vars)
            return dict(restart, stale=stale["stale"], changed_since=stale.get("changed_since") or [])
        packages, unit = self._plain_install(found.resolved_fqcn, args), self._plain_start(found.resolved_fqcn, args)
        if packages and self._packages_installed(packages):
            return dict(changed=False, in_place=True, msg=f"Already installed: {', '.join(packages)}.")
        # A host without package lists (a container from a Debian image) cannot look up a
        # package it lacks; a real run refreshes the lists first, so the install is predicted.
        if packages and self._task.check_mode and not self._apt_has_lists():
            return predicted
        if unit and self._service_running_and_enabled(unit):
            return dict(changed=False, in_place=True, msg=f"Already running and enabled at boot: {unit}.")
        made = self._plain_creates(found.resolved_fqcn, args)
        if made and run_on_host(self, f"test -e {shlex.quote(made)}")["rc"] == 0:
            return dict(changed=False, in_place=True, msg=f"Already made: {made}.")
        return self._run_step(found, args, task_vars)

    @staticmethod
    def _check_restart_if_stale(found, args):
        resolved = found.resolved_fqcn if found else None
        if resolved not in SYSTEMD or args.get("state") not in ("started", "restarted") or not isinstance(args.get("name"), str):
            raise AnsibleActionFail("pharos.hpc.predicted: restart_if_stale restarts the unit of a step that starts "
                                    "it; give it to an ansible.builtin.systemd_service step with a name and "
                                    "state=started.")

    def _stale(self, args, restart_if_stale, task_vars):
        """pharos.hpc.service_freshness's result where a step that starts a unit finds it running
        files that changed since it read them, else None. A step that restarts it asks nothing."""
        if args["state"] == "restarted":
            return None
        freshness = self._run_step(self._find_module("pharos.hpc.service_freshness"),
                                   dict(unit=args["name"], **restart_if_stale), task_vars)
        if freshness.get("failed"):
            raise AnsibleActionFail(f"pharos.hpc.predicted: could not read whether {args['name']} runs its files as "
                                    f"they are: {freshness.get('msg')}")
        return freshness if freshness.get("stale") else None

    # Every converged run installs packages that are installed, starts services that run and makes
    # files made once already: a module run costs the host about half a CPU second in Python, a
    # shell command almost nothing. Only the plainest steps are read this way, and only where what
    # the command finds is what the module itself would find no change in; anything else runs the
    # module.
    @staticmethod
    def _plain_install(module, args):
        """The package names of an apt step that only installs them, or None."""
        if module not in APT or not set(args) <= APT_PLAIN or args.get("state", "present") != "present":
            return None
        names = [args["name"]] if isinstance(args.get("name"), str) else args.get("name")
        if names and all(isinstance(name, str) and PACKAGE_NAME.fullmatch(name) for name in names):
            return names
        return None

    @staticmethod
    def _plain_start(module, args):
        """The unit of a systemd step that only starts and enables it, or None."""
        if (module in SYSTEMD and set(args) <= SYSTEMD_PLAIN and args.get("state") == "started"
                and boolean(args.get("enabled", False), strict=False)
                and not boolean(args.get("daemon_reload", False), strict=False)
                and isinstance(args.get("name"), str)):
            return args["name"]
        return None

    @staticmethod
    def _plain_creates(module, args):
        """The file a command step makes once (its creates), where no glob or working directory
        changes what the module would look for, or None."""
        creates = args.get("creates")
        if (module in COMMAND and set(args) <= COMMAND_PLAIN and isinstance(creates, str)
                and creates.startswith("/") and not set(creates) & set("*?[")):
            return creates
        return None

    def _packages_installed(self, names):
        quoted = " ".join(shlex.quote(name) for name in names)
        probe = run_on_host(
            self, f"dpkg-query --show --showformat='${{db:Status-Abbrev}}|${{Package}}\\n' -- {quoted}")
        installed = {}
        for line in probe["stdout"].splitlines():
            status, _bar, package = line.partition("|")
            installed[package] = installed.get(package, True) and status == "ii "
        return probe["rc"] == 0 and all(installed.get(name) for name in names)

    def _apt_has_lists(self):
        probe = run_on_host(self, "ls /var/lib/apt/lists/ | grep -q _Packages")
        return probe["rc"] == 0

    def _service_running_and_enabled(self, name):
        # As the module reads a unit: running while active or activating, enabled where
        # is-enabled succeeds (static and indirect units too).
        unit = shlex.quote(name)
        probe = run_on_host(
            self,
            f"systemctl show --property=ActiveState --value -- {unit} && "
            f"systemctl is-enabled --quiet -- {unit} && echo enabled")
        return probe["rc"] == 0 and probe["stdout"].split() in (["active", "enabled"], ["activating", "enabled"])

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
