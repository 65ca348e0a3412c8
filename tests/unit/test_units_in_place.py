"""pharos.hpc.service_freshness answers with one shell command for a unit that does not run, or
one whose files all changed well before it took them in; any doubt runs the module, which names
the files. Each case runs a real playbook on localhost against a systemctl that answers as
systemd does; a result with in_place came from the shell command, one without from the module."""

import json
import os
import time

import pytest
from test_files_in_place import play

# Each unit's `systemctl show` answer; a unit's start is a moment on the wall clock (started_at),
# given on the monotonic clock as systemd gives it.
FAKE_SYSTEMCTL = """#!/usr/bin/env python3
import json, sys, time
units = json.load(open(sys.argv[0] + ".json"))
if sys.argv[1] == "list-units":
    pattern = sys.argv[-1].split("*")[0]
    print("\\n".join("%s loaded active running x" % name for name in units if name.startswith(pattern)))
    sys.exit(0)
unit = units.get(sys.argv[-1], {"state": "inactive", "started_at": None})
started = 0 if unit["started_at"] is None else int((time.monotonic() - (time.time() - unit["started_at"])) * 1e6)
print("ActiveState=%s" % unit["state"])
print("ExecMainStartTimestampMonotonic=%d" % started)
print("ActiveEnterTimestampMonotonic=%d" % started)
print("NeedDaemonReload=%s" % unit.get("need_daemon_reload", "no"))
"""


@pytest.fixture
def systemd(tmp_path, monkeypatch):
    """A systemctl first on PATH, for the shell command and the module alike; returns a function
    that sets the units it reports."""
    bin_directory = tmp_path / "bin"
    bin_directory.mkdir()
    (bin_directory / "systemctl").write_text(FAKE_SYSTEMCTL)
    (bin_directory / "systemctl").chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bin_directory, os.environ["PATH"]))

    def set_units(**units):
        (bin_directory / "systemctl.json").write_text(json.dumps(units))
    return set_units


STARTED_AT = time.time() - 100


def changed_at(tmp_path, name, moment):
    path = tmp_path / name
    path.write_text("x")
    os.utime(path, (moment, moment))
    return str(path)


def freshness(name, unit, paths, **extra):
    return {"name": name, "pharos.hpc.service_freshness": dict({"unit": unit, "paths": paths}, **extra)}


def test_a_unit_that_runs_its_files_or_does_not_run_is_answered_without_a_module_run(project, tmp_path, systemd):
    systemd(**{"slurmdbd.service": {"state": "active", "started_at": STARTED_AT}})
    older = changed_at(tmp_path, "older.conf", STARTED_AT - 100)
    just_before = changed_at(tmp_path, "just-before.conf", STARTED_AT - 0.5)
    results = play(project, tmp_path, [
        freshness("runs its files", "slurmdbd.service", [older, just_before, str(tmp_path / "absent.conf")]),
        freshness("does not run", "munge.service", [older]),
    ])
    for name, result in results.items():
        assert result["changed"] is False and result.get("in_place") is True, (name, result)
    assert results["runs its files"]["running"] == ["slurmdbd.service"]
    assert results["does not run"]["running"] == []


def test_a_stale_unit_or_any_doubt_runs_the_module(project, tmp_path, systemd):
    systemd(**{"slurmdbd.service": {"state": "active", "started_at": STARTED_AT},
               "slurmctld.service": {"state": "active", "started_at": STARTED_AT, "need_daemon_reload": "yes"}})
    older, newer = changed_at(tmp_path, "older.conf", STARTED_AT - 100), changed_at(tmp_path, "newer.conf", STARTED_AT + 50)
    close = changed_at(tmp_path, "close.conf", STARTED_AT - 0.05)
    results = play(project, tmp_path, [
        freshness("stale", "slurmdbd.service", [older, newer]),
        freshness("changed just before it started", "slurmdbd.service", [close]),
        freshness("its unit file changed", "slurmctld.service", [older], unit_definition=True),
        freshness("a pattern", "slurm*.service", [older]),
    ], "--check")
    for name, result in results.items():
        assert "in_place" not in result and not result.get("failed"), (name, result)
    assert results["stale"]["changed"] is True and results["stale"]["changed_since"] == [newer]
    assert results["changed just before it started"]["changed"] is False
    assert results["its unit file changed"]["needs_daemon_reload"] == ["slurmctld.service"]
