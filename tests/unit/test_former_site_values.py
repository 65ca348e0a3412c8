"""The Site values' former names (icarus_hpc_*) are still accepted until 0.4.0: site.yml takes
each under its new name (pharos_*) with a deprecation warning naming both, before it contacts any
host. Each case runs the real playbooks/site.yml against the lab inventory renamed back, with the
hosts' connection pointed at a closed port (test_site_values.py)."""

import re
import shutil

from test_site_values import run_site

from ansible_collections.pharos.hpc.plugins.lookup.former_site_values import SITE_VALUES


def former_inventory(project, tmp_path):
    """The lab inventory with every Site value under its former name."""
    inventory = tmp_path / "lab"
    shutil.copytree(project / "inventories" / "lab", inventory)
    site = inventory / "group_vars" / "all" / "site.yml"
    names = "|".join(SITE_VALUES)
    site.write_text(re.sub(r"(?m)^pharos_(%s):" % names, r"icarus_hpc_\1:", site.read_text()))
    return inventory


def deprecations(output):
    return re.findall(r"The Site value (icarus_hpc_\w+) is (now named|set beside) (pharos_\w+)", " ".join(output.split()))


def test_an_inventory_of_former_names_passes_with_one_warning_for_each_naming_the_new_name(project, tmp_path):
    inventory = former_inventory(project, tmp_path)
    assert "pharos_member_uid_min" not in (inventory / "group_vars" / "all" / "site.yml").read_text()
    result = run_site(project, tmp_path, str(inventory))
    output = result.stdout + result.stderr
    assert "Assertion failed" not in output
    assert "UNREACHABLE" in result.stdout, output[-3000:]
    found = deprecations(output)
    assert sorted(found) == sorted(("icarus_hpc_" + value, "now named", "pharos_" + value) for value in SITE_VALUES)


def test_a_bad_value_under_a_former_name_is_refused_by_its_new_name(project, tmp_path):
    inventory = former_inventory(project, tmp_path)
    site = inventory / "group_vars" / "all" / "site.yml"
    site.write_text(re.sub(r"(?m)^icarus_hpc_slurm_staging_cpus:.*$", "icarus_hpc_slurm_staging_cpus: 0",
                           site.read_text()))
    result = run_site(project, tmp_path, str(inventory))
    assert "pharos_slurm_staging_cpus is 0: it must be a positive integer" in " ".join(result.stdout.split())
    assert "UNREACHABLE" not in result.stdout


def test_a_former_name_beside_its_new_name_is_ignored_and_said_so(project, tmp_path):
    result = run_site(project, tmp_path, icarus_hpc_slurm_staging_cpus=0)
    output = result.stdout + result.stderr
    assert "UNREACHABLE" in result.stdout, output[-3000:]
    assert deprecations(output) == [("icarus_hpc_slurm_staging_cpus", "set beside", "pharos_slurm_staging_cpus")]
    assert "Remove icarus_hpc_slurm_staging_cpus" in " ".join(output.split())


def test_an_inventory_of_new_names_gets_no_warning(project, tmp_path):
    result = run_site(project, tmp_path)
    assert "UNREACHABLE" in result.stdout
    assert deprecations(result.stdout + result.stderr) == []
