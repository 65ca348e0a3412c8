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


def logged_since(target, since):
    return target.check_output(f"journalctl -t pharos-job-identity --no-pager -o cat --since @{since}")


def extrausers(target):
    return {name: target.file(f"/var/lib/extrausers/{name}").content_string for name in ("passwd", "group")}


@pytest.mark.parametrize("user", ["daemon", "slurm", "munge", "systemd-network", "_apt", "pharos-agent", "www-data"])
def test_a_system_or_service_account_s_name_is_never_recorded_and_the_refusal_is_logged(user):
    compute = node(NODES["compute"])
    before, since = extrausers(compute), int(compute.check_output("date +%s"))
    result = run_prolog(compute, user, 5000200, 5500200)
    assert result.rc == 0, result.stderr
    assert extrausers(compute) == before
    assert f"comes with the name '{user}', which is a system or service account's; not recorded" in logged_since(
        compute, since)


@pytest.fixture
def local_accounts():
    """An account and a group of the node's own files source, inside the members' ranges."""
    compute = node(NODES["compute"])
    compute.check_output("groupadd -g 5500500 localgroup && useradd -M -u 5000500 -g 5500500 localclash")
    yield compute
    compute.run("userdel localclash; groupdel localgroup")


@pytest.mark.parametrize(("user", "uid", "gid", "message"), [
    ("localclash", 5000501, 5500501, "member localclash (5000501) collides with 'localclash' of the files source"),
    ("pharosother", 5000500, 5500502, "member pharosother (5000500) collides with 'localclash' of the files source"),
    ("localgroup", 5000503, 5500503, "collides with 'localgroup' of the files source"),
    ("pharosgrp", 5000504, 5500500, "the group of member pharosgrp (5500500) collides with 'localgroup'"),
])
def test_a_name_or_number_another_nss_source_serves_is_never_recorded(local_accounts, user, uid, gid, message):
    before, since = extrausers(local_accounts), int(local_accounts.check_output("date +%s"))
    result = run_prolog(local_accounts, user, uid, gid)
    assert result.rc == 0, result.stderr
    assert extrausers(local_accounts) == before
    assert message in logged_since(local_accounts, since)


def test_a_job_under_another_member_s_group_never_renames_that_group(host):
    job = host.run(f"runuser -u pharosbob -- timeout 60 srun -A {ACCOUNT} -p compute -t 1 true")
    assert job.rc == 0, job.stderr
    compute = node(NODES["compute"])
    bobs_gid = int(host.user("pharosbob").gid)
    before, since = extrausers(compute), int(compute.check_output("date +%s"))
    result = run_prolog(compute, "pharosmallory", 5000600, bobs_gid)
    assert result.rc == 0, result.stderr
    assert extrausers(compute) == before
    assert compute.group("pharosbob").gid == bobs_gid
    assert f"GID {bobs_gid} is already the group 'pharosbob' on this node" in logged_since(compute, since)


def test_a_prolog_that_cannot_write_logs_why_and_neither_fails_the_job_nor_drains_the_node(host):
    compute = node(NODES["compute"])
    since = int(compute.check_output("date +%s"))
    compute.check_output("mv /var/lib/extrausers /var/lib/extrausers.away && touch /var/lib/extrausers")
    try:
        job = host.run(f"runuser -u pharosalice -- timeout 60 srun -A {ACCOUNT} -p compute -t 1 id -u")
        assert job.rc == 0, job.stderr
        assert job.stdout.strip() == str(host.user("pharosalice").uid)
        assert "could not open the lock /var/lib/extrausers/.lock; not recorded" in logged_since(compute, since)
        state = host.check_output(f"sinfo -h -n {NODES['compute']} -o %T")
        assert "drain" not in state, state
    finally:
        compute.run("rm -f /var/lib/extrausers && mv /var/lib/extrausers.away /var/lib/extrausers")
