"""A cluster converged before configless Slurm (0.1.0), where slurm.conf lists every node and
each node holds a copy, becomes configless with one run of the whole Site: the controller runs
the new slurm.conf before any node asks it for its configuration, each node then registers
itself, and jobs land on both partitions."""

import os
import re

import pytest
import testinfra

from scenario_playbooks import run_playbook

testinfra_hosts = ["ansible://pharos-cluster-login"]

NODES = ["pharos-cluster-compute", "pharos-cluster-staging"]
PARTITION_OF = {"pharos-cluster-compute": "compute", "pharos-cluster-staging": "staging"}
ACCOUNT = "pharos_a_test"


def node(name):
    return testinfra.get_host(f"ansible://{name}", ansible_inventory=os.environ["MOLECULE_INVENTORY_FILE"])


def listed_nodes_conf(configless_conf, registered):
    """slurm.conf as 0.1.0 wrote it: no configless, each node listed, each partition naming its nodes."""
    features = dict(re.findall(r"^NodeSet=(\S+) Feature=(\S+)$", configless_conf, re.MULTILINE))
    nodes_of_set = {node_set: ",".join(name for name, described in registered.items() if described["feature"] == feature)
                    for node_set, feature in features.items()}
    listed = "\n".join(f"NodeName={name} CPUs={described['cpus']} RealMemory={described['memory']} State=UNKNOWN"
                       for name, described in registered.items())
    lines = []
    for line in configless_conf.splitlines():
        if line.startswith(("SlurmctldParameters=", "MaxNodeCount=", "NodeSet=")):
            continue
        if line.startswith("PartitionName=") and listed not in lines:
            lines.append(listed)
        lines.append(re.sub(r"\bNodes=(\S+)", lambda match: "Nodes=" + nodes_of_set[match.group(1)], line))
    return "\n".join(lines) + "\n"


def registered_as(host, name):
    shown = host.check_output(f"scontrol --oneliner show node {name}")
    return {"feature": re.search(r"AvailableFeatures=(\S+)", shown).group(1),
            "cpus": re.search(r"CPUTot=(\d+)", shown).group(1),
            "memory": re.search(r"RealMemory=(\d+)", shown).group(1)}


def wait_until_idle(host, name):
    state = host.run(f"for i in $(seq 60); do s=$(sinfo -h -N -n {name} -o %t | head -1); "
                     f"[ \"$s\" = idle ] && break; sleep 1; done; echo $s").stdout.strip()
    assert state == "idle", f"{name} is {state!r}"


@pytest.fixture(scope="module")
def upgraded(host):
    """The cluster put back as 0.1.0 left it, then the whole Site converged."""
    registered = {name: registered_as(host, name) for name in NODES}
    conf = listed_nodes_conf(host.file("/etc/slurm/slurm.conf").content_string, registered)
    for name in NODES:
        node(name).run("systemctl stop slurmd")
        assert host.run(f"scontrol delete nodename={name}").rc == 0
    assert host.run(f"cat > /etc/slurm/slurm.conf <<'CONF'\n{conf}CONF").rc == 0
    assert host.run("systemctl restart slurmctld").rc == 0
    for name in NODES:
        result = node(name).run(
            f"cat > /etc/slurm/slurm.conf <<'CONF'\n{conf}CONF\n"
            "echo 'SLURMD_OPTIONS=\"\"' > /etc/default/slurmd; rm -f /etc/systemd/system/slurmd.service.d/pharos.conf; "
            "systemctl daemon-reload; systemctl start slurmd")
        assert result.rc == 0, result.stderr
        wait_until_idle(host, name)
    before = {"config": host.check_output("scontrol show config"),
              "nodes": {name: node(name).file("/etc/slurm/slurm.conf").exists for name in NODES}}
    # As docs/slurm.md says to upgrade: the nodes drained, with no job left on them.
    assert host.run(f"scontrol update nodename={','.join(NODES)} state=drain reason=upgrade").rc == 0
    return before, run_playbook("../../playbooks/site.yml")


def test_the_cluster_listed_its_nodes_before(upgraded):
    before, _output = upgraded
    assert "enable_configless" not in before["config"]
    assert before["nodes"] == dict.fromkeys(NODES, True)


def test_the_controller_then_serves_the_configuration(host, upgraded):
    assert "enable_configless" in host.check_output("scontrol show config")


@pytest.mark.parametrize("name", NODES)
def test_each_node_then_takes_its_configuration_from_the_controller(upgraded, name):
    assert not node(name).file("/etc/slurm/slurm.conf").exists
    assert node(name).file("/run/slurm/conf/slurm.conf").exists
    assert "--conf-server" in node(name).file("/etc/default/slurmd").content_string


@pytest.mark.parametrize("name", NODES)
def test_each_drained_node_registers_again_idle(host, upgraded, name):
    wait_until_idle(host, name)


@pytest.mark.parametrize("name", NODES)
def test_member_jobs_land_on_each_node_after_the_upgrade(host, upgraded, name):
    result = host.run(f"runuser -u pharosalice -- timeout 60 srun -A {ACCOUNT} -p {PARTITION_OF[name]} -w {name} hostname")
    assert result.rc == 0, result.stderr
    assert result.stdout.strip() == name
