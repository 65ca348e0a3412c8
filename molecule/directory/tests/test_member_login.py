"""Members log in over ssh with the keys the directory holds; local accounts with their files.

The key is written by the SSH access agent's identity (its Unix user, SASL EXTERNAL over ldapi),
the member and the group by the Site agent's (simple bind on loopback), as in production. sshd's
key command reads the directory at each login, so a written or removed key counts at the next
login. The scenario shortens SSSD's cache (host_vars), so each wait is a few seconds.
"""

import itertools
import time

import pytest
from root_files import write_root_only

testinfra_hosts = ["ansible://pharos-directory-login"]

MEMBER = "pharosbob"
LOCAL = "pharos-local-admin"
WAIT_SECONDS = 40


# Each login comes from its own loopback address: sshd's per-source penalties, which refuse an
# address after a few failed logins, would otherwise decide the tests that expect a refusal.
SOURCES = ("127.0.%d.%d" % (third, fourth) for third, fourth in itertools.product(range(1, 255), range(2, 255)))


def ssh(host, user, key):
    return host.run("ssh -n -b %s -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                    "-o ConnectTimeout=5 -i %s %s@127.0.0.1 id -un" % (next(SOURCES), key, user))


def wait_for(host, user, key, logs_in):
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        attempt = ssh(host, user, key)
        if (attempt.rc == 0) == logs_in:
            return attempt
        if time.monotonic() > deadline:
            return attempt
        # sshd's per-source penalties add 5 s for each refused login and start refusing every
        # login from the address past 15 s; one attempt in 5 s keeps the next test's logins open.
        time.sleep(5)


class Identities:
    def __init__(self, host):
        self.host = host
        site = host.ansible.get_variables()
        pharos = "ou=pharos," + site["pharos_ldap_suffix"]
        self.people = "ou=people," + pharos
        self.groups = "ou=groups," + pharos
        self.agent = "cn=pharos-agent,ou=services," + pharos
        self.uid = site["pharos_member_uid_min"] + 42
        self.gid = site["pharos_member_gid_min"] + 42
        write_root_only(host, "/root/.pharos-login-agent.pw", site["openldap_agent_password"])

    def as_agent(self, tool, ldif):
        return self.host.run("%s -x -H ldap://127.0.0.1/ -D '%s' -y /root/.pharos-login-agent.pw <<'LDIF'\n%s\nLDIF"
                             % (tool, self.agent, ldif.strip()))

    def member_ldif(self, name, uid):
        """A member entry as the Site agent writes one, with the scenario's primary group."""
        return ("dn: uid=%(n)s,%(people)s\nobjectClass: inetOrgPerson\nobjectClass: posixAccount\nuid: %(n)s\n"
                "cn: %(n)s\nsn: %(n)s\nuidNumber: %(uid)d\ngidNumber: %(gid)d\nhomeDirectory: /home/%(n)s\n"
                "loginShell: /bin/bash\n" % dict(n=name, people=self.people, uid=uid, gid=self.gid))

    def admit(self, name):
        """As the Site agent: name in pharos-members, the group whose members may log in."""
        return self.as_agent("ldapmodify", "dn: cn=pharos-members,%s\nchangetype: modify\nadd: memberUid\n"
                                           "memberUid: %s\n" % (self.groups, name))

    def as_ssh_access(self, ldif):
        return self.host.run("runuser -u pharos-ssh-access -- ldapmodify -Q -Y EXTERNAL -H ldapi:/// <<'LDIF'\n%s\nLDIF"
                             % ldif.strip())


@pytest.fixture(scope="module")
def identities(host):
    identities = Identities(host)
    member = identities.as_agent("ldapadd", identities.member_ldif(MEMBER, identities.uid) + """
dn: cn=%(user)s,%(groups)s
objectClass: posixGroup
cn: %(user)s
gidNumber: %(gid)d
""" % dict(user=MEMBER, groups=identities.groups, gid=identities.gid))
    assert member.rc == 0, member.stderr
    # The openldap role keeps the group; the Site agent adds each member it creates (access_groups).
    admitted = identities.admit(MEMBER)
    assert admitted.rc == 0, admitted.stderr
    for name in (MEMBER, LOCAL):
        made = host.run("rm -f /root/%s-key /root/%s-key.pub && ssh-keygen -q -t ed25519 -N '' -C %s -f /root/%s-key"
                        % (name, name, name, name))
        assert made.rc == 0, made.stderr
    local = host.run("id %s || useradd -m -s /bin/bash %s; install -d -m 0700 -o %s -g %s /home/%s/.ssh && "
                     "install -m 0600 -o %s -g %s /root/%s-key.pub /home/%s/.ssh/authorized_keys"
                     % ((LOCAL,) * 9))
    assert local.rc == 0, local.stderr
    return identities


def test_a_member_is_resolved_from_the_directory(host, identities):
    member = host.user(MEMBER)
    assert member.exists
    assert member.uid == identities.uid
    assert member.group == MEMBER
    assert "pharos-members" in member.groups


def write_key(identities, public_key):
    written = identities.as_ssh_access("dn: uid=%s,%s\nchangetype: modify\nadd: objectClass\n"
                                       "objectClass: ldapPublicKey\n-\nadd: sshPublicKey\nsshPublicKey: %s\n"
                                       % (MEMBER, identities.people, public_key))
    assert written.rc == 0, written.stderr


def remove_keys(identities):
    removed = identities.as_ssh_access("dn: uid=%s,%s\nchangetype: modify\ndelete: sshPublicKey\n-\n"
                                       "delete: objectClass\nobjectClass: ldapPublicKey\n" % (MEMBER, identities.people))
    assert removed.rc == 0, removed.stderr


def test_a_key_logs_in_at_the_first_login_after_it_is_written_and_is_refused_at_the_first_after_removal(host, identities):
    # SSSD has just read the entry without a key: a login through SSSD's cache would be refused
    # until that entry expires.
    assert host.run("sss_ssh_authorizedkeys %s" % MEMBER).stdout.strip() == ""
    write_key(identities, host.file("/root/%s-key.pub" % MEMBER).content_string.strip())
    login = ssh(host, MEMBER, "/root/%s-key" % MEMBER)
    assert login.rc == 0, login.stderr
    assert login.stdout.strip() == MEMBER

    remove_keys(identities)
    refused = ssh(host, MEMBER, "/root/%s-key" % MEMBER)
    assert refused.rc != 0, "the member still logs in right after the key was removed"


def test_while_slapd_is_stopped_the_key_last_read_logs_in_for_the_cache_lifetime_and_no_longer(host, identities):
    lifetime = host.ansible.get_variables()["pharos_cache_seconds"]
    key = "/root/%s-key" % MEMBER
    write_key(identities, host.file(key + ".pub").content_string.strip())
    assert ssh(host, MEMBER, key).rc == 0
    since = host.run("date +%s").stdout.strip()
    assert host.run("systemctl stop slapd").rc == 0
    try:
        held = ssh(host, MEMBER, key)
        assert held.rc == 0, "a key read %d s ago is refused as soon as slapd stops" % lifetime
        time.sleep(lifetime + 1)
        assert ssh(host, MEMBER, key).rc != 0, "the key still logs in past the cache lifetime with slapd stopped"
        log = host.run("journalctl -t pharos-directory-keys --since @%s --no-pager -o cat" % since).stdout
        assert "no directory key for %s: the directory does not answer" % MEMBER in log
        assert "past the cache lifetime of %d s" % lifetime in log
        assert ssh(host, LOCAL, "/root/%s-key" % LOCAL).rc == 0, "a local account cannot log in while slapd is stopped"
    finally:
        assert host.run("systemctl start slapd").rc == 0
    assert ssh(host, MEMBER, key).rc == 0, "the key does not log in again once slapd is back"
    remove_keys(identities)


def identities_uid(host):
    return int(host.run("id -u %s" % MEMBER).stdout.strip())


def test_the_key_command_opens_no_file_a_member_controls(host, identities):
    """As sshd runs it: the command's user, from a member's home, with a member's ldaprc and a
    planted module beside it; no file it opens is the member's, in the home or in /tmp."""
    del identities
    # A converged host's apt lists are whatever its image left (none here): the roles refresh
    # them only to install something.
    installed = host.run("command -v strace || { apt-get update -qq && apt-get install -y -q strace; }")
    assert installed.rc == 0, installed.stderr
    home = "/home/%s" % MEMBER
    planted = host.run("install -d -o %(m)s %(h)s && printf 'URI ldap://203.0.113.1/\n' > %(h)s/ldaprc && "
                       "printf 'raise SystemExit(9)\n' > %(h)s/ldap3.py && chown %(m)s %(h)s/ldaprc %(h)s/ldap3.py"
                       % dict(m=MEMBER, h=home))
    assert planted.rc == 0, planted.stderr
    traced = host.run("cd %(h)s && runuser -u pharos-keys -- env HOME=%(h)s PYTHONPATH=%(h)s strace -f -qq "
                      "-e trace=open,openat -o /tmp/keys.trace /usr/bin/python3 -I /usr/local/libexec/pharos/directory-keys %(m)s"
                      % dict(h=home, m=MEMBER))
    assert traced.rc == 0, traced.stderr
    owners = host.run(r"sed -n 's/.*open[a-z]*([^\"]*\"\([^\"]*\)\".*/\1/p' /tmp/keys.trace | sort -u | "
                      'while read -r path; do [ -e "$path" ] && stat -c "%u %n" "$path"; done').stdout.splitlines()
    assert owners, "strace recorded no file the command opened"
    member = str(identities_uid(host))
    assert [line for line in owners if line.split(" ", 1)[0] == member] == []
    assert [line for line in owners if line.split(" ", 1)[1].startswith((home, "/tmp/"))] == []


def test_a_members_own_authorized_keys_file_is_ignored(host, identities):
    planted = host.run("install -d -m 0700 -o %(u)s -g %(g)d /home/%(u)s/.ssh && "
                       "install -m 0600 -o %(u)s -g %(g)d /root/%(u)s-key.pub /home/%(u)s/.ssh/authorized_keys"
                       % dict(u=MEMBER, g=identities.gid))
    assert planted.rc == 0, planted.stderr
    assert ssh(host, MEMBER, "/root/%s-key" % MEMBER).rc != 0


def test_a_local_account_logs_in_with_its_authorized_keys(host, identities):
    login = ssh(host, LOCAL, "/root/%s-key" % LOCAL)
    assert login.rc == 0, login.stderr
    assert login.stdout.strip() == LOCAL


def test_a_drop_in_sshd_refuses_is_removed_and_sshd_keeps_serving(host, identities, run_site):
    dropin = "/etc/ssh/sshd_config.d/50-pharos-members.conf"
    broken = run_site("-e", '{"sshd_member_options": ["NoSuchKeyword yes"]}', succeed=False)
    assert broken.returncode != 0
    assert "sshd refused its configuration" in broken.stdout
    assert not host.file(dropin).exists
    assert host.service("ssh").is_running
    assert ssh(host, LOCAL, "/root/%s-key" % LOCAL).rc == 0

    run_site()
    assert host.file(dropin).contains("AuthorizedKeysCommand /usr/bin/python3 -I /usr/local/libexec/pharos/directory-keys %u")
    assert host.run("sshd -T -C user=%s,host=x,addr=127.0.0.1 | grep -i '^authorizedkeyscommand '" % MEMBER).rc == 0


# ------------------------------------------------------------------ local names (security review)
# The Site agent's credential and the SSH access agent's together can write an entry named like
# a local account, list it in pharos-members and give it a key. None of that may open the local
# account, give it the directory's groups, or rename a local group for a member.

ADMIN = "site-admin"
LATE_ADMIN = "late-admin"


def after_the_caches(host, user, key):
    """One login attempt once every cached answer about the user has expired. One attempt, not a
    loop: sshd's per-source penalties would soon refuse every login from this address."""
    time.sleep(3 * host.ansible.get_variables()["pharos_cache_seconds"] + 2)
    return ssh(host, user, key)


def make_local_sudoer(host, name):
    made = host.run("id %(n)s || useradd -m -s /bin/bash -G sudo %(n)s; rm -f /root/%(n)s-key /root/%(n)s-key.pub; "
                    "ssh-keygen -q -t ed25519 -N '' -C %(n)s -f /root/%(n)s-key && "
                    "install -d -m 0700 -o %(n)s -g %(n)s /home/%(n)s/.ssh && "
                    "install -m 0600 -o %(n)s -g %(n)s /root/%(n)s-key.pub /home/%(n)s/.ssh/authorized_keys" % dict(n=name))
    assert made.rc == 0, made.stderr


def plant_directory_twin(host, identities, name, offset):
    """As the agents: an entry named like the local account, in pharos-members, with a key."""
    made = host.run("rm -f /root/%(n)s-planted /root/%(n)s-planted.pub && "
                    "ssh-keygen -q -t ed25519 -N '' -C planted -f /root/%(n)s-planted" % dict(n=name))
    assert made.rc == 0, made.stderr
    entry = identities.as_agent("ldapadd", identities.member_ldif(name, identities.uid + offset))
    assert entry.rc == 0, entry.stderr
    listed = identities.admit(name)
    assert listed.rc == 0, listed.stderr
    key = host.file("/root/%s-planted.pub" % name).content_string.strip()
    keyed = identities.as_ssh_access("dn: uid=%s,%s\nchangetype: modify\nadd: objectClass\nobjectClass: ldapPublicKey\n-\n"
                                     "add: sshPublicKey\nsshPublicKey: %s\n" % (name, identities.people, key))
    assert keyed.rc == 0, keyed.stderr


@pytest.fixture(scope="module")
def site_admin(host, identities, run_site):
    """A local sudoer the Site had before Pharos converged, and the agents' twin of it."""
    make_local_sudoer(host, ADMIN)
    run_site()
    plant_directory_twin(host, identities, ADMIN, offset=60)
    sudo_group = identities.as_agent("ldapadd", "dn: cn=sudo,%s\nobjectClass: posixGroup\ncn: sudo\n"
                                                "gidNumber: %d\nmemberUid: %s\n" % (identities.groups, identities.gid + 61, MEMBER))
    assert sudo_group.rc == 0, sudo_group.stderr
    return ADMIN


def test_a_directory_twin_of_a_local_sudoer_never_logs_in_as_it(host, site_admin):
    planted = after_the_caches(host, site_admin, "/root/%s-planted" % site_admin)
    assert planted.rc != 0, "the directory's key for %s opened the local account" % site_admin
    own = ssh(host, site_admin, "/root/%s-key" % site_admin)
    assert own.rc == 0, own.stderr
    assert own.stdout.strip() == site_admin


def test_sssd_never_serves_a_local_name_or_gives_a_local_account_the_directory_groups(host, site_admin):
    assert host.run("getent -s sss passwd %s" % site_admin).rc != 0
    groups = host.run("id -nG %s" % site_admin).stdout.split()
    assert "pharos-members" not in groups
    assert "sudo" in groups


def test_a_directory_group_named_like_a_local_group_is_never_served(host, site_admin):
    del site_admin
    assert host.run("getent -s sss group sudo").rc != 0
    assert host.run("getent group sudo").stdout.split(":")[2] == "27"
    assert "sudo" not in host.run("id -nG %s" % MEMBER).stdout.split()


def test_a_local_account_made_after_the_last_converge_gets_no_directory_key(host, identities):
    make_local_sudoer(host, LATE_ADMIN)
    since = host.run("date +%s").stdout.strip()
    plant_directory_twin(host, identities, LATE_ADMIN, offset=62)
    planted = after_the_caches(host, LATE_ADMIN, "/root/%s-planted" % LATE_ADMIN)
    assert planted.rc != 0, "the directory's key for %s opened the local account" % LATE_ADMIN
    log = host.run("journalctl -t pharos-directory-keys --since @%s --no-pager -o cat" % since).stdout
    assert "no directory key for %s: a local account has this name" % LATE_ADMIN in log


def test_a_local_account_inside_the_member_range_stops_the_run_before_any_change(host, identities, run_site):
    uid = identities.uid + 70
    made = host.run("useradd -M -u %d -s /usr/sbin/nologin in-range-user" % uid)
    assert made.rc == 0, made.stderr
    try:
        refused = run_site(succeed=False)
    finally:
        host.run("userdel in-range-user")
    assert refused.returncode != 0
    assert "Local account in-range-user (UID %d)" % uid in refused.stdout
    assert '"changed": true' not in refused.stdout
