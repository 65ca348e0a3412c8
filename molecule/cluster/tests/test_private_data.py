"""What one member may see of another (PrivateData): only their own jobs, associations and
usage. The Site agent, a coordinator of the Pharos tree, still sees every member's jobs, as
its usage reports need."""

import time

import pytest

testinfra_hosts = ["ansible://pharos-cluster-login"]

ACCOUNT = "pharos_a_test"


def as_user(host, user, command):
    return host.run(f"runuser -u {user} -- {command}")


@pytest.fixture(scope="module")
def alices_job(host):
    """A job of pharosalice's, running while pharosbob looks."""
    submitted = as_user(host, "pharosalice",
                        f"sbatch --parsable --chdir=/tmp -A {ACCOUNT} -p compute -t 5 --mem=64 "
                        "--comment=alices-secret-work --wrap 'sleep 120'")
    assert submitted.rc == 0, submitted.stderr
    job = submitted.stdout.strip()
    for _ in range(30):
        if host.run(f"squeue -h -j {job} -o %T").stdout.strip() == "RUNNING":
            break
        time.sleep(1)
    # Accounting learns of the job as it starts; sacct reads accounting.
    for _ in range(30):
        if job in host.run(f"sacct -n -X -a -j {job} -o jobid").stdout:
            break
        time.sleep(1)
    yield job
    host.run(f"scancel {job}")


def test_a_member_does_not_see_another_members_running_job(host, alices_job):
    assert alices_job in host.run("squeue -h -a -o %i").stdout.split()
    shown = as_user(host, "pharosbob", "squeue -h -a -o %i")
    assert shown.rc == 0, shown.stderr
    assert alices_job not in shown.stdout.split()
    detail = as_user(host, "pharosbob", f"scontrol show job {alices_job}")
    assert "alices-secret-work" not in detail.stdout
    assert "WorkDir" not in detail.stdout


def test_a_member_sees_their_own_running_job(host, alices_job):
    shown = as_user(host, "pharosalice", "squeue -h -o %i")
    assert alices_job in shown.stdout.split()


def test_a_member_does_not_see_another_members_jobs_in_accounting(host, alices_job):
    shown = as_user(host, "pharosbob", f"sacct -n -X -a -P -j {alices_job} -o jobid,user")
    assert shown.rc == 0, shown.stderr
    assert alices_job not in shown.stdout


def test_a_member_sees_only_their_own_associations(host):
    users = as_user(host, "pharosbob", "sacctmgr -nP show assoc format=user")
    assert users.rc == 0, users.stderr
    named = {user for user in users.stdout.split() if user}
    assert named == {"pharosbob"}
    assert "pharosalice" in host.run("sacctmgr -nP show assoc format=user").stdout.split()


def test_the_site_agent_as_coordinator_still_sees_every_members_jobs(host, alices_job):
    shown = as_user(host, "pharos-agent", f"sacct -n -X -a -P -j {alices_job} -o jobid,user")
    assert shown.rc == 0, shown.stderr
    assert "pharosalice" in shown.stdout
