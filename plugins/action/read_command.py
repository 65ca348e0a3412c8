# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a command that only reads, with one shell command and no module run."""

from __future__ import annotations

import shlex

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_on_host


class ActionModule(ActionBase):
    """A read is a step every run makes, in check mode too: ansible.builtin.command would cost the
    host about half a CPU second of Python around it. The command runs as the connection's own
    command line instead, each argument quoted, so no shell reads it."""

    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        argv = self._argv()
        ran = run_on_host(self, shlex.join(argv))
        stdout, stderr = ran["stdout"].rstrip("\r\n"), ran["stderr"].rstrip("\r\n")
        result.update(changed=False, cmd=argv, rc=ran["rc"], stdout=stdout, stderr=stderr,
                      stdout_lines=stdout.splitlines(), stderr_lines=stderr.splitlines())
        if ran["rc"] != 0:
            result.update(failed=True, msg="non-zero return code")
        return result

    def _argv(self):
        """The command and its arguments as strings; numbers are given as their digits, as
        ansible.builtin.command gives them."""
        args = self._task.args
        argv = args.get("argv")
        if set(args) != {"argv"} or not isinstance(argv, list) or not argv:
            raise AnsibleActionFail("pharos.hpc.read_command takes one option, argv: the command and its arguments as a "
                                    f"non-empty list. This step gives {sorted(args)}; write the command as "
                                    "argv: [sacctmgr, --noheader, show, cluster].")
        refused = [part for part in argv if isinstance(part, bool) or not isinstance(part, (str, int, float))]
        if refused:
            raise AnsibleActionFail(f"pharos.hpc.read_command: each item of argv must be a string or a number; "
                                    f"{refused[0]!r} is not. Give it as text, quoted in YAML.")
        return [str(part) for part in argv]
