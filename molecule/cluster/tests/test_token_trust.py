"""Member tokens, attacked. Slurm trusts only the controller's HS256 key and acts as any name a
token carries, so the Site's issuer (pharos-member-token.socket) is the guard: it signs a Slurm
token only for a directory member, from a member token that the Pharos issuer signed for this
Site's Slurm. prepare.yml's signer stands in for the Pharos issuer.

Every refused case also goes straight to slurmrestd, which must refuse it too: the Pharos
issuer's key, and any identity provider's, mean nothing to Slurm itself."""

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from member_tokens import (
    ACCOUNT,
    MEMBERS,
    all_jobs,
    assert_refused_everywhere,
    exchange,
    load_issuer_key,
    member_token,
    new_jobs,
    submit,
    wait_for_end,
)

testinfra_hosts = ["ansible://pharos-cluster-login"]
FORBIDDEN_NAMES = ["slurm", "root", "0", "pharos-agent", "pharos-runtime"]


@pytest.fixture(scope="module")
def issuer_key():
    return load_issuer_key()


def test_a_member_token_exchanged_at_the_site_submits_as_that_member(host, issuer_key):
    issued = member_token(issuer_key, sun="pharosalice")
    exchanged = exchange(host, issued)
    assert exchanged.rc == 0, exchanged.stderr
    slurm_token = exchanged.stdout.strip()
    # The Slurm token names the member alone, and lives no longer than the member token.
    claims = jwt.decode(slurm_token, options={"verify_signature": False})
    assert claims["sun"] == "pharosalice"
    assert claims["exp"] <= jwt.decode(issued, options={"verify_signature": False})["exp"]
    status, answer = submit(host, slurm_token, "pharosalice")
    assert status == 200 and not answer["errors"], answer["errors"]
    shown = wait_for_end(host, answer["job_id"])
    assert f"UserId=pharosalice({MEMBERS['pharosalice']})" in shown
    assert "JobState=COMPLETED" in shown


def assert_accepted(host, token):
    """The valid twin of a refused token: the issuer gives a Slurm token for it."""
    exchanged = exchange(host, token)
    assert exchanged.rc == 0, exchanged.stderr


# Each refused token differs from an accepted one in exactly the claim under test.
@pytest.mark.parametrize("name", FORBIDDEN_NAMES)
def test_a_token_naming_a_system_or_service_account_in_sun_is_refused_for_that_name(host, issuer_key, name):
    assert_accepted(host, member_token(issuer_key, sun="pharosalice"))
    refusal = assert_refused_everywhere(host, member_token(issuer_key, sun=name), name)
    assert repr(name) in refusal, refusal


@pytest.mark.parametrize("claim", ["username", "preferred_username"])
@pytest.mark.parametrize("name", FORBIDDEN_NAMES)
def test_a_token_whose_other_name_claim_names_a_system_or_service_account_is_refused(host, issuer_key, claim, name):
    valid = {"sun": "pharosalice", claim: "pharosalice"}
    assert_accepted(host, member_token(issuer_key, **valid))
    refusal = assert_refused_everywhere(host, member_token(issuer_key, **{**valid, claim: name}), "pharosalice")
    assert f"the token's '{claim}' names someone other than its 'sun' ('pharosalice')" in refusal, refusal


@pytest.mark.parametrize("case", ["identity provider's key", "another Site's audience", "another issuer",
                                  "expired", "lives longer than allowed"])
def test_a_member_token_not_issued_for_this_sites_slurm_is_refused(host, issuer_key, case):
    provider = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = {
        # What a relying party of the identity provider could replay.
        "identity provider's key": member_token(provider, sun="pharosalice", preferred_username="pharosalice"),
        "another Site's audience": member_token(issuer_key, sun="pharosalice", aud="slurm:another-site"),
        "another issuer": member_token(issuer_key, sun="pharosalice", iss="https://idp.example.org"),
        "expired": member_token(issuer_key, lifetime=-120, sun="pharosalice"),
        "lives longer than allowed": member_token(issuer_key, lifetime=86400, sun="pharosalice"),
    }[case]
    assert_accepted(host, member_token(issuer_key, sun="pharosalice", preferred_username="pharosalice"))
    assert_refused_everywhere(host, token, "pharosalice")


def test_member_as_token_of_another_member_is_refused_by_slurm(host, issuer_key):
    exchanged = exchange(host, member_token(issuer_key, sun="pharosalice"))
    assert exchanged.rc == 0, exchanged.stderr
    before = all_jobs(host)
    status, answer = submit(host, exchanged.stdout.strip(), "pharosbob")
    assert status != 200 and answer["errors"], answer
    assert not new_jobs(host, before)


def test_a_member_cannot_reach_the_sites_issuer(host, issuer_key):
    asked = exchange(host, member_token(issuer_key, sun="pharosalice"), asker="pharosalice")
    assert asked.rc != 0
    assert asked.stdout.strip() == ""
    assert "Permission denied" in asked.stderr


@pytest.mark.parametrize("who", ["nobody", "pharosalice", "pharos-runtime", "pharosalice's job"])
def test_no_member_job_or_service_mints_a_slurm_token(host, who):
    if who == "pharosalice's job":
        command = f"runuser -u pharosalice -- timeout 60 srun -A {ACCOUNT} -t 1 scontrol token"
    else:
        command = f"runuser -u {who} -- scontrol token"
    minted = host.run(command)
    assert minted.rc != 0
    assert "SLURM_JWT=" not in minted.stdout
    assert "denied" in minted.stderr.lower(), minted.stderr


def test_slurm_trusts_the_hs256_key_alone_and_limits_token_lifetimes(host):
    parameters = host.run("scontrol show config | grep '^AuthAltParameters'").stdout
    assert "disable_token_creation" in parameters
    assert "max_token_lifespan=900" in parameters
    assert "jwks" not in parameters
    assert "userclaimfield" not in parameters
    assert not host.file("/etc/slurm/jwks.json").exists
