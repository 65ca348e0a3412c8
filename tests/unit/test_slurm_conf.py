"""A Site's own slurm.conf, read as Slurm reads it, and the adopt mode's checks of it: each
precondition that does not hold and each conflict names its file, its line and the fix."""

import textwrap

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils.slurm_conf import (
    AdoptWants,
    SlurmConfError,
    conflicts,
    dbd_preconditions,
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
PrivateData=accounts,jobs,reservations,usage,users,events
AccountingStoreFlags=job_comment
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


@pytest.mark.parametrize(("line", "replacement", "problem", "fix"), [
    ("PrivateData=accounts,jobs,reservations,usage,users,events", "PrivateData=jobs,events",
     "line 9: PrivateData=jobs,events lacks accounts,reservations,usage,users; members would see",
     "Change the line to 'PrivateData=jobs,events,accounts,reservations,usage,users'."),
    ("PrivateData=accounts,jobs,reservations,usage,users,events\n", "",
     "slurm.conf: no PrivateData line; members would see",
     "Add the line 'PrivateData=accounts,jobs,reservations,usage,users'."),
    ("AccountingStoreFlags=job_comment", "AccountingStoreFlags=job_env",
     "line 10: AccountingStoreFlags=job_env lacks job_comment; the Runtime finds a job",
     "Change the line to 'AccountingStoreFlags=job_env,job_comment'."),
])
def test_privacy_and_job_comments_are_named_with_the_line_that_keeps_the_sites_own_flags(
        tmp_path, line, replacement, problem, fix):
    unmet, _conflicts = findings(tmp_path, READY.replace(line, replacement))
    assert len(unmet) == 1 and problem in unmet[0] and unmet[0].endswith(fix), unmet


def test_private_data_all_holds(tmp_path):
    text = READY.replace("PrivateData=accounts,jobs,reservations,usage,users,events", "PrivateData=all")
    assert findings(tmp_path, text) == ([], [])


TRUSTED = "AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=/etc/slurm/site.key,disable_token_creation\n"


@pytest.mark.parametrize(("parameters", "problem", "fix"), [
    ("jwt_key=/etc/slurm/site.key", "without disable_token_creation every user and job may run 'scontrol token'",
     "AuthAltParameters=jwt_key=/etc/slurm/site.key,disable_token_creation"),
    ("jwt_key=/etc/slurm/site.key,disable_token_creation,jwks=/etc/slurm/jwks.json",
     "jwks= makes slurmctld take tokens that another issuer signed",
     "AuthAltParameters=jwt_key=/etc/slurm/site.key,disable_token_creation"),
    ("jwt_key=/etc/slurm/site.key,disable_token_creation,userclaimfield=preferred_username",
     "userclaimfield= takes the user from a claim another issuer fills",
     "AuthAltParameters=jwt_key=/etc/slurm/site.key,disable_token_creation"),
])
def test_a_site_that_takes_jwts_must_trust_its_own_key_alone_and_let_no_user_mint(tmp_path, parameters, problem, fix):
    assert findings(tmp_path, READY + TRUSTED) == ([], [])
    unmet, _conflicts = findings(tmp_path, READY + TRUSTED.replace(
        "jwt_key=/etc/slurm/site.key,disable_token_creation", parameters))
    assert len(unmet) == 1 and "line 17: AuthAltParameters=" in unmet[0] and problem in unmet[0], unmet
    assert unmet[0].endswith(f"Change the line to '{fix}'.")


def test_the_review_s_site_that_takes_an_idp_s_tokens_is_refused_on_every_count(tmp_path):
    text = READY + ("AuthAltTypes=auth/jwt\n"
                    "AuthAltParameters=jwks=/etc/slurm/jwks.json,userclaimfield=preferred_username\n")
    unmet, _conflicts = findings(tmp_path, text)
    assert len(unmet) == 1
    for problem in ("jwks=", "userclaimfield=", "disable_token_creation"):
        assert problem in unmet[0]
    assert unmet[0].endswith("Change the line to 'AuthAltParameters=disable_token_creation'.")


def test_a_site_without_jwt_and_without_token_parameters_is_ready(tmp_path):
    assert findings(tmp_path, READY) == ([], [])


def test_token_parameters_after_the_include_that_trust_a_jwks_are_refused_without_auth_alt_types(tmp_path):
    """Pharos's file turns JWTs on with its own key when the Site sets no AuthAltTypes, and Slurm
    takes the AuthAltParameters it reads last: a Site line after the Include would be the one."""
    text = READY + "AuthAltParameters=jwks=/etc/slurm/jwks.json,userclaimfield=preferred_username\n"
    unmet, _conflicts = findings(tmp_path, text)
    assert len(unmet) == 1 and unmet[0].startswith(f"{tmp_path}/slurm.conf line 16: AuthAltParameters=jwks="), unmet
    for problem in ("stands after 'Include /etc/slurm/pharos.conf' while the Site sets no AuthAltTypes",
                    "jwks= makes slurmctld take tokens that another issuer signed",
                    "userclaimfield= takes the user from a claim another issuer fills",
                    "without disable_token_creation every user and job may run 'scontrol token'"):
        assert problem in unmet[0], unmet[0]
    assert "Remove the line" in unmet[0]


def test_trusted_token_parameters_after_the_include_are_refused_for_replacing_pharos_own(tmp_path):
    unmet, _conflicts = findings(tmp_path, READY + "AuthAltParameters=jwt_key=/etc/slurm/site.key,disable_token_creation\n")
    assert len(unmet) == 1 and "line 16: AuthAltParameters=jwt_key=/etc/slurm/site.key" in unmet[0], unmet
    assert "in place of the AuthAltParameters in Pharos's file" in unmet[0]
    assert unmet[0].endswith("add the line 'AuthAltTypes=auth/jwt' and change this one to "
                             "'AuthAltParameters=jwt_key=/etc/slurm/site.key,disable_token_creation'.")


@pytest.mark.parametrize("parameters", [
    "jwks=/etc/slurm/jwks.json,disable_token_creation",
    "jwt_key=/etc/slurm/site.key,disable_token_creation,x_userclaimfield=sub",
    "jwt_key=/etc/slurm/site.key,DISABLE_TOKEN_CREATION",
], ids=["a JWKS", "a user claim inside another item", "the flag in upper case, which Slurm does not read"])
def test_token_parameters_before_the_include_are_refused_though_pharos_own_come_later(tmp_path, parameters):
    text = READY.replace("Include /etc/slurm/pharos.conf\n", f"AuthAltParameters={parameters}\nInclude /etc/slurm/pharos.conf\n")
    unmet, _conflicts = findings(tmp_path, text)
    assert len(unmet) == 1 and f"line 15: AuthAltParameters={parameters}: " in unmet[0], unmet
    assert "stands after" not in unmet[0]
    assert "Change the line to 'AuthAltParameters=" in unmet[0]


def test_trusted_token_parameters_before_the_include_are_no_finding(tmp_path):
    text = READY.replace("Include /etc/slurm/pharos.conf\n",
                         "AuthAltParameters=jwt_key=/etc/slurm/site.key,disable_token_creation\n"
                         "Include /etc/slurm/pharos.conf\n")
    assert findings(tmp_path, text) == ([], [])


def test_token_parameters_in_a_site_file_included_after_pharos_own_are_refused(tmp_path):
    site(tmp_path, "AuthAltParameters=jwks=/etc/slurm/jwks.json,disable_token_creation\n", name="auth.conf")
    unmet, _conflicts = findings(tmp_path, READY + "Include auth.conf\n")
    assert len(unmet) == 1 and unmet[0].startswith(f"{tmp_path}/auth.conf line 1: AuthAltParameters="), unmet
    assert "stands after 'Include /etc/slurm/pharos.conf'" in unmet[0]


def test_every_token_parameters_line_is_checked_not_only_the_last(tmp_path):
    text = READY + "AuthAltTypes=auth/jwt\nAuthAltParameters=jwks=/etc/slurm/jwks.json\n" + TRUSTED.splitlines()[1] + "\n"
    unmet, _conflicts = findings(tmp_path, text)
    assert len(unmet) == 1 and "line 17: AuthAltParameters=jwks=/etc/slurm/jwks.json: " in unmet[0], unmet


def test_slurmdbd_conf_token_parameters_are_refused_without_auth_alt_types(tmp_path):
    path = site(tmp_path, "DbdHost=login01\nPrivateData=accounts,jobs,reservations,usage,users\n"
                          "AuthAltParameters=jwt_key=/etc/slurm/site.key,userclaimfield=sub,disable_token_creation\n",
                name="slurmdbd.conf")
    unmet = [str(finding) for finding in dbd_preconditions(read(path), path, WANTS)]
    assert len(unmet) == 1 and unmet[0].startswith(f"{path} line 3: AuthAltParameters="), unmet
    assert unmet[0].endswith("Change the line to 'AuthAltParameters=jwt_key=/etc/slurm/site.key,disable_token_creation'.")


def test_slurmdbd_conf_must_keep_usage_and_jobs_private_as_well(tmp_path):
    path = site(tmp_path, "DbdHost=login01\nStoragePass=secret\nPrivateData=jobs\n", name="slurmdbd.conf")
    unmet = [str(finding) for finding in dbd_preconditions(read(path), path, WANTS)]
    assert unmet == [f"{path} line 3: PrivateData=jobs lacks accounts,reservations,usage,users; members would "
                     "read each other's jobs, associations and usage from accounting. "
                     "Change the line to 'PrivateData=jobs,accounts,reservations,usage,users'."]
    assert "secret" not in unmet[0]


def test_a_site_partition_named_like_the_staging_partition_is_a_conflict_with_its_line(tmp_path):
    _unmet, found = findings(tmp_path, READY + "PartitionName=staging Nodes=dtn01\n")
    assert len(found) == 1 and found[0].startswith(f"{tmp_path}/slurm.conf line 16: ")
    assert "partition named staging" in found[0]


def test_a_site_prolog_at_the_path_of_a_pharos_prolog_is_a_conflict(tmp_path):
    _unmet, found = findings(tmp_path, READY.replace("/etc/slurm/site-prolog.sh", "/etc/slurm/pharos-scratch-prolog.sh"))
    assert len(found) == 1 and "line 11" in found[0]


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


def test_a_line_that_is_not_key_value_is_an_error_naming_its_line_but_not_its_text(tmp_path):
    with pytest.raises(SlurmConfError, match="line 2 is not Key=Value") as raised:
        read(site(tmp_path, "ClusterName=x\nStoragePass secret\n"))
    assert "secret" not in str(raised.value)


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


def test_a_site_with_job_submit_plugins_of_its_own_is_a_conflict_naming_the_line(tmp_path):
    _unmet, found = findings(tmp_path, READY + "JobSubmitPlugins=lua,require_timelimit\n")
    assert len(found) == 1 and found[0].startswith(f"{tmp_path}/slurm.conf line 16: the Site runs job submit "
                                                   "plugins of its own (JobSubmitPlugins=lua,require_timelimit)")
