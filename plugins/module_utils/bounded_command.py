# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A command fed on its standard input, with a bounded time, that cannot deadlock on its pipes.

AnsibleModule.run_command writes all of its ``data`` before it reads any output. A command
that answers while it reads (sacctmgr reports on every line of a load file) fills the 64 KiB
output pipe, stops reading, and both sides wait for each other forever. Here the input is
written while both outputs are drained, and a command that outlives its time is killed.
"""

from __future__ import annotations

import os
import subprocess

# Slurm's commands print their reports in the C locale, as the parsers expect.
C_LOCALE = {"LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}


class CommandTimeout(RuntimeError):
    """The command ran longer than its bound and was killed."""

    def __init__(self, argv, timeout):
        super().__init__("%s did not finish within %s s and was stopped" % (os.path.basename(argv[0]), timeout))
        self.argv = argv
        self.timeout = timeout


def run_bounded(argv, data=None, timeout=None):
    """(rc, stdout, stderr) of argv, with data (text) on its standard input; CommandTimeout after timeout s."""
    # Not run_command: it would deadlock on a command that answers while it reads (see above).
    process = subprocess.Popen(  # pylint: disable=ansible-bad-function
        argv,
        stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, **C_LOCALE),
        close_fds=True,
    )
    try:
        # communicate() writes the input and reads both outputs in one select loop.
        out, err = process.communicate(input=data.encode("utf-8") if data is not None else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise CommandTimeout(argv, timeout)
    return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
