"""Changing a partition limit in the inventory: --check --diff predicts it, and a run of the
controller alone rewrites slurm.conf and reconfigures without restarting slurmdbd; slurmctld
sends the new file to the configless nodes, which no run touches.

Runs after test_cluster.py (pytest orders files by name) and leaves the new limit in place:
test_rotation.py changes it once more with the secrets, and shows that the run after that one
changes nothing.
"""

import os
import re

import pytest
import testinfra
from scenario_playbooks import SITE, run_playbook

testinfra_hosts = ["ansible://pharos-cluster-login"]

SLURMDBD_TASK = "Start slurmdbd, restart it on changed files, and enable it at boot"
CONTROLLER = "pharos-cluster-login"
STAGING = "pharos-cluster-staging"


def converge(*options, limit_minutes=None):
    extra = None if limit_minutes is None else {"pharos_slurm_staging_time_minutes": limit_minutes}
    return run_playbook(SITE, "--limit", CONTROLLER, *options, extra_vars=extra)


def fetched_conf(name):
    """The slurm.conf a configless node's slurmd fetched from slurmctld."""
    node = testinfra.get_host(f"ansible://{name}", ansible_inventory=os.environ["MOLECULE_INVENTORY_FILE"])
    return node.file("/run/slurm/conf/slurm.conf").content_string


def changed_counts(output):
    return {host: int(count) for host, count in
            re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", output, re.MULTILINE)}


def reported(output, task):
    """The first result line ("ok: [...]", "changed: [...]") after the task's header."""
    after = output[output.index(f"TASK [pharos.hpc.slurm : {task}]"):]
    return next(line for line in after.splitlines()[1:] if re.match(r"^(ok|changed|skipping): ", line))


def slurmdbd_pid(host):
    return host.run("systemctl show -p MainPID --value slurmdbd").stdout.strip()


@pytest.fixture(scope="module")
def original_minutes(host):
    return host.ansible.get_variables()["pharos_slurm_staging_time_minutes"]


def test_a_changed_staging_limit_is_predicted_and_applied_by_reconfigure(host, original_minutes):
    new_minutes = original_minutes + 2
    dbd_before = slurmdbd_pid(host)

    predicted = converge("--check", "--diff", limit_minutes=new_minutes)
    assert "-PartitionName=staging" in predicted and f"MaxTime={new_minutes} State=UP" in predicted
    assert "RUNNING HANDLER [pharos.hpc.slurm : Reconfigure Slurm]" in predicted
    assert reported(predicted, SLURMDBD_TASK).startswith("ok: ")
    assert "RUNNING HANDLER [pharos.hpc.slurm : Restart slurmctld]" not in predicted
    assert host.run("grep -c 'MaxTime=%s ' /etc/slurm/slurm.conf" % original_minutes).stdout.strip() == "1"

    applied = converge(limit_minutes=new_minutes)
    assert "RUNNING HANDLER [pharos.hpc.slurm : Reconfigure Slurm]" in applied
    assert reported(applied, SLURMDBD_TASK).startswith("ok: ")
    assert "RUNNING HANDLER [pharos.hpc.slurm : Restart slurmctld]" not in applied
    assert list(changed_counts(applied)) == [CONTROLLER] and changed_counts(applied)[CONTROLLER] >= 1, applied[-2000:]
    assert slurmdbd_pid(host) == dbd_before
    partition = host.run("scontrol -o show partition staging").stdout
    assert f"MaxTime=00:{new_minutes:02d}:00" in partition
    assert f"MaxTime={new_minutes} State=UP" in fetched_conf(STAGING)


def test_a_staging_limit_larger_than_the_staging_node_is_refused_before_the_node_changes():
    """A staging memory limit above the node's memory: no staging job could ever run there. The
    node's run stops at its Slurm step with the numbers and the fix, in check mode and for real,
    and writes nothing."""
    too_large = {"pharos_slurm_staging_memory_mib": 64 * 1024 * 1024}
    for options in (("--check", "--diff"), ()):
        returncode, output = run_playbook(SITE, "--limit", STAGING, *options, extra_vars=too_large, succeed=False)
        words = " ".join(output.split())
        assert returncode != 0
        assert f"Staging node {STAGING} has" in words and "less than the staging limits" in words, output[-3000:]
        assert "Lower pharos_slurm_staging_cpus or _memory_mib, or use a larger node." in words
        assert changed_counts(output) == {STAGING: 0}, output[-2000:]
