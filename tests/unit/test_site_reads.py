"""No step of the collection carries a Site file that may hold a secret, or a live credential,
into its result: -v output, the JSON callback's log, ansible-runner's artifacts and AWX's job
events keep every result whole. A file is read on the host by a module that returns only what
its check needs, or by a step with no_log."""

from pathlib import Path

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[2]
SLURP = ("ansible.builtin.slurp", "slurp")
# Files whose whole text may be shown: they hold no secret on any Site.
PLAIN_FILES = ("/etc/nsswitch.conf", "/opt/pharos-hpc/releases/{{ release_archive_check.release_id }}/fingerprint")


def task_files():
    return sorted(PROJECT.glob("roles/*/tasks/*.yml")) + sorted(PROJECT.glob("playbooks/**/*.yml"))


def tasks(node):
    """Every task of a task file or playbook, blocks and plays opened."""
    if isinstance(node, list):
        for item in node:
            yield from tasks(item)
    elif isinstance(node, dict):
        if any(key in node for key in ("block", "tasks", "pre_tasks", "post_tasks", "handlers")):
            for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
                yield from tasks(node.get(key) or [])
        else:
            yield node


def slurp_steps():
    steps = []
    for path in task_files():
        for task in tasks(yaml.safe_load(path.read_text(encoding="utf-8"))):
            module = next((name for name in SLURP if name in task), None)
            if module:
                steps.append((path.relative_to(PROJECT), task.get("name"), task[module], task.get("no_log")))
    return steps


def test_the_scan_finds_the_collections_slurp_steps():
    found = {str(path) for path, _name, _args, _no_log in slurp_steps()}
    assert {"roles/site_agent/tasks/files.yml", "roles/release/tasks/preflight.yml"} <= found, found


@pytest.mark.parametrize("path, name, arguments, no_log", slurp_steps(),
                         ids=[f"{step[0]}: {step[1]}" for step in slurp_steps()])
def test_a_file_read_whole_is_one_that_holds_no_secret_or_its_step_has_no_log(path, name, arguments, no_log):
    read = arguments.get("src") or arguments.get("path")
    assert no_log is True or read in PLAIN_FILES, (
        f"{path}, '{name}', reads {read} whole into its result, which -v and the JSON callback print. "
        "Read it on the host with a module that returns only what the check needs, or give the step no_log: true.")


def test_the_munge_credential_adopt_mode_makes_is_in_no_result():
    steps = {task["name"]: task for task in tasks(yaml.safe_load(
        (PROJECT / "roles/munge/tasks/adopt_check.yml").read_text(encoding="utf-8")))}
    assert steps["Make a credential on the first node"].get("no_log") is True
    assert steps["Decode the credential on this node"].get("no_log") is True
