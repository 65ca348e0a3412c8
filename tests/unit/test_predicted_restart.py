"""pharos.hpc.predicted's restart_if_stale: a start step restarts its unit where one of the unit's
files changed after the unit read it, as a run stopped before its restart leaves it, and finds a
unit that runs its files as they are in place. Each case runs a real playbook on localhost against
a systemctl that answers as systemd does (test_units_in_place) and a systemd module stand-in (in
the playbook's library/) that reports the state and daemon_reload it was given."""

import json
import os
import time

import pytest
from test_files_in_place import play
from test_units_in_place import FAKE_SYSTEMCTL, changed_at

# The systemctl of test_units_in_place, also answering the plain start's own read: the state
# alone, and is-enabled.
SYSTEMCTL = FAKE_SYSTEMCTL.replace('if sys.argv[1] == "list-units":', '''if sys.argv[1] == "is-enabled":
    sys.exit(0)
if "--value" in sys.argv:
    print(units.get(sys.argv[-1], {"state": "inactive"})["state"])
    sys.exit(0)
if sys.argv[1] == "list-units":''')
SYSTEMD_MODULE = """#!/usr/bin/python
# WANT_JSON
import json, sys
args = json.load(open(sys.argv[1]))
print(json.dumps({"changed": True, "msg": "the module ran", "state": args["state"],
                  "daemon_reload": args.get("daemon_reload", False)}))
"""
# It leaves a mark in the playbook's directory, where each task runs.
APT_MODULE = """#!/usr/bin/python
import json
open("apt-ran", "a").close()
print(json.dumps({"changed": False, "msg": "apt found it installed"}))
"""
STARTED_AT = time.time() - 100


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A systemctl first on PATH and the module stand-ins; returns a function that sets the units."""
    for directory in ("bin", "library"):
        (tmp_path / directory).mkdir()
    for path, text in ((tmp_path / "bin" / "systemctl", SYSTEMCTL),
                       (tmp_path / "library" / "systemd_service.py", SYSTEMD_MODULE),
                       (tmp_path / "library" / "apt.py", APT_MODULE)):
        path.write_text(text)
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")

    def set_units(**units):
        (tmp_path / "bin" / "systemctl.json").write_text(json.dumps(units))
    return set_units


def start(name, unit, paths, state="started", **stale_options):
    return {"name": name, "ignore_errors": True, "pharos.hpc.predicted": {
        "prediction": f"{unit} would be started", "module": "systemd_service",
        "args": {"name": unit, "state": state, "enabled": True},
        "restart_if_stale": dict({"paths": paths}, **stale_options)}}


@pytest.mark.parametrize("mode", [(), ("--check",)], ids=["real run", "check mode"])
def test_a_unit_started_before_its_file_changed_is_restarted_and_one_that_runs_its_files_is_in_place(
        project, tmp_path, host, mode):
    host(**{"slurmd.service": {"state": "active", "started_at": STARTED_AT},
            "munge.service": {"state": "active", "started_at": STARTED_AT}})
    older = changed_at(tmp_path, "older.conf", STARTED_AT - 100)
    newer = changed_at(tmp_path, "newer.conf", STARTED_AT + 50)
    results = play(project, tmp_path, [
        start("its files as they are", "munge.service", [older]),
        start("a file changed since", "slurmd.service", [older, newer]),
    ], *mode)
    fresh, stale = results["its files as they are"], results["a file changed since"]
    assert fresh["changed"] is False and fresh["in_place"] is True, fresh
    assert stale["changed"] is True and stale["msg"] == "the module ran", stale
    assert stale["state"] == "restarted" and stale["daemon_reload"] is False
    assert stale["stale"] == ["slurmd.service"] and stale["changed_since"] == [newer]


def test_a_unit_whose_definition_changed_is_restarted_after_systemd_reloads(project, tmp_path, host):
    host(**{"slurmd.service": {"state": "active", "started_at": STARTED_AT, "need_daemon_reload": "yes"}})
    older = changed_at(tmp_path, "older.conf", STARTED_AT - 100)
    results = play(project, tmp_path, [
        start("its definition counts", "slurmd.service", [older], unit_definition=True),
        start("its files alone count", "slurmd.service", [older]),
    ])
    assert results["its definition counts"]["state"] == "restarted"
    assert results["its definition counts"]["daemon_reload"] is True
    assert results["its files alone count"]["in_place"] is True


def test_a_unit_that_does_not_run_is_started_and_a_restart_asks_nothing(project, tmp_path, host):
    host(**{"slurmd.service": {"state": "active", "started_at": STARTED_AT}})
    newer = changed_at(tmp_path, "newer.conf", STARTED_AT + 50)
    results = play(project, tmp_path, [
        start("stopped", "munge.service", [newer]),
        start("restarted anyway", "slurmd.service", [newer], state="restarted"),
    ])
    assert results["stopped"]["state"] == "started" and "stale" not in results["stopped"]
    assert results["restarted anyway"]["state"] == "restarted" and "stale" not in results["restarted anyway"]


def test_the_second_step_of_an_install_restarts_its_stale_unit(project, tmp_path, host):
    host(**{"munge.service": {"state": "active", "started_at": STARTED_AT}})
    newer = changed_at(tmp_path, "munge.key", STARTED_AT + 50)
    task = {"name": "install and start", "pharos.hpc.predicted": {
        "prediction": "munge would be installed", "module": "apt", "args": {"name": "munge", "state": "latest"},
        "then": {"module": "systemd_service", "args": {"name": "munge.service", "state": "started", "enabled": True},
                 "restart_if_stale": {"paths": [newer]}}}}
    result = play(project, tmp_path, [task], "--check")["install and start"]
    assert result["changed"] is True
    assert result["results"][0]["msg"] == "apt found it installed"
    assert result["results"][1]["state"] == "restarted" and result["results"][1]["changed_since"] == [newer]


def test_restart_if_stale_on_a_step_that_starts_no_unit_is_refused_before_either_step_runs(project, tmp_path, host):
    host()
    on_the_install = {"name": "an install", "ignore_errors": True, "pharos.hpc.predicted": {
        "prediction": "munge would be installed", "module": "apt", "args": {"name": "munge"},
        "restart_if_stale": {"paths": ["/etc/munge/munge.key"]}}}
    # The first step would run (the apt stand-in) before a misplaced second step's option failed.
    on_a_reload = {"name": "a reload after an install", "ignore_errors": True, "pharos.hpc.predicted": {
        "prediction": "munge would be installed", "module": "apt", "args": {"name": "munge"},
        "then": {"module": "systemd_service", "args": {"name": "munge.service", "state": "reloaded"},
                 "restart_if_stale": {"paths": ["/etc/munge/munge.key"]}}}}
    results = play(project, tmp_path, [on_the_install, on_a_reload])
    for result in results.values():
        assert result["failed"] is True, result
        assert "restart_if_stale restarts the unit of a step that starts it" in result["msg"]
    assert not (tmp_path / "apt-ran").exists()
