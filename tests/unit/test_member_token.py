"""The Site's member token issuer (roles/slurm/files/pharos_member_token.py): which member
tokens it exchanges for a Slurm token, and every way it refuses one."""

import importlib.util
import pwd
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from conftest import PROJECT

SPEC = importlib.util.spec_from_file_location(
    "pharos_member_token", PROJECT / "roles" / "slurm" / "files" / "pharos_member_token.py")
issuer = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(issuer)

NOW = 1_800_000_000
SLURM_KEY = b"k" * 32
SETTINGS = {"issuer": "https://issuer.pharos.test", "audience": "slurm:pharos", "max_lifespan": 900,
            "member_uid_min": 5000000, "member_uid_max": 5499999}
ACCOUNTS = {"pharosalice": 5000001, "root": 0, "slurm": 64030, "pharos-agent": 4100001,
            "outsider": 6000000, "localmember": 5000009, "pharosshadow": 5000010}
# The host's own accounts, as /etc/passwd lists them: sitelocal holds a UID in the member range.
HOST_ACCOUNTS = {"root": 0, "slurm": 64030, "pharos-agent": 4100001, "pharos-runtime": 4100002,
                 "localmember": 5000009, "sitelocal": 5000010}


def lookup(name):
    if name not in ACCOUNTS:
        raise KeyError(name)
    return pwd.struct_passwd((name, "x", ACCOUNTS[name], ACCOUNTS[name], "", "/", "/bin/sh"))


def new_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_pem(key):
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


ISSUER_KEY = new_key()
NEXT_KEY = new_key()


def member_token(key=ISSUER_KEY, lifetime=300, **claims):
    now = int(time.time())
    body = {"iss": SETTINGS["issuer"], "aud": SETTINGS["audience"], "iat": now - 30, "exp": now + lifetime}
    body.update(claims)
    return jwt.encode({name: value for name, value in body.items() if value is not None}, key, algorithm="RS256")


def exchange(token, keys=(ISSUER_KEY,), now=None):
    return issuer.exchange(token, SETTINGS, [public_pem(key) for key in keys], SLURM_KEY, HOST_ACCOUNTS,
                           lookup=lookup, now=now)


def refusal(token, **options):
    with pytest.raises(issuer.Refused) as refused:
        exchange(token, **options)
    return str(refused.value)


def test_a_members_token_becomes_a_slurm_token_for_that_member_alone():
    answer = exchange(member_token(sun="pharosalice", preferred_username="pharosalice"))
    claims = jwt.decode(answer["token"], SLURM_KEY, algorithms=["HS256"])
    assert answer["user"] == claims["sun"] == "pharosalice"
    assert set(claims) == {"sun", "iat", "exp"}
    assert claims["exp"] == answer["expires"]


def test_the_slurm_token_lives_no_longer_than_the_member_token_or_the_limit():
    token = member_token(lifetime=300, sun="pharosalice")
    member_expiry = jwt.decode(token, options={"verify_signature": False})["exp"]
    assert exchange(token)["expires"] == member_expiry
    # A request late in the member token's life: the limit counts from now, the member token's
    # expiry still bounds it.
    now = int(time.time())
    assert exchange(token, now=now)["expires"] <= min(member_expiry, now + SETTINGS["max_lifespan"])


def test_the_issuers_next_key_is_taken_while_it_rolls_its_key():
    answer = exchange(member_token(key=NEXT_KEY, sun="pharosalice"), keys=(ISSUER_KEY, NEXT_KEY))
    assert answer["user"] == "pharosalice"


@pytest.mark.parametrize("name", ["slurm", "root", "0", "pharos-agent", "pharos-runtime", "4100001", "5000001"])
@pytest.mark.parametrize("claim", ["sun", "username", "preferred_username"])
def test_a_system_service_or_numeric_name_in_any_name_claim_is_refused(name, claim):
    message = refusal(member_token(**{claim: name}))
    if claim == "sun":
        assert repr(name) in message
    else:
        assert message == "the token names no member in 'sun'"


@pytest.mark.parametrize("claim", ["username", "preferred_username"])
def test_a_name_claim_that_disagrees_with_sun_is_refused(claim):
    message = refusal(member_token(sun="pharosalice", **{claim: "root"}))
    assert message == f"the token's '{claim}' names someone other than its 'sun' ('pharosalice')"


@pytest.mark.parametrize(("name", "rule"), [
    ("outsider", "has UID 6000000, outside the member range 5000000-5499999"),
    ("localmember", "is an account of this host, not a member"),
    ("pharosshadow", "has UID 5000010, which the account 'sitelocal' of this host holds"),
    ("nobody-here", "is no account known here"),
    ("Pharos", "is not a member's name"),
    ("alice bob", "is not a member's name"),
    ("", "names no member in 'sun'"),
])
def test_a_name_that_is_not_a_directory_member_in_the_range_is_refused(name, rule):
    assert rule in refusal(member_token(sun=name))


@pytest.mark.parametrize(("claims", "rule"), [
    ({"aud": "slurm:another-site"}, "Audience"),
    ({"aud": None}, 'Token is missing the "aud" claim'),
    ({"iss": "https://idp.example.org"}, "Invalid issuer"),
    ({"iss": None}, 'Token is missing the "iss" claim'),
    ({"exp": None}, 'Token is missing the "exp" claim'),
    ({"iat": None}, 'Token is missing the "iat" claim'),
], ids=["another audience", "no audience", "another issuer", "no issuer", "no expiry", "no issue time"])
def test_a_member_token_not_issued_for_this_sites_slurm_is_refused(claims, rule):
    message = refusal(member_token(sun="pharosalice", **claims))
    assert message.startswith("the member token is not valid here: ")
    assert rule in message


def test_an_expired_member_token_is_refused():
    assert "Signature has expired" in refusal(member_token(lifetime=-120, sun="pharosalice"))


def test_a_member_token_that_lives_longer_than_allowed_is_refused():
    assert "longer than the 900 s allowed" in refusal(member_token(lifetime=3600, sun="pharosalice"))


def test_a_token_signed_by_another_key_is_refused():
    assert refusal(member_token(key=new_key(), sun="pharosalice")) == "the member token is not signed by the Pharos issuer's key"


@pytest.mark.parametrize("algorithm", ["HS256", "none"])
def test_a_token_in_another_algorithm_is_refused(algorithm):
    now = int(time.time())
    claims = {"iss": SETTINGS["issuer"], "aud": SETTINGS["audience"], "iat": now, "exp": now + 60, "sun": "pharosalice"}
    token = jwt.encode(claims, b"x" * 32 if algorithm == "HS256" else None, algorithm=algorithm)
    assert "not valid here" in refusal(token)


def test_a_request_longer_than_the_limit_is_refused():
    class Stream:
        @staticmethod
        def read(size):
            return b"a" * size
    with pytest.raises(issuer.Refused, match="longer than 16384 bytes"):
        issuer.read_request(Stream())


def test_the_host_accounts_are_read_with_their_uids_from_passwd(tmp_path):
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\nsitelocal:x:5000010:100::/home/s:/bin/sh\n"
                      "# a comment\nbroken line\n")
    assert issuer.local_accounts(str(passwd)) == {"root": 0, "sitelocal": 5000010}
