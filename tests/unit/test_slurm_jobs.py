"""Jobs in a plan's way: found before any write, cancelled only when asked, refused otherwise."""

import sys

import pytest

from conftest import PROJECT

sys.path.insert(0, str(PROJECT / "collections"))

from ansible_collections.pharos.hpc.plugins.module_utils.slurm_jobs import (  # noqa: E402 pylint: disable=wrong-import-position
    JobsInTheWay, accounts_to_watch, jobs_to_cancel)

TERMINATE_SPRING = [{"action": "remove_associations", "user": "pharosalice", "accounts": ["pharos_a_spring"]}]
REMOVE_OLD = [{"action": "remove_user", "user": "pharosbob", "accounts": ["pharos_a_old"]},
              {"action": "remove_accounts", "accounts": ["pharos_a_old"]}]
BOB_LEAVES = [{"action": "remove_associations", "user": "pharosbob", "accounts": ["pharos_a_hpc"]}]

CASES = [
    ("a terminated allocation's job is cancelled when asked",
     TERMINATE_SPRING, {"pharos_a_spring"}, [("pharos_a_spring", "pharosalice", "7")], False, True, ["7"]),
    ("a removed account's job is cancelled with force",
     REMOVE_OLD, set(), [("pharos_a_old", "pharosbob", "8")], True, False, ["8"]),
    ("a member leaving an allocation with a job there is cancelled with force",
     BOB_LEAVES, set(), [("pharos_a_hpc", "pharosbob", "9")], True, False, ["9"]),
    ("another member's job in the allocation a member leaves is not in the way",
     BOB_LEAVES, set(), [("pharos_a_hpc", "pharosalice", "10")], False, False, []),
    ("no job, nothing to cancel", TERMINATE_SPRING, {"pharos_a_spring"}, [], False, False, []),
]


@pytest.mark.parametrize(("changes", "terminated", "jobs", "force", "cancel_jobs", "cancelled"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_jobs_in_the_way_are_cancelled_only_when_asked(changes, terminated, jobs, force, cancel_jobs, cancelled):
    assert jobs_to_cancel(changes, terminated, jobs, force, cancel_jobs) == cancelled


REFUSALS = [
    ("terminating an allocation with a pending job, without cancel_jobs",
     TERMINATE_SPRING, {"pharos_a_spring"}, [("pharos_a_spring", "pharosalice", "7")], True, False,
     "Refusing to terminate pharos_a_spring: jobs are pending or running there (pharos_a_spring: 7)"),
    ("removing an account with a running job, without force",
     REMOVE_OLD, set(), [("pharos_a_old", "pharosbob", "8")], False, True,
     "Refusing to remove pharos_a_old: jobs are pending or running there (pharos_a_old: 8)"),
    ("a member leaving an allocation where their job runs, without force",
     BOB_LEAVES, set(), [("pharos_a_hpc", "pharosbob", "9")], False, True,
     "Refusing to remove pharos_a_hpc: jobs are pending or running there (pharos_a_hpc: 9)"),
]


@pytest.mark.parametrize(("changes", "terminated", "jobs", "force", "cancel_jobs", "message"),
                         [case[1:] for case in REFUSALS], ids=[case[0] for case in REFUSALS])
def test_jobs_nobody_asked_to_cancel_refuse_the_plan(changes, terminated, jobs, force, cancel_jobs, message):
    with pytest.raises(JobsInTheWay) as refused:
        jobs_to_cancel(changes, terminated, jobs, force, cancel_jobs)
    assert message in str(refused.value)


def test_the_accounts_watched_are_those_losing_an_association_or_being_terminated():
    assert accounts_to_watch(REMOVE_OLD + BOB_LEAVES, {"pharos_a_spring"}) == {
        "pharos_a_old", "pharos_a_hpc", "pharos_a_spring"}
    assert accounts_to_watch([], set()) == set()
