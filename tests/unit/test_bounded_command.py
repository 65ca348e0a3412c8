"""slurm_account's Slurm commands cannot deadlock on their pipes, and cannot hang a run.

The stand-in sacctmgr below answers as the real one does on a large load of users that
already exist: it reports on every line while it reads, several megabytes in all, and reads
slowly. Fed by AnsibleModule.run_command, which writes its whole input before reading any
output, both processes wait on full pipes for ever.
"""

import stat
import threading
import time

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils.bounded_command import CommandTimeout, run_bounded
from ansible_collections.pharos.hpc.plugins.module_utils.sacctmgr import SacctmgrError, SlurmClient

CHATTY_SACCTMGR = """\
#!/usr/bin/env python3
import sys, time
read = 0
for number, line in enumerate(sys.stdin):
    read += len(line)
    sys.stdout.write(" Database is busy or waiting for lock from other user. %06d %s" % (number, line) * 4)
    sys.stderr.write("warning %06d\\n" % number)
    if number % 500 == 0:
        time.sleep(0.01)
sys.stdout.write("read %d bytes\\n" % read)
"""

STUCK_SACCTMGR = """\
#!/bin/sh
exec sleep 300
"""

LOAD_LINES = 6000  # about 400 KB of load file, as 5,000 associations make


def stand_in(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def load_file():
    return "".join("User - 'member%05d':DefaultAccount='pharos_a_b%05d':Fairshare=1\n" % (n, n)
                   for n in range(LOAD_LINES))


def finishes_within(seconds, call):
    """call()'s result, or a failure when it has not returned in time (a deadlock never does)."""
    outcome = {}

    def target():
        try:
            outcome["result"] = call()
        except Exception as error:  # noqa: BLE001 - handed to the test thread
            outcome["error"] = error

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        pytest.fail("the command did not finish within %d s: its pipes are deadlocked" % seconds)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def test_a_large_load_with_a_larger_report_finishes(tmp_path):
    sacctmgr = stand_in(tmp_path, "sacctmgr", CHATTY_SACCTMGR)
    text = load_file()
    client = SlurmClient(run_bounded, "rec", sacctmgr=sacctmgr, timeout=120)
    recorded = []

    def run_and_keep(argv, data=None, timeout=None):
        result = run_bounded(argv, data=data, timeout=timeout)
        recorded.append(result)
        return result

    client.run_command = run_and_keep
    finishes_within(60, lambda: client.load(text, "adding accounts and user associations"))

    rc, out, err = recorded[0]
    assert rc == 0
    assert len(out) > 2 * 1024 * 1024 and len(err) > 64 * 1024  # both far beyond a pipe's 64 KiB
    assert out.endswith("read %d bytes\n" % len(text.encode()))  # every byte of the load was read


def test_a_stuck_slurm_fails_the_step_by_name_within_its_bound(tmp_path):
    sacctmgr = stand_in(tmp_path, "sacctmgr", STUCK_SACCTMGR)
    client = SlurmClient(run_bounded, "rec", sacctmgr=sacctmgr, timeout=1)
    started = time.monotonic()

    with pytest.raises(SacctmgrError) as raised:
        finishes_within(30, lambda: client.load(load_file(), "adding accounts and user associations"))

    assert time.monotonic() - started < 10
    message = str(raised.value)
    assert message.startswith("adding accounts and user associations: sacctmgr did not finish within 1 s")
    assert "command_timeout" in message


def test_a_timed_out_command_is_killed(tmp_path):
    marker = tmp_path / "still-running"
    script = stand_in(tmp_path, "slow", "#!/bin/sh\nsleep 2\ntouch %s\n" % marker)

    with pytest.raises(CommandTimeout):
        run_bounded([script], timeout=0.5)
    time.sleep(2.5)

    assert not marker.exists()
