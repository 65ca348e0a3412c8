"""A compute node added after the first converge joins with a converge of that node alone
(configless Slurm, docs/slurm.md "Configless nodes"): jobs land on it, a run of the whole Site
afterwards changes nothing on the controller or the other nodes, and the node leaves again
when its slurmd stops and the controller deletes it."""

import json
import os
import re

import pytest
import testinfra

from scenario_playbooks import SITE, run_playbook

testinfra_hosts = ["ansible://pharos-cluster-login"]

LATER = "pharos-cluster-compute2"
ACCOUNT = "pharos_a_test"


def later_node():
    return testinfra.get_host(f"ansible://{LATER}", ansible_inventory=os.environ["MOLECULE_INVENTORY_FILE"])


def leave(host):
    """What docs/slurm.md says to do: stop slurmd on the node, then delete it on the controller."""
    later_node().run("systemctl disable --now slurmd")
    return host.run(f"scontrol delete nodename={LATER}")


def changed_per_host(output):
    return {name: int(count) for name, count in re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", output, re.MULTILINE)}


@pytest.fixture(scope="module")
def joined(host, tmp_path_factory):
    later = tmp_path_factory.mktemp("later") / "later.yml"
    later.write_text(json.dumps({"all": {"children": {"compute": {"hosts": {LATER: {}}},
                                                      "cluster": {"hosts": {LATER: {}}}}}}))
    alone = run_playbook(SITE, "-i", str(later), "--limit", LATER)
    whole = run_playbook(SITE, "-i", str(later))
    yield {"alone": alone, "whole": whole}
    # The other tests' jobs and the rotation must not meet a node they do not converge.
    leave(host)


def test_the_new_node_alone_is_converged(joined):
    changed = changed_per_host(joined["alone"])
    assert list(changed) == [LATER], changed
    assert changed[LATER] > 0


def test_member_jobs_land_on_the_new_node(host, joined):
    result = host.run(f"runuser -u pharosalice -- timeout 60 srun -A {ACCOUNT} -p compute -w {LATER} hostname")
    assert result.rc == 0, result.stderr
    assert result.stdout.strip() == LATER


def test_a_run_of_the_whole_site_then_changes_nothing_anywhere(joined):
    changed = changed_per_host(joined["whole"])
    assert set(changed) >= {"pharos-cluster-login", "pharos-cluster-compute", "pharos-cluster-staging", LATER}, changed
    assert set(changed.values()) == {0}, joined["whole"][-3000:]


def test_the_node_leaves_when_its_slurmd_stops_and_the_controller_deletes_it(host, joined):
    assert leave(host).rc == 0
    assert host.run(f"sinfo -h -N -n {LATER} -o %N").stdout.strip() == ""
    assert LATER not in host.check_output("sinfo -h -N -o %N").split()
