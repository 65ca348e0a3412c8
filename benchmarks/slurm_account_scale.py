"""How slurm_account scales against the naive way, on a real slurmdbd.

    .venv/bin/python benchmarks/slurm_account_scale.py [--host pharos-lab-login] [--sizes 100 1000 5000]

For each size, a tree of that many associations (size/2 allocation accounts under `pharos`,
each with GrpTRESMins=node=60n, and one member association in each) is written into a
cluster of its own, registered for the run and deleted after:
- by the module: `ansible-playbook` running pharos.hpc.slurm_account once, then again (no-op);
- the naive way: one `sacctmgr -i add` per object inside the host, as most playbooks do, then
  the naive no-op re-run (one `sacctmgr -i add` per object again, each refused as existing).
It prints wall time, sacctmgr processes and the ratio. It asserts nothing: it measures.
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


def measure(host, size, ways):
    accounts, users = tree(size)
    rows = []
    for way in ways:
        cluster = "bench_%s_%d" % (way[0], size)
        docker(host, "sacctmgr -i delete cluster %s >/dev/null 2>&1; sacctmgr -i add cluster %s >/dev/null" % (cluster, cluster))
        if way == "module":
            first, first_processes, _ = run_module(host, cluster, accounts, users)
            again, again_processes, changed = run_module(host, cluster, accounts, users)
            assert not changed, "the module's re-run changed something"
        else:
            script, commands = naive_script(cluster, accounts, users)
            first = timed_docker(host, script)
            again = timed_docker(host, script)
            first_processes = again_processes = commands
        associations = docker(host, "sacctmgr -nP show assoc where cluster=%s format=Account | wc -l" % cluster).stdout.strip()
        docker(host, "sacctmgr -i delete cluster %s >/dev/null 2>&1" % cluster)
        rows.append((way, first, first_processes, again, again_processes, associations))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="pharos-lab-login", help="a lab container running slurmdbd")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--ways", nargs="+", choices=["module", "naive"], default=["module", "naive"],
                        help="measure one way alone, e.g. the module again after a change")
    args = parser.parse_args()
    print("Ansible start-up alone (a one-task playbook on %s): %.1f s, included in every module time below.\n"
          % (args.host, ansible_start_up(args.host)))
    print("| associations | way | first run | sacctmgr processes | no-op re-run | processes | in the DB | naive/module |")
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        rows = measure(args.host, size, args.ways)
        by_way = dict((row[0], row) for row in rows)
        for way, first, processes, again, again_processes, stored in rows:
            ratio = ""
            if way == "naive" and "module" in by_way:
                module = by_way["module"]
                ratio = "%.1fx / %.1fx" % (first / module[1], again / module[3])
            print("| %d | %s | %.1f s | %d | %.1f s | %d | %s | %s |"
                  % (size, way, first, processes, again, again_processes, stored, ratio), flush=True)


if __name__ == "__main__":
    main()
