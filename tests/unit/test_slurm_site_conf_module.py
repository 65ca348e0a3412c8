"""The slurm_site_conf module on a Site's slurm.conf: it reads, reports and changes nothing."""

import pytest
from module_runner import run_module

from ansible_collections.pharos.hpc.plugins.modules import slurm_site_conf

SITE = """\
ClusterName=Icarus
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageEnforce=associations,limits
PriorityDecayHalfLife=0
PriorityCalcPeriod=1
PrivateData=accounts,jobs,reservations,usage,users
AccountingStoreFlags=job_comment
NodeName=dtn01 CPUs=8
Include {include}
"""


def run(arguments, check_mode=False):
    return run_module(slurm_site_conf, arguments, check_mode)


@pytest.fixture
def site(tmp_path):
    include = tmp_path / "pharos.conf"
    include.write_text("PartitionName=staging Nodes=dtn01\n")
    path = tmp_path / "slurm.conf"
    path.write_text(SITE.format(include=include))
    return {"path": str(path), "include": str(include), "staging_partition": "staging",
            "staging_nodes": ["dtn01"], "dbd_path": str(tmp_path / "slurmdbd.conf")}


def test_a_ready_site_reports_its_cluster_in_lower_case_and_nothing_to_change(site):
    result = run(site, check_mode=True)
    assert (result["changed"], result["cluster_name"], result["jwt_key_path"]) == (False, "icarus", None)
    assert (result["unmet"], result["conflicts"]) == ([], [])


def test_each_finding_is_a_sentence_with_its_file_and_line(site):
    with open(site["path"], "a", encoding="utf-8") as handle:
        handle.write("PartitionName=staging Nodes=dtn01\nPriorityCalcPeriod=5\n")
    result = run(site)
    assert result["conflicts"] == [
        f"{site['path']} line 10: the Site already defines a partition named staging, the name of "
        "Pharos's staging partition. Rename one of the two (slurm_staging_partition names Pharos's)."]
    assert len(result["unmet"]) == 1 and result["unmet"][0].startswith(f"{site['path']} line 11: PriorityCalcPeriod=5;")


def test_the_hosts_slurmdbd_conf_is_checked_when_it_holds_one(site, tmp_path):
    assert run(site)["unmet"] == []
    (tmp_path / "slurmdbd.conf").write_text("DbdHost=login01\nStoragePass=secret\n")
    unmet = run(site)["unmet"]
    assert len(unmet) == 1 and unmet[0].startswith(f"{tmp_path}/slurmdbd.conf: no PrivateData line;")
    assert "secret" not in unmet[0]


def test_a_slurm_conf_without_cluster_name_fails_naming_the_rule(site):
    with open(site["path"], "w", encoding="utf-8") as handle:
        handle.write("SlurmctldHost=login01\n")
    result = run(site)
    assert result["failed"] and "has no ClusterName line" in result["msg"]


def test_a_missing_slurm_conf_fails_naming_it(tmp_path):
    result = run({"path": str(tmp_path / "slurm.conf"), "staging_partition": "staging"})
    assert result["failed"] and f"cannot read {tmp_path}/slurm.conf" in result["msg"]


def test_the_result_says_whether_the_host_holds_slurmdbd_conf(site, tmp_path):
    assert run(site)["dbd_found"] is False
    (tmp_path / "slurmdbd.conf").write_text("DbdHost=login01\nPrivateData=accounts,jobs,reservations,usage,users\n")
    assert run(site)["dbd_found"] is True


def test_slurmdbd_conf_alone_is_checked_on_a_host_without_slurm_conf(tmp_path):
    dbd = tmp_path / "slurmdbd.conf"
    dbd.write_text("DbdHost=dbd01\nStoragePass=secret\nPrivateData=jobs\n")
    result = run({"path": str(tmp_path / "slurm.conf"), "dbd_path": str(dbd), "dbd_only": True,
                  "staging_partition": "staging"}, check_mode=True)
    assert (result["changed"], result["dbd_found"], result["cluster_name"], result["conflicts"]) == (False, True, "", [])
    assert len(result["unmet"]) == 1 and result["unmet"][0].startswith(f"{dbd} line 3: PrivateData=jobs lacks")
    assert "secret" not in result["unmet"][0]


def test_token_parameters_after_pharos_include_are_refused_when_the_site_sets_no_auth_alt_types(site):
    with open(site["path"], "a", encoding="utf-8") as handle:
        handle.write("AuthAltParameters=jwks=/etc/slurm/jwks.json,userclaimfield=preferred_username\n")
    unmet = run(site, check_mode=True)["unmet"]
    assert len(unmet) == 1 and unmet[0].startswith(f"{site['path']} line 10: AuthAltParameters=jwks="), unmet
    assert f"stands after 'Include {site['include']}'" in unmet[0]
