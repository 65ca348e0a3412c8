"""Runs the scenario's playbooks again from the verifier, as an administrator would."""

import json
import os
import subprocess
import sys
from pathlib import Path

SCENARIO = Path(__file__).resolve().parents[1]
PROJECT = SCENARIO.parents[1]


def run_playbook(playbook, *options, extra_vars=None, as_json=False, succeed=True):
    """ansible-playbook on the scenario's inventory; the JSON callback when asked for.

    With succeed=False a failed run is returned too, as (return code, output)."""
    ephemeral = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
    command = [str(Path(sys.executable).parent / "ansible-playbook"),
               "-i", str(Path(os.environ["MOLECULE_INVENTORY_FILE"]).parent),
               "-e", "slurm_member_token_issuer=https://issuer.pharos.test",
               "-e", f"slurm_member_token_public_keys_file={ephemeral}/signer.pub.pem", *options]
    if extra_vars is not None:
        # JSON, so that numbers stay numbers (key=value would make them strings).
        command += ["-e", json.dumps(extra_vars)]
    command.append(str(SCENARIO / playbook))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"),
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_NOCOLOR="true")
    if as_json:
        environment["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
    result = subprocess.run(command, cwd=PROJECT, env=environment, capture_output=True,
                            text=True, timeout=600, check=False)
    if not succeed:
        return result.returncode, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    return json.loads(result.stdout) if as_json else result.stdout
