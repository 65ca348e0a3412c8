"""The guarantees that full mode proves, on the adopted Site, where the Site's own slurm.conf and
slurmdbd.conf hold them as adopt's preconditions (docs/production.md, "What each mode keeps"):
a member sees neither the Site's jobs nor its associations, a service account never runs a job,
a job's comment reaches accounting, and a directory group named like a local one never
stands in for it."""

import os
import subprocess
import time
from pathlib import Path

import pytest

from site_state import LOGIN, on

EPHEMERAL = Path(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/nonexistent"))
MEMBER, ALLOCATION = "pharosalice", "pharos_a_test"
GROUPS = "ou=groups,ou=pharos,dc=pharos,dc=lab"
PLANTED_GID = 5500061  # in the members' GID range, as the directory's constraints require


def as_member(command):
    return subprocess.run(["docker", "exec", LOGIN, "runuser", "-u", MEMBER, "--", "sh", "-c", command],
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_member_does_not_see_the_sites_running_job():
    job = (EPHEMERAL / "site_job").read_text(encoding="utf-8").strip()
    assert job in on(LOGIN, "squeue -h -a -o %i").split()
    shown = as_member("squeue -h -a -o %i")
    assert shown.returncode == 0, shown.stderr
    assert job not in shown.stdout.split()
    accounted = as_member(f"sacct -n -X -a -P -j {job} -o jobid,user")
    assert accounted.returncode == 0, accounted.stderr
    assert job not in accounted.stdout


def test_a_member_sees_only_their_own_associations():
    assert "alice" in on(LOGIN, "sacctmgr -nP show assoc format=user").split()
    shown = as_member("sacctmgr -nP show assoc format=user")
    assert shown.returncode == 0, shown.stderr
    assert {user for user in shown.stdout.split() if user} == {MEMBER}


def test_a_jobs_comment_is_read_back_from_accounting():
    submitted = as_member(f"sbatch --parsable -A {ALLOCATION} -p staging -t 1 --mem=50 --chdir /tmp "
                          "-o /dev/null --comment=pharos-attempt-adopt --wrap true")
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip()
    comment = ""
    for _ in range(60):
        comment = on(LOGIN, f"sacct -n -X -P -j {job} -o comment").strip()
        if comment:
            break
        time.sleep(1)
    assert comment == "pharos-attempt-adopt"


@pytest.fixture
def planted_sudo_group():
    """A group named sudo in the Pharos database, holding the member, as a stolen agent
    credential could write it (root over ldapi here: the directory scenario attacks the ACLs)."""
    on(LOGIN, f"ldapadd -Q -Y EXTERNAL -H ldapi:/// <<'LDIF'\ndn: cn=sudo,{GROUPS}\nobjectClass: posixGroup\n"
              f"cn: sudo\ngidNumber: {PLANTED_GID}\nmemberUid: {MEMBER}\nLDIF\nsss_cache -E")
    yield
    on(LOGIN, f"ldapdelete -Q -Y EXTERNAL -H ldapi:/// cn=sudo,{GROUPS}; sss_cache -E")


def test_a_directory_group_named_sudo_never_stands_in_for_the_sites(planted_sudo_group):
    del planted_sudo_group
    served = subprocess.run(["docker", "exec", LOGIN, "getent", "-s", "sss", "group", "sudo"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert served.returncode != 0, served.stdout
    assert on(LOGIN, f"getent group {PLANTED_GID} || true").split(":")[0] != "sudo"
    assert on(LOGIN, "getent group sudo").split(":")[2] == "27"
    assert "sudo" not in as_member("id -nG").stdout.split()
    # sudo's own answer to root about the member: a member of %sudo would be listed its rule.
    assert on(LOGIN, f"sudo -l -U {MEMBER}").strip() == f"User {MEMBER} is not allowed to run sudo on {LOGIN}."


@pytest.fixture(params=["pharos-agent", "pharos-runtime"])
def service_account_on_an_allocation(request):
    """A service account that, as a coordinator of the Pharos tree, gave itself an association."""
    account = request.param
    on(LOGIN, f"runuser -u {account} -- sacctmgr -i add user {account} account={ALLOCATION}")
    yield account
    on(LOGIN, f"sacctmgr -i delete user name={account} account={ALLOCATION} || true")


@pytest.mark.parametrize("partition", ["staging", "batch"])
def test_a_service_account_with_an_association_cannot_submit(service_account_on_an_allocation, partition):
    account = service_account_on_an_allocation
    submitted = subprocess.run(
        ["docker", "exec", LOGIN, "runuser", "-u", account, "--", "sbatch", "--chdir=/tmp", "-A", ALLOCATION,
         "-p", partition, "-t", "1", "--mem=50", "--wrap", "true"],
        capture_output=True, text=True, timeout=60, check=False)
    assert submitted.returncode != 0, submitted.stdout
    assert f"{account} is a service account of the Site and may not run jobs" in submitted.stderr
