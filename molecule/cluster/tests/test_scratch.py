"""Member scratch, rows F2 to F6 of the verification table in docs/scratch.md, with real Slurm jobs of
several members on the compute node: the root Prolog makes each member's own root and moves
another account's squat aside first, and the job-side check refuses every root it cannot
trust before anything is written.

Each squatting and racing member acts through a job of their own, as a member could. Root
on the compute node only inspects, and puts things back between cases.
"""

import os
import shlex

import pytest
import testinfra

testinfra_hosts = ["ansible://pharos-cluster-login"]
# The node every job of these tests runs on, and where root inspects what they did.
NODE = "pharos-cluster-compute"

SCRATCH = "/scratch/pharos"
CHECK = "/usr/local/bin/pharos-scratch-attempt"
PROLOG = "/etc/slurm/pharos-scratch-prolog.sh"
REFUSED = 70
UIDS = {"pharosalice": 5000001, "pharosbob": 5000002, "pharoscarol": 5000003,
        "pharosdave": 5000004, "pharoserin": 5000005, "pharosfrank": 5000006}
RACE_ITERATIONS = 200
RACE_JOBS = 20


@pytest.fixture(scope="module")
def compute():
    return testinfra.get_host(f"ansible://{NODE}",
                              ansible_inventory=os.environ["MOLECULE_INVENTORY_FILE"])


def job(host, member, script):
    """A job of the member on the compute node; its result is the script's."""
    return host.run(f"runuser -u {member} -- timeout 120 srun -A pharos_a_test -p compute -w {NODE} -t 2 --mem=64 "
                    f"sh -c {shlex.quote(script)}")


def owner_and_mode(node, path):
    return node.run(f"stat -c %U:%a -- {path}").stdout.strip()


def test_scratch_tree_is_root_s_sticky_group_tree_with_the_runtime_s_box(compute):
    assert owner_and_mode(compute, SCRATCH) == "root:1770"
    assert compute.run(f"stat -c %G {SCRATCH}").stdout.strip() == "pharos-users"
    assert owner_and_mode(compute, f"{SCRATCH}/.runtime") == "pharos-runtime:711"


def test_first_job_gets_the_member_s_own_root_and_an_attempt_directory(host, compute):
    made = job(host, "pharosalice", f"{CHECK} first")
    assert made.rc == 0, made.stderr
    assert made.stdout.strip() == f"{SCRATCH}/pharosalice/first"
    assert owner_and_mode(compute, f"{SCRATCH}/pharosalice") == "pharosalice:700"
    assert owner_and_mode(compute, f"{SCRATCH}/pharosalice/first") == "pharosalice:700"


def test_f2_a_member_cannot_read_another_member_s_known_output_path(host):
    written = job(host, "pharosalice", f"W=$({CHECK} f2) && echo alice-result > $W/out && echo $W/out")
    assert written.rc == 0, written.stderr
    output = written.stdout.strip()
    peer = job(host, "pharosbob", f"cat {output}")
    assert peer.rc != 0
    assert "Permission denied" in peer.stderr
    assert "alice-result" not in peer.stdout
    assert job(host, "pharosbob", f"ls {SCRATCH}/pharosalice").rc != 0


STORE = f"{SCRATCH}/.squatted"
BAIT = f"{SCRATCH}/pharosbob/bait"
# What pharosbob's job plants at pharoscarol's root before her first job, and how stat names it.
SQUATS = {
    "directory": (f"mkdir -m 0777 {SCRATCH}/pharoscarol && echo planted > {SCRATCH}/pharoscarol/planted", "directory"),
    "file": (f"echo planted > {SCRATCH}/pharoscarol && chmod 0666 {SCRATCH}/pharoscarol", "regular file"),
    "fifo": (f"mkfifo -m 0666 {SCRATCH}/pharoscarol", "fifo"),
    "symlink": (f"{CHECK} bait >/dev/null && chmod 0755 {BAIT} && ln -s {BAIT} {SCRATCH}/pharoscarol", "symbolic link"),
}


@pytest.fixture
def victim_without_a_root(compute):
    """pharoscarol before her first job; afterwards root puts the store and bob's bait back."""
    compute.run(f"rm -rf -- {SCRATCH}/pharoscarol {BAIT}")
    yield "pharoscarol"
    compute.run(f"rm -rf -- {SCRATCH}/pharoscarol {BAIT} && find {STORE} -mindepth 1 -delete")


@pytest.mark.parametrize("kind", sorted(SQUATS))
def test_f3_a_squat_is_moved_aside_and_the_victim_s_next_job_runs(host, compute, victim_without_a_root, kind):
    plant, described = SQUATS[kind]
    since = compute.run("date +%s").stdout.strip()
    squat = job(host, "pharosbob", plant)
    assert squat.rc == 0, squat.stderr

    victim = job(host, victim_without_a_root, f"W=$({CHECK} f3) || exit {REFUSED}; echo carol > $W/out; echo $W")
    assert victim.rc == 0, victim.stdout + victim.stderr
    assert victim.stdout.strip() == f"{SCRATCH}/pharoscarol/f3"
    assert compute.run(f"stat -c %F:%U:%a -- {SCRATCH}/pharoscarol").stdout.strip() == "directory:pharoscarol:700"
    # The squat is in root's store, whole and unfollowed, where its maker cannot reach it.
    moved = compute.run(f"find {STORE} -mindepth 1 -maxdepth 1 -printf '%y %u\\n'").stdout.split("\n")
    assert [line for line in moved if line] == [{"directory": "d", "file": "f", "fifo": "p", "symlink": "l"}[kind]
                                               + " pharosbob"]
    assert owner_and_mode(compute, STORE) == "root:700"
    assert job(host, "pharosbob", f"ls {STORE}").rc != 0
    if kind == "symlink":
        assert owner_and_mode(compute, BAIT) == "pharosbob:755"
        assert compute.run(f"ls -A {BAIT}").stdout == ""
    log = compute.run(f"journalctl -t pharos-scratch-prolog --since @{since} --no-pager -o cat").stdout
    assert f"moved pharoscarol's squatted root aside before the job: a {described} of UID {UIDS['pharosbob']}" in log


def test_f3_a_member_s_own_root_that_is_not_0700_is_left_to_them_and_refused(host, compute):
    made = job(host, "pharosalice", f"{CHECK} own >/dev/null && chmod 0755 {SCRATCH}/pharosalice")
    assert made.rc == 0, made.stderr
    try:
        refused = job(host, "pharosalice", f"W=$({CHECK} own-again) || exit {REFUSED}; echo x > $W/out")
    finally:
        compute.run(f"chmod 0700 {SCRATCH}/pharosalice")
    assert refused.rc == REFUSED, refused.stdout + refused.stderr
    assert compute.run(f"test -e {SCRATCH}/pharosalice/own").rc == 0
    assert compute.run(f"find {STORE} -mindepth 1").stdout == ""


def test_f4_an_existing_attempt_directory_is_not_reused(host, compute):
    first = job(host, "pharosalice", f"W=$({CHECK} f4) && echo first > $W/out")
    assert first.rc == 0, first.stderr
    again = job(host, "pharosalice", f"W=$({CHECK} f4) || exit {REFUSED}; echo again > $W/out; touch $W/more")
    assert again.rc == REFUSED, again.stdout + again.stderr
    assert "already exists" in again.stderr
    assert compute.run(f"ls -A {SCRATCH}/pharosalice/f4").stdout.split() == ["out"]
    assert compute.file(f"{SCRATCH}/pharosalice/f4/out").content_string == "first\n"


UNTRUSTED_ROOTS = {
    "another owner": (f"chown 5000002 {SCRATCH}/pharosalice", f"chown 5000001 {SCRATCH}/pharosalice"),
    "another mode": (f"chmod 0750 {SCRATCH}/pharosalice", f"chmod 0700 {SCRATCH}/pharosalice"),
    "a symlinked parent": (f"mv {SCRATCH} {SCRATCH}.real && ln -s pharos.real {SCRATCH}",
                           f"rm {SCRATCH} && mv {SCRATCH}.real {SCRATCH}"),
}


def as_member_on_the_node(compute, member, command):
    """The member's own process on the compute node, with no Prolog run before it."""
    return compute.run(f"setpriv --reuid={UIDS[member]} --regid={UIDS[member] + 500000} "
                       f"--groups=$(getent group pharos-users | cut -d: -f3) {command}")


@pytest.mark.parametrize("case", sorted(UNTRUSTED_ROOTS))
def test_f5_a_root_that_is_not_the_member_s_own_real_0700_directory_is_refused(host, compute, case):
    spoil, restore = UNTRUSTED_ROOTS[case]
    assert compute.run(spoil).rc == 0
    try:
        refused = as_member_on_the_node(compute, "pharosalice", f"sh -c 'W=$({CHECK} f5) || exit {REFUSED}; echo alice > $W/out'")
        newcomer = job(host, "pharosfrank", f"{CHECK} f5")
    finally:
        assert compute.run(restore).rc == 0
    assert refused.rc == REFUSED, refused.stdout + refused.stderr
    assert compute.run(f"test -e {SCRATCH}/pharosalice/f5").rc != 0
    if case == "a symlinked parent":
        # The Prolog makes no root through a linked tree, and the newcomer's check refuses.
        assert newcomer.rc == REFUSED, newcomer.stdout + newcomer.stderr
        assert compute.run(f"test -e {SCRATCH}/pharosfrank").rc != 0


RACE = r"""
set -u
victim={scratch}/pharoserin
bait={bait}
made=0 left=0 accepted=0 refused=0 escapes=0
for i in $(seq 1 {iterations}); do
    [ -L "$victim" ] || rm -rf -- "$victim"
    env -i SLURM_JOB_ID=race$i SLURM_JOB_USER=pharoserin SLURM_JOB_UID={uid} SLURM_JOB_GID={gid} {prolog}
    if [ -d "$victim" ] && [ ! -L "$victim" ] && [ "$(stat -c %u:%a "$victim")" = "{uid}:700" ]; then
        made=$((made + 1))
    else
        left=$((left + 1))
    fi
    if setpriv --reuid={uid} --regid={gid} --groups={group} {check} a$i > /dev/null 2>&1; then
        accepted=$((accepted + 1))
    else
        refused=$((refused + 1))
    fi
    if [ "$(stat -c %U:%a "$bait")" != "pharosbob:755" ] || [ -n "$(ls -A "$bait")" ]; then
        escapes=$((escapes + 1))
    fi
done
echo "$made $left $accepted $refused $escapes"
"""


@pytest.fixture
def racing_squatter(host, compute):
    """pharosbob's job swaps a link to his own bait in and out of pharoserin's root."""
    bait = f"{SCRATCH}/pharosbob/race-bait"
    swap = (f"{CHECK} race-bait >/dev/null && chmod 0755 {bait} && "
            f"while :; do ln -s {bait} {SCRATCH}/pharoserin 2>/dev/null; rm -f {SCRATCH}/pharoserin; done")
    submitted = host.run(f"runuser -u pharosbob -- sbatch --parsable -A pharos_a_test -p compute -w {NODE} -t 10 --mem=64 "
                         f"-o /dev/null --wrap {shlex.quote(swap)}")
    assert submitted.rc == 0, submitted.stderr
    squatter = submitted.stdout.strip()
    running = host.run(f"for i in $(seq 60); do squeue -h -j {squatter} -t R | grep -q . && exit 0; sleep 1; done; exit 1")
    assert running.rc == 0, "the squatter's job never ran"
    assert compute.run(f"for i in $(seq 30); do test -d {bait} && exit 0; sleep 1; done; exit 1").rc == 0
    yield bait
    host.run(f"scancel {squatter}")
    host.run(f"for i in $(seq 30); do squeue -h -j {squatter} | grep -q . || exit 0; sleep 1; done")


def test_f6_a_symlink_raced_against_the_prolog_never_carries_its_chown(host, compute, racing_squatter):
    bait = racing_squatter
    # Real jobs of the victim under the race: slurmd runs the Prolog, then the job's check.
    job_escapes = job_refusals = job_accepted = 0
    for round_number in range(RACE_JOBS):
        compute.run(f"[ -L {SCRATCH}/pharoserin ] || rm -rf -- {SCRATCH}/pharoserin")
        result = job(host, "pharoserin", f"{CHECK} j{round_number}")
        if result.rc == 0:
            job_accepted += 1
        elif result.rc == REFUSED:
            job_refusals += 1
        else:
            raise AssertionError(result.stdout + result.stderr)
        if owner_and_mode(compute, bait) != "pharosbob:755" or compute.run(f"ls -A {bait}").stdout:
            job_escapes += 1

    # The Prolog itself, run as slurmd runs it, many times against the same race.
    script = RACE.format(scratch=SCRATCH, bait=bait, iterations=RACE_ITERATIONS, uid=UIDS["pharoserin"],
                         gid=5500005, group=compute.run("getent group pharos-users | cut -d: -f3").stdout.strip(),
                         prolog=PROLOG, check=CHECK)
    raced = compute.run(script)
    assert raced.rc == 0, raced.stderr
    made, left, accepted, refused, escapes = (int(count) for count in raced.stdout.split())
    print(f"\nF6 race: {RACE_JOBS} real jobs: {job_accepted} accepted a root made by the Prolog, "
          f"{job_refusals} refused a linked root, {job_escapes} escapes; {RACE_ITERATIONS} Prolog runs: "
          f"{made} made the root, {left} left a link alone, check accepted {accepted} and refused "
          f"{refused}, {escapes} escapes")
    assert job_escapes == 0 and escapes == 0
    assert made + left == RACE_ITERATIONS
    assert accepted == made and refused == left
    assert owner_and_mode(compute, bait) == "pharosbob:755"
