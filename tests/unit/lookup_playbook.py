"""Lookups as a playbook calls them: one ansible-playbook run on localhost whose tasks each
evaluate one expression, with the project's collection; each task's result by its name."""

import json
import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def lookup_results(directory, calls, variables=None, timeout=120):
    """calls maps a name to a Jinja expression (without braces). A failing lookup does not stop
    the others: its result has failed and msg."""
    playbook = Path(directory) / "read.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "vars": variables or {},
                                     "tasks": [{"name": name, "ansible.builtin.debug": {"msg": "{{ %s }}" % call},
                                                "ignore_errors": True} for name, call in calls.items()]}]))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"), ANSIBLE_NOCOLOR="true",
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    completed = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,",
                                "-c", "local", str(playbook)], cwd=PROJECT, env=environment,
                               capture_output=True, text=True, timeout=timeout, check=False)
    report = json.loads(completed.stdout)
    return {task["task"]["name"]: task["hosts"]["localhost"] for task in report["plays"][0]["tasks"]}
