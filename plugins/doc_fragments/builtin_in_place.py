# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:
    # The attributes every pharos.hpc action shares that runs a builtin action or module unless it
    # finds the host already as the step wants it (file, copy, template, user, group, replace).
    DOCUMENTATION = r"""
attributes:
  action:
    support: full
    description: An action plugin on the controller, around the builtin's.
  async:
    support: none
    description: Not asynchronous.
"""
