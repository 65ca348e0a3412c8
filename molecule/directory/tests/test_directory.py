"""The directory of the Site, checked against the real slapd on the login node.

Each identity binds the way it does in production: pharos-agent with a simple bind on
127.0.0.1, pharos-ssh-access as its Unix user with SASL EXTERNAL over ldapi, sssd-reader with
a simple bind, anonymous without any. Every write that the access table forbids must be
refused by slapd itself (result 50, insufficient access; 19, constraint violation).
"""

import os

import pytest
import testinfra
from root_files import write_root_only

testinfra_hosts = ["ansible://pharos-directory-login"]

INSUFFICIENT_ACCESS = 50
CONSTRAINT_VIOLATION = 19
NO_SUCH_OBJECT = 32


class Directory:
    """The login node's directory and one way to act as each identity."""

    def __init__(self, host):
        self.host = host
        site = host.ansible.get_variables()
        self.suffix = site["pharos_ldap_suffix"]
        self.pharos = "ou=pharos," + self.suffix
        self.people = "ou=people," + self.pharos
        self.groups = "ou=groups," + self.pharos
        self.services = "ou=services," + self.pharos
        self.agent = "cn=pharos-agent," + self.services
        self.reader = "cn=sssd-reader," + self.services
        self.uid_min = site["pharos_member_uid_min"]
        self.uid_max = site["pharos_member_uid_max"]
        self.gid_min = site["pharos_member_gid_min"]
        self.project_gid_max = site["pharos_project_gid_max"]
        # Passwords reach the tools through 0600 files, never through argv.
        for name, password in (("agent", site["openldap_agent_password"]),
                               ("reader", site["openldap_sssd_reader_password"])):
            write_root_only(host, "/root/.pharos-%s.pw" % name, password)

    def _tool(self, identity, tool, ldif="", arguments=""):
        binds = {
            "agent": "%s -x -H ldap://127.0.0.1/ -D '%s' -y /root/.pharos-agent.pw" % (tool, self.agent),
            "reader": "%s -x -H ldap://127.0.0.1/ -D '%s' -y /root/.pharos-reader.pw" % (tool, self.reader),
            "ssh-access": "runuser -u pharos-ssh-access -- %s -Q -Y EXTERNAL -H ldapi:///" % tool,
            "keys": "runuser -u pharos-keys -- %s -Q -Y EXTERNAL -H ldapi:///" % tool,
            "anonymous": "%s -x -H ldap://127.0.0.1/" % tool,
            "root": "%s -Q -Y EXTERNAL -H ldapi:///" % tool,
        }
        command = binds[identity] + " " + arguments
        if ldif:
            command += " <<'LDIF'\n%s\nLDIF" % ldif.strip()
        return self.host.run(command)

    def modify(self, identity, ldif):
        return self._tool(identity, "ldapmodify", ldif)

    def add(self, identity, ldif):
        return self._tool(identity, "ldapadd", ldif)

    def delete(self, identity, dn):
        return self._tool(identity, "ldapdelete", arguments="'%s'" % dn)

    def search(self, identity, base, *attributes, scope="sub"):
        return self._tool(identity, "ldapsearch", arguments="-LLL -o ldif-wrap=no -s %s -b '%s' '(objectClass=*)' %s"
                          % (scope, base, " ".join(attributes)))

    def members(self):
        """The members' uid lines, as root reads them; the search must succeed and find the
        fixture's member, or an absence would prove nothing."""
        found = self.search("root", self.people, "uid")
        assert found.rc == 0, (found.rc, found.stderr)
        assert "uid: pharosalice" in found.stdout, found.stdout
        return found.stdout

    def member(self, uid):
        return "uid=%s,%s" % (uid, self.people)

    def member_ldif(self, uid, uid_number, gid_number):
        return ("dn: %s\nobjectClass: inetOrgPerson\nobjectClass: posixAccount\nuid: %s\ncn: %s\nsn: %s\n"
                "uidNumber: %d\ngidNumber: %d\nhomeDirectory: /home/%s\nloginShell: /bin/bash\n"
                % (self.member(uid), uid, uid, uid, uid_number, gid_number, uid))


@pytest.fixture(scope="module")
def directory(host):
    directory = Directory(host)
    # The agent creates a member and a project group, as the Site agent does.
    member = directory.add("agent", directory.member_ldif("pharosalice", directory.uid_min, directory.gid_min))
    assert member.rc == 0, member.stderr
    group = directory.add("agent", "dn: cn=pharos_p_probe,%s\nobjectClass: posixGroup\ncn: pharos_p_probe\n"
                          "gidNumber: %d\n" % (directory.groups, directory.project_gid_max))
    assert group.rc == 0, group.stderr
    return directory


def refused(result, code=INSUFFICIENT_ACCESS):
    return result.rc == code


# ------------------------------------------------------------------ listeners and secrets


def test_slapd_listens_on_loopback_and_its_socket_only(host):
    listeners = [line.split()[3] for line in host.run("ss -Hltn").stdout.splitlines()]
    ldap_ports = [address for address in listeners if address.rsplit(":", 1)[1] in ("389", "636")]
    assert ldap_ports == ["127.0.0.1:389"], listeners
    arguments = host.run("ps -o args= -C slapd").stdout
    assert "-h ldap://127.0.0.1/ ldapi:///" in arguments, arguments
    whoami = host.run("ldapwhoami -Q -Y EXTERNAL -H ldapi:///")
    assert whoami.stdout.strip() == "dn:gidNumber=0+uidNumber=0,cn=peercred,cn=external,cn=auth", whoami.stderr


def test_another_host_cannot_reach_the_directory(host):
    probe = testinfra.get_host("ansible://pharos-directory-probe",
                               ansible_inventory=os.environ["MOLECULE_INVENTORY_FILE"])
    address = host.run("hostname -I").stdout.split()[0]
    for target in ("pharos-directory-login", address):
        for url in ("ldap://%s/" % target, "ldaps://%s/" % target):
            attempt = probe.run("ldapsearch -x -H %s -s base -b '' namingContexts" % url)
            assert attempt.rc != 0
            assert "Can't contact LDAP server" in attempt.stderr, attempt.stderr
    # The probe does reach the login node: the refusal is slapd's listeners, not the network.
    assert probe.run("ping -c1 -W2 pharos-directory-login").rc == 0


def test_no_administrator_password_is_left_in_the_configuration(directory):
    passwords = directory.search("root", "cn=config", "olcRootPW")
    assert passwords.rc == 0, passwords.stderr
    assert "dn: olcDatabase={0}config,cn=config" in passwords.stdout
    assert "dn: olcDatabase={1}mdb,cn=config" in passwords.stdout
    assert "olcRootPW" not in passwords.stdout
    database = directory.search("root", "olcDatabase={1}mdb,cn=config", "olcRootDN", "olcSuffix", scope="base")
    assert "olcRootDN: gidNumber=0+uidNumber=0,cn=peercred,cn=external,cn=auth" in database.stdout
    assert "olcSuffix: %s" % directory.suffix in database.stdout


def test_the_package_placeholder_suffix_is_gone(directory):
    suffixes = directory.search("root", "cn=config", "olcSuffix")
    assert suffixes.rc == 0, suffixes.stderr
    assert "olcSuffix: %s" % directory.suffix in suffixes.stdout
    assert "dc=nodomain" not in suffixes.stdout


# ------------------------------------------------------------------ pharos-agent


def test_pharos_agent_writes_accounts_and_their_posix_attributes(directory):
    change = directory.modify("agent", "dn: %s\nchangetype: modify\nreplace: loginShell\nloginShell: /bin/sh\n-\n"
                              "replace: uidNumber\nuidNumber: %d\n" % (directory.member("pharosalice"),
                                                                       directory.uid_max))
    assert change.rc == 0, change.stderr


def test_pharos_agent_writes_groups(directory):
    change = directory.modify("agent", "dn: cn=pharos_p_probe,%s\nchangetype: modify\nadd: memberUid\n"
                              "memberUid: pharosalice\n" % directory.groups)
    assert change.rc == 0, change.stderr


def test_pharos_agent_cannot_write_ssh_keys(directory):
    change = directory.modify("agent", "dn: %s\nchangetype: modify\nadd: objectClass\nobjectClass: ldapPublicKey\n-\n"
                              "add: sshPublicKey\nsshPublicKey: ssh-ed25519 AAAAagent planted\n"
                              % directory.member("pharosalice"))
    assert refused(change), (change.rc, change.stderr)


@pytest.mark.parametrize(("attribute", "value"), [
    ("sshPublicKey", "ssh-ed25519 AAAAagent planted"),
    ("userPassword", "agent-chosen-password"),
])
def test_pharos_agent_cannot_add_a_member_carrying_what_it_may_not_write(directory, attribute, value):
    ldif = directory.member_ldif("pharosplanted", directory.uid_min + 9, directory.gid_min)
    if attribute == "sshPublicKey":
        ldif += "objectClass: ldapPublicKey\n"
    change = directory.add("agent", ldif + "%s: %s\n" % (attribute, value))
    assert refused(change), (change.rc, change.stderr)
    assert "uid: pharosplanted" not in directory.members()
    # The same entry without that attribute is the agent's to add.
    plain = directory.add("agent", ldif)
    assert plain.rc == 0, plain.stderr
    removed = directory.delete("agent", directory.member("pharosplanted"))
    assert removed.rc == 0, removed.stderr


def test_pharos_agent_cannot_replace_a_member_with_one_carrying_a_key(directory):
    """Delete and re-add: the agent may remove a member, but not bring it back with a key."""
    member = directory.member_ldif("pharosreplaced", directory.uid_min + 8, directory.gid_min)
    assert directory.add("agent", member).rc == 0
    assert directory.delete("agent", directory.member("pharosreplaced")).rc == 0
    change = directory.add("agent", member + "objectClass: ldapPublicKey\nsshPublicKey: ssh-ed25519 AAAAreplaced\n")
    assert refused(change), (change.rc, change.stderr)
    assert "uid: pharosreplaced" not in directory.members()


def test_pharos_agent_cannot_touch_the_service_entries(directory):
    change = directory.modify("agent", "dn: %s\nchangetype: modify\nreplace: description\ndescription: x\n"
                              % directory.reader)
    assert refused(change), (change.rc, change.stderr)


# ------------------------------------------------------------------ pharos-ssh-access


def test_pharos_ssh_access_binds_as_its_service_entry_through_its_unix_user(directory):
    whoami = directory.host.run("runuser -u pharos-ssh-access -- ldapwhoami -Q -Y EXTERNAL -H ldapi:///")
    assert whoami.stdout.strip() == "dn:cn=pharos-ssh-access," + directory.services


def test_pharos_ssh_access_writes_a_members_keys(directory):
    change = directory.modify("ssh-access", "dn: %s\nchangetype: modify\nadd: objectClass\nobjectClass: ldapPublicKey\n-\n"
                              "add: sshPublicKey\nsshPublicKey: ssh-ed25519 AAAAkey pharosalice@probe\n"
                              % directory.member("pharosalice"))
    assert change.rc == 0, change.stderr
    keys = directory.search("reader", directory.member("pharosalice"), "sshPublicKey", scope="base")
    assert "sshPublicKey: ssh-ed25519 AAAAkey pharosalice@probe" in keys.stdout


@pytest.mark.parametrize("attribute, value", [("uidNumber", "5000002"), ("gidNumber", "5500002"),
                                               ("loginShell", "/bin/zsh"), ("uid", "mallory")])
def test_pharos_ssh_access_cannot_write_identities(directory, attribute, value):
    change = directory.modify("ssh-access", "dn: %s\nchangetype: modify\nreplace: %s\n%s: %s\n"
                              % (directory.member("pharosalice"), attribute, attribute, value))
    assert refused(change), (change.rc, change.stderr)


def test_pharos_ssh_access_cannot_touch_groups(directory):
    change = directory.modify("ssh-access", "dn: cn=pharos_p_probe,%s\nchangetype: modify\nadd: memberUid\n"
                              "memberUid: mallory\n" % directory.groups)
    assert refused(change), (change.rc, change.stderr)
    new_group = directory.add("ssh-access", "dn: cn=pharos_p_planted,%s\nobjectClass: posixGroup\n"
                              "cn: pharos_p_planted\ngidNumber: %d\n" % (directory.groups, directory.project_gid_max))
    assert refused(new_group), (new_group.rc, new_group.stderr)


def test_pharos_ssh_access_cannot_create_members(directory):
    change = directory.add("ssh-access", directory.member_ldif("mallory", directory.uid_min + 7, directory.gid_min))
    assert refused(change), (change.rc, change.stderr)


# ------------------------------------------------------------------ pharos-keys (sshd's key command)


def test_the_key_commands_user_binds_as_pharos_keys(directory):
    whoami = directory.host.run("runuser -u pharos-keys -- ldapwhoami -Q -Y EXTERNAL -H ldapi:///")
    assert whoami.stdout.strip() == "dn:cn=pharos-keys," + directory.services


def test_pharos_keys_reads_members_and_their_keys_and_nothing_else(directory):
    people = directory.search("keys", directory.people, "uid", "uidNumber", "sshPublicKey")
    assert people.rc == 0, people.stderr
    assert "uid: pharosalice" in people.stdout
    for hidden in (directory.groups, directory.services):
        found = directory.search("keys", hidden)
        assert "dn: cn=" not in found.stdout, (hidden, found.stdout)



# ------------------------------------------------------------------ sssd-reader and anonymous


def test_sssd_reader_reads_members_groups_and_keys(directory):
    people = directory.search("reader", directory.people, "uid", "uidNumber", "gidNumber", "sshPublicKey")
    assert people.rc == 0, people.stderr
    assert "uid: pharosalice" in people.stdout
    groups = directory.search("reader", directory.groups, "cn", "gidNumber")
    assert "cn: pharos_p_probe" in groups.stdout


# The two read-only identities: SSSD's, and sshd's key command (pharos-keys), which does not
# even see the groups.
@pytest.mark.parametrize("reader, what", [(reader, what) for reader in ("reader", "keys")
                                          for what in ("loginShell", "sshPublicKey", "group", "new member")
                                          if (reader, what) != ("keys", "group")])
def test_the_readers_write_nothing(directory, reader, what):
    if what == "group":
        change = directory.modify(reader, "dn: cn=pharos_p_probe,%s\nchangetype: modify\nadd: memberUid\n"
                                  "memberUid: mallory\n" % directory.groups)
    elif what == "new member":
        change = directory.add(reader, directory.member_ldif("mallory", directory.uid_min + 8, directory.gid_min))
    else:
        change = directory.modify(reader, "dn: %s\nchangetype: modify\nreplace: %s\n%s: x\n"
                                  % (directory.member("pharosalice"), what, what))
    assert refused(change), (change.rc, change.stderr)


def test_anonymous_reads_nothing_under_ou_pharos(directory):
    for base in (directory.pharos, directory.people, directory.groups, directory.services):
        found = directory.search("anonymous", base)
        assert "dn:" not in found.stdout
        assert found.rc == NO_SUCH_OBJECT, (base, found.rc, found.stderr)


def test_the_service_passwords_cannot_be_read_even_by_the_readers(directory):
    # A failure below names who saw a password, never shows the hash it saw.
    # Root sees them: the entries hold passwords for the readers not to see.
    for entry in (directory.agent, directory.reader):
        held = directory.search("root", entry, "userPassword", scope="base")
        assert held.rc == 0, (entry, held.rc, held.stderr)
        holds_password = "userPassword:" in held.stdout
        assert holds_password, entry
    # Each identity reads its own entry, so the search succeeds and finds it, without the password.
    for identity, entry in (("reader", directory.reader), ("agent", directory.agent)):
        found = directory.search(identity, entry, "objectClass", "userPassword", scope="base")
        assert found.rc == 0, (identity, found.rc, found.stderr)
        assert found.stdout.startswith("dn: %s\n" % entry), identity
        assert "objectClass: simpleSecurityObject" in found.stdout.splitlines(), identity
        shows_password = "userPassword" in found.stdout
        assert not shows_password, identity
    # Another service's entry is hidden altogether, its password with it.
    for identity, entry in (("reader", directory.agent), ("agent", directory.reader), ("ssh-access", directory.agent)):
        hidden = directory.search(identity, entry, "userPassword", scope="base")
        assert hidden.rc == NO_SUCH_OBJECT, (identity, entry, hidden.rc, hidden.stderr)
        shows_password = "userPassword" in hidden.stdout
        assert not shows_password, (identity, entry)


# ------------------------------------------------------------------ ID ranges


@pytest.mark.parametrize("identity", ["agent", "root"])
@pytest.mark.parametrize("attribute, offset", [("uidNumber", -1), ("uidNumber", +1), ("gidNumber", -1)])
def test_any_writer_setting_an_id_outside_the_range_is_refused(directory, identity, attribute, offset):
    value = directory.uid_min + offset if offset < 0 else directory.uid_max + offset
    if attribute == "gidNumber":
        value = directory.gid_min + offset
    change = directory.modify(identity, "dn: %s\nchangetype: modify\nreplace: %s\n%s: %d\n"
                              % (directory.member("pharosalice"), attribute, attribute, value))
    assert refused(change, CONSTRAINT_VIOLATION), (change.rc, change.stderr)
    assert "constraint" in change.stderr


def test_a_project_group_above_the_range_is_refused(directory):
    change = directory.add("agent", "dn: cn=pharos_p_high,%s\nobjectClass: posixGroup\ncn: pharos_p_high\n"
                           "gidNumber: %d\n" % (directory.groups, directory.project_gid_max + 1))
    assert refused(change, CONSTRAINT_VIOLATION), (change.rc, change.stderr)


def test_a_member_created_outside_the_range_is_refused(directory):
    change = directory.add("agent", directory.member_ldif("pharoslow", directory.uid_min - 1, directory.gid_min))
    assert refused(change, CONSTRAINT_VIOLATION), (change.rc, change.stderr)
