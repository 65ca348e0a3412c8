"""The pharos.hpc.predicted action, as a role's task calls it: the same playbook in check mode, in a
real run and in a second real run on localhost, and the tests read each task's result and the files."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def step(name, pending, module=None, args=None, prediction=None):
    options = {"pending": pending, "prediction": prediction or f"{name} would change"}
    if module:
        options.update(module=module, args=args or {})
    return {"name": name, "pharos.hpc.predicted": options, "ignore_errors": True}


def tasks(directory):
    return [
        step("copy pending", True, "ansible.builtin.copy",
             {"content": "written\n", "dest": str(directory / "pending.txt"), "mode": "0644"}),
        step("copy ready", False, "ansible.builtin.copy",
             {"content": "written\n", "dest": str(directory / "ready.txt"), "mode": "0644"}),
        step("command pending", True, "ansible.builtin.command",
             {"argv": ["touch", str(directory / "touched")], "creates": str(directory / "touched")}),
        step("module ready", False, "ansible.builtin.stat", {"path": str(directory)}),
        step("prediction alone", True),
        step("no such module", False, "pharos.hpc.no_such_module"),
        step("pending, from a collection not installed", True, "community.absent.mysql_db", {"name": "slurm_acct_db"}),
        {"name": "no prediction", "pharos.hpc.predicted": {"pending": True}, "ignore_errors": True},
    ]


@pytest.fixture(scope="module")
def runs(project, tmp_path_factory):
    directory = tmp_path_factory.mktemp("predicted")
    playbook = directory / "play.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": tasks(directory)}]))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(project / "collections"), ANSIBLE_NOCOLOR="true",
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")

    def run(*options):
        completed = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,",
                                    "-c", "local", "-e", f"ansible_python_interpreter={sys.executable}",
                                    "--diff", *options, str(playbook)],
                                   cwd=project, env=environment, capture_output=True, text=True, timeout=120, check=False)
        report = json.loads(completed.stdout)
        return {task["task"]["name"]: task["hosts"]["localhost"] for task in report["plays"][0]["tasks"]}

    checked = run("--check")
    files_after_check = sorted(path.name for path in directory.iterdir())
    return {"check": checked, "files_after_check": files_after_check, "real": run(), "again": run(), "directory": directory}


def test_check_mode_reports_a_pending_step_as_its_prediction_and_runs_nothing(runs):
    for name in ("copy pending", "command pending", "prediction alone"):
        result = runs["check"][name]
        assert result["changed"] is True and result["predicted"] is True, result
        assert result["msg"] == f"{name} would change"
    assert runs["files_after_check"] == ["play.yml"]


def test_check_mode_runs_a_step_that_is_not_pending_in_check_mode_with_its_diff(runs):
    ready = runs["check"]["copy ready"]
    assert ready["changed"] is True and "predicted" not in ready
    assert ready["diff"][0]["after"] == "written\n"
    assert runs["check"]["module ready"]["stat"]["isdir"] is True


def test_a_real_run_runs_every_step_and_a_prediction_alone_is_skipped(runs):
    real, directory = runs["real"], runs["directory"]
    assert real["copy pending"]["changed"] is True and "predicted" not in real["copy pending"]
    assert (directory / "pending.txt").read_text() == "written\n"
    assert (directory / "ready.txt").read_text() == "written\n"
    assert real["command pending"]["changed"] is True and (directory / "touched").exists()
    assert real["prediction alone"]["skipped"] is True


def test_a_second_real_run_changes_nothing(runs):
    again = runs["again"]
    assert [name for name, result in again.items() if result.get("changed")] == []


def test_an_unknown_module_and_a_missing_option_are_named(runs):
    unknown = runs["real"]["no such module"]
    assert unknown["failed"] is True
    assert "no module named 'pharos.hpc.no_such_module'" in unknown["msg"]
    missing = runs["real"]["no prediction"]
    assert missing["failed"] is True and "prediction" in missing["msg"]


def test_check_mode_refuses_a_pending_step_whose_module_is_not_installed(runs):
    """A dry run must not predict a step its real run cannot make: both name the missing collection."""
    for run in ("check", "real"):
        refused = runs[run]["pending, from a collection not installed"]
        assert refused["failed"] is True and "predicted" not in refused, refused
        assert "no module named 'community.absent.mysql_db' is installed on this controller" in refused["msg"]
        assert "ansible-galaxy collection install community.absent" in refused["msg"]
