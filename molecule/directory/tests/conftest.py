"""Shared by the directory scenario's verifiers: running playbooks/site.yml again from a test."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


class SiteRun:
    def __init__(self, completed):
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr

    @property
    def json(self):
        return json.loads(self.stdout)

    def changed(self, host="pharos-directory-login"):
        """The tasks that changed the host, by name ("role : task" without the role), with their
        diffs: one diff, or a list of one per changed item of a loop."""
        changed = {}
        for play in self.json["plays"]:
            for task in play["tasks"]:
                result = task["hosts"].get(host, {})
                if result.get("changed"):
                    diff = result.get("diff")
                    if "results" in result:
                        diff = [item.get("diff") for item in result["results"] if item.get("changed")]
                    changed[task["task"]["name"].split(" : ", 1)[-1]] = diff
        return changed


@pytest.fixture(scope="session")
def run_site():
    """playbooks/site.yml on the login node, with every task's result as JSON."""
    project = Path(os.environ["MOLECULE_PROJECT_DIRECTORY"])
    inventory = Path(os.environ["MOLECULE_INVENTORY_FILE"]).parent
    environment = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_NOCOLOR="1")

    def run(*options, succeed=True):
        completed = subprocess.run(
            [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory), "playbooks/site.yml",
             "--limit", "pharos-directory-login", *options],
            cwd=project, env=environment, capture_output=True, text=True, timeout=600, check=False)
        if succeed:
            assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
        return SiteRun(completed)

    return run
