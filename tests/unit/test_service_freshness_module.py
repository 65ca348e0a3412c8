"""The service_freshness module against a systemctl that answers as systemd does."""

import json
import os
import time

import pytest
from module_runner import run_module

from ansible_collections.pharos.hpc.plugins.module_utils import service_freshness as freshness_utils
from ansible_collections.pharos.hpc.plugins.modules import service_freshness

# Each unit's `systemctl show` answer; started_seconds_ago becomes a monotonic start.
FAKE_SYSTEMCTL = """#!/usr/bin/env python3
import json, sys, time
units = json.load(open(sys.argv[0] + ".json"))
if sys.argv[1] == "list-units":
    pattern = sys.argv[-1].split("@")[0]
    print("\\n".join("%s loaded active running x" % name for name in units if name.startswith(pattern)))
    sys.exit(0)
unit = units.get(sys.argv[-1], {"state": "inactive", "started_seconds_ago": None})
ago = unit["started_seconds_ago"]
started = 0 if ago is None else int((time.monotonic() - ago) * 1000000)
print("ActiveState=%s" % unit["state"])
print("ExecMainStartTimestampMonotonic=%d" % started)
print("ActiveEnterTimestampMonotonic=%d" % started)
print("NeedDaemonReload=%s" % unit.get("need_daemon_reload", "no"))
"""


@pytest.fixture
def systemd(tmp_path, monkeypatch):
    """Writes the units systemctl reports; returns a function that sets them."""
    bin_directory = tmp_path / "bin"
    bin_directory.mkdir()
    systemctl = bin_directory / "systemctl"
    systemctl.write_text(FAKE_SYSTEMCTL)
    systemctl.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bin_directory, os.environ["PATH"]))
    monkeypatch.setattr(freshness_utils, "APPLIED_DIRECTORY", str(tmp_path / "applied"))

    def set_units(**units):
        (bin_directory / "systemctl.json").write_text(json.dumps(units))
    return set_units


def run(arguments, check_mode=False):
    return run_module(service_freshness, arguments, check_mode)


def file_changed(tmp_path, name, seconds_ago):
    path = tmp_path / name
    path.write_text("x")
    moment = time.time() - seconds_ago
    os.utime(path, (moment, moment))
    return str(path)


def test_a_service_started_before_its_file_changed_is_reported_changed(tmp_path, systemd):
    systemd(slurmdbd={"state": "active", "started_seconds_ago": 100})
    changed = file_changed(tmp_path, "slurmdbd.conf", 50)
    unchanged = file_changed(tmp_path, "jwt.key", 500)
    result = run({"unit": "slurmdbd", "paths": [changed, unchanged]})
    assert (result["changed"], result["stale"], result["changed_since"]) == (True, ["slurmdbd"], [changed])


def test_a_service_started_after_its_files_changed_is_current(tmp_path, systemd):
    systemd(slurmdbd={"state": "active", "started_seconds_ago": 10})
    result = run({"unit": "slurmdbd", "paths": [file_changed(tmp_path, "slurmdbd.conf", 50)]})
    assert (result["changed"], result["running"], result["stale"]) == (False, ["slurmdbd"], [])


def test_a_service_that_does_not_run_is_not_stale(tmp_path, systemd):
    systemd()
    result = run({"unit": "slurmdbd", "paths": [file_changed(tmp_path, "slurmdbd.conf", 1)]})
    assert (result["changed"], result["running"]) == (False, [])


def test_check_mode_reports_the_same(tmp_path, systemd):
    systemd(munge={"state": "active", "started_seconds_ago": 100})
    assert run({"unit": "munge", "paths": [file_changed(tmp_path, "munge.key", 5)]}, check_mode=True)["changed"]


def test_a_recorded_reload_after_the_change_makes_a_reloaded_service_current(tmp_path, systemd):
    systemd(ssh={"state": "active", "started_seconds_ago": 1000})
    dropin = file_changed(tmp_path, "members.conf", 50)
    assert run({"unit": "ssh", "paths": [dropin]})["changed"]
    assert run({"unit": "ssh", "state": "applied"}, check_mode=True)["changed"] is False
    assert run({"unit": "ssh", "paths": [dropin]})["changed"], "check mode recorded a reload"
    assert run({"unit": "ssh", "state": "applied"})["changed"] is False
    assert not run({"unit": "ssh", "paths": [dropin]})["changed"]


def test_a_pattern_checks_every_running_instance(tmp_path, systemd):
    systemd(**{"waldur-site-agent@order_process.service": {"state": "active", "started_seconds_ago": 100},
               "waldur-site-agent@report.service": {"state": "active", "started_seconds_ago": 5}})
    result = run({"unit": "waldur-site-agent@*.service", "paths": [file_changed(tmp_path, "site-agent.env", 50)]})
    assert result["running"] == ["waldur-site-agent@order_process.service", "waldur-site-agent@report.service"]
    assert result["stale"] == ["waldur-site-agent@order_process.service"]


def test_a_changed_unit_definition_counts_only_when_asked(tmp_path, systemd):
    systemd(slurmrestd={"state": "active", "started_seconds_ago": 5, "need_daemon_reload": "yes"})
    dropin = file_changed(tmp_path, "pharos.conf", 500)
    assert not run({"unit": "slurmrestd", "paths": [dropin]})["changed"]
    result = run({"unit": "slurmrestd", "paths": [dropin], "unit_definition": True})
    assert (result["changed"], result["needs_daemon_reload"]) == (True, ["slurmrestd"])
