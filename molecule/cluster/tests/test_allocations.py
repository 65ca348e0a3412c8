"""The Site's association tree on the real slurmdbd, kept by the slurm_accounts role: jobs
without -A are refused, an allocation takes them, a member who left every Project keeps only
pharos_default, a terminated allocation refuses jobs, and check mode predicts a drift exactly.

Each test states the allocations it needs by running allocations.yml again; the module's
fixture puts the scenario's own back at the end.
"""

import pytest
from scenario_playbooks import run_playbook

testinfra_hosts = ["ansible://pharos-cluster-login"]

HOST = "pharos-cluster-login"
# The scenario's own (host_vars/pharos-cluster-login.yml), put back for the scratch tests' members.
SCENARIO_ALLOCATIONS = [{"name": "test", "node_hours": 10, "members": ["pharosalice", "pharosbob", "pharoscarol",
                                                                   "pharosdave", "pharoserin", "pharosfrank"]}]


def keep(allocations, *options, cancel_jobs=False, succeed=True):
    extra = {"scenario_allocations": allocations, "slurm_accounts_cancel_jobs": cancel_jobs}
    return run_playbook("allocations.yml", *options, extra_vars=extra, as_json=succeed, succeed=succeed)


def changed(report):
    return report["stats"][HOST]["changed"]


def tree_result(report):
    """The slurm_account task's result for the login node."""
    for play in report["plays"]:
        for task in play["tasks"]:
            # The JSON callback names a role's task "<role> : <task>".
            if task["task"]["name"].endswith("Keep the association tree"):
                return task["hosts"][HOST]
    raise AssertionError("the run has no 'Keep the association tree' task")


def associations(host, user):
    listed = host.run(f"sacctmgr -nP show assoc where user={user} format=account")
    return sorted(listed.stdout.split())


def account_node_minutes(host, account):
    """The account's own GrpTRESMins (its association without a user)."""
    rows = host.run(f"sacctmgr -nP show assoc WOPLimits where account={account} "
                    "format=user,grptresmins").stdout.splitlines()
    return [row.split("|")[1] for row in rows if row.startswith("|")][0]


def submit(host, member, *options, command="true"):
    return host.run(f"runuser -u {member} -- sbatch --parsable --chdir=/tmp -p compute -t 10 --mem=64 {' '.join(options)} "
                    f"--wrap '{command}'")


@pytest.fixture(scope="module", autouse=True)
def scenario_allocations_afterwards():
    yield
    keep(SCENARIO_ALLOCATIONS)


def test_seed_tree_has_the_default_leaf_the_allocation_and_the_service_coordinators(host):
    own = host.run("sacctmgr -nP show assoc WOPLimits where account=pharos_default,pharos_a_test "
                   "format=account,user,maxsubmit,grptresmins").stdout.splitlines()
    assert "pharos_default||0|" in own
    assert "pharos_a_test|||node=600" in own
    coordinators = host.run("sacctmgr -nP show account pharos withcoord format=coordinators").stdout.strip()
    assert sorted(coordinators.split(",")) == ["pharos-agent", "pharos-runtime"]
    runtime = host.run("sacctmgr -nP show assoc WOPLimits where user=pharos-runtime format=maxsubmit").stdout.strip()
    assert runtime == "0"
    for member in ("pharosalice", "pharosbob"):
        default = host.run(f"sacctmgr -nP show user {member} format=defaultaccount").stdout.strip()
        assert default == "pharos_default"


def test_member_job_without_an_account_is_refused(host):
    refused = submit(host, "pharosalice")
    assert refused.rc != 0
    assert "Job violates accounting/QOS policy" in refused.stderr, refused.stderr


def test_member_job_with_an_allocation_account_is_accepted(host):
    accepted = submit(host, "pharosalice", "-A pharos_a_test")
    assert accepted.rc == 0, accepted.stderr
    assert accepted.stdout.strip().isdigit()


def test_member_who_left_every_project_keeps_only_the_default_and_cannot_submit(host):
    keep([{"name": "test", "node_hours": 10, "members": ["pharosalice"]}])
    assert associations(host, "pharosbob") == ["pharos_default"]
    for options in ((), ("-A pharos_a_test",)):
        refused = submit(host, "pharosbob", *options)
        assert refused.rc != 0, refused.stdout
    assert host.run("squeue -h -u pharosbob").stdout.strip() == ""


def test_terminated_allocation_refuses_the_jobs_it_took(host):
    spring = {"name": "spring", "node_hours": 1, "members": ["pharosalice"]}
    keep(SCENARIO_ALLOCATIONS + [spring])
    taken = submit(host, "pharosalice", "-A pharos_a_spring", command="sleep 600")
    assert taken.rc == 0, taken.stderr
    job = taken.stdout.strip()
    assert host.run(f"squeue -h -t PENDING,RUNNING -j {job}").stdout.strip(), "the allocation's job ended at once"

    # Slurm keeps an association with jobs: without cancel_jobs the termination is refused
    # before anything is written.
    returncode, output = keep(SCENARIO_ALLOCATIONS + [dict(spring, state="terminated")], succeed=False)
    assert returncode != 0
    assert f"Refusing to terminate pharos_a_spring: jobs are pending or running there (pharos_a_spring: {job})" \
        in " ".join(output.split())
    assert associations(host, "pharosalice") == ["pharos_a_spring", "pharos_a_test", "pharos_default"]

    keep(SCENARIO_ALLOCATIONS + [dict(spring, state="terminated")], cancel_jobs=True)
    assert host.run(f"squeue -h -t PENDING,RUNNING -j {job}").stdout.strip() == ""
    refused = submit(host, "pharosalice", "-A pharos_a_spring")
    assert refused.rc != 0, refused.stdout
    # The Site's soft delete (docs/allocations.md): the account stays, without users and with its limits zeroed.
    kept = host.run("sacctmgr -nP show assoc WOPLimits where account=pharos_a_spring "
                    "format=user,grptresmins").stdout.splitlines()
    assert kept == ["|node=0"]


def test_check_mode_predicts_a_drift_exactly_and_the_next_run_changes_nothing(host):
    keep(SCENARIO_ALLOCATIONS)
    drift = host.run("sacctmgr -i modify account pharos_a_test set GrpTRESMins=node=60")
    assert drift.rc == 0, drift.stderr

    predicted = keep(SCENARIO_ALLOCATIONS, "--check", "--diff")
    assert changed(predicted) == 1
    assert "node=60\n" in tree_result(predicted)["diff"]["before"]
    assert account_node_minutes(host, "pharos_a_test") == "node=60"

    applied = keep(SCENARIO_ALLOCATIONS, "--diff")
    assert tree_result(applied)["diff"] == tree_result(predicted)["diff"]
    assert tree_result(applied)["changes"] == tree_result(predicted)["changes"]
    assert account_node_minutes(host, "pharos_a_test") == "node=600"

    assert changed(keep(SCENARIO_ALLOCATIONS)) == 0
