"""Rotating the Site's secrets (docs/production.md, "Rotating a secret"): each changes with one
run of site.yml, and a run killed between a change and the restart it needs is finished by the
next run. The munge key never splits the cluster.

The killed runs form a chain in site.yml's order: each new secret or file goes in, the run is
killed (SIGKILL, nothing runs after) right after the task that changed it, and the test shows
the daemon still runs what it read before. The last run is not killed: it must end green with
every daemon on the new secrets, and the Site working; the run after it changes only what was
changed by hand since, exactly as check mode predicted.
Runs after test_partition_change.py and leaves the rotated secrets in place; no later test
converges.
"""

import hashlib
import os
import re
import secrets
import time

import pytest
import testinfra
from member_tokens import exchange, load_issuer_key, member_token, put_root_only, submit, wait_for_end
from scenario_playbooks import SITE, changed_tasks, run_playbook, started_before_change

testinfra_hosts = ["ansible://pharos-cluster-login"]

NODES = ["pharos-cluster-login", "pharos-cluster-compute", "pharos-cluster-staging"]
ACCOUNT = "pharos_a_test"

def node(name):
    return testinfra.get_host(f"ansible://{name}", ansible_inventory=os.environ["MOLECULE_INVENTORY_FILE"])


def sha256_of(host, path):
    result = host.run(f"sha256sum {path}")
    assert result.rc == 0, result.stderr
    return result.stdout.split()[0]


def tamper(host, path):
    """A line of someone's own in a managed file: the next run writes the file back."""
    assert host.run(f"echo '# changed by hand' >> {path}").rc == 0


def reloaded_since_change(host, unit_log, path, signal_line):
    """Whether the unit's journal shows a reload after the file last changed."""
    changed = host.run(f"stat -c %Y {path}").stdout.strip()
    journal = host.run(f"journalctl -q -o cat -u {unit_log} --since @{changed}").stdout
    return signal_line in journal


@pytest.fixture(scope="module")
def rotated(host):
    # One more minute than the partition has now, so that slurm.conf changes on every run.
    staging_minutes = int(re.search(r"MaxTime=00:(\d+):00", host.check_output("scontrol -o show partition staging")).group(1))
    return {
        "munge_key": secrets.token_hex(32),
        "slurm_jwt_key": secrets.token_hex(32),
        "slurm_db_password": "rotated-slurmdbd-" + secrets.token_hex(12),
        "openldap_agent_password": "rotated-agent-" + secrets.token_hex(12),
        "openldap_sssd_reader_password": "rotated-reader-" + secrets.token_hex(12),
        "pharos_slurm_staging_time_minutes": staging_minutes + 1,
    }


# Each step: the task the run is killed after, a file someone changed by hand first (the next
# run writes it back) or None, the daemons left on what they read before, as (node, unit,
# file), and the hosts the run is limited to. The Slurm play's handlers wait until slurmctld
# has started, so one kill after accounting's last change leaves every Slurm daemon behind; the earlier roles flush
# their handlers, so each is a step. The steps on the login node's own roles run on it alone,
# since the first full run after the key's step has put the key on every node; so does the
# Slurm step, as the configless nodes hold no file it changes.
LOGIN_ONLY = ("--limit", "pharos-cluster-login")
CHAIN = [
    ("Install the cluster's key", None, [("every node with the new key", "munge", "/etc/munge/munge.key")], ()),
    ("Listen on loopback and the local socket only", "/etc/default/slapd",
     [("pharos-cluster-login", "slapd", "/etc/default/slapd")], ()),
    ("Configure SSSD to read members and keys from the directory", None,
     [("pharos-cluster-login", "sssd", "/etc/sssd/sssd.conf")], LOGIN_ONLY),
    ("Write the members' drop-in", "/etc/ssh/sshd_config.d/50-pharos-members.conf", [], LOGIN_ONLY),
    ("Write slurmdbd.conf, readable by slurm alone (it holds the database password)",
     "/etc/systemd/system/slurmrestd.service.d/pharos.conf",
     [("pharos-cluster-login", "slurmrestd", "/etc/systemd/system/slurmrestd.service.d/pharos.conf"),
      ("pharos-cluster-login", "slurmctld", "/etc/slurm/jwt_hs256.key"),
      ("pharos-cluster-login", "slurmctld", "/etc/slurm/slurm.conf"),
      ("pharos-cluster-login", "slurmdbd", "/etc/slurm/slurmdbd.conf")], LOGIN_ONLY),
]


@pytest.mark.parametrize(("task", "changed_by_hand", "left_behind", "limit"), CHAIN, ids=[step[0] for step in CHAIN])
def test_a_run_killed_right_after_a_change_leaves_the_daemon_on_its_old_files(
        host, rotated, task, changed_by_hand, left_behind, limit):
    if changed_by_hand:
        tamper(host, changed_by_hand)
    status, output = run_playbook(SITE, *limit, extra_vars=rotated, interrupt_after=task)
    assert status == -9 and f"INTERRUPTED after '{task}'" in output, output[-3000:]
    for name, unit, path in left_behind:
        if name == "every node with the new key":
            # Killed after the first node's key changed; other nodes may have changed too.
            wanted = hashlib.sha256(rotated["munge_key"].encode()).hexdigest()
            holding = [node_name for node_name in NODES if sha256_of(node(node_name), path) == wanted]
            assert holding
            assert all(started_before_change(node(node_name), unit, path) for node_name in holding)
        else:
            assert started_before_change(node(name), unit, path), f"{unit} restarted although the run was killed"
    if "sshd_config.d" in (changed_by_hand or ""):
        assert not reloaded_since_change(host, "ssh", changed_by_hand, "Received SIGHUP")


def test_the_next_run_restarts_every_daemon_left_behind_and_ends_green(host, rotated):
    killed_at = time.time()
    run_playbook(SITE, extra_vars=rotated)

    for name in NODES:
        assert not started_before_change(node(name), "munge", "/etc/munge/munge.key"), name
    for unit, path in [("slapd", "/etc/default/slapd"), ("sssd", "/etc/sssd/sssd.conf"),
                       ("slurmrestd", "/etc/systemd/system/slurmrestd.service.d/pharos.conf"),
                       ("slurmctld", "/etc/slurm/jwt_hs256.key"), ("slurmdbd", "/etc/slurm/slurmdbd.conf"),
                       ("slurmdbd", "/etc/slurm/jwt_hs256.key")]:
        assert not started_before_change(host, unit, path), unit
    assert reloaded_since_change(host, "ssh", "/etc/ssh/sshd_config.d/50-pharos-members.conf", "Received SIGHUP")
    configured = host.run("scontrol show config").stdout.splitlines()[0]
    assert configured.startswith("Configuration data as of "), configured
    assert time.mktime(time.strptime(configured.split(" as of ")[1], "%Y-%m-%dT%H:%M:%S")) >= int(killed_at) - 1
    minutes = rotated["pharos_slurm_staging_time_minutes"]
    assert f"MaxTime=00:{minutes:02d}:00" in host.run("scontrol -o show partition staging").stdout


# The drift test runs site.yml (SITE): the scenario's converge.yml keeps its own allocations with
# the tree's role a second time, which check mode would predict again.
# Six changes made by hand on a converged Site, each on the node that holds it, and the tasks
# that put each back, with the handlers they notify, as (host, task). The scratch tree is not one
# of them: every node holds it on the shared scratch, so every node predicts the repair of a
# drift there, and which of them makes it is a race between them.
DRIFTS = [
    ("pharos-cluster-login", "SSSD's cache lifetime",
     "sed -i 's/^memcache_timeout = .*/memcache_timeout = 7/' /etc/sssd/sssd.conf"),
    ("pharos-cluster-compute", "the scratch Prolog", "echo '# changed by hand' >> /etc/slurm/pharos-scratch-prolog.sh"),
    ("pharos-cluster-staging", "the job-side check", "rm /usr/local/bin/pharos-scratch-attempt"),
    ("pharos-cluster-login", "a priority value in slurm.conf",
     "sed -i 's/^PriorityCalcPeriod=1$/PriorityCalcPeriod=5/' /etc/slurm/slurm.conf"),
    ("pharos-cluster-login", "MaxSubmitJobs on pharos_default",
     "sacctmgr -i modify account where name=pharos_default set MaxSubmitJobs=5"),
    ("pharos-cluster-login", "one olcAccess rule",
     "ldapmodify -Q -Y EXTERNAL -H ldapi:/// <<'LDIF'\ndn: olcDatabase={{1}}mdb,cn=config\nchangetype: modify\n"
     "delete: olcAccess\nolcAccess: {{0}}\nLDIF"),
]
SCRATCH_SCRIPTS = ("pharos.hpc.scratch : Refuse a squatted or linked scratch root, else keep the Runtime's account, the "
                   "root, the Prolog, the job-side check and the group pharos-users")
REPAIRS = {
    ("pharos-cluster-login", "pharos.hpc.sssd : Configure SSSD to read members and keys from the directory"),
    ("pharos-cluster-login", "pharos.hpc.sssd : Restart sssd"),
    ("pharos-cluster-compute", SCRATCH_SCRIPTS),
    ("pharos-cluster-staging", SCRATCH_SCRIPTS),
    ("pharos-cluster-login", "pharos.hpc.slurm : Write Slurm's configuration file /etc/slurm/slurm.conf"),
    ("pharos-cluster-login", "pharos.hpc.slurm : Reconfigure Slurm"),
    ("pharos-cluster-login", "pharos.hpc.slurm_accounts : Keep the association tree"),
    ("pharos-cluster-login", "pharos.hpc.openldap : Set the database's whole ordered access list"),
}


def site_state():
    """What the drifts touch, read on each node."""
    login, compute, staging = (node(name) for name in NODES)
    return {
        "sssd.conf": sha256_of(login, "/etc/sssd/sssd.conf"),
        "slurm.conf": sha256_of(login, "/etc/slurm/slurm.conf"),
        "scratch Prolog": sha256_of(compute, "/etc/slurm/pharos-scratch-prolog.sh"),
        "job-side check": staging.run("sha256sum /usr/local/bin/pharos-scratch-attempt").stdout,
        "pharos_default": login.check_output("sacctmgr -nP show assoc where account=pharos_default format=user,maxsubmit"),
        "olcAccess": login.check_output("ldapsearch -Q -LLL -o ldif-wrap=no -Y EXTERNAL -H ldapi:/// "
                                        "-b 'olcDatabase={1}mdb,cn=config' -s base olcAccess"),
    }


def test_the_run_after_the_rotation_repairs_six_drifts_exactly_as_check_mode_predicted_them(host, rotated):
    """The run after the rotation changes only what was changed by hand since; check mode predicts
    each of those changes once, handlers included, and changes nothing itself, apt's lists included."""
    converged = site_state()
    for name, drift, command in DRIFTS:
        made = node(name).run(command.format())
        assert made.rc == 0, (drift, made.stderr)
    drifted = site_state()
    assert all(drifted[part] != converged[part] for part in converged), (converged, drifted)

    # Lists older than an hour, which a real run refreshes: check mode leaves them as they are.
    compute = node("pharos-cluster-compute")
    assert compute.run("touch -d '2 hours ago' /var/lib/apt/lists").rc == 0
    lists_aged = compute.check_output("stat -c %Y /var/lib/apt/lists")

    predicted = changed_tasks(run_playbook(SITE, "--check", "--diff", extra_vars=rotated, as_json=True))
    assert site_state() == drifted
    assert compute.check_output("stat -c %Y /var/lib/apt/lists") == lists_aged, "check mode refreshed apt's lists"
    assert len(predicted) == len(set(predicted)), sorted(predicted)

    applied = changed_tasks(run_playbook(SITE, "--diff", extra_vars=rotated, as_json=True))
    assert set(applied) == set(predicted) == REPAIRS, (sorted(applied), sorted(predicted))
    assert site_state() == converged


def test_every_node_holds_the_new_munge_key_and_trusts_the_others(host, rotated):
    wanted = hashlib.sha256(rotated["munge_key"].encode()).hexdigest()
    assert {name: sha256_of(node(name), "/etc/munge/munge.key") for name in NODES} == dict.fromkeys(NODES, wanted)
    credential = host.run("munge -n").stdout.strip()
    for name in NODES[1:]:
        decoded = node(name).run(f"echo {credential} | unmunge")
        assert decoded.rc == 0 and "STATUS:          Success" in decoded.stdout, (name, decoded.stdout, decoded.stderr)


@pytest.mark.parametrize("partition", ["compute", "staging"])
def test_members_run_jobs_across_the_nodes_after_the_rotation(host, partition):
    result = host.run(f"runuser -u pharosalice -- timeout 60 srun -A {ACCOUNT} -p {partition} -t 1 id -un")
    assert result.rc == 0 and result.stdout.strip() == "pharosalice", result.stderr


def test_accounting_answers_on_the_new_database_password(host):
    result = host.run("sacctmgr --noheader --parsable2 show cluster format=Cluster")
    assert result.rc == 0 and "pharos" in result.stdout.split(), result.stderr
    assert "Access denied" not in host.run("journalctl -q -o cat -u slurmdbd --since -5min").stdout


def test_a_member_token_works_on_the_new_hs256_key(host):
    exchanged = exchange(host, member_token(load_issuer_key(), sun="pharosalice"))
    assert exchanged.rc == 0, exchanged.stderr
    status, answer = submit(host, exchanged.stdout.strip(), "pharosalice")
    assert status == 200 and not answer["errors"], answer["errors"]
    assert "JobState=COMPLETED" in wait_for_end(host, answer["job_id"])


def test_the_directory_takes_the_new_service_passwords_and_refuses_the_old(host, rotated):
    variables = host.ansible.get_variables()
    agent = f"cn=pharos-agent,ou=services,ou=pharos,{variables['pharos_ldap_suffix']}"
    for password, works in [(rotated["openldap_agent_password"], True), (variables["openldap_agent_password"], False)]:
        path = put_root_only(host, "agent-bind", password)
        bind = host.run(f"ldapwhoami -x -H ldap://127.0.0.1/ -D {agent} -y {path}; status=$?; rm -f {path}; exit $status")
        assert (bind.rc == 0) is works, bind.stderr
    looked_up = host.run("sss_cache -E && getent passwd pharosalice")
    assert looked_up.rc == 0 and looked_up.stdout.startswith("pharosalice:"), looked_up.stderr


def test_a_member_logs_in_with_a_directory_key_through_sssd_on_the_new_reader_password(host):
    suffix = host.ansible.get_variables()["pharos_ldap_suffix"]
    member, people, groups = "pharosalice", f"ou=people,ou=pharos,{suffix}", f"ou=groups,ou=pharos,{suffix}"
    public = host.check_output("rm -f /root/rotation-key /root/rotation-key.pub && "
                               "ssh-keygen -q -t ed25519 -N '' -f /root/rotation-key && cat /root/rotation-key.pub")
    given = (f"dn: uid={member},{people}\nchangetype: modify\nadd: objectClass\nobjectClass: ldapPublicKey\n-\n"
             f"add: sshPublicKey\nsshPublicKey: {public}\n\n"
             f"dn: cn=pharos-members,{groups}\nchangetype: modify\nadd: memberUid\nmemberUid: {member}\n")
    taken_back = (f"dn: uid={member},{people}\nchangetype: modify\ndelete: sshPublicKey\n-\n"
                  f"delete: objectClass\nobjectClass: ldapPublicKey\n\n"
                  f"dn: cn=pharos-members,{groups}\nchangetype: modify\ndelete: memberUid\nmemberUid: {member}\n")
    # As the directory's administrator (root over ldapi), in place of the agents' cycles.
    written = host.run(f"ldapmodify -Q -Y EXTERNAL -H ldapi:/// <<'LDIF'\n{given}LDIF")
    assert written.rc == 0, written.stderr
    try:
        host.run("sss_cache -E")
        login = host.run("ssh -n -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                         f"-o ConnectTimeout=5 -i /root/rotation-key {member}@127.0.0.1 id -un")
        assert login.rc == 0 and login.stdout.strip() == member, login.stderr
    finally:
        host.run(f"ldapmodify -Q -Y EXTERNAL -H ldapi:/// <<'LDIF'\n{taken_back}LDIF; sss_cache -E; "
                 "rm -f /root/rotation-key /root/rotation-key.pub")


def test_a_munge_key_rotation_that_would_leave_a_node_out_is_refused(host, rotated):
    before = {name: sha256_of(node(name), "/etc/munge/munge.key") for name in NODES}
    status, output = run_playbook(SITE, "--limit", "pharos-cluster-login,pharos-cluster-compute",
                                  extra_vars=dict(rotated, munge_key=secrets.token_hex(32)), succeed=False)
    assert status != 0
    assert "This run would change the munge key on pharos-cluster-compute, pharos-cluster-login" in output, output[-3000:]
    assert "but it does not reach pharos-cluster-staging" in output and "Nothing was changed" in output
    assert {name: sha256_of(node(name), "/etc/munge/munge.key") for name in NODES} == before
