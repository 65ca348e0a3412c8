"""Runs the scenario's playbooks again from the verifier, as an administrator would."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SCENARIO = Path(__file__).resolve().parents[1]
PROJECT = SCENARIO.parents[1]
# The scenarios' shared helpers for runs killed half-way live in tests/fixtures.
sys.path.insert(0, str(PROJECT / "tests" / "fixtures"))
import interrupted_runs  # noqa: E402

started_before_change = interrupted_runs.started_before_change

# The administrator's playbook. The scenario's converge.yml adds its members, allocations and
# scratch group members, which a test of the Site's own tasks does not need again.
SITE = "../../playbooks/site.yml"


def run_playbook(playbook, *options, extra_vars=None, as_json=False, succeed=True, interrupt_after=None):
    """ansible-playbook on the scenario's inventory; the JSON callback when asked for.

    With succeed=False a failed run is returned too, as (return code, output). With
    interrupt_after, the run is killed as soon as the task of that name changed something
    (tests/fixtures/interrupt), and (return code, output) is returned."""
    ephemeral = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
    command = [str(Path(sys.executable).parent / "ansible-playbook"),
               "-i", str(Path(os.environ["MOLECULE_INVENTORY_FILE"]).parent),
               "-e", "slurm_member_token_issuer=https://issuer.pharos.test",
               "-e", f"slurm_member_token_public_keys_file={ephemeral}/signer.pub.pem", *options]
    with tempfile.NamedTemporaryFile("w", suffix=".json") as extra:
        if extra_vars is not None:
            # JSON, so that numbers stay numbers; from a file, so that no secret is in argv.
            json.dump(extra_vars, extra)
            extra.flush()
            command += ["-e", "@" + extra.name]
        command.append(str(SCENARIO / playbook))
        return run_ansible_playbook(command, as_json, succeed, interrupt_after)


def run_ansible_playbook(command, as_json, succeed, interrupt_after):
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"),
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_NOCOLOR="true")
    if as_json:
        environment["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
    if interrupt_after is not None:
        environment.update(interrupted_runs.interrupting_environment(interrupt_after))
        succeed = False
    result = subprocess.run(command, cwd=PROJECT, env=environment, capture_output=True,
                            text=True, timeout=600, check=False)
    if not succeed:
        return result.returncode, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    return json.loads(result.stdout) if as_json else result.stdout


def changed_tasks(result):
    """Every (host, task) a JSON run reports changed, handlers included, once for each time it is reported."""
    return [(host, task["task"]["name"]) for play in result["plays"] for task in play["tasks"]
            for host, outcome in task["hosts"].items() if outcome.get("changed")]
