"""Seed 001's end-to-end lane, first half: the real Waldur Site agent turns Waldur's orders and
memberships into Slurm allocations and directory accounts, the members log in with keys the
SSH access agent's identity writes and run jobs, and their usage reaches Waldur as node-hours.
Everything is read back from where it lands: the simulator's state, slapd, slurmdbd."""

import re

import pytest

from journey import (AGENT_CYCLE_SECONDS, ALLOCATION, ALLOCATIONS_OF, NODE_HOURS, OFFERING_UUID, PROJECT_ACCOUNT,
                     QUALIFICATION, SIMULATOR, agent_log, as_member, listed, resource_of_account, sacctmgr, ssh,
                     wait_until)

testinfra_hosts = ["ansible://pharos-journey-login"]

# SSSD caches for 90 s (seed 001's 120 s window).
LOGIN_WINDOW_SECONDS = 150


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
        # n node-hours are GrpTRESMins=node=60n: the agent's unit_factor (seed 001).
        assert limit == "node=%d" % (60 * hours)
    project = sacctmgr(host, "show association where account=%s user= format=parentname" % PROJECT_ACCOUNT)
    assert project == [["pharos"]]


def test_a_membership_becomes_a_directory_account_with_the_uid_and_gid_waldur_pinned(host, members):
    site = host.ansible.get_variables()
    for name, user in members.items():
        pinned = offering_user(host, name)
        assert (user.uid, user.gid) == (pinned["uidnumber"], pinned["primarygroup"])
        assert site["icarus_hpc_member_uid_min"] <= user.uid <= site["icarus_hpc_member_uid_max"]
        assert site["icarus_hpc_member_gid_min"] <= user.gid <= site["icarus_hpc_member_gid_max"]
        # The group SSSD and sshd admit, and one project group per allocation, in the agent's range.
        assert "pharos-members" in user.groups
        assert ALLOCATIONS_OF[name] <= set(user.groups)
        for allocation in ALLOCATIONS_OF[name]:
            gid = host.group(allocation).gid
            assert site["icarus_hpc_project_gid_min"] < gid <= site["icarus_hpc_project_gid_max"]


def test_a_membership_becomes_an_association_on_the_allocation_with_pharos_default(host, members):
    for name in members:
        accounts = {row[0] for row in sacctmgr(host, "show association where user=%s format=account" % name)}
        assert ALLOCATIONS_OF[name] <= accounts
        assert accounts - ALLOCATIONS_OF[name] <= {"pharos_default"}
        assert sacctmgr(host, "show user %s format=defaultaccount" % name) == [["pharos_default"]]


def write_key(host, member):
    """As the SSH access agent writes a key: its own Unix identity over ldapi (SASL EXTERNAL)."""
    people = "ou=people,ou=pharos," + host.ansible.get_variables()["icarus_hpc_ldap_suffix"]
    made = host.run("rm -f /root/{m}-key /root/{m}-key.pub && ssh-keygen -q -t ed25519 -N '' -C {m} -f /root/{m}-key"
                    .format(m=member))
    assert made.rc == 0, made.stderr
    written = host.run("runuser -u pharos-ssh-access -- ldapmodify -Q -Y EXTERNAL -H ldapi:/// <<LDIF\n"
                       "dn: uid=%s,%s\nchangetype: modify\nadd: objectClass\nobjectClass: ldapPublicKey\n-\n"
                       "add: sshPublicKey\nsshPublicKey: $(cat /root/%s-key.pub)\nLDIF" % (member, people, member))
    assert written.rc == 0, written.stderr


def test_a_member_the_agent_created_logs_in_over_ssh_with_a_key_from_the_directory(host, members):
    del members
    write_key(host, "pharosbob")
    login = wait_until(lambda: ssh(host, "pharosbob").rc == 0, LOGIN_WINDOW_SECONDS)
    assert login, ssh(host, "pharosbob").stderr
    assert ssh(host, "pharosbob").stdout.strip() == "pharosbob"


def test_a_job_without_an_allocation_is_refused(host, members):
    del members
    refused = as_member(host, "pharosbob", "sbatch -p compute -t 1 --wrap true")
    assert refused.rc != 0
    assert "Job violates accounting/QOS policy" in refused.stderr


def test_a_member_runs_a_job_on_the_allocation_in_their_own_scratch_root(host, members):
    del members
    # Seed 001: the administrator adds a member to the scratch group once the agent made them.
    joined = host.run("gpasswd --add pharosbob pharos-users")
    assert joined.rc == 0, joined.stderr
    job = as_member(host, "pharosbob", "timeout 120 srun -A %s -p compute -t 2 sh -c "
                                       "'WORK=$(pharos-scratch-attempt journey-1) || exit 70; cd \"$WORK\"; id -un; pwd'"
                    % ALLOCATION)
    assert job.rc == 0, job.stderr
    user, work = job.stdout.split()
    assert user == "pharosbob"
    assert work.startswith("/scratch/pharos/pharosbob/")


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
    job = as_member(host, "pharosbob", "timeout 200 srun -A %s -p compute -t 3 sleep 40" % ALLOCATION)
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


def test_the_same_report_from_a_token_that_only_manages_the_service_provider_is_refused(host, members):
    """Waldur takes a dated usage report only from the provider's organisation (seed 001: the agent
    owns it); a CUSTOMER.MANAGER token reports the same usage and Waldur keeps nothing of it."""
    del members
    before = node_usage(host, ALLOCATION)
    stopped = host.run("systemctl stop waldur-site-agent@report")
    assert stopped.rc == 0, stopped.stderr
    try:
        job = as_member(host, "pharosbob", "timeout 200 srun -A %s -p compute -t 3 sleep 40" % ALLOCATION)
        assert job.rc == 0, job.stderr
        expected = used_node_hours(host, ALLOCATION)
        assert expected > before
        manager_token = (SIMULATOR / "sp-manager-token").read_text().strip()
        configured = host.run(
            "umask 077 && sed 's/^\\( *waldur_api_token:\\).*/\\1 %s/' /etc/pharos-hpc/secrets/waldur-site-agent-config.yaml"
            " > /root/manager-agent.yaml && grep -c '%s' /root/manager-agent.yaml" % (manager_token, manager_token))
        assert configured.stdout.strip() == "1", configured.stderr
        # One report cycle with the manager's token: the agent reports at start, then sleeps.
        host.run("SSL_CERT_FILE=/etc/pharos-hpc/site-agent-ca.crt timeout 30 /opt/pharos-hpc/site-agent/bin/"
                 "waldur_site_agent --mode report --config-file /root/manager-agent.yaml")
        assert node_usage(host, ALLOCATION) == before
    finally:
        host.run("rm -f /root/manager-agent.yaml")
        started = host.run("systemctl start waldur-site-agent@report")
        assert started.rc == 0, started.stderr
    # The owner's agent then reports it.
    assert wait_until(lambda: node_usage(host, ALLOCATION) == expected, AGENT_CYCLE_SECONDS), \
        (node_usage(host, ALLOCATION), expected, agent_log(host, "report"))


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
