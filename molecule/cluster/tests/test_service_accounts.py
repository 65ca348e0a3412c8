"""The Site's service accounts never run a job. The agents coordinate the Pharos tree, so each
can give itself an association on a member's allocation; slurmctld still refuses its jobs, on
either partition."""

import pytest

testinfra_hosts = ["ansible://pharos-cluster-login"]

ACCOUNT = "pharos_a_test"


@pytest.fixture(params=["pharos-agent", "pharos-runtime"])
def service_account_with_an_allocation(host, request):
    account = request.param
    added = host.run(f"runuser -u {account} -- sacctmgr -i add user {account} account={ACCOUNT}")
    # As a coordinator of the Pharos tree it may: the guard must hold even so.
    assert added.rc == 0, added.stdout + added.stderr
    assert ACCOUNT in host.run(f"sacctmgr -nP show assoc where user={account} format=account").stdout.split()
    yield account
    host.run(f"sacctmgr -i delete user name={account} account={ACCOUNT}")


@pytest.mark.parametrize("partition", ["compute", "staging"])
def test_a_service_account_with_an_association_cannot_submit(host, service_account_with_an_allocation, partition):
    account = service_account_with_an_allocation
    before = set(host.run("squeue -h -t all -o %i").stdout.split())
    batch = host.run(f"runuser -u {account} -- sbatch --chdir=/tmp -A {ACCOUNT} -p {partition} -t 1 --wrap true")
    assert batch.rc != 0, batch.stdout
    assert f"{account} is a service account of the Site and may not run jobs" in batch.stderr
    interactive = host.run(f"runuser -u {account} -- timeout 30 srun -A {ACCOUNT} -p {partition} -t 1 true")
    assert interactive.rc != 0
    assert "service account" in interactive.stderr
    # Finished jobs leave slurmctld's memory after MinJobAge; only an addition would be theirs.
    assert not set(host.run("squeue -h -t all -o %i").stdout.split()) - before


def test_a_member_on_the_same_allocation_still_submits(host):
    result = host.run(f"runuser -u pharosbob -- timeout 60 srun -A {ACCOUNT} -p compute -t 1 id -un")
    assert result.rc == 0, result.stderr
    assert result.stdout.strip() == "pharosbob"
