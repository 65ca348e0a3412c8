# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One shell command on the host, for the actions that read a host without a module run."""

from __future__ import annotations

import secrets


def run_on_host(action, command):
    """Run one shell command as the step's connection and become run a module, without a terminal.

    Over ssh with become, Ansible asks for a terminal for such a command (ssh -tt), and a terminal
    carries the command's standard error in its standard output: a warning from the command or from
    sudo would then be read as one more account, one more line of a file. Without one, each stream
    arrives apart, as it does for a module's payload with pipelining.

    A command that pharos.hpc.keep ran already for this step, with the others of its steps, is
    answered from that read (`action.reads_made`, taken once)."""
    made = getattr(action, "reads_made", None)
    if made and command in made:
        return made.pop(command)
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


def run_all_on_host(action, commands):
    """Run several shell commands as one, each in its own subshell, in order: {command: result}, each
    result with the command's own exit code and standard output (its standard error is not kept
    apart, and is left out). Empty when the whole command fails, so that each is run again alone."""
    commands = list(dict.fromkeys(commands))
    if not commands:
        return {}
    # A line no file on the host can hold by chance ends each command's output, with its exit code.
    marker = f"pharos-read-{secrets.token_hex(8)}"
    script = " ; ".join(f"( {command} ) 2>/dev/null ; printf '\\n{marker} %s\\n' \"$?\"" for command in commands)
    ran = run_on_host(action, script)
    if ran["rc"] != 0:
        return {}
    parts = ran["stdout"].split("\n" + marker + " ")
    outputs, codes = [parts[0]], []
    for part in parts[1:]:
        code, _newline, rest = part.partition("\n")
        codes.append(code)
        outputs.append(rest)
    if len(codes) != len(commands) or not all(code.isdigit() for code in codes) or outputs[-1].strip():
        return {}
    return {command: {"rc": int(code), "stdout": output, "stderr": ""}
            for command, code, output in zip(commands, codes, outputs)}
