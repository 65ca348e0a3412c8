"""How slurm_account scales against the naive way, on a real slurmdbd.

    .venv/bin/python benchmarks/slurm_account_scale.py [--host pharos-lab-login] [--sizes 100 1000 5000]
        [--ways module raw naive] [--existing-users]

For each size, a tree of that many associations (size/2 allocation accounts under `pharos`,
each with GrpTRESMins=node=60n, and one member association in each) is written into a
cluster of its own, registered for the run and deleted after:
- by the module: `ansible-playbook` running pharos.hpc.slurm_account once, then again (no-op);
- raw: one `sacctmgr -i load file=` of the same tree written by hand, its report to a file:
  what no tool can beat;
- the naive way: one `sacctmgr -i add` per object inside the host, as most playbooks do, then
  the naive no-op re-run (one `sacctmgr -i add` per object again, each refused as existing).
After the module's runs, one account's GrpTRESMins is changed by hand and the module repairs
it; that row is printed beside its floor (start-up, one read of the tree, one modify).
With --existing-users, the tree's users are first made members of another cluster, as users
of several Sites are: sacctmgr then reports on every one of them while it loads.
It prints wall time, sacctmgr processes and the ratios. It asserts nothing about time: it measures.
The host is a lab container running slurmdbd, reached with `docker exec`.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
VENV_BIN = PROJECT / ".venv" / "bin"


def docker(host, script):
    return subprocess.run(["docker", "exec", "-i", host, "bash", "-s"], input=script, text=True,
                          capture_output=True, check=False)


def tree(size):
    allocations = size // 2
    accounts = [{"name": "pharos", "description": "pharos platform"}] + [
        {"name": "pharos_a_b%05d" % n, "parent": "pharos", "limits": {"GrpTRESMins": "node=%d" % (60 * (n + 1))}}
        for n in range(allocations)]
    users = [{"name": "bench%05d" % n, "default_account": "pharos_a_b%05d" % n} for n in range(allocations)]
    return accounts, users


def naive_script(cluster, accounts, users):
    lines = ["set +e"]
    for account in accounts:
        parent = account.get("parent", "root")
        limits = " ".join("%s=%s" % item for item in account.get("limits", {}).items())
        lines.append("sacctmgr -i add account %s parent=%s cluster=%s %s >/dev/null 2>&1"
                     % (account["name"], parent, cluster, limits))
    for user in users:
        lines.append("sacctmgr -i add user %s account=%s defaultaccount=%s cluster=%s >/dev/null 2>&1"
                     % (user["name"], user["default_account"], user["default_account"], cluster))
    return "\n".join(lines) + "\n", len(accounts) + len(users)


def run_playbook(host, tasks):
    playbook = [{"hosts": host, "gather_facts": False, "tasks": tasks}]
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "bench.yml").write_text(json.dumps(playbook))
        (Path(work) / "hosts.json").write_text(json.dumps({"all": {"hosts": {host: {
            "ansible_connection": "community.docker.docker", "ansible_python_interpreter": "/usr/bin/python3"}}}}))
        environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"), ANSIBLE_NOCOLOR="1")
        started = time.monotonic()
        result = subprocess.run([str(VENV_BIN / "ansible-playbook"), "-i", str(Path(work) / "hosts.json"),
                                 str(Path(work) / "bench.yml")], capture_output=True, text=True, env=environment,
                                check=False)
        elapsed = time.monotonic() - started
    if result.returncode != 0:
        sys.exit("the playbook failed:\n" + result.stdout[-3000:])
    return elapsed, result.stdout


def ansible_start_up(host):
    """What any one-task playbook costs on this host: the part of the module's time that is Ansible's."""
    return run_playbook(host, [{"ansible.builtin.command": "true", "changed_when": False}])[0]


def run_module(host, cluster, accounts, users):
    elapsed, output = run_playbook(host, [
        {"pharos.hpc.slurm_account": {"cluster": cluster, "accounts": accounts, "users": users}, "register": "result"},
        {"ansible.builtin.debug": {"msg": "PROCESSES={{ result.slurm_processes }} CHANGED={{ result.changed }}"}},
    ])
    marker = output.split("PROCESSES=")[1]
    return elapsed, int(marker.split()[0]), "CHANGED=True" in marker


def timed_docker(host, script):
    started = time.monotonic()
    docker(host, script)
    return time.monotonic() - started


def flat_file(cluster, accounts, users):
    """The same tree as one sacctmgr load file, written out by hand: the raw way."""
    lines = ["Cluster - '%s'" % cluster, "Parent - 'root'", "Account - 'pharos':Description='pharos platform'",
             "Parent - 'pharos'"]
    lines += ["Account - '%s':GrpTRESMins=%s" % (a["name"], a["limits"]["GrpTRESMins"]) for a in accounts[1:]]
    for user in users:
        lines += ["Parent - '%s'" % user["default_account"],
                  "User - '%s':DefaultAccount='%s'" % (user["name"], user["default_account"])]
    return "\n".join(lines) + "\n"


def raw_load(host, cluster, accounts, users):
    """One `sacctmgr -i load file=` of the whole tree, its report to a file: the floor of any tool."""
    docker(host, "cat > /root/bench-tree.cfg <<'EOF'\n%sEOF\n" % flat_file(cluster, accounts, users))
    return timed_docker(host, "sacctmgr -i load file=/root/bench-tree.cfg > /root/bench-load.log 2>&1")


def create_users_elsewhere(host, size, users):
    """The tree's users, made members of another cluster first, as users of several Sites are."""
    other = "bench_other_%d" % size
    docker(host, "sacctmgr -i delete cluster %s >/dev/null 2>&1; sacctmgr -i add cluster %s >/dev/null" % (other, other))
    text = "\n".join(["Cluster - '%s'" % other, "Parent - 'root'", "Account - 'elsewhere'", "Parent - 'elsewhere'"]
                     + ["User - '%s':DefaultAccount='elsewhere'" % user["name"] for user in users]) + "\n"
    docker(host, "cat > /root/bench-other.cfg <<'EOF'\n%sEOF\nsacctmgr -i load file=/root/bench-other.cfg >/dev/null 2>&1"
           % text)
    return other


def repair_one_limit(host, cluster, accounts, users):
    """One drifted GrpTRESMins among the whole tree, repaired by the module, beside its floor."""
    drifted = accounts[1]["name"]
    modify = timed_docker(host, "sacctmgr -i modify account %s where cluster=%s set GrpTRESMins=node=1 >/dev/null"
                          % (drifted, cluster))
    # The tree's three reads side by side, as fast as any tool can read it.
    reads = timed_docker(host, "\n".join(
        "sacctmgr -nP show %s >/dev/null &" % what for what in (
            "associations WOPLimits where cluster=%s" % cluster, "accounts withcoord", "users where cluster=%s" % cluster))
        + "\nwait")
    elapsed, processes, changed = run_module(host, cluster, accounts, users)
    assert changed, "the module did not repair the drifted limit"
    return elapsed, processes, reads, modify


def measure(host, size, ways, existing_users=False):
    accounts, users = tree(size)
    rows, repair = [], None
    other = create_users_elsewhere(host, size, users) if existing_users else None
    for way in ways:
        cluster = "bench_%s_%d" % (way[0], size)
        docker(host, "sacctmgr -i delete cluster %s >/dev/null 2>&1; sacctmgr -i add cluster %s >/dev/null" % (cluster, cluster))
        if way == "module":
            first, first_processes, _ = run_module(host, cluster, accounts, users)
            again, again_processes, changed = run_module(host, cluster, accounts, users)
            assert not changed, "the module's re-run changed something"
            repair = repair_one_limit(host, cluster, accounts, users)
        elif way == "raw":
            first, first_processes = raw_load(host, cluster, accounts, users), 1
            again, again_processes = raw_load(host, cluster, accounts, users), 1
        else:
            script, commands = naive_script(cluster, accounts, users)
            first = timed_docker(host, script)
            again = timed_docker(host, script)
            first_processes = again_processes = commands
        associations = docker(host, "sacctmgr -nP show assoc where cluster=%s format=Account | wc -l" % cluster).stdout.strip()
        docker(host, "sacctmgr -i delete cluster %s >/dev/null 2>&1" % cluster)
        rows.append((way, first, first_processes, again, again_processes, associations))
    if other:
        docker(host, "sacctmgr -i delete cluster %s >/dev/null 2>&1" % other)
    return rows, repair


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="pharos-lab-login", help="a lab container running slurmdbd")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--ways", nargs="+", choices=["module", "raw", "naive"], default=["module", "raw", "naive"],
                        help="measure some ways alone, e.g. the module again after a change")
    parser.add_argument("--existing-users", action="store_true",
                        help="make the tree's users members of another cluster first")
    args = parser.parse_args()
    start_up = ansible_start_up(args.host)
    print("Ansible start-up alone (a one-task playbook on %s): %.1f s, included in every module time below."
          % (args.host, start_up))
    print("Users: %s.\n" % ("already in slurmdbd, members of another cluster" if args.existing_users else "new"))
    print("| associations | way | first run | sacctmgr processes | no-op re-run | processes | in the DB | way/module |")
    print("|---|---|---|---|---|---|---|---|")
    repairs = []
    for size in args.sizes:
        rows, repair = measure(args.host, size, args.ways, args.existing_users)
        by_way = dict((row[0], row) for row in rows)
        for way, first, processes, again, again_processes, stored in rows:
            ratio = ""
            if way != "module" and "module" in by_way:
                module = by_way["module"]
                ratio = "%.2fx / %.2fx" % (first / module[1], again / module[3])
            print("| %d | %s | %.1f s | %d | %.1f s | %d | %s | %s |"
                  % (size, way, first, processes, again, again_processes, stored, ratio), flush=True)
        if repair:
            repairs.append((size,) + repair)
    if repairs:
        print("\nOne drifted GrpTRESMins repaired by the module. Floor: Ansible start-up, the tree's three "
              "reads side by side and one `sacctmgr modify`.\n")
        print("| associations | repair | sacctmgr processes | floor | repair/floor |")
        print("|---|---|---|---|---|")
        for size, elapsed, processes, reads, modify in repairs:
            floor = start_up + reads + modify
            print("| %d | %.1f s | %d | %.1f s | %.2fx |" % (size, elapsed, processes, floor, elapsed / floor))


if __name__ == "__main__":
    main()
