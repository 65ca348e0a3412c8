"""The Site's Slurm cluster, checked from the login node the way a member and the
platform use it: jobs land where they should, staging limits refuse at submission, and the
controller's files and slurmrestd keep their privileges. Member tokens: test_token_trust.py."""

import pytest

testinfra_hosts = ["ansible://pharos-cluster-login"]

ACCOUNT = "pharos_a_test"


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
    cpus = site_value(host, "pharos_slurm_staging_cpus") + 1
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
        "cpus": f"-c {site_value(host, 'pharos_slurm_staging_cpus') + 1}",
        "memory": f"--mem={site_value(host, 'pharos_slurm_staging_memory_mib') + 1}",
        "time": f"-t {site_value(host, 'pharos_slurm_staging_time_minutes') + 1}",
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
