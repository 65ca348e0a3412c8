"""The run path as the Runtime drives it (docs/slurm.md): a member's stage-in, compute and
stage-out chained with afterok, passing the member's files from the staging node to the compute
node and back through their scratch root on the nodes' shared scratch, and whose failed middle
step stops the chain; a job's comment kept in accounting; the compute partition's time limit;
and the Runtime's own identity, which sees and cancels members' jobs but runs none, with no sudo
and no Slurm AdminLevel."""

import shlex
import time
import uuid

import pytest

testinfra_hosts = ["ansible://pharos-cluster-login"]

ACCOUNT = "pharos_a_test"
MEMBER = "pharosalice"
SERVICE_ACCOUNTS = ("pharos-runtime", "pharos-agent")
SCRATCH = "/scratch/pharos"
CHECK = "/usr/local/bin/pharos-scratch-attempt"


def submit(host, partition, *options, command="true", user=MEMBER):
    return host.run(f"runuser -u {user} -- sbatch --parsable --chdir=/tmp -A {ACCOUNT} -p {partition} -t 5 "
                    f"--mem=64 {' '.join(options)} --wrap {shlex.quote(command)}")


def submitted(host, partition, *options, command="true"):
    job = submit(host, partition, *options, command=command)
    assert job.rc == 0, job.stderr
    return job.stdout.strip().split(";")[0]


def accounting(host, job_id, fields):
    """The job's allocation row in slurmdbd, once it has ended there; None until then."""
    row = host.run(f"sacct -nP -X -j {job_id} --format={fields},state").stdout.strip()
    if not row or row.split("|")[-1] in ("PENDING", "RUNNING"):
        return None
    return row.split("|")


def ended(host, job_id, fields="jobid", seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        row = accounting(host, job_id, fields)
        if row:
            return row
        time.sleep(2)
    raise AssertionError(f"job {job_id} has not ended in slurmdbd after {seconds} s")


def pending_reason(host, job_id):
    return host.run(f"squeue -h -j {job_id} -o %r").stdout.strip()


# Each step of the chain below writes the node it ran on beside its file.
STEP_NODES = ("stage-in.node", "compute.node", "stage-out.node")


@pytest.fixture(scope="module")
def chain(host):
    """One Run's three jobs as the Runtime chains them, in a new attempt of the member's scratch
    root: stage-in on staging makes the attempt directory with the job-side check and writes the
    input there, compute turns it into a result, and stage-out writes the final file from that.
    The accounting row (partition, start, end, node list, state) of each job that ended, up to
    the first that did not complete: the steps after it never run."""
    attempt = f"chain-{uuid.uuid4().hex[:12]}"
    work = f"{SCRATCH}/{MEMBER}/{attempt}"
    payload = f"input of {attempt}"
    # Stage-in and compute last a few seconds, so that a step started too early would show.
    stage_in = submitted(host, "staging", command=f"set -e; W=$({CHECK} {attempt}) || exit 70; "
                                                  f"echo {shlex.quote(payload)} > $W/input; hostname > $W/stage-in.node; sleep 3")
    compute = submitted(host, "compute", f"--dependency=afterok:{stage_in}",
                        command=f"set -e; W={work}; tr a-z A-Z < $W/input > $W/result; hostname > $W/compute.node; sleep 3")
    stage_out = submitted(host, "staging", f"--dependency=afterok:{compute}",
                          command=f"set -e; W={work}; cat $W/result > $W/final; hostname > $W/stage-out.node")
    rows = []
    try:
        for job in (stage_in, compute, stage_out):
            rows.append(ended(host, job, "partition,start,end,nodelist"))
            if rows[-1][-1] != "COMPLETED":
                break
    finally:
        host.run(f"scancel {stage_in} {compute} {stage_out}")
    return {"work": work, "payload": payload, "rows": rows}


def test_stage_in_compute_and_stage_out_run_in_order_each_after_the_last_succeeded(chain):
    rows = chain["rows"]
    assert [(row[0], row[-1]) for row in rows] == [("staging", "COMPLETED"), ("compute", "COMPLETED"),
                                                   ("staging", "COMPLETED")]
    # Each step started no earlier than the one it waited for ended (ISO times sort as text).
    assert rows[0][2] <= rows[1][1] and rows[1][2] <= rows[2][1], rows


def test_the_members_files_pass_from_stage_in_through_compute_to_stage_out_in_their_scratch_root(host, chain):
    work = chain["work"]
    # Root on the login node reads what the jobs left, through its own mount of the shared scratch.
    assert host.file(f"{work}/final").content_string == chain["payload"].upper() + "\n"
    ran_on = [host.file(f"{work}/{name}").content_string.strip() for name in STEP_NODES]
    assert ran_on == [row[3] for row in chain["rows"]]
    for node, row in zip(ran_on, chain["rows"]):
        assert node in host.check_output(f"sinfo -h -N -p {row[0]} -o %N").split(), (node, row[0])
    assert host.check_output(f"stat -c %U:%a {SCRATCH}/{MEMBER} {work}").split() == [f"{MEMBER}:700"] * 2
    entries = host.check_output(f"find {work} -mindepth 1 -printf '%P %u\\n'").splitlines()
    assert sorted(entries) == sorted(f"{name} {MEMBER}" for name in
                                     ("input", "result", "final", *STEP_NODES))


def test_a_failed_compute_step_stops_the_chain_before_stage_out(host):
    stage_in = submitted(host, "staging")
    compute = submitted(host, "compute", f"--dependency=afterok:{stage_in}", command="exit 3")
    stage_out = submitted(host, "staging", f"--dependency=afterok:{compute}")
    try:
        assert ended(host, compute, "exitcode") == ["3:0", "FAILED"]
        deadline = time.monotonic() + 60
        while pending_reason(host, stage_out) != "DependencyNeverSatisfied" and time.monotonic() < deadline:
            time.sleep(2)
        assert pending_reason(host, stage_out) == "DependencyNeverSatisfied"
    finally:
        host.run(f"scancel {stage_out}")
    assert ended(host, stage_out)[-1].startswith("CANCELLED")


def test_a_jobs_comment_is_kept_in_accounting(host):
    job = submitted(host, "compute", "--comment='pharos-run 42: stage-in'")
    assert ended(host, job, "comment") == ["pharos-run 42: stage-in", "COMPLETED"]


def test_a_job_asking_for_more_than_the_compute_partitions_time_is_refused(host):
    hours = host.ansible.get_variables()["pharos_slurm_compute_max_time_hours"]
    refused = host.run(f"runuser -u {MEMBER} -- sbatch -A {ACCOUNT} -p compute -t {hours + 1}:00:00 --wrap true")
    assert refused.rc != 0, refused.stdout
    assert "Requested time limit is invalid" in refused.stderr
    within = submit(host, "compute", command="true").stdout.strip()
    assert within.isdigit()


def test_the_runtime_sees_and_cancels_a_members_job(host):
    job = submitted(host, "compute", command="sleep 300")
    try:
        seen = host.run(f"runuser -u pharos-runtime -- squeue -h -j {job} -o %u")
        assert seen.stdout.strip() == MEMBER, seen.stderr
        # A member sees only their own jobs (PrivateData): the Runtime's view is its coordinator's.
        assert host.run(f"runuser -u pharosbob -- squeue -h -j {job} -o %u").stdout.strip() == ""
        cancelled = host.run(f"runuser -u pharos-runtime -- scancel {job}")
        assert cancelled.rc == 0, cancelled.stderr
        assert ended(host, job)[-1].startswith("CANCELLED")
    finally:
        host.run(f"scancel {job}")


@pytest.mark.parametrize("account", SERVICE_ACCOUNTS)
def test_a_service_account_submits_nothing(host, account):
    refused = submit(host, "compute", user=account)
    assert refused.rc != 0, refused.stdout
    assert host.run(f"squeue -h -u {account}").stdout.strip() == ""


@pytest.mark.parametrize("account", SERVICE_ACCOUNTS)
def test_a_service_account_has_no_sudo_and_no_slurm_admin_level(host, account):
    assert not {"sudo", "admin", "wheel", "root"} & set(host.user(account).groups)
    if host.exists("sudo"):
        listed = host.run(f"sudo -l -U {account}")
        assert "is not allowed to run sudo" in listed.stdout, listed.stdout
    sudoers = host.run(f"grep -rlw -- {account} /etc/sudoers /etc/sudoers.d").stdout.strip()
    assert sudoers == ""
    level = host.run(f"sacctmgr -nP show user {account} format=adminlevel").stdout.strip()
    assert level == "None"
