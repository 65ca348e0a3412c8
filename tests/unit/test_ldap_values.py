"""The filters that turn Site values into slapd's: ID ranges as regexes, LDIF as attributes."""

import re
import sys

import pytest

from conftest import PROJECT

sys.path.insert(0, str(PROJECT / "collections"))

from ansible.errors import AnsibleFilterError  # noqa: E402 pylint: disable=wrong-import-position
from ansible_collections.pharos.hpc.plugins.filter import ldap_values  # noqa: E402 pylint: disable=wrong-import-position


@pytest.mark.parametrize("minimum, maximum", [
    (0, 0), (0, 9), (3, 7), (7, 123), (10, 99), (19, 1000), (99, 101), (120, 4567),
    (1000, 1999), (1234, 9876), (5, 5), (900, 900), (1, 10000),
])
def test_range_regex_matches_exactly_the_numbers_of_the_range(minimum, maximum):
    pattern = re.compile(ldap_values.integer_range_regex([[minimum, maximum]]))
    for number in range(0, 12000):
        assert bool(pattern.match(str(number))) == (minimum <= number <= maximum), number


def test_the_sites_member_uid_range_is_held_at_both_edges():
    pattern = re.compile(ldap_values.integer_range_regex([[5000000, 5499999]]))
    for number in (5000000, 5000001, 5123456, 5499998, 5499999):
        assert pattern.match(str(number))
    for text in ("4999999", "5500000", "50000000", "05000000", "+5000000", "5000000 ", "-5000000", "0", ""):
        assert not pattern.match(text)


def test_member_and_project_gid_ranges_combine_into_one_regex():
    pattern = re.compile(ldap_values.integer_range_regex([[5500000, 5549999], [5550000, 5599999]]))
    assert pattern.match("5500000") and pattern.match("5599999") and pattern.match("5550000")
    assert not pattern.match("5499999") and not pattern.match("5600000")


def test_regex_is_posix_extended_without_perl_groups():
    assert "(?" not in ldap_values.integer_range_regex([[5000000, 5499999]])


@pytest.mark.parametrize("ranges", [[[5, 4]], [[-1, 4]], [["a", 4]], [[1, 2, 3]]])
def test_a_bad_range_is_refused_with_its_values(ranges):
    with pytest.raises(AnsibleFilterError):
        ldap_values.integer_range_regex(ranges)


def test_the_openssh_lpk_ldif_of_the_role_parses_into_one_schema_entry(project):
    text = (project / "roles/openldap/files/openssh-lpk.ldif").read_text()
    entry = ldap_values.ldif_entry(text)
    assert entry["dn"] == "cn=openssh-lpk,cn=schema,cn=config"
    attributes = entry["attributes"]
    assert attributes["objectClass"] == ["olcSchemaConfig"]
    assert "1.3.6.1.4.1.24552.500.1.1.1.13 NAME 'sshPublicKey'" in attributes["olcAttributeTypes"][0]
    assert "1.3.6.1.4.1.24552.500.1.1.2.0 NAME 'ldapPublicKey'" in attributes["olcObjectClasses"][0]


@pytest.mark.parametrize("text", ["cn: x\n", "dn: cn=a\ncn: a\n folded\n", "dn: cn=a\ncn:: YQ==\n",
                                  "dn: cn=a\n\ndn: cn=b\n"])
def test_ldif_the_filter_cannot_read_is_refused(text):
    with pytest.raises(AnsibleFilterError):
        ldap_values.ldif_entry(text)


def test_ldapsearch_output_becomes_one_mapping_per_entry_with_value_lists():
    output = ("dn: olcDatabase={1}mdb,cn=config\nolcDbDirectory: /var/lib/ldap\nolcSuffix: dc=example\n\n"
              "dn: olcDatabase={2}mdb,cn=config\nolcSuffix:: ZGM9cGhhcm9zLGRjPWxhYg==\n"
              "olcDbIndex: uid eq\nolcDbIndex: cn eq\n\n")
    assert ldap_values.ldif_entries(output) == [
        {"dn": "olcDatabase={1}mdb,cn=config", "olcDbDirectory": ["/var/lib/ldap"], "olcSuffix": ["dc=example"]},
        {"dn": "olcDatabase={2}mdb,cn=config", "olcSuffix": ["dc=pharos,dc=lab"], "olcDbIndex": ["uid eq", "cn eq"]},
    ]


def test_no_output_is_no_entry():
    assert ldap_values.ldif_entries("") == []
