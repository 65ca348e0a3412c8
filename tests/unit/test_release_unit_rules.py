"""A release's unit files read as systemd reads them (unit_rules.py): each way a line that
systemd reads otherwise than it is written could run a release's code beyond its account."""

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
