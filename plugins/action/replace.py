# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible.builtin.replace, with a file where the pattern matches nowhere found by one shell command."""

from __future__ import annotations

import re
import shlex

from ansible_collections.pharos.hpc.plugins.action.user import InPlaceModule
from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_on_host

# A larger file is left to the builtin module: the read is for configuration files.
READ_LIMIT = 1024 * 1024
NOT_TEXT = re.compile("[\udc80-\udcff\ufffd]")


def text_read(path):
    """The shell command that reads a file's text, up to one byte past the limit."""
    return f"head -c {READ_LIMIT + 1} -- {shlex.quote(path)}"


class ActionModule(InPlaceModule):
    """On a converged host the pattern of a replace step matches nowhere, and the builtin module
    then costs about half a CPU second of Python on the host to say so. A plain step's file is read
    with one shell command instead and searched here as the builtin searches it (Python's re,
    multiline); only where the pattern matches does the builtin module run, with the same arguments."""

    MODULE = "ansible.builtin.replace"
    PLAIN = {"path", "regexp", "replace"}

    def _in_place(self):
        """The step's result when its pattern matches nowhere in the file, else None."""
        args = self._task.args
        path, regexp = args.get("path"), args.get("regexp")
        if (not set(args) <= self.PLAIN or not isinstance(path, str) or not path.startswith("/")
                or not isinstance(regexp, str)):
            return None
        try:
            pattern = re.compile(regexp, re.MULTILINE)
        except re.error:
            return None  # the builtin module names the error
        probe = run_on_host(self, text_read(path))
        content = probe["stdout"]
        # A file the command could not read, too large to hold, or not UTF-8 (its bytes arrive as
        # escapes or replacement characters) is the builtin's to judge.
        if (probe["rc"] != 0 or len(content.encode("utf-8", "surrogateescape")) > READ_LIMIT
                or NOT_TEXT.search(content) or pattern.search(content)):
            return None
        return {"changed": False, "in_place": True, "msg": ""}
