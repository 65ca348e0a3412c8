"""The pharos.hpc.release_archive lookup, as the release role's preflight calls it, when the
inventory leaves the signer's key unset or names something that is not a key: the message names
the variable to set, not the working directory."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TASKS = {
    "unset": "lookup('pharos.hpc.release_archive', 'absent.tar.gz', signer_key=pharos_release_signer_key | default(''))",
    "a directory": "lookup('pharos.hpc.release_archive', 'absent.tar.gz', signer_key='release')",
}


@pytest.fixture(scope="module")
def results(project, tmp_path_factory):
    playbook = tmp_path_factory.mktemp("lookup") / "read.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False,
                                     "tasks": [{"name": name, "ansible.builtin.debug": {"msg": "{{ %s }}" % call},
                                                "ignore_errors": True} for name, call in TASKS.items()]}]))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(project / "collections"), ANSIBLE_NOCOLOR="true",
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    completed = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,",
                                "-c", "local", str(playbook)], cwd=project, env=environment,
                               capture_output=True, text=True, timeout=120, check=False)
    report = json.loads(completed.stdout)
    return {task["task"]["name"]: task["hosts"]["localhost"] for task in report["plays"][0]["tasks"]}


def test_an_unset_signer_key_names_the_variable_to_set(results):
    assert results["unset"]["failed"] is True
    message = results["unset"]["msg"]
    assert "no release signer is pinned. Fix: set pharos_release_signer_key" in message
    assert "directory" not in message


def test_a_signer_key_that_is_a_directory_is_named_with_the_variable_to_set(results):
    assert results["a directory"]["failed"] is True
    message = results["a directory"]["msg"]
    assert "the pinned release signer key release cannot be read (Is a directory)" in message
    assert "Fix: set pharos_release_signer_key" in message
