"""A compute node added after the first converge joins with a converge of that node alone
(configless Slurm, docs/slurm.md "Configless nodes"): a dry run of it first predicts exactly what
the converge then changes, jobs land on it, a run of the whole Site afterwards changes nothing on
the controller or the other nodes, and the node leaves again when its slurmd stops and the
controller deletes it."""

import json
import os
import re

import pytest
import testinfra

from scenario_playbooks import SITE, changed_tasks, run_playbook

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
    # As an administrator adds a node: a dry run of it, then the run.
    checked = run_playbook(SITE, "-i", str(later), "--limit", LATER, "--check", "--diff", as_json=True)
    alone = run_playbook(SITE, "-i", str(later), "--limit", LATER, as_json=True)
    whole = run_playbook(SITE, "-i", str(later))
    yield {"checked": checked, "alone": alone, "whole": whole}
    # The other tests' jobs and the rotation must not meet a node they do not converge.
    leave(host)


def test_the_new_node_alone_is_converged(joined):
    changed = {name: stats["changed"] for name, stats in joined["alone"]["stats"].items()}
    assert list(changed) == [LATER], changed
    assert changed[LATER] > 0


def test_the_dry_run_of_the_new_node_predicts_each_change_of_its_converge_once(joined):
    predicted, applied = changed_tasks(joined["checked"]), changed_tasks(joined["alone"])
    assert len(predicted) == len(set(predicted)), sorted(predicted)
    assert sorted(predicted) == sorted(applied), (sorted(set(predicted) - set(applied)), sorted(set(applied) - set(predicted)))


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
