"""Members are known by name on the compute and staging nodes, which have no path to the
login node's directory: the root Prolog records each job's member from the job credential
(docs/job_identity.md).

The direct runs of the Prolog below give it the environment slurmd gives it, to show what it
refuses to record; the other tests use real jobs.
"""

import os

import pytest
import testinfra

testinfra_hosts = ["ansible://pharos-cluster-login"]

ACCOUNT = "pharos_a_test"
PROLOG = "/etc/slurm/pharos-job-identity-prolog.sh"
NODES = {"compute": "pharos-cluster-compute", "staging": "pharos-cluster-staging"}


def node(name):
    return testinfra.get_host(f"ansible://{name}", ansible_inventory=os.environ["MOLECULE_INVENTORY_FILE"])


def run_prolog(target, user, uid, gid):
    return target.run(f"env -i SLURM_JOB_ID=1 SLURM_JOB_USER={user} SLURM_JOB_UID={uid} "
                      f"SLURM_JOB_GID={gid} {PROLOG}")


@pytest.mark.parametrize("partition", sorted(NODES))
def test_member_job_resolves_the_member_s_name_and_group_on_the_node(host, partition):
    job = host.run(f"runuser -u pharosbob -- timeout 60 srun -A {ACCOUNT} -p {partition} -t 1 "
                   "sh -c 'whoami; id -gn'")
    assert job.rc == 0, job.stderr
    assert job.stdout.split() == ["pharosbob", "pharosbob"]


@pytest.mark.parametrize("partition", sorted(NODES))
def test_node_records_the_member_exactly_as_the_directory_has_them(host, partition):
    job = host.run(f"runuser -u pharosalice -- timeout 60 srun -A {ACCOUNT} -p {partition} -t 1 true")
    assert job.rc == 0, job.stderr
    name, _password, uid, gid = host.run("getent passwd pharosalice").stdout.split(":")[:4]
    recorded = node(NODES[partition]).run("getent passwd pharosalice").stdout.split(":")
    assert [recorded[0], recorded[2], recorded[3]] == [name, uid, gid]


def test_member_missing_on_the_node_is_recorded_by_their_next_job(host):
    compute = node(NODES["compute"])
    compute.run("sed -i '/^pharosbob:/d' /var/lib/extrausers/passwd /var/lib/extrausers/group")
    assert compute.run("getent passwd pharosbob").rc != 0
    job = host.run(f"runuser -u pharosbob -- timeout 60 srun -A {ACCOUNT} -p compute -t 1 whoami")
    assert job.stdout.strip() == "pharosbob", job.stderr


@pytest.mark.parametrize(("user", "uid", "gid"), [
    ("root", 0, 0),
    ("pharosservice", 998, 998),
    ("pharosmallory", 4999999, 5500001),
])
def test_identity_outside_the_member_ranges_is_never_recorded(user, uid, gid):
    compute = node(NODES["compute"])
    before = compute.file("/var/lib/extrausers/passwd").content_string
    result = run_prolog(compute, user, uid, gid)
    assert result.rc == 0, result.stderr
    assert compute.file("/var/lib/extrausers/passwd").content_string == before


def test_member_recreated_under_a_new_uid_replaces_the_old_entry():
    compute = node(NODES["compute"])
    for uid in (5000100, 5000101):
        assert run_prolog(compute, "pharosrecreated", uid, 5500100).rc == 0
    entries = [line for line in compute.file("/var/lib/extrausers/passwd").content_string.splitlines()
               if line.startswith("pharosrecreated:")]
    assert [entry.split(":")[2] for entry in entries] == ["5000101"]
    assert compute.run("getent passwd 5000100").rc != 0
