"""The Site's end-to-end journey, first half: the real Waldur Site agent turns Waldur's orders and
memberships into Slurm allocations and directory accounts, the members log in with the keys
they submit, which the SSH access agent's stand-in writes, and run jobs, and their usage reaches Waldur as node-hours.
Everything is read back from where it lands: the simulator's state, slapd, slurmdbd."""

import json
import os
import re
import shlex
import time

import jwt
import pytest
import testinfra
from cryptography.hazmat.primitives import serialization

from journey import (AGENT_CYCLE_SECONDS, ALLOCATION, ALLOCATIONS_OF, COMPUTE, NODE_HOURS, OFFERING_UUID, PROJECT_ACCOUNT,
                     QUALIFICATION, SIMULATOR, access_agent_cycles, agent_log, as_member, listed, new_key,
                     resource_of_account, sacctmgr, ssh, submit_keys, wait_until, waldur)

testinfra_hosts = ["ansible://pharos-journey-login"]



def key_window(host):
    """The Site's window for a key, never above the cache lifetime plus the agent's poll
    (docs/directory.md, "Keys at login"), and how it was reached."""
    site = host.ansible.get_variables()
    window = min(site["pharos_key_window_seconds"],
                 site["pharos_cache_seconds"] + site["pharos_ssh_access_poll_seconds"])
    return window, "the Site's window is %d s (pharos_key_window_seconds %d, cache %d s + poll %d s)" % (
        window, site["pharos_key_window_seconds"], site["pharos_cache_seconds"],
        site["pharos_ssh_access_poll_seconds"])


def within_window(host, condition, since, what):
    """Waits for condition() until the Site's window has passed since the epoch second given, and
    fails naming the trial's time and the window when it does not hold by then."""
    window, rule = key_window(host)
    held = wait_until(condition, max(0, since + window - time.time()), interval=1)
    took = time.time() - since
    assert held, "%s did not happen within %.0f s; %s" % (what, took, rule)
    assert took <= window, "%s took %.1f s; %s" % (what, took, rule)
    return took


def orders(host):
    return listed(host, "marketplace-orders/?offering_uuid=%s" % OFFERING_UUID)


def resource_of(host, order):
    return listed(host, "marketplace-provider-resources/%s/" % order["marketplace_resource_uuid"])


def offering_user(host, username):
    users = listed(host, "marketplace-offering-users/?offering_uuid=%s" % OFFERING_UUID)
    return next(user for user in users if user["username"] == username)


@pytest.fixture(scope="module")
def done_orders(host):
    """Both Create orders, once the agent's order_process has ended them."""
    ended = wait_until(lambda: all(order["state"] in ("done", "erred", "rejected") for order in orders(host)),
                       AGENT_CYCLE_SECONDS)
    assert ended, "orders still open after %d s: %s\n%s" % (
        AGENT_CYCLE_SECONDS, [(order["resource_name"], order["state"]) for order in orders(host)],
        agent_log(host, "order_process"))
    return orders(host)


@pytest.fixture(scope="module")
def members(host, done_orders):
    """The directory accounts the agent made, once SSSD resolves them."""
    del done_orders
    resolved = wait_until(lambda: all(host.user(name).exists for name in ALLOCATIONS_OF), AGENT_CYCLE_SECONDS)
    assert resolved, "members not in the directory after %d s\n%s\n%s" % (
        AGENT_CYCLE_SECONDS, agent_log(host, "order_process"), agent_log(host, "membership_sync"))
    return {name: host.user(name) for name in ALLOCATIONS_OF}


@pytest.fixture(scope="module")
def bobs_keys(host, members):
    """Two keys pharosbob submits once his account exists, each logging in within the Site's window."""
    assert members["pharosbob"].exists
    keys = new_key(host, "pharosbob"), new_key(host, "pharosbob-old")
    submitted = time.time()
    submit_keys(host, "pharosbob", *keys)
    for key in ("pharosbob", "pharosbob-old"):
        within_window(host, lambda key=key: ssh(host, "pharosbob", key=key).rc == 0, submitted,
                      "pharosbob's key %s logging in after it was submitted" % key)
    return ("pharosbob", "pharosbob-old")


def test_each_order_is_done_with_its_slurm_account_as_the_resource_backend_id(host, done_orders):
    seen = {}
    for order in done_orders:
        assert order["state"] == "done", (order["error_message"], agent_log(host, "order_process"))
        resource = resource_of(host, order)
        seen[resource["backend_id"]] = resource["state"]
    assert seen == {ALLOCATION: "OK", QUALIFICATION: "OK"}


def test_each_allocation_is_an_account_under_its_project_limited_to_the_ordered_node_hours(host, done_orders):
    del done_orders
    for account, hours in NODE_HOURS.items():
        rows = sacctmgr(host, "show association where account=%s user= format=account,parentname,grptresmins" % account)
        assert len(rows) == 1, rows
        _, parent, limit = rows[0]
        assert parent.startswith("pharos_p_"), rows
        # n node-hours are GrpTRESMins=node=60n: the agent's unit_factor (docs/allocations.md).
        assert limit == "node=%d" % (60 * hours)
    project = sacctmgr(host, "show association where account=%s user= format=parentname" % PROJECT_ACCOUNT)
    assert project == [["pharos"]]


def test_a_membership_becomes_a_directory_account_with_the_uid_and_gid_waldur_pinned(host, members):
    site = host.ansible.get_variables()
    for name, user in members.items():
        pinned = offering_user(host, name)
        assert (user.uid, user.gid) == (pinned["uidnumber"], pinned["primarygroup"])
        assert site["pharos_member_uid_min"] <= user.uid <= site["pharos_member_uid_max"]
        assert site["pharos_member_gid_min"] <= user.gid <= site["pharos_member_gid_max"]
        # The group SSSD and sshd admit, and one project group per allocation, in the agent's range.
        assert "pharos-members" in user.groups
        assert ALLOCATIONS_OF[name] <= set(user.groups)
        for allocation in ALLOCATIONS_OF[name]:
            gid = host.group(allocation).gid
            assert site["pharos_project_gid_min"] < gid <= site["pharos_project_gid_max"]


def test_a_membership_becomes_an_association_on_the_allocation_with_pharos_default(host, members):
    for name in members:
        accounts = {row[0] for row in sacctmgr(host, "show association where user=%s format=account" % name)}
        assert ALLOCATIONS_OF[name] <= accounts
        assert accounts - ALLOCATIONS_OF[name] <= {"pharos_default"}
        assert sacctmgr(host, "show user %s format=defaultaccount" % name) == [["pharos_default"]]


def test_a_member_whose_offering_user_waits_for_validation_gets_an_account_once_it_completes(host, members):
    """carol's offering user starts in Pending additional validation, without a username
    (seeds/laboratory.yml), and the agent makes no account for it. The provider completes it as
    Mastermind's OfferingUser allows: set_validation_complete (Pending -> OK), then the username.
    The agent then makes her account, with the UID Waldur pinned, and her association."""
    del members
    (carol,) = [user for user in listed(host, "marketplace-offering-users/?offering_uuid=%s" % OFFERING_UUID)
                if user["user_username"] == "carol"]
    assert (carol["state"], carol["username"]) == ("Pending additional validation", None)
    # The members fixture waited for the agent's accounts, so membership_sync has run past her.
    assert host.run("getent passwd %d" % carol["uidnumber"]).rc == 2
    for method, action, body in (("POST", "set_validation_complete/", None), ("PATCH", "", {"username": "pharoscarol"})):
        status, answer = waldur(host, method, "marketplace-offering-users/%s/%s" % (carol["uuid"], action), body)
        assert status == 200, (action, answer)
    assert offering_user(host, "pharoscarol")["state"] == "OK"
    made = wait_until(lambda: host.user("pharoscarol").exists and ALLOCATION in {
        row[0] for row in sacctmgr(host, "show association where user=pharoscarol format=account")},
        AGENT_CYCLE_SECONDS)
    assert made, agent_log(host, "membership_sync")
    assert (host.user("pharoscarol").uid, host.user("pharoscarol").gid) == (carol["uidnumber"], carol["primarygroup"])


def test_a_job_without_an_allocation_is_refused(host, members, bobs_keys):
    del members, bobs_keys
    refused = as_member(host, "pharosbob", "sbatch -p %s -t 1 --wrap true" % COMPUTE)
    assert refused.rc != 0
    assert "Job violates accounting/QOS policy" in refused.stderr


def test_a_member_runs_a_job_on_the_allocation_in_their_own_scratch_root(host, members):
    del members
    # The administrator adds a member to the scratch group once the agent made them.
    joined = host.run("gpasswd --add pharosbob pharos-users")
    assert joined.rc == 0, joined.stderr
    job = as_member(host, "pharosbob", "timeout 120 srun -A %s -p %s -t 2 sh -c "
                                       "'WORK=$(pharos-scratch-attempt journey-1) || exit 70; cd \"$WORK\"; id -un; pwd'"
                    % (ALLOCATION, COMPUTE))
    assert job.rc == 0, job.stderr
    user, work = job.stdout.split()
    assert user == "pharosbob"
    assert work.startswith("/scratch/pharos/pharosbob/")


def member_token(member, lifetime=300):
    """A member token as the Pharos issuer signs it for this Site's Slurm: RS256 with the key
    prepare.yml made, whose public half the Site pins."""
    key = serialization.load_pem_private_key((SIMULATOR.parent / "signer.pem").read_bytes(), password=None)
    now = int(time.time())
    return jwt.encode({"iss": "https://issuer.pharos.test", "aud": "slurm:pharos", "sun": member,
                       "iat": now - 60, "exp": now + lifetime}, key, algorithm="RS256")


def test_a_member_submits_through_slurmrestd_with_a_token_from_the_sites_issuer(host, members, tmp_path):
    del members
    # Site Runtime's part: the member token goes to the Site's issuer, whose Slurm token goes to
    # slurmrestd. Both reach the node in root-only files, never in a command line.
    token_file = tmp_path / "member-token"
    token_file.write_text(member_token("pharosbob"))
    copied = host.ansible("copy", "src=%s dest=/root/member-token mode=0600" % token_file, check=False)
    assert not copied.get("failed"), copied
    exchanged = host.run("umask 077; { echo 'X-SLURM-USER-NAME: pharosbob'; printf 'X-SLURM-USER-TOKEN: '; "
                         "runuser -u pharos-runtime -- pharos-member-token < /root/member-token; } > /root/rest-headers; "
                         "status=$?; rm -f /root/member-token; exit $status")
    assert exchanged.rc == 0, exchanged.stderr
    body = {"job": {"script": "#!/bin/sh\nid -un\npwd\n", "name": "journey-rest", "partition": COMPUTE,
                    "account": ALLOCATION, "current_working_directory": "/scratch/pharos/pharosbob",
                    "standard_output": "/scratch/pharos/pharosbob/journey-rest.out", "environment": ["PATH=/usr/bin:/bin"]}}
    answer = host.run("curl -s -H @/root/rest-headers -H 'Content-Type: application/json' -d %s "
                      "http://127.0.0.1:6820/slurm/v0.0.42/job/submit; rm -f /root/rest-headers"
                      % shlex.quote(json.dumps(body)))
    assert answer.rc == 0, answer.stderr
    submitted = json.loads(answer.stdout)
    assert not submitted["errors"], submitted["errors"]
    job = submitted["job_id"]
    shown = wait_until(lambda: (lambda text: text if re.search("JobState=(COMPLETED|FAILED)", text) else "")(
        host.check_output("scontrol -o show job %d" % job)), 120)
    assert "JobState=COMPLETED" in shown, shown
    assert "UserId=pharosbob(%d)" % host.user("pharosbob").uid in shown
    assert "Account=%s" % ALLOCATION in shown
    # Each node has its own scratch in the lab: the output is where the job ran.
    node = testinfra.get_host("ansible://" + re.search(r" NodeList=(\S+)", shown).group(1),
                              ansible_inventory=os.environ["MOLECULE_INVENTORY_FILE"],
                              ssh_identity_file=os.environ["ANSIBLE_PRIVATE_KEY_FILE"])
    assert node.check_output("cat /scratch/pharos/pharosbob/journey-rest.out").split() == [
        "pharosbob", "/scratch/pharos/pharosbob"]


def used_node_hours(host, account):
    """What sacct holds for the account this month, as the agent reports it: nodes times elapsed
    minutes, over unit_factor 60, rounded to two decimals."""
    lines = host.check_output("sacct --parsable2 --noheader --allocations --allusers --accounts=%s "
                              "--starttime=$(date -u +%%Y-%%m-01) --format=NNodes,ElapsedRaw" % account)
    node_seconds = sum(int(nodes) * int(seconds) for nodes, seconds in
                       (line.split("|") for line in lines.splitlines() if line))
    return round(node_seconds / 60 / 60, 2)


def test_a_jobs_usage_reaches_waldur_as_node_hours_through_report(host, members):
    del members
    job = as_member(host, "pharosbob", "timeout 200 srun -A %s -p %s -t 3 sleep 40" % (ALLOCATION, COMPUTE))
    assert job.rc == 0, job.stderr
    expected = used_node_hours(host, ALLOCATION)
    assert expected > 0
    resource = resource_of_account(host, ALLOCATION)

    def reported():
        usages = listed(host, "marketplace-component-usages/?resource_uuid=%s" % resource["uuid"])
        return [usage for usage in usages if usage["type"] == "node" and float(usage["usage"]) == expected]

    usages = wait_until(reported, AGENT_CYCLE_SECONDS)
    assert usages, (listed(host, "marketplace-component-usages/?resource_uuid=%s" % resource["uuid"]), expected,
                    agent_log(host, "report"))
    # Reported for this month's billing period, dated its first day (the agent always sends a date).
    assert re.fullmatch(r"\d{4}-\d{2}-01", usages[0]["billing_period"])


def node_usage(host, allocation):
    resource = resource_of_account(host, allocation)
    usages = listed(host, "marketplace-component-usages/?resource_uuid=%s" % resource["uuid"])
    return next((float(usage["usage"]) for usage in usages if usage["type"] == "node"), 0.0)


def test_a_failed_jobs_node_hours_reach_waldur_too(host, members):
    """A job that fails still held its node: its node-hours count against the allocation."""
    del members
    before = node_usage(host, ALLOCATION)
    job = as_member(host, "pharosbob", "timeout 200 srun -A %s -p %s -t 3 sh -c 'sleep 20; exit 3'"
                    % (ALLOCATION, COMPUTE))
    assert job.rc != 0
    expected = used_node_hours(host, ALLOCATION)
    assert expected > before
    assert wait_until(lambda: node_usage(host, ALLOCATION) == expected, AGENT_CYCLE_SECONDS), (
        node_usage(host, ALLOCATION), expected, agent_log(host, "report"))


def test_the_same_report_from_a_token_that_only_manages_the_service_provider_is_refused(host, members):
    """Waldur takes a usage report only from a role on the offering or its organisation
    (docs/waldur_offering.md, "The contract"). Mastermind's ComponentUsageViewSet.set_usage, views.py at
    a1c94545 and d0aee6b6: `if not has_permission(request, PermissionEnum.SET_RESOURCE_USAGE,
    resource.offering.customer) and not has_permission(request, PermissionEnum.SET_RESOURCE_USAGE,
    resource.offering): raise PermissionDenied()`. CUSTOMER.MANAGER is granted on the service
    provider, neither of those, and holds no RESOURCE.SET_USAGE: its token reports the same usage
    and Waldur keeps nothing of it."""
    del members
    before = node_usage(host, ALLOCATION)
    stopped = host.run("systemctl stop waldur-site-agent@report")
    assert stopped.rc == 0, stopped.stderr
    try:
        job = as_member(host, "pharosbob", "timeout 200 srun -A %s -p %s -t 3 sleep 40" % (ALLOCATION, COMPUTE))
        assert job.rc == 0, job.stderr
        expected = used_node_hours(host, ALLOCATION)
        assert expected > before
        # The manager's token travels as a file and is read by awk from it, never in a command line.
        copied = host.ansible("copy", "src=%s dest=/root/manager-token mode=0600" % (SIMULATOR / "sp-manager-token"),
                              check=False)
        assert not copied.get("failed"), copied
        configured = host.run(
            "umask 077 && awk 'BEGIN { getline token < \"/root/manager-token\" } "
            "/^ *waldur_api_token:/ { sub(/:.*/, \": \" token) } { print }' "
            "/etc/pharos-hpc/secrets/waldur-site-agent-config.yaml > /root/manager-agent.yaml && "
            "grep -c -F -f /root/manager-token /root/manager-agent.yaml")
        assert configured.stdout.strip() == "1", configured.stderr
        # One report cycle with the manager's token: the agent reports at start, then sleeps.
        host.run("SSL_CERT_FILE=/etc/pharos-hpc/site-agent-ca.crt timeout 30 /opt/pharos-hpc/site-agent/bin/"
                 "waldur_site_agent --mode report --config-file /root/manager-agent.yaml")
        assert node_usage(host, ALLOCATION) == before
    finally:
        host.run("rm -f /root/manager-agent.yaml /root/manager-token")
        started = host.run("systemctl start waldur-site-agent@report")
        assert started.rc == 0, started.stderr
    # The owner's agent then reports it.
    assert wait_until(lambda: node_usage(host, ALLOCATION) == expected, AGENT_CYCLE_SECONDS), \
        (node_usage(host, ALLOCATION), expected, agent_log(host, "report"))


def people_dn(host):
    return "ou=people,ou=pharos," + host.ansible.get_variables()["pharos_ldap_suffix"]


def created_at(host, member):
    """When slapd created the member's entry, in epoch seconds."""
    found = host.check_output("ldapsearch -LLL -Q -Y EXTERNAL -H ldapi:/// -b %s '(uid=%s)' createTimestamp"
                              % (people_dn(host), member))
    stamp = re.search(r"createTimestamp: (\d{14})Z", found).group(1)
    return int(host.check_output("date -u -d '%s-%s-%s %s:%s:%s' +%%s" % (
        stamp[:4], stamp[4:6], stamp[6:8], stamp[8:10], stamp[10:12], stamp[12:14])))


def test_a_key_submitted_before_the_account_existed_logs_in_once_the_agents_made_it(host, members):
    del members
    # prepare.yml submitted it, before converge made the account.
    submitted = int(host.check_output("stat -c %Y /root/pharosalice-key.pub"))
    created = created_at(host, "pharosalice")
    assert submitted < created
    login = ssh(host, "pharosalice")
    assert login.rc == 0, login.stderr
    assert login.stdout.strip() == "pharosalice"
    # The account was made during converge, so the wait has passed: sshd reads the directory at
    # each login, and the key counted from the cycle that wrote it.
    written = [cycle for cycle in access_agent_cycles(host, submitted) if "pharosalice" in cycle.get("written", [])]
    assert written, "the SSH access agent never logged writing pharosalice's key"
    window, rule = key_window(host)
    took = written[0]["time"] - created
    assert took <= window, "pharosalice's key reached the directory %d s after the account was made; %s" % (took, rule)


def test_keys_submitted_after_the_account_existed_each_log_in(host, bobs_keys):
    for key in bobs_keys:
        login = ssh(host, "pharosbob", key=key)
        assert login.rc == 0, login.stderr


def test_after_the_access_agent_restarts_the_keys_still_log_in_and_nothing_is_rewritten(host, members):
    del members
    restarted = int(host.check_output("date +%s"))
    host.check_output("systemctl restart pharos-ssh-access-agent")
    cycles = wait_until(lambda: [cycle for cycle in access_agent_cycles(host, restarted)
                                 if cycle.get("event") == "cycle"], AGENT_CYCLE_SECONDS)
    assert cycles, access_agent_cycles(host, restarted)
    assert cycles[0]["written"] == [] and cycles[0]["waiting"] == []
    for member, key in (("pharosalice", "pharosalice"), ("pharosbob", "pharosbob"), ("pharosbob", "pharosbob-old")):
        assert ssh(host, member, key=key).rc == 0, (member, key)


def test_a_revoked_key_is_refused_while_the_members_other_key_still_logs_in(host, members):
    del members
    keeps = host.check_output("cat /root/pharosbob-key.pub").strip()
    revoked = time.time()
    submit_keys(host, "pharosbob", keeps)
    within_window(host, lambda: ssh(host, "pharosbob", key="pharosbob-old").rc != 0, revoked,
                  "pharosbob's revoked key being refused")
    assert "Permission denied" in ssh(host, "pharosbob", key="pharosbob-old").stderr
    assert ssh(host, "pharosbob").stdout.strip() == "pharosbob"


def test_slurmctld_learns_the_uid_of_a_user_whose_name_resolves_after_their_association(host):
    """The race between the agent's modes, made on purpose: a Slurm user first, the account second.
    Without the slurm role's timer slurmctld would hold the user without a UID for an hour."""
    added = host.run("sacctmgr -i add user pharoslate account=pharos_default")
    assert added.rc == 0, added.stdout + added.stderr
    try:
        assert "pharoslate(4294967294)" in host.check_output("scontrol show assoc_mgr users=pharoslate flags=users")
        host.check_output("useradd --no-create-home --shell /usr/sbin/nologin pharoslate")
        uid = host.user("pharoslate").uid
        learned = wait_until(lambda: "pharoslate(%d)" % uid in host.check_output(
            "scontrol show assoc_mgr users=pharoslate flags=users"), 90)
        assert learned, host.run("journalctl -u pharos-slurm-resolve-users --no-pager -n 20").stdout
    finally:
        host.run("sacctmgr -i remove user pharoslate; userdel pharoslate")
