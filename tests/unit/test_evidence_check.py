"""scripts/evidence-check: a log that holds one of the laboratory's secrets, a secret given in a
file, a private key or a JWT, in any form a log can carry it, fails the suite, naming the log,
the line and the secret's name, never its value."""

import base64
import hashlib
import hmac
import json
import os
import secrets
import subprocess
import sys
import textwrap
from urllib.parse import quote, quote_plus

import pytest
import yaml

from conftest import PROJECT

CHECK = PROJECT / "scripts" / "evidence-check"
SECRETS = yaml.safe_load((PROJECT / "inventories/lab/group_vars/all/secrets.yml").read_text())
LAB_FILE = "inventories/lab/group_vars/all/secrets.yml"


def checked(*arguments):
    return subprocess.run([sys.executable, str(CHECK), *map(str, arguments)], capture_output=True, text=True, check=False)


def assert_shows_none_of(completed, *values):
    """Neither the findings nor an error show a value, or a 16-character piece of its base64."""
    shown = completed.stdout + completed.stderr
    for value in values:
        raw = value if isinstance(value, bytes) else value.encode()
        encoded = base64.b64encode(raw).decode()
        assert raw.decode("latin-1") not in shown
        assert not any(encoded[start:start + 16] in shown for start in range(0, max(1, len(encoded) - 16)))


def base64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(header, claims, key=None):
    """A JWT, HS256-signed with key, or unsigned (an empty signature) without one."""
    signed = "%s.%s" % (base64url(json.dumps(header).encode()), base64url(json.dumps(claims).encode()))
    return signed + "." + (base64url(hmac.new(key, signed.encode(), hashlib.sha256).digest()) if key else "")


def test_logs_without_secrets_pass_and_say_how_much_was_searched(tmp_path):
    log = tmp_path / "cluster.log"
    log.write_text("TASK [Write slurmdbd.conf] ***\nchanged: [login]\nopenldap_agent_password: <redacted>\n")
    completed = checked(log)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.startswith("evidence-check: 1 logs, 3 lines: none holds any of %d secrets (" % len(SECRETS))


def test_a_secret_or_a_private_key_in_a_log_fails_by_name_without_showing_it(tmp_path):
    clean, leaky = tmp_path / "default.log", tmp_path / "journey.log"
    clean.write_text("ok: [login]\n")
    key_header = "-----BEGIN OPENSSH " + "PRIVATE KEY-----"  # split, so that no scanner takes this file for a key
    leaky.write_text("ok: [login]\nmsg: bind with %s failed\n%s\n" % (SECRETS["slurm_db_password"], key_header))
    completed = checked(clean, leaky)
    assert completed.returncode == 1
    assert "%s:2 holds the value of slurm_db_password" % leaky in completed.stdout
    assert "%s:3 holds a private key" % leaky in completed.stdout
    assert SECRETS["slurm_db_password"] not in completed.stdout and str(clean) not in completed.stdout


@pytest.mark.parametrize("alphabet", ["standard", "URL-safe"])
@pytest.mark.parametrize("offset", [0, 1, 2])
def test_a_secret_inside_a_larger_base64_file_is_found_at_each_byte_offset(tmp_path, offset, alphabet):
    # sssd.conf with the reader's password, as a slurp or a copy's diff would show the file.
    conf = ("[domain/pharos]\nid_provider = ldap\n" + "#" * offset + "\nldap_default_authtok = %s\ncache_credentials = false\n"
            % SECRETS["openldap_sssd_reader_password"]).encode()
    encode = base64.b64encode if alphabet == "standard" else base64.urlsafe_b64encode
    log = tmp_path / "adopt.log"
    log.write_text("ok: [login] =>\n    content: %s\n    encoding: base64\n" % encode(conf).decode())
    completed = checked(log)
    assert completed.returncode == 1
    assert ("%s:2 holds the value of openldap_sssd_reader_password (%s), base64-encoded" % (log, LAB_FILE)) in completed.stdout
    assert_shows_none_of(completed, SECRETS["openldap_sssd_reader_password"])


@pytest.mark.parametrize("written, lines", [
    # YAML's double-quoted string, continued with a backslash at the break
    (lambda value: '    msg: "bind as cn=slurm with %s\\\n      %s failed"\n' % (value[:11], value[11:]), (2, 3)),
    # a long word broken by wrapped output, the rest indented
    (lambda value: "[WARNING]: the password %s\n  %s was refused\n" % (value[:5], value[5:]), (2, 3)),
    # slurmdbd.conf's base64 wrapped at 76 columns in an indented YAML block, the value across a break
    (lambda value: "    content: |-\n" + textwrap.indent("\n".join(textwrap.wrap(base64.b64encode(
        b"StorageUser=slurm\nStorageHost=db.lab\nStoragePass=" + value.encode() + b"\n").decode(), 76)), "        ") + "\n",
     (3, 4)),
], ids=["yaml-continued-string", "wrapped-word", "wrapped-base64"])
def test_a_secret_split_across_lines_is_found_at_the_line_it_starts(tmp_path, written, lines):
    log = tmp_path / "journey.log"
    log.write_text("TASK [Write slurmdbd.conf] ***\n" + written(SECRETS["slurm_db_password"]))
    completed = checked(log)
    assert completed.returncode == 1
    assert "%s:%d holds the value of slurm_db_password" % (log, lines[0]) in completed.stdout
    assert "(split over lines %d-%d)" % lines in completed.stdout
    assert_shows_none_of(completed, SECRETS["slurm_db_password"])


def test_a_secret_split_by_an_escaped_line_break_is_found(tmp_path):
    # base64's output, wrapped at 76 columns, as a JSON log holds a command's stdout.
    conf = b"StorageUser=slurm\nStorageHost=db.lab\nStoragePass=" + SECRETS["slurm_db_password"].encode() + b"\n"
    wrapped = "\n".join(textwrap.wrap(base64.b64encode(conf).decode(), 76))
    log = tmp_path / "check.json"
    log.write_text(json.dumps({"changed": False, "stdout": wrapped, "rc": 0}) + "\n")
    completed = checked(log)
    assert completed.returncode == 1
    assert "%s:1 holds the value of slurm_db_password (%s), base64-encoded." % (log, LAB_FILE) in completed.stdout
    assert_shows_none_of(completed, SECRETS["slurm_db_password"])


@pytest.mark.parametrize("form, encode", [
    ("JSON-escaped", lambda value: json.dumps({"stdout": value})),
    ("JSON-escaped twice", lambda value: json.dumps({"msg": json.dumps({"token": value})})),
    ("URL-encoded", lambda value: "GET /api/?token=%s" % quote(value, safe="")),
    ("URL-encoded", lambda value: "body: secret=%s&next=1" % quote_plus(value)),
])
def test_a_secret_escaped_or_url_encoded_is_found(tmp_path, form, encode):
    value = 'lab/"%s"\\ & +=' % secrets.token_hex(12)
    values = tmp_path / "values.txt"
    values.write_text("%s\n" % value)
    log = tmp_path / "release.log"
    log.write_text("ok: [login]\n%s\n" % encode(value))
    completed = checked("--secrets-from", values, log)
    assert completed.returncode == 1
    assert "%s:2 holds the value on line 1 of %s, %s." % (log, values, form) in completed.stdout
    assert_shows_none_of(completed, value, json.dumps(value)[1:-1], quote(value, safe=""))


def test_a_signed_jwt_is_found_whoever_signed_it_and_an_unsigned_one_passes(tmp_path):
    claims = {"iss": "https://issuer.pharos.test", "aud": "slurm:pharos", "sun": "pharosbob", "exp": 1}
    signed = jwt({"alg": "HS256", "typ": "JWT"}, claims, key=os.urandom(32))
    unsigned = jwt({"alg": "none", "typ": "JWT"}, claims)
    log = tmp_path / "adopt.log"
    log.write_text("E   assert 401 == 200\nE    +  where headers = {'X-SLURM-USER-TOKEN': '%s'}\nrefused: %s\n"
                   % (signed, unsigned))
    completed = checked(log)
    assert completed.returncode == 1
    assert completed.stdout.splitlines() == [
        "%s:2 holds a JWT. Fix: find the task or test that printed it and give it no_log or a redacted message." % log]
    assert_shows_none_of(completed, signed)


def test_secrets_from_a_yaml_mapping_are_found_at_any_depth_and_as_binary(tmp_path):
    token, member, key = secrets.token_hex(20), secrets.token_urlsafe(24), os.urandom(32)
    mapping = tmp_path / "journey.yml"
    mapping.write_text(yaml.safe_dump({"waldur": {"tokens": [token, member]}, "jwt_hs256": key}))
    log = tmp_path / "journey.log"
    log.write_text("Authorization: Token %s\nmember: %s\nkey: %s\n" % (token, quote(member), key.hex()))
    completed = checked("--secrets-from", mapping, log)
    assert completed.returncode == 1
    assert completed.stdout.splitlines() == [
        "%s:1 holds the value of waldur.tokens[0] (%s). Fix: find the task or test that printed it and give it "
        "no_log or a redacted message." % (log, mapping),
        "%s:2 holds the value of waldur.tokens[1] (%s)%s. Fix: find the task or test that printed it and give it "
        "no_log or a redacted message." % (log, mapping, ", URL-encoded" if quote(member) != member else ""),
        "%s:3 holds the value of jwt_hs256 (%s), hex-encoded. Fix: find the task or test that printed it and give it "
        "no_log or a redacted message." % (log, mapping),
    ]
    assert_shows_none_of(completed, token, member, key)


@pytest.mark.parametrize("shift", range(8))
def test_a_binary_key_is_found_by_any_23_characters_of_its_base64_wherever_they_fall(tmp_path, shift):
    key = os.urandom(1024)
    munge_key = tmp_path / "munge.key"
    munge_key.write_bytes(key)
    piece = base64.b64encode(key).decode()[500 + shift:523 + shift]
    log = tmp_path / "adopt.log"
    log.write_text("ok: [login]\n%s stdout: %s...\n" % ("x" * shift, piece))
    completed = checked("--key-file", munge_key, log)
    assert completed.returncode == 1
    assert "%s:2 holds part of the secret in %s, base64-encoded." % (log, munge_key) in completed.stdout
    assert_shows_none_of(completed, key)


def test_a_binary_key_is_found_base64_encoded_whole_and_hex_encoded_over_lines(tmp_path):
    key = os.urandom(1024)
    munge_key = tmp_path / "munge.key"
    munge_key.write_bytes(key)
    xxd = "\n".join(textwrap.wrap(key.hex(), 60))
    log = tmp_path / "adopt.log"
    log.write_text("content: %s\nstdout: |\n%s\n" % (base64.b64encode(key).decode(), textwrap.indent(xxd, "    ")))
    completed = checked("--key-file", munge_key, log)
    assert completed.returncode == 1
    assert "%s:1 holds the secret in %s, base64-encoded." % (log, munge_key) in completed.stdout
    assert "%s:3 holds the secret in %s, hex-encoded (split over lines 3-37)." % (log, munge_key) in completed.stdout
    assert_shows_none_of(completed, key)


def test_a_directory_of_run_time_secrets_names_each_by_its_path(tmp_path):
    collected = tmp_path / "secrets" / "adopt"
    munge_key = collected / "pharos-adopt-login" / "etc" / "munge" / "munge.key"
    token = collected / "controller" / "site-agent-token"
    munge_key.parent.mkdir(parents=True)
    token.parent.mkdir(parents=True)
    munge_value, token_value = secrets.token_urlsafe(48), secrets.token_hex(20)
    munge_key.write_text(munge_value)
    token.write_text(token_value + "\n")
    log = tmp_path / "adopt.log"
    log.write_text("msg: the key starts %s\nheaders: {Authorization: Token %s}\n" % (munge_value[10:35], token_value))
    completed = checked("--key-file", collected, log)
    assert completed.returncode == 1
    assert "%s:1 holds part of the secret in %s." % (log, munge_key) in completed.stdout
    assert "%s:2 holds the secret in %s." % (log, token) in completed.stdout
    assert_shows_none_of(completed, munge_value, token_value)


@pytest.mark.parametrize("given, refusal", [
    (lambda tmp_path: ("--secrets-from", tmp_path / "values.txt", "%s\nab1-cd\n" % secrets.token_hex(20)),
     "values.txt: the value on line 2 of {path} has fewer than 8 characters"),
    (lambda tmp_path: ("--secrets-from", tmp_path / "vault.yml", "$ANSIBLE_VAULT;1.1;AES256\n6162\n"),
     "{path} is vault-encrypted"),
    (lambda tmp_path: ("--secrets-from", tmp_path / "broken.yml", "token: [%s\n" % secrets.token_hex(20)),
     "{path} is not YAML that evidence-check can read at line 2, column 1"),
    (lambda tmp_path: ("--secrets-from", tmp_path / "empty.yml", "{}\n"), "{path} holds no secret"),
], ids=["short", "vault", "not-yaml", "empty"])
def test_a_secrets_file_that_cannot_be_used_is_refused_without_showing_a_value(tmp_path, given, refusal):
    option, path, content = given(tmp_path)
    path.write_text(content)
    log = tmp_path / "default.log"
    log.write_text("ok: [login]\n")
    completed = checked(option, path, log)
    assert completed.returncode == 2
    assert refusal.format(path=path) in completed.stderr
    assert_shows_none_of(completed, *[line for line in content.splitlines() if len(line) > 6])


def test_a_private_key_file_is_found_by_its_private_numbers_and_never_by_its_public_key(tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
    signer = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signer_file = tmp_path / "signer.pem"
    signer_file.write_bytes(signer.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                 serialization.NoEncryption()))
    ops = ed25519.Ed25519PrivateKey.generate()
    ops_file = tmp_path / "ops_key"
    ops_file.write_bytes(ops.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                           serialization.NoEncryption()))
    # The public halves, as a diff of authorized_keys or of the pinned issuer keys shows them.
    public = tmp_path / "cluster.log"
    public.write_text("+%s ops\n%s" % (
        ops.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode(),
        textwrap.indent(signer.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
                        .decode(), "+")))
    # A line near the end of the signer's body, within its CRT coefficients, without the armour.
    private = tmp_path / "release.log"
    private.write_text("-    %s\n" % signer_file.read_text().splitlines()[-3])
    completed = checked("--key-file", signer_file, "--key-file", ops_file, public, private)
    assert completed.returncode == 1
    assert completed.stdout.splitlines() == [
        "%s:1 holds part of the secret in %s, base64-encoded. Fix: find the task or test that printed it and give "
        "it no_log or a redacted message." % (private, signer_file)]
