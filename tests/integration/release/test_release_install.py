"""pharos_release on the real release the builder makes (conftest.py): staged into a temporary
root, each component installed offline into its own virtualenv, activated with a recording
systemd, and the SSH access stand-in run through its stable path /opt/pharos-hpc/ssh-access."""

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[2] / "unit"))

# pylint: disable=wrong-import-position
from release_host_support import (  # noqa: E402
    RecordingSystemd, no_token, params, read_record, remove, sign_archive, write_site_env)

from ansible_collections.pharos.hpc.plugins.module_utils.release.layout import Layout  # noqa: E402
from ansible_collections.pharos.hpc.plugins.module_utils.release.run import RunError, run  # noqa: E402


def command(argv):
    """What AnsibleModule.run_command does for the module: (rc, stdout, stderr)."""
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False,
                               env={"PATH": os.environ["PATH"], "HOME": "/nonexistent"})
    return completed.returncode, completed.stdout, completed.stderr


@pytest.fixture(scope="module")
def installed(archive, tmp_path_factory):
    """A root where state=present installed the release; and how long it took."""
    root = tmp_path_factory.mktemp("host")
    write_site_env(root)
    sign_archive(archive, archive.name[:-len(".tar.gz")])
    started = time.monotonic()
    result = run(params(root, state="present", archive=str(archive), python=sys.executable, components=None),
                 None, command, False, no_token)
    seconds = time.monotonic() - started
    print("\nstaged %s with both components' virtualenvs in %.1f s" % (result["release_id"], seconds))
    # Read now: a later test of this module activates the release in the same root.
    result["current_after_present"] = os.path.lexists(Layout(str(root)).current)
    yield root, result
    remove(root)


def test_present_stages_the_release_read_only_with_a_virtualenv_per_component(installed):
    root, result = installed
    layout = Layout(str(root))
    release_id = result["release_id"]
    assert [step["step"] for step in result["steps"]] == ["stage", "record_signer"]
    assert Path(layout.signer).read_text(encoding="ascii").strip() == result["steps"][1]["signer"]
    assert stat.S_IMODE(os.lstat(layout.signer).st_mode) == 0o444
    assert sorted(os.listdir(layout.release(release_id))) == [
        "fingerprint", "release", "signed-statement", "venvs", "venvs.sha256"]
    statement = Path(layout.statement_file(release_id)).read_text(encoding="ascii")
    assert statement.startswith("pharos-hpc-release-signature/2\nrelease %s\narchive sha256:" % release_id)
    assert sorted(os.listdir(os.path.join(layout.release(release_id), "venvs"))) == ["site-agent", "ssh-access"]
    # The record names every file and link that runs, the bytecode pip compiled among them.
    record = Path(layout.release(release_id)) / "venvs.sha256"
    lines = record.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# bytecode recorded"
    recorded = [line.split("  ", 1)[1] for line in lines[1:]]
    assert "ssh-access/bin/python" in recorded and "site-agent/pyvenv.cfg" in recorded
    assert any(path.endswith("/site-packages/httpx/__init__.py") for path in recorded)
    assert any(path.endswith(".pyc") and "/site-packages/httpx/__pycache__/__init__." in path for path in recorded)
    writable = [os.path.join(directory, name) for directory, subdirectories, names in os.walk(layout.release(release_id))
                for name in subdirectories + names
                if not os.path.islink(os.path.join(directory, name))
                and os.lstat(os.path.join(directory, name)).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)]
    assert writable == []
    assert not result["current_after_present"], "present activates nothing"


def test_present_again_with_the_same_inputs_changes_nothing(installed, archive):
    root, _result = installed
    systemd = RecordingSystemd(Layout(str(root)))
    again = run(params(root, state="present", archive=str(archive), python=sys.executable, components=None),
                systemd, command, False, no_token)
    assert again["changed"] is False and again["steps"] == []
    assert systemd.writes() == []


def test_the_same_release_id_with_another_site_env_is_refused(installed, archive, tmp_path):
    root, _result = installed
    other = write_site_env(tmp_path, SLURM_STAGING_PARTITION="stage")
    with pytest.raises(RunError, match="already installed with other inputs"):
        run(params(root, state="present", archive=str(archive), python=sys.executable, components=None,
                   site_env=str(other)), RecordingSystemd(Layout(str(root))), command, False, no_token)


def test_the_activated_stand_in_runs_from_its_stable_path_and_finds_its_credential(installed, tmp_path):
    root, result = installed
    layout = Layout(str(root))
    systemd = RecordingSystemd(layout)
    activated = run(params(root, release_id=result["release_id"], health_settle=0), systemd, command, False, no_token)
    assert activated["changed"] and read_record(layout)["release_id"] == result["release_id"]
    assert ("restart", "pharos-ssh-access-agent.service") in systemd.writes()
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "ssh-access-site-token").write_text("psb_not-a-real-token\n")
    agent = Path(layout.component_link("ssh-access")) / "bin" / "pharos-ssh-access-agent"
    completed = subprocess.run([str(agent), "--once"], capture_output=True, text=True, timeout=60, check=False,
                               env={"PATH": os.environ["PATH"], "CREDENTIALS_DIRECTORY": str(credentials),
                                    "STATE_DIRECTORY": str(tmp_path), "CENTRAL_SITE_API_URL": "https://127.0.0.1:9"})
    # It found its credential and went on to the Site API, which nothing serves here.
    assert completed.returncode == 1, completed.stderr
    assert json.loads(completed.stdout)["stage"] == "site_api"
    assert os.path.realpath(agent).startswith(os.path.realpath(layout.release(result["release_id"])))


def test_the_site_agent_installed_offline_runs_its_console_script(installed):
    root, result = installed
    script = Path(Layout(str(root)).venv(result["release_id"], "site-agent")) / "bin" / "waldur_site_agent"
    completed = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0 and "--config-file" in completed.stdout, completed.stderr
