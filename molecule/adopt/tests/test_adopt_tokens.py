"""Full mode's member token attacks (molecule/cluster/tests/test_token_trust.py), collected here
and run on the adopted Site's controller, reached over ssh as its administrator: an identity
provider's token or one naming slurm, root or a service account is refused by the Site's issuer
and by slurmrestd, a member cannot reach the issuer, and no member, job or service mints a
Slurm token. Adopt mode wrote the HS256 key and AuthAltParameters in pharos.conf, since the
Site's slurmctld took no JWT before."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cluster" / "tests"))

from test_token_trust import (  # noqa: E402,F401  (pytest collects them in this module, on this scenario's host)
    issuer_key,
    test_a_member_cannot_reach_the_sites_issuer,
    test_a_member_token_exchanged_at_the_site_submits_as_that_member,
    test_a_member_token_not_issued_for_this_sites_slurm_is_refused,
    test_a_token_naming_a_system_or_service_account_in_sun_is_refused_for_that_name,
    test_a_token_whose_other_name_claim_names_a_system_or_service_account_is_refused,
    test_member_as_token_of_another_member_is_refused_by_slurm,
    test_no_member_job_or_service_mints_a_slurm_token,
    test_slurm_trusts_the_hs256_key_alone_and_limits_token_lifetimes,
)

testinfra_hosts = ["ansible://pharos-adopt-login"]
