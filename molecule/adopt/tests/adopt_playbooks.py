"""site.yml in adopt mode on the scenario's inventory, run as an administrator would: over ssh
as the sudo user of host_vars. Run as a script from prepare.yml, it keeps what the run said in a
file: python adopt_playbooks.py <file> [--json] [ansible-playbook options]."""

import json
import os
import subprocess
import sys
from pathlib import Path

SCENARIO = Path(__file__).resolve().parents[1]
PROJECT = SCENARIO.parents[1]


def run_site(*options, as_json=False):
    """(return code, output) of ansible-playbook converge.yml with the scenario's inventory.

    The output is the JSON callback's document with as_json; otherwise the default callback's
    text, each result as one line of JSON, so that a failure's message reads whole."""
    return run_playbook(SCENARIO / "converge.yml", *options, as_json=as_json)


def run_playbook(playbook, *options, as_json=False):
    """(return code, output) of ansible-playbook on this playbook, as run_site runs converge.yml."""
    inventory = Path(os.environ["MOLECULE_INVENTORY_FILE"]).parent
    command = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory),
               *options, str(playbook)]
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"),
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_NOCOLOR="true",
                       ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    if as_json:
        environment["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
    result = subprocess.run(command, cwd=PROJECT, env=environment, capture_output=True,
                            text=True, timeout=900, check=False)
    if as_json:
        return result.returncode, json.loads(result.stdout)
    return result.returncode, result.stdout + result.stderr


def changed_results(document):
    """(task name, host, result) of each change in a JSON callback document."""
    for play in document["plays"]:
        for task in play["tasks"]:
            for host, result in task["hosts"].items():
                if result.get("changed"):
                    yield task["task"]["name"], host, result


if __name__ == "__main__":
    arguments = sys.argv[2:]
    as_json = "--json" in arguments
    code, output = run_site(*[argument for argument in arguments if argument != "--json"], as_json=as_json)
    text = json.dumps({"rc": code, "result": output}) if as_json else f"rc={code}\n{output}"
    Path(sys.argv[1]).write_text(text, encoding="utf-8")
