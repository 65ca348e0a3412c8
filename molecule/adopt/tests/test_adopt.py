"""site.yml in adopt mode on a cluster that Pharos did not make (prepare.yml builds it). It
first refuses the Site as it was, naming each setting to change; once the administrator has
changed them it writes only Pharos's parts: every file the Site owned is byte-identical, the
Site's job runs on, its user still logs in and submits, and Pharos's staging partition, Prologs,
associations and directory work beside them."""

import contextlib
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from adopt_playbooks import changed_results, run_playbook, run_site
from site_state import DTN, LOGIN, NODE, SITE_FILES, on, state

EPHEMERAL = Path(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/nonexistent"))
ADDRESSES = {LOGIN: "172.30.213.10"}
MEMBER, ALLOCATION = "pharosalice", "pharos_a_test"
SUFFIX = "dc=pharos,dc=lab"
PEOPLE, GROUPS = f"ou=people,ou=pharos,{SUFFIX}", f"ou=groups,ou=pharos,{SUFFIX}"
# The Site's SSSD cache lifetime: its [nss] memcache_timeout and the pharos domain's.
CACHE_SECONDS = yaml.safe_load((Path(__file__).resolve().parents[1] / "host_vars" / f"{LOGIN}.yml")
                               .read_text(encoding="utf-8"))["pharos_cache_seconds"]
SSHD_READS_KEYS = f"runuser -u pharos-keys -- /usr/bin/python3 -I /usr/local/libexec/pharos/directory-keys {MEMBER}"


def recorded(name):
    return json.loads((EPHEMERAL / name).read_text(encoding="utf-8"))


def ssh(user, key, command):
    return subprocess.run(
        ["ssh", "-n", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
         "-o", "ConnectTimeout=10", "-i", str(key), f"{user}@{ADDRESSES[LOGIN]}", command],
        capture_output=True, text=True, timeout=120, check=False)


def failures(output):
    """{host: message} of each failed task in the output (one line of JSON a result)."""
    return {host: json.loads(result)["msg"]
            for host, result in re.findall(r"^fatal: \[(\S+)\]: FAILED! => (\{.*\})$", output, re.MULTILINE)}


def test_the_run_on_the_site_as_it_was_named_each_setting_to_change_and_changed_nothing():
    log = (EPHEMERAL / "refused.log").read_text(encoding="utf-8")
    assert not log.startswith("rc=0"), log[-3000:]
    messages = failures(log)
    assert set(messages) == {LOGIN, NODE, DTN}, log[-3000:]
    for host, message in messages.items():
        assert message.startswith(f"Adopt mode stopped before any change on {host};"), message
        assert re.search(r"/etc/slurm/slurm.conf line \d+: AccountingStorageEnforce=associations; .* "
                         r"Change the line to 'AccountingStorageEnforce=associations,limits,qos'\.", message)
        assert "/etc/slurm/slurm.conf: no PriorityDecayHalfLife line (the default is 7-0)" in message
        assert "/etc/slurm/slurm.conf: no PriorityCalcPeriod line (the default is 5)" in message
        assert "/etc/slurm/slurm.conf: no 'Include /etc/slurm/pharos.conf' line" in message
        assert "PriorityType" not in message and "PriorityUsageResetPeriod" not in message
        assert re.search(r"/etc/slurm/slurm.conf line \d+: PrivateData=jobs lacks accounts,reservations,usage,users; "
                         r".* Change the line to 'PrivateData=jobs,accounts,reservations,usage,users'\.", message)
        assert ("/etc/slurm/slurm.conf: no AccountingStoreFlags line; the Runtime finds a job in accounting by its "
                "comment. Add the line 'AccountingStoreFlags=job_comment'.") in message
    assert re.search(r"/etc/slurm/slurmdbd.conf: no PrivateData line; members would read each other's .* "
                     r"Add the line 'PrivateData=accounts,jobs,reservations,usage,users'\.", messages[LOGIN])
    assert "slurmdbd.conf" not in messages[NODE] + messages[DTN]
    for host in (NODE, DTN):
        for database in ("passwd", "group"):
            assert re.search(rf"/etc/nsswitch.conf on {host} line \d+: the {database} line does not list "
                             rf"extrausers.* '{database}: files extrausers sss'\.", messages[host]), messages[host]
    assert re.search(r"/etc/sssd/sssd.conf on \S+ line 3: the \[sssd\] services line lists nss, pam; .* "
                     r"Change the line to 'services = nss, pam, ssh'\.", messages[LOGIN]), messages[LOGIN]
    assert ("/etc/sssd/sssd.conf on pharos-adopt-login: SSSD's fast cache keeps an entry 300 s ([nss] "
            "memcache_timeout, by default)") in messages[LOGIN]
    assert (f"Set 'memcache_timeout = {CACHE_SECONDS}' in the [nss] section of /etc/sssd/sssd.conf."
            in messages[LOGIN])
    assert "nsswitch" not in messages[LOGIN]
    assert recorded("state-after-refusal.json") == recorded("state-before-refusal.json")


def test_check_diff_before_the_first_converge_shows_only_pharos_parts():
    run = recorded("check.json")
    assert run["rc"] == 0, run["result"]["stats"]
    changes = list(changed_results(run["result"]))
    assert {host for _task, host, _result in changes} == {LOGIN, NODE, DTN}
    # Every path a change names (its file, its diff's headers, its items) is one of Pharos's.
    named = {path for _task, _host, result in changes for path in re.findall(r'"(/[^"\s]+)"', json.dumps(result))}
    site_owned = {path for paths in SITE_FILES.values() for path in paths}
    assert named and not named & site_owned, named & site_owned
    assert {"/etc/slurm/pharos.conf", "/etc/ssh/sshd_config.d/50-pharos-members.conf"} <= named, named
    # SSSD's file holds a password: its task shows no path, only that it changes.
    assert ("pharos.hpc.sssd : Configure SSSD to read members and keys from the directory", LOGIN) in {
        (task, host) for task, host, _result in changes}


def test_every_file_the_site_owned_and_its_accounts_entries_and_rules_are_unchanged():
    before, after = recorded("state-before.json"), state()
    assert after["files"] == before["files"]
    assert after["accounts"] == before["accounts"]
    assert after["entries"] == before["entries"]
    assert after["rules"] == before["rules"]


def test_the_sites_job_still_runs():
    job = (EPHEMERAL / "site_job").read_text(encoding="utf-8").strip()
    assert on(LOGIN, f"squeue -h -j {job} -o '%T %u %P'").split() == ["RUNNING", "alice", "batch"]


def test_the_sites_user_logs_in_with_authorized_keys_and_runs_a_job_on_batch():
    login = ssh("alice", EPHEMERAL / "alice_key", "srun -A physics -p batch --mem=50 -t 1 sh -c 'id -un; hostname'")
    assert login.returncode == 0, login.stderr
    assert login.stdout.split() == ["alice", NODE]


def test_slurm_runs_the_pharos_prologs_and_the_staging_partition_from_pharos_own_file():
    config = on(LOGIN, "scontrol show config")
    assert re.search(r"^Prolog\[0\]\s+= /etc/slurm/pharos-job-identity-prolog.sh$", config, re.MULTILINE)
    assert re.search(r"^Prolog\[1\]\s+= /etc/slurm/pharos-scratch-prolog.sh$", config, re.MULTILINE)
    assert re.search(r"^AuthAltTypes\s+= auth/jwt$", config, re.MULTILINE)
    partition = on(LOGIN, "scontrol -o show partition staging")
    assert f"Nodes={DTN}" in partition and "MaxNodes=1" in partition


def test_a_member_job_on_staging_runs_as_the_member_and_gets_a_scratch_root():
    job = on(LOGIN, f"runuser -u {MEMBER} -- srun -A {ALLOCATION} -p staging -t 1 sh -c 'id -un; hostname'")
    assert job.split() == [MEMBER, DTN]
    assert on(DTN, f"stat -c '%U %a' /scratch/pharos/{MEMBER}").split()[0] == MEMBER


def test_the_pharos_tree_lives_under_the_sites_cluster_beside_its_accounts():
    tree = on(LOGIN, "sacctmgr --noheader --parsable2 show associations format=cluster,account,user,parentname")
    assert f"site|{ALLOCATION}|{MEMBER}|" in tree.splitlines() or f"site|{ALLOCATION}|{MEMBER}|{ALLOCATION}" in tree
    assert "site|pharos||root" in tree.splitlines()
    assert "site|physics|alice|" in tree


def test_the_pharos_suffix_is_a_database_of_its_own_beside_the_sites():
    databases = on(LOGIN, "ldapsearch -LLL -Q -o ldif-wrap=no -Y EXTERNAL -H ldapi:/// -b cn=config "
                          "'(objectClass=olcMdbConfig)' olcSuffix olcDbDirectory")
    assert "olcDbDirectory: /var/lib/ldap\nolcSuffix: dc=example\n" in databases
    assert f"olcDbDirectory: /var/lib/ldap/pharos\nolcSuffix: {SUFFIX}\n" in databases


def test_the_sites_own_key_schema_serves_pharos_and_no_second_copy_is_loaded():
    holders = on(LOGIN, "ldapsearch -LLL -Q -o ldif-wrap=no -Y EXTERNAL -H ldapi:/// -s one "
                        "-b cn=schema,cn=config '(olcAttributeTypes=*sshPublicKey*)' 1.1")
    found = re.findall(r"^dn: (.*)$", holders, re.MULTILINE)
    assert len(found) == 1 and re.fullmatch(r"cn=\{\d+\}site-openssh-lpk,cn=schema,cn=config", found[0]), found


def new_key(tmp_path, name):
    key = tmp_path / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    return key, (tmp_path / f"{name}.pub").read_text(encoding="utf-8").strip()


def as_directory_admin(ldif):
    """As the directory's administrator (root over ldapi), in place of the agents' cycles."""
    on(LOGIN, f"ldapmodify -Q -Y EXTERNAL -H ldapi:/// <<'LDIF'\n{ldif}LDIF")


@contextlib.contextmanager
def member_with_key(public):
    """pharosalice in pharos-members with the key, as the agents would make her, and taken back
    after, with SSSD's cache emptied both times."""
    as_directory_admin(f"dn: uid={MEMBER},{PEOPLE}\nchangetype: modify\nadd: objectClass\nobjectClass: ldapPublicKey\n-\n"
                       f"add: sshPublicKey\nsshPublicKey: {public}\n\n"
                       f"dn: cn=pharos-members,{GROUPS}\nchangetype: modify\nadd: memberUid\nmemberUid: {MEMBER}\n")
    try:
        on(LOGIN, "sss_cache -E")
        yield
    finally:
        as_directory_admin(f"dn: uid={MEMBER},{PEOPLE}\nchangetype: modify\ndelete: sshPublicKey\n-\n"
                           f"delete: objectClass\nobjectClass: ldapPublicKey\n\n"
                           f"dn: cn=pharos-members,{GROUPS}\nchangetype: modify\ndelete: memberUid\nmemberUid: {MEMBER}\n")
        on(LOGIN, "sss_cache -E")


def test_a_member_logs_in_with_a_directory_key_through_the_pharos_sssd_domain(tmp_path):
    key, public = new_key(tmp_path, "member_key")
    with member_with_key(public):
        login = ssh(MEMBER, key, "id -un")
        assert login.returncode == 0 and login.stdout.strip() == MEMBER, login.stderr


def test_a_changed_key_counts_at_the_next_login_while_sssd_still_holds_the_old_one(tmp_path):
    """The member replaces her key right after SSSD read the old one: sshd's key command reads the
    Pharos database at each login, so the next login takes the new key and refuses the old."""
    old_key, old_public = new_key(tmp_path, "old_key")
    new_key_path, new_public = new_key(tmp_path, "new_key")
    with member_with_key(old_public):
        first = ssh(MEMBER, old_key, "id -un")
        assert first.returncode == 0 and first.stdout.strip() == MEMBER, first.stderr
        assert old_public.split()[1] in on(LOGIN, f"sss_ssh_authorizedkeys {MEMBER}")
        as_directory_admin(f"dn: uid={MEMBER},{PEOPLE}\nchangetype: modify\nreplace: sshPublicKey\n"
                           f"sshPublicKey: {new_public}\n")
        assert old_public.split()[1] in on(LOGIN, f"sss_ssh_authorizedkeys {MEMBER}"), "SSSD no longer holds the old key"
        login = ssh(MEMBER, new_key_path, "id -un")
        assert login.returncode == 0 and login.stdout.strip() == MEMBER, login.stderr
        refused = ssh(MEMBER, old_key, "id -un")
        assert refused.returncode == 255 and "Permission denied" in refused.stderr, refused.stderr


def test_while_the_sites_slapd_is_stopped_the_key_last_read_counts_for_the_cache_lifetime_and_no_longer(tmp_path):
    _, public = new_key(tmp_path, "member_key")
    with member_with_key(public):
        assert public.split()[1] in on(LOGIN, SSHD_READS_KEYS)
        on(LOGIN, "systemctl stop slapd")
        try:
            assert public.split()[1] in on(LOGIN, SSHD_READS_KEYS), "a key read just now is refused once slapd stops"
            time.sleep(CACHE_SECONDS + 1)
            assert public.split()[1] not in on(LOGIN, SSHD_READS_KEYS), \
                f"the key still counts past the cache lifetime ({CACHE_SECONDS} s) with slapd stopped"
        finally:
            on(LOGIN, "systemctl start slapd")
        assert public.split()[1] in on(LOGIN, SSHD_READS_KEYS), "the key does not count again once slapd is back"


def test_check_diff_after_the_converge_changes_nothing():
    code, document = run_site("--check", "--diff", as_json=True)
    assert code == 0, document["stats"]
    assert all(counts["changed"] == 0 for counts in document["stats"].values()), document["stats"]


# Over ssh with sudo, as here and in production, Ansible gives a bare command a terminal, which
# would carry its standard error into what it read: local names read so would have taken a
# warning's first word for an account and changed SSSD's filter from one run to the next.
READ_WITH_A_WARNING = """\
- name: Read the host's root account, the reading command warning on its standard error
  hosts: {host}
  gather_facts: false
  tasks:
    - name: Read
      pharos.hpc.read_command:
        argv: [sh, -c, 'getent -s files passwd root; echo "sudo: a warning" >&2']
"""


def test_a_read_over_ssh_with_sudo_keeps_the_commands_errors_out_of_what_it_read(tmp_path):
    playbook = tmp_path / "read.yml"
    playbook.write_text(READ_WITH_A_WARNING.format(host=LOGIN), encoding="utf-8")
    code, document = run_playbook(playbook, as_json=True)
    assert code == 0, document["stats"]
    read = document["plays"][0]["tasks"][0]["hosts"][LOGIN]
    assert read["stdout_lines"] == [on(LOGIN, "getent -s files passwd root").strip()]
    assert "sudo: a warning" in read["stderr_lines"]


# Site lines and files that mean something else for what Pharos writes, on the login node,
# planted together so that one run names them all: (file, how it is planted, each message), where
# {line} is the first line added to the file's end and {next} the second.
CONFLICTS = [
    ("/etc/slurm/slurm.conf",
     f"printf '%s\\n' 'PartitionName=staging Nodes={NODE} State=UP' 'JobSubmitPlugins=require_timelimit' "
     ">> /etc/slurm/slurm.conf",
     ["/etc/slurm/slurm.conf line {line}: the Site already defines a partition named staging",
      "/etc/slurm/slurm.conf line {next}: the Site runs job submit plugins of its own "
      "(JobSubmitPlugins=require_timelimit)"]),
    ("/etc/sssd/sssd.conf", "printf '%s\\n' '[domain/pharos]' 'id_provider = files' >> /etc/sssd/sssd.conf",
     ["/etc/sssd/sssd.conf has a [domain/pharos] section already"]),
    ("/etc/slurm/job_submit.lua", "echo '-- the Site s own checks' > /etc/slurm/job_submit.lua",
     [f"/etc/slurm/job_submit.lua on {LOGIN} is the Site's: Pharos writes its own job_submit.lua there"]),
]


# A Site rule that maps the SSH access agent's Unix identity (and no root's) before Pharos's rule.
SITE_AUTHZ_RULE = ('"^gidNumber=[0-9]+\\+uidNumber=(41000[0-9][0-9]),cn=peercred,cn=external,cn=auth$" '
                   '"uid=$1,ou=people,dc=example"')


def site_authz_rule(change):
    on(LOGIN, f"ldapmodify -Q -Y EXTERNAL -H ldapi:/// <<'LDIF'\ndn: cn=config\nchangetype: modify\n"
              f"{change}: olcAuthzRegexp\nolcAuthzRegexp: {{0}}{SITE_AUTHZ_RULE}\nLDIF")


@pytest.fixture
def site_conflicts():
    """Plants the conflicting lines and rule; each file's own bytes come back afterwards."""
    originals, messages = {}, []
    for path, plant, expected in CONFLICTS:
        originals[path] = on(LOGIN, f"cat {path}")
        on(LOGIN, plant)
        lines = len(originals[path].splitlines())
        messages += [message.format(line=lines + 1, next=lines + 2) for message in expected]
    site_authz_rule("add")
    messages.append(f"cn=config on {LOGIN}: the Site's olcAuthzRegexp rule {{0}}{SITE_AUTHZ_RULE} matches the SSH "
                    "access agent's identity (gidNumber=4100002+uidNumber=4100002,cn=peercred,cn=external,cn=auth)")
    yield messages
    site_authz_rule("delete")
    for path, original in originals.items():
        on(LOGIN, f"cat > {path}", stdin=original)


def test_site_lines_that_conflict_with_pharos_stop_the_run_before_any_change(site_conflicts):
    before = state()
    code, output = run_site()
    assert code != 0
    message = failures(output).get(LOGIN, "")
    for conflict in site_conflicts:
        assert conflict in message, output[-3000:]
    assert state() == before
    assert not re.search(r"^changed: ", output, re.MULTILINE)


# The Site sets no AuthAltTypes, so Pharos's file turns JWTs on with its own HS256 key; Slurm takes
# the value of a key that it reads last, and a Site line after the Include would replace Pharos's.
SITE_JWKS = "AuthAltParameters=jwks=/etc/slurm/jwks.json,userclaimfield=preferred_username"


def test_site_token_parameters_after_the_include_that_trust_a_jwks_stop_the_run_before_any_change():
    original = on(LOGIN, "cat /etc/slurm/slurm.conf")
    assert not re.search(r"(?im)^AuthAltTypes", original), "the Site's slurm.conf sets AuthAltTypes already"
    assert original.rstrip().splitlines()[-1] == "Include /etc/slurm/pharos.conf"
    on(LOGIN, f"echo '{SITE_JWKS}' >> /etc/slurm/slurm.conf")
    try:
        before = state()
        code, output = run_site()
        after = state()
    finally:
        on(LOGIN, "cat > /etc/slurm/slurm.conf", stdin=original)
    assert code != 0
    message = failures(output).get(LOGIN, "")
    line = len(original.splitlines()) + 1
    assert (f"/etc/slurm/slurm.conf line {line}: {SITE_JWKS}: it stands after 'Include /etc/slurm/pharos.conf' "
            "while the Site sets no AuthAltTypes") in message, output[-3000:]
    for problem in ("jwks= makes slurmctld take tokens that another issuer signed",
                    "userclaimfield= takes the user from a claim another issuer fills",
                    "without disable_token_creation every user and job may run 'scontrol token'"):
        assert problem in message, message
    assert after == before
    assert not re.search(r"^changed: ", output, re.MULTILINE)


@pytest.mark.parametrize(("target", "change", "undo", "named"), [
    (LOGIN, "usermod -u 4100099 pharos-agent", "usermod -u 4100001 pharos-agent",
     "the account pharos-agent exists with UID 4100099, but the Site plans UID 4100001 for it (pharos_agent_uid)"),
    (NODE, "usermod -l site-squatter pharos-runtime", "usermod -l pharos-runtime site-squatter",
     "UID 4801, which the Site plans for the account pharos-runtime (pharos_scratch_runtime_uid), "
     "belongs to site-squatter already"),
], ids=["an agent account with another UID", "the Runtime's UID held by another name"])
def test_a_service_identity_the_host_holds_otherwise_stops_the_run_before_any_change(target, change, undo, named):
    on(target, change)
    try:
        before = state()
        code, output = run_site()
        after = state()
    finally:
        on(target, undo)
    assert code != 0
    message = failures(output).get(target, "")
    assert message.startswith(f"Stopped before any change on {target}:"), output[-3000:]
    assert named in message
    assert after == before
    assert not re.search(r"^changed: ", output, re.MULTILINE)
