"""The slurm role refuses bad input of its own before any host changes.

site.yml passes the Site's values into the role; these cases give the role bad values
directly (extra variables win over the values site.yml passes), so the Site-level check in
validate.yml passes and the role's own validation is what must refuse. As in
test_site_values.py, every host's connection points at a closed port: a run that reached a
host would report it UNREACHABLE.
"""

import json

import pytest

from test_site_values import assert_refused_before_any_host, run_site, value_id

PRIVATE_JWKS = {"keys": [{"kty": "RSA", "kid": "k", "n": "AQAB", "e": "AQAB", "d": "AQAB"}]}


@pytest.mark.parametrize(("values", "named"), [
    ({"slurm_staging_cpus": 0}, "slurm_staging_cpus is 0"),
    ({"slurm_staging_cpus": -2}, "slurm_staging_cpus is -2"),
    ({"slurm_staging_memory_mib": "512"}, 'slurm_staging_memory_mib is "512"'),
    ({"slurm_staging_memory_mib": 0}, "slurm_staging_memory_mib is 0"),
    ({"slurm_staging_time_minutes": 2.5}, "slurm_staging_time_minutes is 2.5"),
    ({"slurm_staging_time_minutes": -10}, "slurm_staging_time_minutes is -10"),
    ({"slurm_compute_max_time_hours": True}, "slurm_compute_max_time_hours is true"),
    ({"slurm_staging_hosts": ["pharos-lab-compute"]}, "nodes in both (pharos-lab-compute)"),
    ({"slurm_staging_partition": "compute"}, "one partition name for both (compute)"),
    ({"slurm_db_password": "short"}, "slurm_db_password must be set from the vault"),
    ({"slurm_jwks": json.dumps(PRIVATE_JWKS)}, "without private members"),
    ({"slurm_restd_listen_address": "0.0.0.0:6820"}, "slurm_restd_listen_address (0.0.0.0:6820)"),
], ids=value_id)
def test_a_bad_role_value_is_named_and_no_host_is_contacted(project, tmp_path, values, named):
    assert_refused_before_any_host(run_site(project, tmp_path, **values), named)


def test_the_database_password_never_appears_in_the_output(project, tmp_path):
    secret = "never-print-this-password-0123456789"
    result = run_site(project, tmp_path, slurm_db_password=secret, slurm_staging_cpus=0)
    assert result.returncode != 0
    assert secret not in result.stdout + result.stderr
