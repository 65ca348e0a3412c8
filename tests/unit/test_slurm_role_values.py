"""The slurm role refuses bad input of its own before any host changes.

site.yml passes the Site's values into the role; these cases give the role bad values
directly (extra variables win over the values site.yml passes), so the Site-level check in
validate.yml passes and the role's own validation is what must refuse. As in
test_site_values.py, every host's connection points at a closed port: a run that reached a
host would report it UNREACHABLE.
"""

import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from test_site_values import assert_refused_before_any_host, run_site, value_id

JWKS = {"keys": [{"kty": "RSA", "kid": "k", "n": "AQAB", "e": "AQAB"}]}


def public_pem(key):
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def private_pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


RSA_2048 = rsa.generate_private_key(public_exponent=65537, key_size=2048)
RSA_1024 = rsa.generate_private_key(public_exponent=65537, key_size=1024)
EC_P256 = ec.generate_private_key(ec.SECP256R1())
ISSUER = "https://issuer.pharos.test"


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
    ({"slurm_db_password": "short"}, "slurm_db_password must be set in full mode, at least 16 characters"),
    ({"slurm_jwks": json.dumps(JWKS)}, "slurm_jwks, slurm_jwks_file and slurm_jwt_user_claim are no longer taken"),
    ({"slurm_jwt_user_claim": "preferred_username"}, "are no longer taken"),
    ({"slurm_member_token_issuer": ISSUER, "slurm_member_token_public_keys": private_pem(RSA_2048)},
     "it holds a private key"),
    ({"slurm_member_token_issuer": ISSUER, "slurm_member_token_public_keys": public_pem(RSA_1024)},
     "block 1 is an RSA key of 1024 bits; at least 2048 are needed"),
    ({"slurm_member_token_issuer": ISSUER, "slurm_member_token_public_keys": public_pem(EC_P256)},
     "block 1 is not an RSA key"),
    ({"slurm_member_token_issuer": ISSUER, "slurm_member_token_public_keys": public_pem(RSA_2048) * 3},
     "it holds 3 keys"),
    ({"slurm_member_token_issuer": ISSUER, "slurm_member_token_public_keys": ""}, "it holds no PEM block"),
    ({"slurm_member_token_issuer": "http://issuer.pharos.test", "slurm_member_token_public_keys": public_pem(RSA_2048)},
     'now "http://issuer.pharos.test"'),
    ({"slurm_member_token_issuer": ISSUER, "slurm_member_token_public_keys": public_pem(RSA_2048),
      "slurm_member_uid_min": 0}, "(now 0..5499999)"),
    ({"slurm_token_max_lifespan": 5}, "slurm_token_max_lifespan is 5"),
    ({"slurm_refused_submitters": ["Pharos Agent"]}, 'slurm_refused_submitters is ["Pharos Agent"]'),
    ({"slurm_private_data": ["everything"]}, 'slurm_private_data is ["everything"]'),
    ({"slurm_restd_listen_address": "0.0.0.0:6820"}, "slurm_restd_listen_address (0.0.0.0:6820)"),
], ids=value_id)
def test_a_bad_role_value_is_named_and_no_host_is_contacted(project, tmp_path, values, named):
    assert_refused_before_any_host(run_site(project, tmp_path, **values), named)


def test_the_database_password_never_appears_in_the_output(project, tmp_path):
    secret = "never-print-this-password-0123456789"
    result = run_site(project, tmp_path, slurm_db_password=secret, slurm_staging_cpus=0)
    assert result.returncode != 0
    assert secret not in result.stdout + result.stderr
