# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One shell command on the host, for the actions that read a host without a module run."""

from __future__ import annotations


def run_on_host(action, command):
    """Run one shell command as the step's connection and become run a module, without a terminal.

    Over ssh with become, Ansible asks for a terminal for such a command (ssh -tt), and a terminal
    carries the command's standard error in its standard output: a warning from the command or from
    sudo would then be read as one more account, one more line of a file. Without one, each stream
    arrives apart, as it does for a module's payload with pipelining."""
    connection = action._connection
    try:
        use_tty = connection.get_option("use_tty")
    except KeyError:  # a connection that never asks for a terminal (local, docker)
        return action._low_level_execute_command(command)
    connection.set_option("use_tty", False)
    try:
        return action._low_level_execute_command(command)
    finally:
        connection.set_option("use_tty", use_tty)
