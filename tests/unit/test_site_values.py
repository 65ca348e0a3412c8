"""site.yml refuses bad Site values with a clear message before it contacts any host.

Each case runs the real playbooks/site.yml against the lab inventory, with the host's
connection pointed at a closed port: a run that reached a host would report it UNREACHABLE.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLOSED_PORT = {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": 1,
               "ansible_ssh_common_args": "-o ConnectTimeout=2"}


def value_id(value):
    """A case's id: the bad value as name=json, or nothing for the expected message."""
    return next(iter(value)) + "=" + json.dumps(next(iter(value.values()))) if isinstance(value, dict) else ""


def run_site(project, tmp_path, inventory="inventories/lab", **site_values):
    extra_vars = tmp_path / "extra_vars.json"
    extra_vars.write_text(json.dumps({**CLOSED_PORT, **site_values}))
    environment = dict(os.environ, ANSIBLE_FORCE_COLOR="false", ANSIBLE_NOCOLOR="true")
    return subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", inventory,
         "playbooks/site.yml", "-e", f"@{extra_vars}"],
        cwd=project, env=environment, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("inventory", ["inventories/lab", "docs/examples/production"])
def test_the_inventories_values_pass_and_the_play_goes_on_to_the_hosts(project, tmp_path, inventory):
    # The production example takes its secrets from a vault.yml that is not in the repository:
    # stand in for the one the slurm role requires.
    result = run_site(project, tmp_path, inventory, vault_slurm_db_password="test-stand-in-password")
    assert "UNREACHABLE" in result.stdout, result.stdout
    assert "Assertion failed" not in result.stdout


def test_a_site_started_from_the_shipped_examples_reads_no_file_of_its_files_as_a_host(project, tmp_path):
    """As docs/examples/README.md says: the example inventory copied out, site.env from the
    example in its files/, the inventory named by its hosts.yml. Given the directory, Ansible read
    files/site.env as an inventory too and made a host of each KEY=value line. The shipped
    site.env example and the example inventory agree on every value they share."""
    site = tmp_path / "my-site"
    shutil.copytree(project / "docs" / "examples" / "production", site)
    shutil.copyfile(project / "docs" / "examples" / "site.env.example", site / "files" / "site.env")
    result = run_site(project, tmp_path, str(site / "hosts.yml"), vault_slurm_db_password="test-stand-in-password")
    assert "Check that site.env and the inventory give the Site the same values" in result.stdout, result.stdout
    assert "Assertion failed" not in result.stdout
    assert "UNREACHABLE" in result.stdout, result.stdout
    assert "WALDUR_API_URL" not in result.stdout + result.stderr


@pytest.mark.parametrize(("values", "named"), [
    ({"pharos_slurm_staging_cpus": 0}, "pharos_slurm_staging_cpus is 0"),
    ({"pharos_slurm_staging_memory_mib": -512}, "pharos_slurm_staging_memory_mib is -512"),
    ({"pharos_slurm_staging_time_minutes": "10"}, 'pharos_slurm_staging_time_minutes is "10"'),
    ({"pharos_slurm_staging_cpus": 1.5}, "pharos_slurm_staging_cpus is 1.5"),
    ({"pharos_cache_seconds": True}, "pharos_cache_seconds is true"),
    ({"pharos_ssh_access_poll_seconds": 0}, "pharos_ssh_access_poll_seconds is 0"),
    ({"pharos_ssh_access_poll_seconds": 120},
     "pharos_ssh_access_poll_seconds (120) must be below pharos_key_window_seconds (120)"),
    ({"pharos_slurm_compute_max_time_hours": None}, "pharos_slurm_compute_max_time_hours is null"),
    ({"pharos_member_uid_min": 5500000}, "member UID range 5500000-5499999"),
    ({"pharos_member_gid_min": 100}, "member GID range 100-5549999"),
    ({"pharos_project_gid_min": 5540000}, "Member GIDs 5500000-5549999 and project GIDs 5540000-5599999 overlap"),
    ({"pharos_scratch_root": "scratch/pharos"}, "pharos_scratch_root (scratch/pharos)"),
    ({"pharos_scratch_root": "/scratch/pharos/"}, "pharos_scratch_root (/scratch/pharos/)"),
    ({"pharos_scratch_root": "/scratch/../etc"}, "pharos_scratch_root (/scratch/../etc)"),
    ({"pharos_scratch_group": "Pharos Users"}, "pharos_scratch_group (Pharos Users)"),
    ({"pharos_ldap_suffix": "o=Pharos"}, "pharos_ldap_suffix (o=Pharos)"),
    ({"pharos_scratch_group_gid": 100}, "pharos_scratch_group_gid is 100"),
    ({"pharos_scratch_runtime_uid": 5000042}, "pharos_scratch_runtime_uid is 5000042"),
    ({"pharos_scratch_runtime_uid": 4800}, "pharos_scratch_group_gid and pharos_scratch_runtime_uid must differ"),
    ({"pharos_scratch_members": "pharosalice"}, 'pharos_scratch_members is "pharosalice"'),
    ({"pharos_scratch_members": ["Alice Smith"]}, "pharos_scratch_members is [\"Alice Smith\"]"),
    ({"slurm_site_dbd_host": "dbd01"}, 'slurm_site_dbd_host is "dbd01": it must be empty or a host of the inventory'),
], ids=value_id)
def test_a_bad_value_is_named_and_no_host_is_contacted(project, tmp_path, values, named):
    assert_refused_before_any_host(run_site(project, tmp_path, **values), named)


def assert_refused_before_any_host(result, named):
    """The run failed, its output names the bad value, and it never reached a host."""
    output = " ".join(result.stdout.split())
    assert result.returncode != 0
    assert named in output, output
    assert "UNREACHABLE" not in result.stdout


def test_a_site_value_missing_from_the_inventory_is_named_with_the_fix(project, tmp_path):
    """An inventory without one required integer: validate.yml names it, not Ansible's lookup."""
    inventory = tmp_path / "inventory"
    shutil.copytree(project / "inventories" / "lab", inventory)
    site = inventory / "group_vars" / "all" / "site.yml"
    site.write_text("".join(line for line in site.read_text().splitlines(keepends=True)
                            if not line.startswith("pharos_member_uid_min:")))
    result = run_site(project, tmp_path, str(inventory))
    assert_refused_before_any_host(result, 'pharos_member_uid_min is "unset": it must be a positive integer')
    assert "No variable named" not in result.stdout + result.stderr
