"""site.yml checks every role's values on every host against the role's argument spec before it
contacts any host: one step per host, where Ansible's own check would be a step per role, each
after the roles before it changed the host.

Each case gives one role a value of the wrong type (extra variables win over the values site.yml
passes), which the Site-level checks of validate.yml do not read. As in test_site_values.py,
every host's connection points at a closed port: a run that reached a host would report it
UNREACHABLE.
"""

import shutil

import pytest

from test_site_values import assert_refused_before_any_host, run_site, value_id


@pytest.mark.parametrize(("values", "named"), [
    ({"munge_generated_key_length": "long"}, "pharos.hpc.munge (main): argument 'munge_generated_key_length'"),
    ({"openldap_adopt_max_size": "big"}, "pharos.hpc.openldap (main): argument 'openldap_adopt_max_size'"),
    ({"sssd_cache_seconds": "an hour"}, "pharos.hpc.sssd (main): argument 'sssd_cache_seconds'"),
    ({"sshd_cache_seconds": "an hour"}, "pharos.hpc.sshd (main): argument 'sshd_cache_seconds'"),
    ({"job_identity_site_mode": "partial"}, "pharos.hpc.job_identity (checked): value of job_identity_site_mode must be one of"),
    ({"scratch_group_gid": "users"}, "pharos.hpc.scratch (main): argument 'scratch_group_gid'"),
    ({"slurm_accounts_cancel_jobs": "sometimes"}, "pharos.hpc.slurm_accounts (main): argument 'slurm_accounts_cancel_jobs'"),
], ids=value_id)
def test_a_role_value_of_the_wrong_type_is_named_with_its_role_and_no_host_is_contacted(project, tmp_path, values, named):
    assert_refused_before_any_host(run_site(project, tmp_path, **values), named)


def test_the_controller_and_the_configless_nodes_are_each_checked_for_their_own_entry_point(project, tmp_path):
    """In the lab's full mode the login node runs the slurm role's main entry point, the compute
    and staging nodes its node entry point: each host is checked against the spec of the one it runs."""
    result = run_site(project, tmp_path, slurm_max_node_count="many")
    assert_refused_before_any_host(result, "pharos.hpc.slurm (main): argument 'slurm_max_node_count'")
    output = " ".join(result.stdout.split())
    for host, entry_point in [("pharos-lab-login", "main"), ("pharos-lab-compute", "node"), ("pharos-lab-staging", "node")]:
        assert f"on {host} does not hold its argument spec, and the roles do not run: pharos.hpc.slurm ({entry_point})" in output, output


def test_a_value_one_node_is_given_is_checked_on_that_node_alone(project, tmp_path):
    """A host variable of one node is that node's value: the node is named, the others pass."""
    inventory = tmp_path / "inventory"
    shutil.copytree(project / "inventories" / "lab", inventory)
    (inventory / "host_vars").mkdir(exist_ok=True)
    (inventory / "host_vars" / "pharos-lab-compute.yml").write_text("slurm_max_node_count: many\n")
    result = run_site(project, tmp_path, str(inventory))
    assert_refused_before_any_host(result, "on pharos-lab-compute does not hold its argument spec")
    output = " ".join(result.stdout.split())
    assert "argument 'slurm_max_node_count' is of type str" in output, output
    assert "(ansible-doc -t role pharos.hpc.slurm) where the inventory" in output, output
    assert "on pharos-lab-staging does not hold" not in output
    assert "on pharos-lab-login does not hold" not in output
