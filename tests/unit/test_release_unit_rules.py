"""A release's unit files read as systemd reads them (unit_rules.py): each way a line that
systemd reads otherwise than it is written could run a release's code beyond its account."""

import re
from pathlib import Path

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils.release import unit_rules

PROJECT = Path(__file__).resolve().parents[2]
NAME = "units/pharos-ssh-access-agent.service"
SOUND = ("[Service]\nUser=pharos-ssh-access\nGroup=pharos-ssh-access\n"
         "LoadCredential=token:/etc/pharos-hpc/secrets/ssh-access-site-token\n"
         "ExecStart=/opt/pharos-hpc/ssh-access/bin/pharos-ssh-access-agent\n"
         "CapabilityBoundingSet=\nAmbientCapabilities=\n")

CASES = {
    "no User=": ("[Service]\nExecStart=/bin/true\n", "runs as User=(none, so root)"),
    "User=root": ("[Service]\nUser=root\n", "runs as User=root"),
    "User=0": ("[Service]\nUser=0\n", "runs as User=0"),
    "User=slurm": ("[Service]\nUser=slurm\n", "runs as User=slurm"),
    "root last, with spaces": ("[Service]\nUser=pharos-ssh-access\nUser = root\n", "runs as User=root"),
    "root after a continued line": ("[Service]\nUser=pharos-ssh-access\nDescription=a \\\n  b\nUser=root\n",
                                    "runs as User=root"),
    "another account's group": ("[Service]\nUser=pharos-ssh-access\nGroup=shadow\n", "runs in Group=shadow"),
    "ExecStart=+": ("[Service]\nUser=pharos-ssh-access\nExecStart=+/bin/sh -c id\n", "with full privileges"),
    "ExecStart= +, after a space": ("[Service]\nUser=pharos-ssh-access\nExecStart= +/bin/sh\n", "with full privileges"),
    "ExecStartPre=-!": ("[Service]\nUser=pharos-ssh-access\nExecStartPre=-!/bin/sh\n", "with full privileges"),
    "ExecStopPost=@+": ("[Service]\nUser=pharos-ssh-access\nExecStopPost=@+/bin/sh sh\n", "with full privileges"),
    "ExecReload=!!": ("[Service]\nUser=pharos-ssh-access\nExecReload=!!/bin/sh\n", "with full privileges"),
    "the JWT key": ("[Service]\nUser=pharos-ssh-access\nLoadCredential=k:/etc/slurm/jwt_hs256.key\n",
                    "loads the credential k:/etc/slurm/jwt_hs256.key"),
    "the munge key": ("[Service]\nUser=pharos-ssh-access\nLoadCredential=k:/etc/munge/munge.key\n",
                      "loads the credential k:/etc/munge/munge.key"),
    "out of the secrets by ..": ("[Service]\nUser=pharos-ssh-access\n"
                                 "LoadCredential=k:/etc/pharos-hpc/secrets/../../shadow\n", "loads the credential"),
    "a system credential": ("[Service]\nUser=pharos-ssh-access\nLoadCredential=ssh.authorized_keys.root\n",
                            "loads the credential ssh.authorized_keys.root"),
    "ImportCredential=": ("[Service]\nUser=pharos-ssh-access\nImportCredential=*\n", "sets ImportCredential="),
    "AmbientCapabilities=": ("[Service]\nUser=pharos-ssh-access\nAmbientCapabilities=CAP_DAC_READ_SEARCH\n",
                             "sets AmbientCapabilities=CAP_DAC_READ_SEARCH"),
    "CapabilityBoundingSet=": ("[Service]\nUser=pharos-ssh-access\nCapabilityBoundingSet=CAP_SYS_ADMIN\n",
                               "sets CapabilityBoundingSet=CAP_SYS_ADMIN"),
    "SupplementaryGroups=": ("[Service]\nUser=pharos-ssh-access\nSupplementaryGroups=sudo shadow\n",
                             "sets SupplementaryGroups=sudo shadow"),
    "PermissionsStartOnly=": ("[Service]\nUser=pharos-ssh-access\nPermissionsStartOnly=yes\n",
                              "sets PermissionsStartOnly=yes"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_unit_that_would_run_beyond_its_account_is_refused_naming_the_line(case):
    text, problem = CASES[case]
    found = unit_rules.problems(NAME, text)
    assert any(line.startswith(NAME) and problem in line for line in found), found


def test_a_sound_unit_has_no_problem_and_each_case_differs_from_it_only_in_its_line():
    assert unit_rules.problems(NAME, SOUND) == []
    assert unit_rules.problems(NAME, SOUND + "User = pharos-ssh-access\nExecStart=-/bin/true\n") == []


def test_settings_outside_the_service_section_or_in_a_comment_are_not_read_as_the_services():
    assert unit_rules.problems(NAME, "[Unit]\nUser=pharos-ssh-access\n[Service]\n# User=pharos-ssh-access\n")
    assert unit_rules.problems(NAME, SOUND + "# User=root\n; ExecStart=+/bin/sh\n[Install]\nUser=root\n") == []


def test_the_units_the_release_builder_ships_keep_every_rule():
    for path in sorted((PROJECT / "release" / "units").glob("*.service")):
        assert unit_rules.problems("units/" + path.name, path.read_text(encoding="utf-8")) == [], path.name


def test_every_unit_a_role_installs_is_one_a_release_cannot_replace():
    installed = {path.name.removesuffix(".j2") for path in (PROJECT / "roles").glob("*/*/*.service*")}
    assert installed and installed <= set(unit_rules.ROLE_UNITS), installed
    for name in installed:
        found = unit_rules.problems("units/" + name, SOUND)
        assert found == ["units/%s is a unit the collection's roles install: a release cannot replace it" % name], found


# --- lines as systemd ends, continues and comments them --------------------------------------

ROOT = "runs as User=(none, so root)"
# Each character str.splitlines() ends a line at, and systemd does not; and \r and NUL, which
# systemd ends a line at and this check refuses.
ODD_CHARACTERS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\r", "\x00"]


def found_in(text, *expected):
    found = unit_rules.problems(NAME, text)
    for problem in expected:
        assert any(line.startswith(NAME) and problem in line for line in found), (problem, found)
    return found


@pytest.mark.parametrize("character", ODD_CHARACTERS, ids=lambda character: "U+%04X" % ord(character))
def test_a_comment_hiding_user_behind_a_character_systemd_does_not_end_lines_at_is_refused(character):
    """systemd reads "#<form feed>User=..." as one comment line, so the unit runs as root."""
    found = found_in(SOUND.replace("User=", "#%sUser=" % character, 1),
                     "line 2 has the character U+%04X" % ord(character))
    assert character not in "\n".join(found), found
    if character not in "\r\x00":
        assert unit_rules.parse("[Service]\n#%sUser=pharos-ssh-access\n" % character) == {"Service": []}
        found_in(SOUND.replace("User=", "#%sUser=" % character, 1), ROOT)


def test_a_byte_order_mark_or_bytes_that_are_not_utf_8_are_refused():
    found_in("\ufeff" + SOUND, "line 1 has the character U+FEFF, a byte order mark")
    found_in(SOUND + "Description=caf\ufffd\n", "line 8 has the character U+FFFD, where the file is not UTF-8")


def test_a_carriage_return_before_the_newline_is_read_as_systemd_reads_it_and_any_other_is_shown_escaped():
    assert unit_rules.problems(NAME, SOUND.replace("\n", "\r\n")) == []
    found_in("[Service]\nUser=root\rUser=pharos-ssh-access\n", "runs as User=root\\rUser=pharos-ssh-access")
    found_in("[Service]\r\nUser=pharos-ssh-access \\\r\nUser=root\r\n", "runs as User=pharos-ssh-access  User=root")


def test_a_comment_line_inside_a_continued_line_is_skipped_as_systemd_240_does_and_refused():
    """systemd 240 and later skip it and join the next line: User= is then part of Description=."""
    text = "[Service]\nDescription=a \\\n# a comment\nUser=pharos-ssh-access\n"
    assert unit_rules.parse(text) == {"Service": [("Description", "a  User=pharos-ssh-access")]}
    found_in(text, "line 3 is a comment inside a continued line", ROOT)


def test_a_comment_ending_in_a_backslash_is_refused_as_older_systemd_continues_it():
    """systemd before 240 reads the next line into the comment: this unit would run as root there."""
    text = SOUND.replace("User=", "# the account \\\nUser=", 1)
    assert dict(unit_rules.parse(text)["Service"])["User"] == "pharos-ssh-access"
    found_in(text, "line 2 is a comment ending in a backslash")


def test_a_backslash_followed_by_a_space_does_not_continue_the_line():
    found_in(SOUND + "Description=a \\ \nUser=root\n", "runs as User=root")


def test_a_backslash_escaped_by_another_does_not_continue_the_line():
    found_in(SOUND + "Description=a \\\\\nUser=root\n", "runs as User=root")
    assert unit_rules.parse("[Service]\nDescription=a \\\\\\\nUser=root\n") == {
        "Service": [("Description", "a \\\\ User=root")]}


def test_a_continued_line_keeps_the_next_lines_leading_whitespace_and_a_blank_line_ends_it():
    assert unit_rules.parse("[Service]\nDescription=a \\\n  b \\\n\nUser=root\n") == {
        "Service": [("Description", "a    b"), ("User", "root")]}


def test_a_unit_ending_in_a_continued_line_is_refused():
    found_in(SOUND + "Description=a \\\n", "ends in a line continued by a backslash")
    found_in(SOUND + "Description=a \\", "ends in a line continued by a backslash")


@pytest.mark.parametrize("line", [".include /opt/pharos-hpc/current/units/root.conf", "User", "[Service",
                                  "User\x0c=pharos-ssh-access"])
def test_a_line_that_is_no_section_setting_or_comment_is_refused(line):
    found_in(SOUND + line + "\n", "line 8 is neither a [section], a Key=value setting nor a comment")


def test_a_line_older_systemd_reads_as_two_is_refused():
    found_in(SOUND + "Description=" + "a" * 2000 + "\n", "line 8 is longer than 2000 bytes")
    assert unit_rules.problems(NAME, SOUND + "Description=" + "a" * 1980 + "\n") == []


# --- [Install]: the unit's own name only -----------------------------------------------------

@pytest.mark.parametrize(("setting", "problem"), [
    ("Alias=ssh.service", "sets Alias=ssh.service in [Install]: enabling it would link another unit's name"),
    ("Alias=", "sets Alias= in [Install]"),
    ("Also=pharos-member-token@.service", "sets Also=pharos-member-token@.service in [Install]: enabling it would "
                                          "enable other units with it"),
])
def test_a_unit_enabled_under_another_name_or_with_other_units_is_refused(setting, problem):
    found_in(SOUND + "[Install]\nWantedBy=multi-user.target\n" + setting + "\n", problem)


def test_alias_outside_install_is_not_read_as_the_installs():
    assert unit_rules.problems(NAME, SOUND + "Alias=ssh.service\n[Install]\nWantedBy=multi-user.target\n") == []


# --- directories systemd hands to the unit's user ----------------------------------------------

REFUSED_DIRECTORIES = {
    "a host's directory": "ldap",
    "one of a list": "pharos-example ldap",
    "a symlink's name": "pharos-example:ldap",
    "an absolute path": "/var/lib/pharos-example",
    "out by ..": "pharos-example/../ldap",
    "a specifier in the directory's name": "pharos-%i",
    "another specifier below": "pharos-example/%I",
    "quoted": '"pharos-example"',
    "escaped": "pharos-example\\x2f..\\x2fldap",
    "a third field": "pharos-example:pharos-other:ro",
    "the roles' own": "pharos-hpc",
    "below the roles' own": "pharos-hpc/secrets",
}
DIRECTORY_SETTINGS = ["StateDirectory", "RuntimeDirectory", "CacheDirectory", "LogsDirectory", "ConfigurationDirectory"]
ALLOWED_DIRECTORIES = ["pharos-example", "pharos-site-agent/%i", "pharos-example pharos-other",
                       "pharos-example:pharos-other", "pharos-example/a.b_c-d", ""]


@pytest.mark.parametrize("setting", DIRECTORY_SETTINGS)
@pytest.mark.parametrize("case", sorted(REFUSED_DIRECTORIES))
def test_a_directory_systemd_would_hand_over_is_refused_unless_the_releases_own(setting, case):
    value = REFUSED_DIRECTORIES[case]
    found_in(SOUND + "%s=%s\n" % (setting, value), "sets %s=%s: systemd hands that directory" % (setting, value))


@pytest.mark.parametrize("setting", DIRECTORY_SETTINGS)
@pytest.mark.parametrize("value", ALLOWED_DIRECTORIES)
def test_the_releases_own_directories_are_kept(setting, value):
    assert unit_rules.problems(NAME, SOUND + "%s=%s\n" % (setting, value)) == []


@pytest.mark.parametrize("reserved", ["pharos-hpc", "pharos-keys", "pharos-member-token", "pharos-lab"])
def test_a_directory_name_the_collection_uses_is_refused(reserved):
    found_in(SOUND + "StateDirectory=%s\n" % reserved, "sets StateDirectory=%s" % reserved)


def test_every_pharos_directory_the_roles_and_modules_make_is_reserved():
    pattern = re.compile(r"/(?:etc|run|var/lib|var/cache|var/log)/(pharos-[a-z0-9-]+)")
    used = {match for path in sorted((PROJECT / "roles").rglob("*")) + sorted((PROJECT / "plugins").rglob("*.py"))
            if path.is_file() for match in pattern.findall(path.read_text(encoding="utf-8", errors="replace"))}
    assert {"pharos-hpc", "pharos-keys"} <= used and used <= set(unit_rules.RESERVED_DIRECTORIES), used
