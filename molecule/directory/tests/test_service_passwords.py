"""The service entries' passwords are hashed by slapd, with its own scheme, and checked with a bind;
check mode predicts them, and a rule added by hand to the access list, exactly as the run then
makes them.

slapd's default scheme, {SSHA}, is also what a client would write, so these tests give slapd
another one, {CRYPT} with SHA-512 salts ($6$), built into Debian's slapd: a value in that scheme
can only be slapd's own work. The fixture puts slapd's configuration back afterwards.
"""

import base64

import pytest
from root_files import write_root_only

testinfra_hosts = ["ansible://pharos-directory-login"]

SERVICE_TASK = "Keep the database's settings and the Pharos entries"
ACL_TASK = "Set the database's whole ordered access list"
PLANTED_RULE = "to * by * write"
CRYPT_SHA512 = "{CRYPT}$6$"
INVALID_CREDENTIALS = 49
INSUFFICIENT_ACCESS = 50
# What ldap_entry leaves in an entry it created when the run stops before slapd sets the password.
UNSET_VALUE = "{UNSET}b0JxqS3VfV1Q2s7nR4bE9kWmXyZ0aLc"


class Services:
    """The service entries with a password, and root's and each entry's own view of them."""

    def __init__(self, host):
        self.host = host
        site = host.ansible.get_variables()
        services = "ou=services,ou=pharos," + site["pharos_ldap_suffix"]
        self.agent = "cn=pharos-agent," + services
        self.reader = "cn=sssd-reader," + services
        self.passwords = {self.agent: site["openldap_agent_password"],
                          self.reader: site["openldap_sssd_reader_password"]}
        # Passwords reach the tools through 0600 files, never through argv.
        self.files = {}
        for dn, password in list(self.passwords.items()) + [("unset", UNSET_VALUE)]:
            path = "/root/.pharos-password-%s.pw" % dn.split(",")[0].split("=")[-1]
            self.files[dn] = write_root_only(host, path, password)

    def as_root(self, tool, arguments="", ldif=""):
        command = "%s -Q -Y EXTERNAL -H ldapi:/// %s" % (tool, arguments)
        if ldif:
            command += " <<'LDIF'\n%s\nLDIF" % ldif.strip()
        return self.host.run(command)

    def stored_password(self, dn):
        """The entry's userPassword as slapd holds it, read as root; None when the entry is absent."""
        found = self.as_root("ldapsearch", "-LLL -o ldif-wrap=no -s base -b '%s' userPassword" % dn)
        if found.rc == 32:
            return None
        assert found.rc == 0, (dn, found.rc, found.stderr)
        assert found.stdout.startswith("dn: %s\n" % dn), dn
        for line in found.stdout.splitlines():
            if line.startswith("userPassword:: "):
                return base64.b64decode(line.split(" ", 1)[1]).decode()
            if line.startswith("userPassword: "):
                return line.split(" ", 1)[1]
        raise AssertionError("%s holds no userPassword" % dn)

    def bind(self, dn, password_of=None):
        """A simple bind as the entry on loopback, as the Site agent binds."""
        return self.host.run("ldapwhoami -x -H ldap://127.0.0.1/ -D '%s' -y %s"
                             % (dn, self.files[password_of or dn]))


@pytest.fixture(scope="module")
def services(host):
    services = Services(host)
    frontend = services.as_root("ldapsearch", "-LLL -o ldif-wrap=no -s base -b 'olcDatabase={-1}frontend,cn=config' "
                                              "olcPasswordHash")
    assert frontend.rc == 0, frontend.stderr
    # The role leaves slapd's scheme to the Site (docs/directory.md, "Service passwords").
    assert "olcPasswordHash" not in frontend.stdout, frontend.stdout
    configured = services.as_root("ldapmodify", ldif="""
dn: olcDatabase={-1}frontend,cn=config
changetype: modify
add: olcPasswordHash
olcPasswordHash: {CRYPT}

dn: cn=config
changetype: modify
add: olcPasswordCryptSaltFormat
olcPasswordCryptSaltFormat: $6$%.16s
""")
    assert configured.rc == 0, configured.stderr
    yield services
    restored = services.as_root("ldapmodify", ldif="""
dn: olcDatabase={-1}frontend,cn=config
changetype: modify
delete: olcPasswordHash

dn: cn=config
changetype: modify
delete: olcPasswordCryptSaltFormat
""")
    assert restored.rc == 0, restored.stderr
    services.host.run("rm -f %s" % " ".join(services.files.values()))


@pytest.fixture(scope="module")
def interrupted(services, run_site):
    """The agent's entry as a run leaves it that stopped between creating the entry and slapd
    setting its password, and the reader's entry gone, as on a Site that never had it."""
    # Settle first what earlier tests changed on the host (local accounts SSSD must filter).
    run_site()
    left = services.as_root("ldapmodify", ldif="dn: %s\nchangetype: modify\nreplace: userPassword\nuserPassword: %s\n"
                                                % (services.agent, UNSET_VALUE))
    assert left.rc == 0, left.stderr
    removed = services.as_root("ldapdelete", "'%s'" % services.reader)
    assert removed.rc == 0, removed.stderr
    return services


def access_rules(services):
    found = services.as_root("ldapsearch", "-LLL -o ldif-wrap=no -s base -b 'olcDatabase={1}mdb,cn=config' olcAccess")
    assert found.rc == 0, found.stderr
    return found.stdout


@pytest.fixture(scope="module")
def runs(interrupted, run_site):
    """With a rule someone added by hand to the access list, site.yml in check mode, then for
    real, then again: what each changed."""
    planted = interrupted.as_root("ldapmodify", ldif="dn: olcDatabase={1}mdb,cn=config\nchangetype: modify\n"
                                                     "add: olcAccess\nolcAccess: {1}%s\n" % PLANTED_RULE)
    assert planted.rc == 0, planted.stderr
    assert PLANTED_RULE in access_rules(interrupted)
    predicted = run_site("--check", "--diff")
    after_check = {dn: interrupted.stored_password(dn) for dn in interrupted.passwords}
    made = run_site("--diff")
    again = run_site()
    return dict(predicted=predicted, after_check=after_check, made=made, again=again)


def test_the_value_held_until_slapd_sets_the_password_opens_no_bind(interrupted):
    for password_of in (interrupted.agent, "unset"):
        attempt = interrupted.bind(interrupted.agent, password_of)
        assert attempt.rc != 0 and "Invalid credentials (%d)" % INVALID_CREDENTIALS in attempt.stderr, \
            (password_of, attempt.rc, attempt.stderr)


def test_check_mode_predicts_the_passwords_and_writes_nothing(interrupted, runs):
    predicted = runs["predicted"].changed()
    assert list(predicted) == [ACL_TASK, SERVICE_TASK], predicted
    unchanged = runs["after_check"] == {interrupted.agent: UNSET_VALUE, interrupted.reader: None}
    assert unchanged, "check mode wrote a service entry or its password"


def test_the_run_sets_what_check_mode_predicted(runs):
    assert runs["made"].changed() == runs["predicted"].changed()


def test_a_hand_changed_acl_is_predicted_by_check_and_restored_by_the_run(interrupted, runs):
    predicted = runs["predicted"].changed()[ACL_TASK]
    assert PLANTED_RULE in predicted["before"] and PLANTED_RULE not in predicted["after"], predicted
    rules = access_rules(interrupted)
    assert PLANTED_RULE not in rules
    assert "olcAccess: {9}to * by * none" in rules
    assert "olcAccess: {10}" not in rules
    # Restored for real: the planted rule let any bound identity write anywhere; SSSD's reader
    # is refused again. (Anonymous writes are refused by slapd before any rule, with 8.)
    change = interrupted.host.run("ldapmodify -x -H ldap://127.0.0.1/ -D '%s' -y %s <<'LDIF'\ndn: %s\n"
                                  "changetype: modify\nreplace: description\ndescription: written by the reader\nLDIF"
                                  % (interrupted.reader, interrupted.files[interrupted.reader], interrupted.agent))
    assert change.rc == INSUFFICIENT_ACCESS, (change.rc, change.stderr)


def test_the_passwords_are_hashed_by_slapd_with_its_own_scheme_and_bind(interrupted, runs):
    assert runs["made"].changed()
    for dn in interrupted.passwords:
        scheme = interrupted.stored_password(dn)[:len(CRYPT_SHA512)]
        assert scheme == CRYPT_SHA512, dn
        bound = interrupted.bind(dn)
        assert bound.rc == 0, (dn, bound.stderr)
        assert bound.stdout.strip() == "dn:" + dn


def test_a_second_run_changes_nothing(runs):
    assert runs["again"].changed() == {}


def test_no_password_or_hash_is_shown(interrupted, runs):
    diffs = runs["made"].changed()[SERVICE_TASK]
    assert len(diffs) == 2, diffs
    for diff in diffs:
        assert "userPassword: <secret, not shown> (new)" in diff["after"], diff
    secrets = dict(("password of " + dn, password) for dn, password in interrupted.passwords.items())
    secrets.update({"value held until set": UNSET_VALUE, "a {CRYPT} hash": CRYPT_SHA512, "an {SSHA} hash": "{SSHA}"})
    for run in ("predicted", "made", "again"):
        output = runs[run].stdout + runs[run].stderr
        shown = [what for what, secret in secrets.items() if secret in output]
        assert shown == [], (run, shown)
