"""How converging the Site scales with its number of compute nodes, on real containers.

    .venv/bin/python benchmarks/cluster_scale.py [--nodes 3 10 30] [--connection ssh|docker]
                                                 [--prefix pharos-scale] [--keep]

For each size N it starts, on the Docker network <prefix>, a login node (<prefix>-login), N
compute nodes (<prefix>-compute01, ...), one staging node (the Site needs a staging partition)
and one more compute node, <prefix>-joining, that the inventory leaves out. All run the
pharos-lab/trixie:hpc image with the cluster scenario's container options
(molecule/cluster/molecule.yml), except its shared /scratch volume: each node here keeps a
scratch tree of its own. playbooks/site.yml then runs as molecule runs it: the lab
inventory's group_vars, pipelining, --diff, the scenario's stand-in member token issuer
(molecule/cluster/prepare.yml), and --forks N + 2, one per host. It reaches the hosts as
production does (docs/production.md, "A Site of many nodes"): over ssh as root with a key of its own, one
master connection per host kept open (ControlPersist), each node's sshd started with host keys
of its own; or, with --connection docker, as the molecule scenarios do, one `docker exec` per
command. It times:
- the first converge of the whole Site, then its idempotent re-run;
- the joining node added to the compute group and converged alone with --limit (configless
  nodes register themselves: nothing changes on the controller), then that run again;
- --check --diff on the converged Site.
It prints a Markdown table of each step: its seconds, the seconds per host it ran on (N + 2 for
the Site, 1 with --limit), the ratio to the same step at the smallest size, the CPU it took
(ansible-playbook and its forks, plus every container's own cgroup) in all and per host, and
the changed count of its PLAY RECAP (a re-run that changed something is reported, not stopped).
The controller's CPU is ansible-playbook with its forks and their commands, plus, over ssh, the
master connections' own (they run apart from ansible-playbook, for as long as they persist). Then each
whole-Site step at every size side by side, with the tasks each kind of host ran and the CPU each
added compute node cost (the largest size against the smallest); where the time goes per kind of
host and role; the memory each container takes once the Site is converged (`docker stats`); and the
joining node's changed count per host. It measures; it never passes or fails on time.

Each size's containers are removed before the next size starts, and everything at the end,
on Ctrl-C or a failure too, unless --keep leaves the last size's. The inventory, the stand-in
issuer's key and each run's output stay in a work directory, printed first.
Needs the Docker engine and the hpc image (`scripts/lab-engine up`), memory for N + 3 containers,
and fs.inotify.max_user_instances of about 8 per container (the script checks it first; the
kernel's default, 128, holds about 20 containers with systemd).
"""

import argparse
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parents[1]
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
IMAGE = "pharos-lab/trixie:hpc"
ISSUER = "https://issuer.pharos.test"
# As molecule/cluster/molecule.yml starts every node: systemd as PID 1 in a container.
NODE_OPTIONS = ["--cgroupns", "private", "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp",
                "--cap-add", "SYS_ADMIN", "--security-opt", "seccomp=unconfined",
                "--security-opt", "apparmor=unconfined", "--stop-signal", "SIGRTMIN+3"]
NODE_COMMAND = ["/lib/systemd/systemd"]
# The member token issuer reads its key through systemd's LoadCredential=, which the login node
# sees only when /run propagates mounts.
LOGIN_COMMAND = ["/bin/sh", "-c", "mount --make-rshared /run && exec /lib/systemd/systemd"]
# systemd and its services in each container hold inotify instances of the host's root: 6 in a
# fresh node of the hpc image, a few more once converged. At the kernel's default limit (128),
# about 20 such containers start and the rest exit at boot.
INOTIFY_INSTANCES_PER_NODE = 8
INOTIFY_LIMIT = Path("/proc/sys/fs/inotify/max_user_instances")
STEPS_EXPECTED_UNCHANGED = ("idempotent re-run", "check --diff", "+1 node re-run")
PROFILED_STEPS = ("idempotent re-run", "check --diff")
UNITS_IN_MIB = {"B": 1 / 2 ** 20, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "kB": 1e3 / 2 ** 20, "MB": 1e6 / 2 ** 20,
                "GB": 1e9 / 2 ** 20}


def docker(*arguments, check=True, stdin=None):
    completed = subprocess.run(["docker", *arguments], input=stdin, capture_output=True, text=True, check=False)
    if check and completed.returncode != 0:
        sys.exit("benchmark: docker %s failed: %s" % (" ".join(arguments[:2]), completed.stderr.strip()))
    return completed


def site_names(prefix, size):
    return {"login": prefix + "-login", "compute": ["%s-compute%02d" % (prefix, n) for n in range(1, size + 1)],
            "staging": prefix + "-staging", "joining": prefix + "-joining"}


def every_container(names):
    return [names["login"], *names["compute"], names["staging"], names["joining"]]


def our_containers(prefix):
    listed = docker("ps", "-a", "--format", "{{.Names}}").stdout.split()
    return [name for name in listed if name.startswith(prefix + "-")]


def tear_down(prefix, network):
    leftovers = our_containers(prefix)
    if leftovers:
        docker("rm", "-f", *leftovers, check=False)
    docker("network", "rm", network, check=False)


def start_site(names, network):
    if docker("network", "inspect", network, check=False).returncode != 0:
        docker("network", "create", network)
    for name in every_container(names):
        command = LOGIN_COMMAND if name == names["login"] else NODE_COMMAND
        # The hostname is the node's name: slurmd registers under it.
        docker("run", "-d", "--name", name, "--hostname", name, "--network", network, *NODE_OPTIONS, IMAGE, *command)
    for name in every_container(names):
        # "degraded" is an answer too: the roles start what the Site needs.
        docker("exec", name, "timeout", "180", "systemctl", "is-system-running", "--wait", check=False)
    stopped = [name for name in every_container(names)
               if docker("inspect", "-f", "{{.State.Running}}", name).stdout.strip() != "true"]
    if stopped:
        last_words = docker("logs", "--tail", "5", stopped[0], check=False)
        sys.exit("benchmark: %d containers stopped as they started (%s): %s" % (
            len(stopped), ", ".join(stopped), (last_words.stdout + last_words.stderr).strip()))


def check_inotify_limit(largest_size):
    """Stop before any container starts when the host cannot hold the largest size's systemd."""
    needed = (largest_size + 3) * INOTIFY_INSTANCES_PER_NODE
    limit = int(INOTIFY_LIMIT.read_text())
    if limit < needed:
        sys.exit("benchmark: fs.inotify.max_user_instances is %d, and %d containers with systemd need about %d: "
                 "beyond the limit, containers exit at boot. Raise it on this host first, for example "
                 "sysctl -w fs.inotify.max_user_instances=%d" % (limit, largest_size + 3, needed, max(needed, 1024)))


def open_ssh(work, names):
    """Each node's sshd, with host keys of its own, letting root in with the work directory's key.
    The image has none, so sshd failed at boot until systemd stopped trying: that is reset first."""
    key = work / "ssh" / "id_ed25519"
    if not key.exists():
        key.parent.mkdir(mode=0o700)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "cluster-scale", "-f", str(key)],
                       check=True)
    for name in every_container(names):
        docker("exec", "-i", name, "sh", "-c", "ssh-keygen -A >/dev/null && install -d -m 0700 /root/.ssh"
               " && cat > /root/.ssh/authorized_keys && systemctl reset-failed ssh && systemctl restart ssh",
               stdin=key.with_suffix(".pub").read_text())
    return key


def connection_vars(connection, work, key, name):
    if connection == "docker":
        return {"ansible_connection": "community.docker.docker"}
    return {"ansible_connection": "ssh", "ansible_host": address(name), "ansible_user": "root",
            "ansible_ssh_private_key_file": str(key),
            # docs/examples/production's ssh_args, persisting through a whole size's runs, with the
            # containers' host keys, new at each size, taken as they come.
            "ansible_ssh_args": "-C -o ControlMaster=auto -o ControlPersist=900s -o ControlPath=%s/%%C" % (work / "ssh"),
            "ansible_ssh_common_args": "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"}


def address(name):
    networks = json.loads(docker("inspect", "--format", "{{json .NetworkSettings.Networks}}", name).stdout)
    return next(iter(networks.values()))["IPAddress"]


def masters(work):
    """The ssh processes of this work directory (its ControlPath in their command line): once a
    run has ended, its master connections alone."""
    for process in Path("/proc").iterdir():
        try:
            if process.name.isdigit() and str(work / "ssh") in (process / "cmdline").read_text():
                yield process
        except OSError:
            continue


def masters_cpu_seconds(work):
    """The CPU the ssh master connections of this work directory have used."""
    used, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for process in masters(work):
        try:
            fields = (process / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used += (int(fields[11]) + int(fields[12])) / tick
    return used


def stop_masters(work):
    """A size's master connections end with its containers: the next size's nodes may get the
    same addresses, and with them the same ControlPath."""
    for process in masters(work):
        try:
            os.kill(int(process.name), signal.SIGTERM)
        except OSError:
            continue


def write_inventories(work, names, connection, key):
    """The Site's inventory (linked to the lab's group_vars), and one that adds the joining node."""
    inventory = work / "inventory"
    inventory.mkdir(exist_ok=True)
    group_vars = inventory / "group_vars"
    if not group_vars.is_symlink():
        group_vars.symlink_to(PROJECT / "inventories" / "lab" / "group_vars")

    # Each host's own: the lab's group_vars/all names the docker connection, and would win over
    # the inventory's vars of all.
    def hosts(*listed):
        return {"hosts": {name: connection_vars(connection, work, key, name) for name in listed}}

    site = {"all": {"children": {
        "login": hosts(names["login"]), "compute": hosts(*names["compute"]), "staging": hosts(names["staging"]),
        "cluster": {"children": {"login": {}, "compute": {}, "staging": {}}}}}}
    (inventory / "hosts.yml").write_text(yaml.safe_dump(site, sort_keys=False))
    joining = work / "joining.yml"
    joining.write_text(yaml.safe_dump({"all": {"children": {
        "compute": hosts(names["joining"]), "cluster": hosts(names["joining"])}}}, sort_keys=False))
    return inventory, joining


def make_issuer(work):
    """The cluster scenario's stand-in member token issuer: its public key, which the login node trusts."""
    subprocess.run([sys.executable, str(PROJECT / "molecule" / "cluster" / "files" / "make_signer.py"), str(work)],
                   capture_output=True, check=True)
    return work / "signer.pub.pem"


def changed_per_host(output):
    recap = output[output.rfind("PLAY RECAP"):]
    return {name: int(count) for name, count in re.findall(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", recap, re.MULTILINE)}


def run_site(log, work, inventories, forks, issuer_key, *options):
    """site.yml as molecule runs it; its wall time and the changed count of each host in its PLAY RECAP.

    Each task result is recorded beside the log (benchmarks/callback_plugins/task_profile.py)."""
    command = [str(ANSIBLE_PLAYBOOK), "--diff", "--forks", str(forks),
               "-e", "slurm_member_token_issuer=" + ISSUER, "-e", "slurm_member_token_public_keys_file=%s" % issuer_key]
    for inventory in inventories:
        command += ["-i", str(inventory)]
    command += [*options, str(PROJECT / "playbooks" / "site.yml")]
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"), ANSIBLE_PIPELINING="true",
                       ANSIBLE_NOCOLOR="true", ANSIBLE_FORCE_COLOR="false",
                       ANSIBLE_CALLBACK_PLUGINS=str(PROJECT / "benchmarks" / "callback_plugins"),
                       ANSIBLE_CALLBACKS_ENABLED="task_profile", PHAROS_TASK_PROFILE=str(log.with_suffix(".jsonl")))
    started, cpu_before = time.monotonic(), children_cpu_seconds() + masters_cpu_seconds(work)
    completed = subprocess.run(command, cwd=PROJECT, env=environment, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    controller_cpu = children_cpu_seconds() + masters_cpu_seconds(work) - cpu_before
    log.write_text(completed.stdout + completed.stderr)
    changed = changed_per_host(completed.stdout)
    if completed.returncode != 0:
        # The output is in the log only: a task's diff may hold a value the Site keeps secret.
        sys.exit("benchmark: %s failed after %.0f s (changed per host: %s); its output: %s"
                 % (log.stem, elapsed, changed, log))
    return elapsed, controller_cpu, changed


def children_cpu_seconds():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def containers_cpu_seconds(containers):
    """The CPU each container has used since it started, from its own cgroup (cgroupns private):
    cpu.stat's usage_usec under cgroup v2, cpuacct.usage (nanoseconds) under v1."""
    used = {}
    for name in containers:
        read = docker("exec", name, "sh", "-c", "cat /sys/fs/cgroup/cpu.stat 2>/dev/null "
                      "|| echo usage_nsec $(cat /sys/fs/cgroup/cpuacct/cpuacct.usage)", check=False).stdout
        match = re.search(r"^usage_(usec|nsec) (\d+)$", read, re.MULTILINE)
        if match is None:
            # A container still starting may not answer docker exec; its CPU is left out.
            print("benchmark: no CPU usage read from %s; left out of the containers' CPU" % name, file=sys.stderr)
            continue
        used[name] = int(match.group(2)) / (1e6 if match.group(1) == "usec" else 1e9)
    return used


def memory_mib(containers):
    lines = docker("stats", "--no-stream", "--format", "{{.Name}}\t{{.MemUsage}}", *containers).stdout.splitlines()
    usage = {}
    for line in lines:
        name, usage_and_limit = line.split("\t")
        number, unit = re.match(r"\s*([\d.]+)\s*([A-Za-z]+)", usage_and_limit).groups()
        usage[name] = float(number) * UNITS_IN_MIB[unit]
    return usage


def measure(size, prefix, work, issuer_key, base_seconds, connection):
    """Each step at this size, its table row printed as soon as it ends, and the converged Site's memory."""
    names = site_names(prefix, size)
    print("%d nodes: starting %d containers" % (size, len(every_container(names))), file=sys.stderr, flush=True)
    start_site(names, prefix)
    key = open_ssh(work, names) if connection == "ssh" else None
    inventory, joining = write_inventories(work, names, connection, key)
    # One fork per host of the Site: fewer would make the larger sizes wait in turns.
    site_hosts = forks = size + 2
    steps = []

    def step(name, hosts, inventories, *options):
        log = work / "logs" / ("%03d-nodes-%s.log" % (size, re.sub(r"\W+", "-", name).strip("-")))
        containers_before = containers_cpu_seconds(every_container(names))
        elapsed, controller_cpu, changed = run_site(log, work, inventories, forks, issuer_key, *options)
        containers_after = containers_cpu_seconds(every_container(names))
        containers_cpu = sum(containers_after[name] - containers_before[name]
                             for name in containers_after.keys() & containers_before.keys())
        steps.append({"name": name, "seconds": elapsed, "hosts": hosts, "changed": changed,
                      "controller_cpu": controller_cpu, "containers_cpu": containers_cpu,
                      "profile": read_profile(log.with_suffix(".jsonl"), names)})
        base_seconds.setdefault(name, elapsed)
        print_step(size, steps[-1], base_seconds[name])
        print("%d nodes: %s %.0f s, changed %d" % (size, name, elapsed, sum(changed.values())), file=sys.stderr,
              flush=True)
        if name in STEPS_EXPECTED_UNCHANGED and any(changed.values()):
            print("%d nodes: %s changed something: %s (see %s)" % (size, name, changed, log), file=sys.stderr)

    step("first converge", site_hosts, [inventory])
    step("idempotent re-run", site_hosts, [inventory])
    memory = memory_mib([names["login"], *names["compute"]])
    print("%d nodes: memory once converged: login %.0f MiB, compute median %.0f MiB" % (
        size, memory[names["login"]], statistics.median(memory[name] for name in names["compute"])),
        file=sys.stderr, flush=True)
    step("+1 node --limit", 1, [inventory, joining], "--limit", names["joining"])
    step("+1 node re-run", 1, [inventory, joining], "--limit", names["joining"])
    step("check --diff", site_hosts, [inventory], "--check")
    profile = {step["name"]: step["profile"] for step in steps if step["name"] in PROFILED_STEPS}
    return steps, {"login": memory.pop(names["login"]), "compute": list(memory.values())}, profile


def print_step(size, step, base_seconds):
    cpu = step["controller_cpu"] + step["containers_cpu"]
    print("| %d | %s | %.1f | %.2f | %.2fx | %.0f + %.0f | %.1f | %d |" % (
        size, step["name"], step["seconds"], step["seconds"] / step["hosts"], step["seconds"] / base_seconds,
        step["controller_cpu"], step["containers_cpu"], cpu / step["hosts"], sum(step["changed"].values())), flush=True)


def host_kind(host, names):
    if host == names["login"]:
        return "login"
    if host == names["staging"]:
        return "staging"
    return "joining" if host == names["joining"] else "compute"


def read_profile(results, names):
    """Per (kind of host, role): tasks that ran (skipped ones left out), module runs on the host,
    the tasks' seconds, and steps (tasks run or skipped: each one a worker the controller forks),
    each per host of that kind."""
    hosts_of_kind, totals = {}, {}
    for line in results.read_text().splitlines():
        result = json.loads(line)
        kind = host_kind(result["host"], names)
        hosts_of_kind.setdefault(kind, set()).add(result["host"])
        row = totals.setdefault((kind, result["role"].removeprefix("pharos.hpc.") or "(playbook)"), [0, 0, 0.0, 0])
        row[3] += 1
        if result["status"] == "skipped":
            continue
        row[0] += 1
        row[1] += result["module_runs"]
        row[2] += result["seconds"] or 0
    return {key: [value / len(hosts_of_kind[key[0]]) for value in row] for key, row in totals.items()}


def print_profiles(profiles):
    """Where a run's time goes, per kind of host and role, for each size side by side."""
    sizes = sorted(profiles)
    print("\nWhere the time goes, per host of each kind: tasks run / module runs on the host / seconds of "
          "those tasks (tasks of hosts in parallel overlap, so a kind's seconds are its own critical path):\n")
    for step in PROFILED_STEPS:
        rows = sorted({key for size in sizes for key in profiles[size].get(step, {})})
        print("%s:\n" % step)
        print("| host | role | " + " | ".join("%d nodes" % size for size in sizes) + " |")
        print("|---|---|" + "---|" * len(sizes))
        for kind in ("login", "staging", "compute"):
            kind_rows = [row for row in rows if row[0] == kind]
            for key in [*kind_rows, (kind, "all")]:
                cells = []
                for size in sizes:
                    profile = profiles[size].get(step, {})
                    if key[1] == "all":
                        figures = [sum(profile[row][i] for row in kind_rows if row in profile) for i in range(3)]
                    else:
                        figures = profile[key][:3] if key in profile else None
                    cells.append("%.0f / %.0f / %.1f s" % tuple(figures) if figures else "")
                print("| %s | %s | %s |" % (kind, "**all**" if key[1] == "all" else key[1], " | ".join(cells)))
        print()


def print_summary(all_steps):
    """Each whole-Site step's figures at every size side by side, the tasks each kind of host ran,
    and what each compute node added costs: the difference between the largest and the smallest
    size, per node between them."""
    sizes = sorted(all_steps)
    if not sizes:
        return
    print("\nEach size side by side (seconds; controller + containers CPU s; tasks run on the login, "
          "staging and each compute node, and in brackets their steps, skipped ones too):\n")
    print("| step | " + " | ".join("%d nodes" % size for size in sizes)
          + " | ratio %d to %d | CPU s per added compute node, controller + containers |" % (sizes[-1], sizes[0]))
    print("|---|" + "---|" * (len(sizes) + 2))
    for name in ("first converge", "idempotent re-run", "check --diff"):
        by_size = {size: next((step for step in all_steps[size] if step["name"] == name), None) for size in sizes}
        if any(step is None for step in by_size.values()):
            continue
        cells = ["%.1f s; %.0f + %.0f; %s" % (step["seconds"], step["controller_cpu"], step["containers_cpu"],
                                             tasks_per_kind(step["profile"])) for step in by_size.values()]
        smallest, largest = by_size[sizes[0]], by_size[sizes[-1]]
        added = sizes[-1] - sizes[0]
        per_node = ("%.1f + %.1f" % ((largest["controller_cpu"] - smallest["controller_cpu"]) / added,
                                     (largest["containers_cpu"] - smallest["containers_cpu"]) / added)
                    if added else "")
        print("| %s | %s | %.2fx | %s |" % (name, " | ".join(cells), largest["seconds"] / smallest["seconds"], per_node))


def tasks_per_kind(profile):
    """The tasks that ran on one host of each kind, and its steps, as login / staging / compute."""
    return " / ".join("%.0f (%.0f)" % (sum(row[0] for key, row in profile.items() if key[0] == kind),
                                       sum(row[3] for key, row in profile.items() if key[0] == kind))
                      for kind in ("login", "staging", "compute"))


def print_memory(memory):
    print("\nMemory once the Site is converged (`docker stats`, MiB):\n")
    print("| nodes | compute median | compute max | login |")
    print("|---|---|---|---|")
    for size, taken in memory.items():
        print("| %d | %.0f | %.0f | %.0f |" % (size, statistics.median(taken["compute"]), max(taken["compute"]),
                                               taken["login"]))


def print_joins(joins):
    print("\nThe joining node's runs, changed per host (with --limit only the joining node runs; a task it "
          "delegates to the controller counts under it):\n")
    print("| nodes | step | changed per host |")
    print("|---|---|---|")
    for size, runs in joins.items():
        for name, changed in runs:
            print("| %d | %s | %s |" % (size, name, ", ".join("%s=%d" % item for item in changed.items())))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[3, 10, 30], help="numbers of compute nodes")
    parser.add_argument("--prefix", default="pharos-scale",
                        help="the containers' names start with <prefix>- (any container so named is removed); the network is <prefix>")
    parser.add_argument("--connection", choices=["ssh", "docker"], default="ssh",
                        help="ssh with a master connection per host, as production (default), or docker exec, as molecule")
    parser.add_argument("--keep", action="store_true", help="leave the last size's containers and network running")
    arguments = parser.parse_args()
    sizes, prefix = sorted(set(arguments.nodes)), arguments.prefix
    if docker("image", "inspect", IMAGE, check=False).returncode != 0:
        sys.exit("benchmark: no %s image: run scripts/lab-engine up first" % IMAGE)
    check_inotify_limit(sizes[-1])
    work = Path(tempfile.mkdtemp(prefix="cluster-scale-"))
    (work / "logs").mkdir()
    print("work directory (inventory, stand-in issuer key, each run's output): %s; connection: %s"
          % (work, arguments.connection), file=sys.stderr)
    issuer_key = make_issuer(work)

    print("| nodes | step | seconds | seconds per host | ratio to %d nodes | CPU s, controller + containers "
          "| CPU s per host | changed |" % sizes[0])
    print("|---|---|---|---|---|---|---|---|")
    base_seconds, memory, joins, profiles, all_steps = {}, {}, {}, {}, {}
    try:
        for size in sizes:
            # A previous size's containers, or those a run with --keep left.
            tear_down(prefix, prefix)
            stop_masters(work)
            all_steps[size], memory[size], profiles[size] = measure(size, prefix, work, issuer_key, base_seconds,
                                                                   arguments.connection)
            joins[size] = [(step["name"], step["changed"]) for step in all_steps[size] if step["name"].startswith("+1")]
    finally:
        if not arguments.keep:
            tear_down(prefix, prefix)
            stop_masters(work)
        if memory:
            print_summary(all_steps)
            print_profiles(profiles)
            print_memory(memory)
            print_joins(joins)


if __name__ == "__main__":
    main()
