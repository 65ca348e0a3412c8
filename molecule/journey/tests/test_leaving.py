"""The Site's end-to-end journey, second half (after test_journey.py, by file order): a member who
leaves one Project keeps the other, a terminated allocation keeps its account with no users and
no hours, and a member who leaves every Project still logs in but may not submit; and over the
whole run the agent met no call that the Waldur simulator lacks."""

import re

import pytest

from journey import (AGENT_CYCLE_SECONDS, ALLOCATION, COMPUTE, OFFERING_UUID, QUALIFICATION, agent_log, as_member, listed,
                     resource_of_account, sacctmgr, ssh, wait_until, waldur)

testinfra_hosts = ["ansible://pharos-journey-login"]


def user_uuid(host, member):
    users = listed(host, "marketplace-offering-users/?offering_uuid=%s" % OFFERING_UUID)
    return next(user["user_uuid"] for user in users if user["username"] == member)


def leave(host, member, allocation, role):
    status, answer = waldur(host, "POST", "projects/%s/delete_user/" % resource_of_account(host, allocation)["project_uuid"],
                            {"user": user_uuid(host, member), "role": role})
    assert status == 200, answer


def associations(host, member):
    return {row[0] for row in sacctmgr(host, "show association where user=%s format=account" % member)}


def submits(host, member, account=None):
    return as_member(host, member, "sbatch %s-p %s -t 1 --wrap true" % ("-A %s " % account if account else "", COMPUTE))


def test_a_member_who_leaves_one_project_keeps_the_other(host):
    assert {ALLOCATION, QUALIFICATION} <= associations(host, "pharosalice")
    leave(host, "pharosalice", ALLOCATION, "PROJECT.MANAGER")
    left = wait_until(lambda: ALLOCATION not in associations(host, "pharosalice"), AGENT_CYCLE_SECONDS)
    assert left, agent_log(host, "membership_sync")
    assert QUALIFICATION in associations(host, "pharosalice")
    assert submits(host, "pharosalice", QUALIFICATION).rc == 0
    assert submits(host, "pharosalice", ALLOCATION).rc != 0


def test_a_terminated_allocation_keeps_its_account_without_users_or_hours_and_refuses_jobs(host):
    resource = resource_of_account(host, QUALIFICATION)
    status, answer = waldur(host, "POST", "marketplace-resources/%s/terminate/" % resource["uuid"], {})
    assert status == 200, answer

    def order_state():
        (order,) = [order for order in listed(host, "marketplace-orders/?offering_uuid=%s" % OFFERING_UUID)
                    if order["uuid"] == answer["order_uuid"]]
        return order["state"] if order["state"] in ("done", "erred") else None

    assert wait_until(order_state, AGENT_CYCLE_SECONDS) == "done", agent_log(host, "order_process")
    # soft_delete: the account stays under its project, with no user and its limit zeroed.
    rows = sacctmgr(host, "show association where account=%s format=user,grptresmins" % QUALIFICATION)
    assert rows == [["", "node=0"]]
    refused = submits(host, "pharosalice", QUALIFICATION)
    assert refused.rc != 0


@pytest.mark.parametrize("account", [ALLOCATION, None], ids=["with -A", "without -A"])
def test_a_member_who_leaves_every_project_still_logs_in_but_may_not_submit(host, account):
    if ALLOCATION in associations(host, "pharosbob"):
        leave(host, "pharosbob", ALLOCATION, "PROJECT.ADMIN")
        assert wait_until(lambda: ALLOCATION not in associations(host, "pharosbob"), AGENT_CYCLE_SECONDS), \
            agent_log(host, "membership_sync")
    login = ssh(host, "pharosbob")
    assert login.rc == 0 and login.stdout.strip() == "pharosbob", login.stderr
    refused = submits(host, "pharosbob", account)
    assert refused.rc != 0
    assert associations(host, "pharosbob") <= {"pharos_default"}


def test_over_the_whole_journey_the_agent_met_no_call_the_simulator_lacks(host):
    """Every call the Site agent made was one the Waldur simulator serves: the client the agent
    uses raises 'Unexpected status code: 404' (or 405) for one it does not, and the agent logs
    it and carries on, so only its journal shows it (tests/fixtures/waldur_simulator/README.md)."""
    journal = host.check_output("journalctl -u 'waldur-site-agent@*' --no-pager -o cat")
    unanswered = [line for line in journal.splitlines() if re.search(r"status code:? 40[45]\b|\b40[45] Not", line)]
    assert journal.strip(), "the agent's journal is empty"
    assert not unanswered, "\n".join(unanswered[:20])
