"""The Slurm cluster of issue 4, checked from the login node the way a member and the
platform use it: jobs land where they should, staging limits refuse at submission, and
member tokens signed by the identity provider (and only those) submit as that member."""

import base64
import json
import os
import shlex
import time

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

testinfra_hosts = ["ansible://pharos-cluster-login"]

ACCOUNT = "pharos_a_test"
KEY_ID = "pharos-scenario-signer"
SUBMIT_URL = "http://127.0.0.1:6820/slurm/v0.0.42/job/submit"
MEMBERS = {"pharosalice": 5000001, "pharosbob": 5000002}


def as_member(host, member, command):
    return host.run(f"runuser -u {member} -- {command}")


def site_value(host, name):
    return host.ansible.get_variables()[name]


@pytest.mark.parametrize(("partition", "node"), [("compute", "pharos-cluster-compute"),
                                                 ("staging", "pharos-cluster-staging")])
def test_member_job_runs_as_the_member_on_the_partitions_node(host, partition, node):
    result = as_member(host, "pharosalice",
                       f"timeout 60 srun -A {ACCOUNT} -p {partition} -t 1 sh -c 'id -un; hostname'")
    assert result.rc == 0, result.stderr
    assert result.stdout.split() == ["pharosalice", node]


def test_compute_partition_takes_a_job_larger_than_the_staging_limits(host):
    cpus = site_value(host, "icarus_hpc_slurm_staging_cpus") + 1
    result = as_member(host, "pharosalice",
                       f"timeout 60 srun -A {ACCOUNT} -p compute -c {cpus} -t 1 true")
    assert result.rc == 0, result.stderr


@pytest.mark.parametrize(("option", "message"), [
    ("cpus", "More processors requested than permitted"),
    ("memory", "Memory required by task is not available"),
    ("time", "Requested time limit is invalid"),
])
def test_staging_job_over_a_limit_is_refused_at_submission(host, option, message):
    request = {
        "cpus": f"-c {site_value(host, 'icarus_hpc_slurm_staging_cpus') + 1}",
        "memory": f"--mem={site_value(host, 'icarus_hpc_slurm_staging_memory_mib') + 1}",
        "time": f"-t {site_value(host, 'icarus_hpc_slurm_staging_time_minutes') + 1}",
    }[option]
    result = as_member(host, "pharosbob",
                       f"sbatch -A {ACCOUNT} -p staging {request} --wrap true")
    assert result.rc != 0, result.stdout
    assert "Batch job submission failed" in result.stderr
    assert message in result.stderr
    # Refused, not left pending.
    assert host.run("squeue -h -u pharosbob").stdout.strip() == ""


def test_hs256_key_is_readable_by_slurm_alone(host):
    key = host.file("/etc/slurm/jwt_hs256.key")
    assert (key.user, key.group, key.mode, key.size) == ("slurm", "slurm", 0o600, 32)
    assert host.run("runuser -u slurmrestd -- cat /etc/slurm/jwt_hs256.key").rc != 0


def test_slurmdbd_conf_with_the_database_password_is_readable_by_slurm_alone(host):
    conf = host.file("/etc/slurm/slurmdbd.conf")
    assert (conf.user, conf.group, conf.mode) == ("slurm", "slurm", 0o600)


def test_slurmrestd_runs_unprivileged_and_listens_on_loopback_and_its_socket_only(host):
    process = host.process.get(comm="slurmrestd")
    assert process.user == "slurmrestd"
    listening = [str(socket) for socket in host.socket.get_listening_sockets()]
    assert "tcp://127.0.0.1:6820" in listening
    assert "unix:///run/slurmrestd/slurmrestd.socket" in listening
    assert not [s for s in listening if s.endswith(":6820") and s != "tcp://127.0.0.1:6820"]
    status = host.run(f"grep -E '^(NoNewPrivs|CapEff):' /proc/{process.pid}/status").stdout
    assert "NoNewPrivs:\t1" in status
    assert "CapEff:\t0000000000000000" in status


# Member tokens (seed 004): RS256, signed by the identity provider whose public keys are the
# JWKS; the scenario's stand-in provider is the key prepare.yml made.

def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def sign(key, member, lifetime):
    now = int(time.time())
    header = {"alg": "RS256", "typ": "JWT", "kid": KEY_ID}
    claims = {"sub": member, "preferred_username": member, "iat": now - 60, "exp": now + lifetime}
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{b64url(signature)}"


@pytest.fixture(scope="module")
def provider_key():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "signer.pem"), "rb") as pem:
        return serialization.load_pem_private_key(pem.read(), password=None)


def submit(host, token, member):
    body = {"job": {"script": "#!/bin/bash\nid -u\n", "name": "member-token",
                    "partition": "compute", "account": ACCOUNT,
                    "current_working_directory": "/tmp", "environment": ["PATH=/bin:/usr/bin"]}}
    result = host.run(
        "curl -s -w '\\n%{http_code}' -H 'Content-Type: application/json' "
        f"-H {shlex.quote('X-SLURM-USER-NAME: ' + member)} "
        f"-H {shlex.quote('X-SLURM-USER-TOKEN: ' + token)} "
        f"-d {shlex.quote(json.dumps(body))} {SUBMIT_URL}")
    assert result.rc == 0, result.stderr
    text, _, status = result.stdout.rpartition("\n")
    return int(status), json.loads(text)


def jobs_of(host, member):
    return host.run(f"squeue -h -t all -u {member} -o %i").stdout.split()


def test_member_token_submits_a_job_that_runs_as_that_member(host, provider_key):
    status, answer = submit(host, sign(provider_key, "pharosalice", 300), "pharosalice")
    assert status == 200 and not answer["errors"], answer["errors"]
    job = answer["job_id"]
    for _ in range(60):
        shown = host.run(f"scontrol -o show job {job}").stdout
        if "JobState=COMPLETED" in shown or "JobState=FAILED" in shown:
            break
        time.sleep(1)
    assert f"UserId=pharosalice({MEMBERS['pharosalice']})" in shown
    assert "JobState=COMPLETED" in shown
    assert "NodeList=pharos-cluster-compute" in shown


@pytest.mark.parametrize("case", ["unknown signing key", "expired", "member A's token as member B"])
def test_a_token_that_does_not_prove_the_member_is_refused(host, provider_key, case):
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token, member = {
        "unknown signing key": (sign(stranger, "pharosalice", 300), "pharosalice"),
        "expired": (sign(provider_key, "pharosalice", -120), "pharosalice"),
        "member A's token as member B": (sign(provider_key, "pharosalice", 300), "pharosbob"),
    }[case]
    before = set(jobs_of(host, "pharosalice")) | set(jobs_of(host, "pharosbob"))
    status, answer = submit(host, token, member)
    assert status != 200
    assert answer["errors"]
    assert "job_id" not in answer or not answer["job_id"]
    assert set(jobs_of(host, "pharosalice")) | set(jobs_of(host, "pharosbob")) == before
