"""The pure planners of plugins/module_utils/ldap.py: ordering, diffing, passwords, connections.

Stored values below are as slapd 2.6.10 of Debian trixie returned them (ldapsearch -Y EXTERNAL
on cn=config of a fresh package install and after the openldap role).
"""

import sys

import ldap3
import pytest

from conftest import PROJECT

sys.path.insert(0, str(PROJECT / "collections"))

from ansible_collections.pharos.hpc.plugins.module_utils import ldap  # noqa: E402 pylint: disable=wrong-import-position

ROOT_MANAGE = 'to * by dn.exact=gidNumber=0+uidNumber=0,cn=peercred,cn=external,cn=auth manage by * break'

# olcAccess of olcDatabase={1}mdb,cn=config as Debian's slapd package leaves it.
PACKAGE_ACL = [
    "{0}to attrs=userPassword by self write by anonymous auth by * none",
    "{1}to attrs=shadowLastChange by self write by * read",
    "{2}to * by * read",
]


@pytest.mark.parametrize("value, expected", [
    ("{0}to * by * read", (0, "to * by * read")),
    ("{12}constraint", (12, "constraint")),
    ("{-1}frontend", (-1, "frontend")),
    ("to * by * read", (None, "to * by * read")),
    ("{SSHA}abc", (None, "{SSHA}abc")),
    ("x{1}y", (None, "x{1}y")),
])
def test_order_prefix_is_split_only_when_it_is_an_index(value, expected):
    assert ldap.strip_order_prefix(value) == expected


def test_ordered_values_follow_slapds_indices_not_the_order_they_were_read_in():
    assert ldap.ordered_values(["{2}c", "{0}a", "{1}b"]) == ["a", "b", "c"]


def test_an_unchanged_acl_list_plans_no_change_even_with_other_whitespace():
    desired = ["to attrs=userPassword  by self write by anonymous auth by * none",
               "to attrs=shadowLastChange by self write by * read", "to *   by * read"]
    plan = ldap.plan_acl(desired, PACKAGE_ACL)
    assert not plan["changed"]
    assert plan["before"] == plan["after"]


def test_the_acl_list_is_replaced_as_one_set_with_fresh_indices():
    desired = [ROOT_MANAGE, "to attrs=userPassword by anonymous auth by * none", "to * by * none"]
    plan = ldap.plan_acl(desired, PACKAGE_ACL)
    assert plan["changed"]
    assert plan["values"] == ["{0}" + desired[0], "{1}" + desired[1], "{2}" + desired[2]]
    assert plan["before"].splitlines()[0] == "{0}to attrs=userPassword by self write by anonymous auth by * none"
    assert plan["after"].splitlines()[2] == "{2}to * by * none"


def test_a_rule_inserted_by_hand_is_a_change_that_removes_it():
    desired = ["to attrs=userPassword by anonymous auth by * none", "to * by * none"]
    drifted = ["{0}to attrs=userPassword by anonymous auth by * none", "{1}to * by * write", "{2}to * by * none"]
    plan = ldap.plan_acl(desired, drifted)
    assert plan["changed"]
    assert "{1}to * by * write" in plan["before"]
    assert "write" not in plan["after"]


def test_the_same_rules_in_another_order_are_a_change():
    desired = ["to * by * none", "to attrs=userPassword by anonymous auth by * none"]
    current = ["{0}to attrs=userPassword by anonymous auth by * none", "{1}to * by * none"]
    assert ldap.plan_acl(desired, current)["changed"]


def test_a_missing_entry_is_planned_as_one_add_without_empty_attributes():
    plan = ldap.plan_entry("ou=people,ou=pharos,dc=pharos,dc=lab",
                           {"objectClass": ["organizationalUnit"], "ou": ["people"], "description": []}, None)
    assert plan["action"] == "add"
    assert sorted(name for _operation, name, _values in plan["changes"]) == ["objectClass", "ou"]
    assert plan["before"] == {}


def test_missing_values_are_added_and_values_the_role_does_not_name_are_kept():
    current = {"objectClass": ["top", "organizationalUnit"], "ou": ["people"]}
    plan = ldap.plan_entry("ou=people", {"objectclass": ["organizationalUnit"], "OU": ["people"]}, current)
    assert plan["action"] == "none"
    assert plan["changes"] == []
    plan = ldap.plan_entry("ou=people", {"description": ["Members"]}, current)
    assert plan["changes"] == [("add", "description", ["Members"])]


def test_exact_attribute_is_replaced_when_it_holds_other_values():
    current = {"olcRootDN": ["cn=admin,dc=nodomain"]}
    plan = ldap.plan_entry("olcDatabase={1}mdb,cn=config", {"olcRootDN": ["cn=admin,dc=pharos,dc=lab"]}, current,
                           exact=["olcRootDN"], ordered=True)
    assert plan["changes"] == [("replace", "olcRootDN", ["cn=admin,dc=pharos,dc=lab"])]
    assert plan["before"] == {"olcRootDN": ["cn=admin,dc=nodomain"]}
    assert plan["after"] == {"olcRootDN": ["cn=admin,dc=pharos,dc=lab"]}


def test_an_exact_empty_list_deletes_the_attribute_and_is_then_settled():
    current = {"olcRootPW": ["{SSHA}ekrBryfV4shIF8SENX+2qtbxx6CheJUN"], "olcSuffix": ["dc=pharos,dc=lab"]}
    plan = ldap.plan_entry("olcDatabase={1}mdb,cn=config", {"olcRootPW": []}, current, exact=["olcRootPW"])
    assert plan["changes"] == [("delete", "olcRootPW", [])]
    settled = ldap.plan_entry("olcDatabase={1}mdb,cn=config", {"olcRootPW": []}, {"olcSuffix": ["dc=pharos,dc=lab"]},
                              exact=["olcRootPW"])
    assert settled["action"] == "none"


def test_ordered_config_values_compare_without_indices_but_with_their_order():
    current = {"olcModuleLoad": ["{0}back_mdb", "{1}constraint"]}
    assert ldap.plan_entry("cn=module{0},cn=config", {"olcModuleLoad": ["constraint"]}, current,
                           ordered=True)["action"] == "none"
    swapped = ldap.plan_entry("cn=module{0},cn=config", {"olcModuleLoad": ["constraint", "back_mdb"]}, current,
                              exact=["olcModuleLoad"], ordered=True)
    assert swapped["changes"] == [("replace", "olcModuleLoad", ["constraint", "back_mdb"])]


def test_exact_names_an_attribute_without_values_is_refused():
    with pytest.raises(ValueError, match="olcRootPW"):
        ldap.plan_entry("cn=x", {"cn": ["x"]}, {}, exact=["olcRootPW"])


@pytest.mark.parametrize("current_rdn, wanted_rdn, matches", [
    ("cn={4}openssh-lpk", "cn=openssh-lpk", True),
    ("CN={4}OpenSSH-LPK", "cn=openssh-lpk", True),
    ("olcOverlay={0}constraint", "olcOverlay=constraint", True),
    ("olcOverlay={1}constraint", "olcOverlay={0}constraint", False),
    ("olcDatabase={1}mdb", "olcDatabase={1}mdb", True),
    ("cn={3}inetorgperson", "cn=openssh-lpk", False),
    ("ou=openssh-lpk", "cn=openssh-lpk", False),
])
def test_an_rdn_without_index_finds_its_ordered_entry(current_rdn, wanted_rdn, matches):
    assert ldap.rdn_matches(current_rdn, wanted_rdn) is matches


def test_a_diff_never_shows_the_password():
    text = ldap.render_entry("cn=pharos-agent,ou=services", {"cn": ["pharos-agent"], "userPassword": ["{SSHA}x"]},
                             "userPassword", "new")
    assert "{SSHA}" not in text
    assert "userPassword: <secret, not shown> (new)" in text
    assert text.startswith("dn: cn=pharos-agent,ou=services\ncn: pharos-agent\n")


@pytest.mark.parametrize("held, accepted, needed", [
    (False, False, "set"),       # a new entry, or one that has never had a password
    (True, True, "unchanged"),   # slapd accepts a bind with it: whatever the hash, nothing to do
    (True, False, "changed"),    # another password, or the value a stopped run left behind
])
def test_a_password_is_set_unless_a_bind_with_it_succeeds(held, accepted, needed):
    assert ldap.plan_password(held, accepted) == needed


@pytest.mark.parametrize("attributes, held", [
    (None, False),
    ({"cn": ["pharos-agent"]}, False),
    ({"cn": ["pharos-agent"], "userPassword": ["{CRYPT}$6$x$y"]}, True),
    ({"userpassword": ["{SSHA}x"]}, True),
])
def test_a_held_password_is_found_whatever_the_case_of_its_name(attributes, held):
    assert ldap.holds_password(attributes) is held


def test_the_value_held_until_slapd_sets_the_password_is_under_no_scheme_slapd_knows():
    value = ldap.unusable_password()
    scheme = value[:value.index("}") + 1]
    # Schemes slapd 2.6 knows, built in or from its contrib modules.
    assert scheme.upper() not in ("{SSHA}", "{SHA}", "{SMD5}", "{MD5}", "{CRYPT}", "{CLEARTEXT}", "{SASL}",
                                  "{ARGON2}", "{PBKDF2}", "{PBKDF2-SHA256}", "{PBKDF2-SHA512}", "{SSHA256}",
                                  "{SSHA512}", "{SHA256}", "{SHA512}", "{TOTP1}", "{TOTP256}", "{TOTP512}")
    assert len(value) - len(scheme) >= 32
    assert ldap.unusable_password() != value


@pytest.mark.parametrize("uri, bind_dn, password, problem", [
    ("ldapi:///", None, None, None),
    ("ldap://127.0.0.1/", "cn=pharos-agent", "secret", None),
    ("ldap://[::1]:389/", "cn=pharos-agent", "secret", None),
    ("ldap://localhost:389", "cn=pharos-agent", "secret", None),
    ("ldap://login01.example.org/", "cn=pharos-agent", "secret", "loopback"),
    ("ldap://10.0.0.5/", "cn=pharos-agent", "secret", "loopback"),
    ("ldaps://127.0.0.1/", "cn=pharos-agent", "secret", "only ldapi"),
    ("ldap://127.0.0.1/", None, None, "SASL EXTERNAL needs ldapi"),
    ("ldapi:///", "cn=pharos-agent", None, "go together"),
])
def test_simple_binds_are_refused_off_loopback(uri, bind_dn, password, problem):
    found = ldap.connection_problem(uri, bind_dn, password)
    if problem is None:
        assert found is None
    else:
        assert problem in found
        if password:
            assert password not in found


@pytest.mark.parametrize("uri, url", [
    ("ldapi:///", "ldapi://%2Frun%2Fslapd%2Fldapi"),
    ("ldapi://%2Fvar%2Frun%2Fslapd%2Fldapi", "ldapi://%2Fvar%2Frun%2Fslapd%2Fldapi"),
    ("ldap://127.0.0.1/", "ldap://127.0.0.1"),
    ("ldap://127.0.0.1:389/", "ldap://127.0.0.1:389"),
    ("ldap://[::1]/", "ldap://[::1]"),
])
def test_uri_is_given_to_ldap3_in_the_form_its_server_parses(uri, url):
    assert ldap.ldap3_url(uri, "/run/slapd/ldapi") == url


@pytest.mark.parametrize("uri", ["ldap://127.0.0.1/", "ldap://127.0.0.1:389/"])
def test_simple_bind_uri_with_a_trailing_slash_reaches_the_loopback_host(uri):
    server = ldap3.Server(ldap.ldap3_url(uri, "/run/slapd/ldapi"))
    assert (server.host, server.port) == ("127.0.0.1", 389)


def test_a_diff_never_shows_an_administrator_password_hash():
    text = ldap.render_entry("olcDatabase={1}mdb,cn=config", {"olcRootPW": ["{SSHA}ekrBryfV4shIF8SENX+2qtbxx6CheJUN"]})
    assert "ekrB" not in text
    assert "olcRootPW: <secret, not shown>" in text


def test_an_entry_that_does_not_exist_renders_as_nothing():
    assert ldap.render_entry(None, {}) == ""


def test_a_retired_value_is_deleted_by_its_stored_form_and_the_sites_values_stay():
    site_rule = '"uid=([^,]*),cn=digest-md5,cn=auth" "uid=$1,ou=people,dc=example"'
    old, new = '"gidNumber=7\\+uidNumber=7,cn=peercred,cn=external,cn=auth" "cn=agent"', \
        '"^gidNumber=7\\+uidNumber=7,cn=peercred,cn=external,cn=auth$" "cn=agent"'
    current = {"olcAuthzRegexp": ["{0}" + site_rule, "{1}" + old]}
    plan = ldap.plan_entry("cn=config", {"olcAuthzRegexp": [new]}, current, ordered=True,
                           retired={"olcAuthzRegexp": [old]})
    assert plan["changes"] == [("delete", "olcAuthzRegexp", ["{1}" + old]), ("add", "olcAuthzRegexp", [new])]
    assert plan["before"] == {"olcAuthzRegexp": [site_rule, old]}
    assert plan["after"] == {"olcAuthzRegexp": [site_rule, new]}
    settled = {"olcAuthzRegexp": ["{0}" + site_rule, "{1}" + new]}
    assert ldap.plan_entry("cn=config", {"olcAuthzRegexp": [new]}, settled, ordered=True,
                           retired={"olcAuthzRegexp": [old]})["action"] == "none"
