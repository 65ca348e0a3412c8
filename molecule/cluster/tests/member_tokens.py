"""Member tokens as Site Runtime uses them: signed by prepare.yml's stand-in for the Pharos
issuer, exchanged at the Site's issuer for a Slurm token, and used against slurmrestd."""

import json
import os
import shlex
import tempfile
import time

import jwt
from cryptography.hazmat.primitives import serialization

ACCOUNT = "pharos_a_test"
ISSUER = "https://issuer.pharos.test"
AUDIENCE = "slurm:pharos"
SUBMIT_URL = "http://127.0.0.1:6820/slurm/v0.0.42/job/submit"
MEMBERS = {"pharosalice": 5000001, "pharosbob": 5000002}


def load_issuer_key():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "signer.pem"), "rb") as pem:
        return serialization.load_pem_private_key(pem.read(), password=None)


def member_token(key, lifetime=300, **claims):
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "iat": now - 30, "exp": now + lifetime}
    body.update(claims)
    return jwt.encode({name: value for name, value in body.items() if value is not None}, key, algorithm="RS256")


def put_root_only(host, name, text):
    """A file only root reads, written without the text in any command line."""
    path = f"/root/{name}"
    with tempfile.NamedTemporaryFile("w", suffix=".secret") as local:
        local.write(text)
        local.flush()
        written = host.ansible("copy", f"src={local.name} dest={path} mode=0600", check=False)
    assert not written.get("failed"), "could not write " + path
    return path


def exchange(host, token, asker="pharos-runtime"):
    """Ask the Site's issuer, as asker, for the Slurm token of the member token's member."""
    path = put_root_only(host, "member-token", token)
    return host.run(f"runuser -u {asker} -- pharos-member-token < {path}; status=$?; rm -f {path}; exit $status")


def submit(host, token, member):
    """Submit through slurmrestd with the token; (HTTP status, answer). The token goes by file."""
    headers = put_root_only(host, "rest-headers", f"X-SLURM-USER-NAME: {member}\nX-SLURM-USER-TOKEN: {token}\n")
    # The cluster's default partition: compute in full mode, the Site's own in adopt mode.
    body = {"job": {"script": "#!/bin/bash\nid -u\n", "name": "member-token",
                    "account": ACCOUNT, "current_working_directory": "/tmp", "environment": ["PATH=/bin:/usr/bin"]}}
    result = host.run(f"curl -s -w '\\n%{{http_code}}' -H @{headers} -H 'Content-Type: application/json' "
                      f"-d {shlex.quote(json.dumps(body))} {SUBMIT_URL}; rm -f {headers}")
    assert result.rc == 0, result.stderr
    text, _, status = result.stdout.rpartition("\n")
    return int(status), json.loads(text)


def all_jobs(host):
    return set(host.run("squeue -h -t all -o %i").stdout.split())


def new_jobs(host, before):
    """Jobs slurmctld knows now and did not before. Finished jobs leave its memory after
    MinJobAge, so the set may also shrink; only an addition is a job the token made."""
    return all_jobs(host) - before


def assert_refused_everywhere(host, token, member):
    """The Site's issuer gives no Slurm token for it, and slurmrestd takes no job with it."""
    before = all_jobs(host)
    exchanged = exchange(host, token)
    assert exchanged.rc != 0
    assert exchanged.stdout.strip() == ""
    assert "refused" in exchanged.stderr
    status, answer = submit(host, token, member)
    assert status != 200 and answer["errors"], answer
    assert not new_jobs(host, before)
    return exchanged.stderr


def wait_for_end(host, job):
    for _ in range(60):
        shown = host.run(f"scontrol -o show job {job}").stdout
        if "JobState=COMPLETED" in shown or "JobState=FAILED" in shown:
            return shown
        time.sleep(1)
    return shown
