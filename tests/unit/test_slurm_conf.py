"""A Site's own slurm.conf, read as Slurm reads it, and the adopt mode's checks of it: each
precondition that does not hold and each conflict names its file, its line and the fix."""

import textwrap

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils.slurm_conf import (
    AdoptWants,
    SlurmConfError,
    conflicts,
    expand_hostlist,
    jwt_key_path,
    preconditions,
    read,
    seconds,
)

READY = """\
ClusterName=Icarus
SlurmctldHost=login01
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageEnforce=associations,limits,qos  # the Site's own comment
PriorityType=priority/multifactor
PriorityDecayHalfLife=0
PriorityUsageResetPeriod=NONE
PriorityCalcPeriod=1
Prolog=/etc/slurm/site-prolog.sh
NodeName=cn[001-004] CPUs=64 RealMemory=256000
NodeName=dtn01 CPUs=8 RealMemory=64000
PartitionName=batch Nodes=cn[001-004] Default=YES
Include /etc/slurm/pharos.conf
"""

WANTS = AdoptWants(include="/etc/slurm/pharos.conf", staging_partition="staging",
                   staging_nodes=("dtn01",), prologs=("/etc/slurm/pharos-scratch-prolog.sh",))


def site(tmp_path, text, name="slurm.conf"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def findings(tmp_path, text):
    path = site(tmp_path, text)
    conf = read(path, skip=(WANTS.include,))
    return [str(f) for f in preconditions(conf, path, WANTS)], [str(f) for f in conflicts(conf, WANTS)]


def test_a_site_that_meets_every_precondition_has_no_finding(tmp_path):
    assert findings(tmp_path, READY) == ([], [])


@pytest.mark.parametrize(("line", "replacement", "named"), [
    ("AccountingStorageEnforce=associations,limits,qos  # the Site's own comment",
     "AccountingStorageEnforce=associations", "line 4: AccountingStorageEnforce=associations"),
    ("PriorityDecayHalfLife=0", "PriorityDecayHalfLife=14-0", "line 6: PriorityDecayHalfLife=14-0"),
    ("PriorityUsageResetPeriod=NONE", "PriorityUsageResetPeriod=MONTHLY", "line 7: PriorityUsageResetPeriod=MONTHLY"),
    ("PriorityCalcPeriod=1", "PriorityCalcPeriod=5", "line 8: PriorityCalcPeriod=5"),
    ("PriorityType=priority/multifactor", "PriorityType=priority/basic", "line 5: PriorityType=priority/basic"),
])
def test_a_setting_that_does_not_hold_is_named_with_its_line_and_the_line_to_write(
        tmp_path, line, replacement, named):
    unmet, found = findings(tmp_path, READY.replace(line, replacement))
    assert found == []
    assert len(unmet) == 1 and named in unmet[0], unmet
    assert "Change the line to" in unmet[0]


def test_a_missing_setting_whose_default_does_not_hold_is_named_with_the_line_to_add(tmp_path):
    unmet, _conflicts = findings(tmp_path, READY.replace("PriorityCalcPeriod=1\n", ""))
    assert len(unmet) == 1
    assert "no PriorityCalcPeriod line (the default is 5)" in unmet[0]
    assert "Add the line 'PriorityCalcPeriod=1'" in unmet[0]


def test_a_missing_setting_whose_default_holds_is_no_finding(tmp_path):
    text = READY.replace("PriorityUsageResetPeriod=NONE\n", "").replace("PriorityType=priority/multifactor\n", "")
    assert findings(tmp_path, text) == ([], [])


def test_equal_time_formats_hold(tmp_path):
    text = READY.replace("PriorityDecayHalfLife=0", "PriorityDecayHalfLife=0-0:00:00").replace(
        "PriorityCalcPeriod=1", "PriorityCalcPeriod=00:01:00")
    assert findings(tmp_path, text) == ([], [])


def test_keys_are_read_without_regard_to_case(tmp_path):
    assert findings(tmp_path, READY.replace("PriorityCalcPeriod=1", "prioritycalcperiod=1")) == ([], [])


def test_a_slurm_conf_without_the_include_line_says_to_create_the_file_before_adding_it(tmp_path):
    unmet, _conflicts = findings(tmp_path, READY.replace("Include /etc/slurm/pharos.conf\n", ""))
    assert len(unmet) == 1
    assert "no 'Include /etc/slurm/pharos.conf' line" in unmet[0]
    assert "install -m 0644 /dev/null /etc/slurm/pharos.conf" in unmet[0]


def test_a_staging_node_the_site_does_not_define_is_named(tmp_path):
    unmet, _conflicts = findings(tmp_path, READY.replace("NodeName=dtn01 CPUs=8 RealMemory=64000\n", ""))
    assert unmet == [unmet[0]] and "staging node dtn01" in unmet[0]


def test_an_alternative_authentication_without_jwt_is_named(tmp_path):
    unmet, _conflicts = findings(tmp_path, READY + "AuthAltTypes=auth/slurm\n")
    assert len(unmet) == 1 and "Change the line to 'AuthAltTypes=auth/slurm,auth/jwt'" in unmet[0]


def test_a_site_partition_named_like_the_staging_partition_is_a_conflict_with_its_line(tmp_path):
    _unmet, found = findings(tmp_path, READY + "PartitionName=staging Nodes=dtn01\n")
    assert len(found) == 1 and found[0].startswith(f"{tmp_path}/slurm.conf line 14: ")
    assert "partition named staging" in found[0]


def test_a_site_prolog_at_the_path_of_a_pharos_prolog_is_a_conflict(tmp_path):
    _unmet, found = findings(tmp_path, READY.replace("/etc/slurm/site-prolog.sh", "/etc/slurm/pharos-scratch-prolog.sh"))
    assert len(found) == 1 and "line 9" in found[0]


def test_a_site_prolog_elsewhere_stays_beside_pharos_prologs(tmp_path):
    assert findings(tmp_path, READY)[1] == []


def test_pharos_own_file_is_not_read_as_the_sites(tmp_path):
    own = site(tmp_path, "PartitionName=staging Nodes=dtn01\n", name="pharos.conf")
    path = site(tmp_path, READY.replace("/etc/slurm/pharos.conf", own))
    wants = AdoptWants(own, "staging", ("dtn01",), ())
    assert conflicts(read(path, skip=(own,)), wants) == []


def test_included_files_are_read_and_named_in_findings(tmp_path):
    site(tmp_path, "PriorityCalcPeriod=5\n", name="priority.conf")
    unmet, _conflicts = findings(tmp_path, READY.replace("PriorityCalcPeriod=1\n", "Include priority.conf\n"))
    assert len(unmet) == 1 and unmet[0].startswith(f"{tmp_path}/priority.conf line 1: ")


def test_an_unreadable_slurm_conf_is_an_error_naming_it(tmp_path):
    with pytest.raises(SlurmConfError, match="cannot read .*missing.conf"):
        read(str(tmp_path / "missing.conf"))


def test_a_line_that_is_not_key_value_is_an_error_naming_its_line(tmp_path):
    with pytest.raises(SlurmConfError, match="line 2: 'NotAValue' is not Key=Value"):
        read(site(tmp_path, "ClusterName=x\nNotAValue\n"))


@pytest.mark.parametrize(("text", "expected"), [
    ("AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=/etc/slurm/site.key,disable_token_creation\n",
     "/etc/slurm/site.key"),
    ("AuthAltTypes=auth/jwt\nStateSaveLocation=/var/spool/ctld\n", "/var/spool/ctld/jwt_hs256.key"),
    ("ClusterName=x\n", None),
])
def test_the_key_the_site_trusts_already(tmp_path, text, expected):
    assert jwt_key_path(read(site(tmp_path, text))) == expected


def test_host_lists_are_expanded_as_slurm_does():
    assert expand_hostlist("cn[001-003,007],dtn01,gpu[1-2]-ib") == [
        "cn001", "cn002", "cn003", "cn007", "dtn01", "gpu1-ib", "gpu2-ib"]


@pytest.mark.parametrize(("text", "expected"), [
    ("0", 0), ("1", 60), ("00:01:00", 60), ("7-0", 604800), ("1-2:3", 93780), ("2:30", 150), ("x", None)])
def test_slurm_time_formats(text, expected):
    assert seconds(text) == expected
