# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible.builtin.template, with a file already in place found by one shell command."""

from __future__ import annotations

from ansible.plugins.action.template import ActionModule as TemplateAction

from ansible_collections.pharos.hpc.plugins.action.copy import InPlaceCopy


class _CopyLoader:
    """The action loader, handing out pharos.hpc.copy's action where the builtin template asks
    for the copy action it gives the rendered file to, with the template step's reads made."""

    def __init__(self, loader, reads_made):
        self._loader = loader
        self._reads_made = reads_made

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def get(self, name, *args, **kwargs):
        if name == "ansible.legacy.copy":
            copy = InPlaceCopy(*args, **kwargs)
            copy.reads_made = self._reads_made
            return copy
        return self._loader.get(name, *args, **kwargs)


class _Loaders:
    """The shared plugin loaders, with the action loader above."""

    def __init__(self, shared, reads_made):
        self._shared = shared
        self.action_loader = _CopyLoader(shared.action_loader, reads_made)

    def __getattr__(self, name):
        return getattr(self._shared, name)


class ActionModule(TemplateAction):
    """The builtin renders the template on the controller as it always does; only the copy of its
    result to the host reads a file already in place with one shell command (pharos.hpc.copy)."""

    # The builtin template makes the remote temporary directory first, for the copy it hands the
    # rendered file to: three round trips (the remote home, mkdir, and removing it) that a file in
    # place never uses. The copy action makes it itself when it writes the file.
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        self._shared_loader_obj = _Loaders(self._shared_loader_obj, getattr(self, "reads_made", None))
        return super().run(tmp, task_vars)
