"""The accounts and groups site.yml keeps, against each host's own (full mode; the adopt scenario
shows the same): an account that exists with another ID, or an ID that another name holds,
stops the run before any host changes, naming the account, the ID, its holder and the fix.
Root on the converged hosts makes each case and puts the account back afterwards."""

import os
import re

import pytest
import testinfra

from scenario_playbooks import SITE, run_playbook

testinfra_hosts = ["ansible://pharos-cluster-login"]

NODE = "pharos-cluster-compute"
# The laboratory's IDs (inventories/lab/group_vars/all/site.yml).
AGENT_UID, RUNTIME_UID = 4100001, 4801


@pytest.fixture(scope="module")
def compute():
    return testinfra.get_host(f"ansible://{NODE}", ansible_inventory=os.environ["MOLECULE_INVENTORY_FILE"])


def refused_while(target, change, undo):
    """site.yml's converge while `change` holds on the target host: (one-line output, raw output)."""
    assert target.run(change).rc == 0
    try:
        code, output = run_playbook(SITE, succeed=False)
    finally:
        restored = target.run(undo)
    assert restored.rc == 0, restored.stderr
    assert code != 0, output[-3000:]
    assert not re.search(r"^changed: ", output, re.MULTILINE), output[-3000:]
    return " ".join(output.split())


def test_an_agent_account_with_another_uid_stops_the_run_before_any_change(host):
    message = refused_while(host, "usermod -u 4100099 pharos-agent", f"usermod -u {AGENT_UID} pharos-agent")
    assert "Stopped before any change on pharos-cluster-login" in message
    assert (f"the account pharos-agent exists with UID 4100099, but the Site plans UID {AGENT_UID} for it "
            "(pharos_agent_uid)") in message
    assert "Set pharos_agent_uid: 4100099, or renumber it yourself" in message
    assert host.user("pharos-agent").uid == AGENT_UID


def test_the_runtimes_uid_held_by_another_name_stops_the_run_before_any_change(compute):
    message = refused_while(compute, "usermod -l pharos-squatter pharos-runtime",
                            "usermod -l pharos-runtime pharos-squatter")
    assert f"Stopped before any change on {NODE}" in message
    assert (f"UID {RUNTIME_UID}, which the Site plans for the account pharos-runtime "
            "(pharos_scratch_runtime_uid), belongs to pharos-squatter already") in message
    assert compute.user("pharos-runtime").uid == RUNTIME_UID
