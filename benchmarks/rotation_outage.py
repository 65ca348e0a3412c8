#!/usr/bin/env python3
"""How long each service is out while one of the Site's secrets is rotated by one run.

Runs against `make lab` (or the molecule cluster scenario, with --prefix, --inventory and
--playbook). For each secret asked for, it gives the secret a new random value in an extra-vars
file, runs the playbook once, and meanwhile probes the services from the controller through
`docker exec`, about four times a second:

  accounting    sacctmgr answers (slurmdbd, MariaDB)
  controller    scontrol ping answers (slurmctld)
  rest          slurmrestd answers HTTP on loopback
  munge         a credential made on the login node decodes on the compute node
  directory     slapd answers a root DSE search on loopback
  names         a member's name resolves through SSSD
  ssh           sshd accepts TCP connections

It prints, per secret, the longest stretch each probe failed, and the run's wall time. A probe
that never failed shows 0. It measures; it never passes or fails on time. The rotated values are
left in place: run site.yml again with the inventory's values to put them back.

    .venv/bin/python benchmarks/rotation_outage.py --secret all
"""

import argparse
import json
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
SECRETS = {
    "munge_key": lambda: secrets.token_hex(32),
    "slurm_db_password": lambda: "rotated-slurmdbd-" + secrets.token_hex(12),
    "slurm_jwt_key": lambda: secrets.token_hex(32),
    "openldap_sssd_reader_password": lambda: "rotated-reader-" + secrets.token_hex(12),
    "openldap_agent_password": lambda: "rotated-agent-" + secrets.token_hex(12),
}


def probes(prefix, member):
    login, compute = prefix + "-login", prefix + "-compute"
    return {
        "accounting": [[login, "sacctmgr", "--noheader", "show", "cluster", "format=Cluster"]],
        "controller": [[login, "scontrol", "ping"]],
        "rest": [[login, "curl", "-s", "-o", "/dev/null", "--max-time", "2", "http://127.0.0.1:6820/openapi/v3"]],
        "munge": [[login, "munge", "-n"], [compute, "unmunge"]],
        "directory": [[login, "ldapsearch", "-x", "-H", "ldap://127.0.0.1/", "-s", "base", "-b", "", "namingContexts"]],
        "names": [[login, "getent", "passwd", member]],
        "ssh": [[login, "timeout", "2", "bash", "-c", "</dev/tcp/127.0.0.1/22"]],
    }


def probe_once(steps):
    """Each step in its container, the output of one the input of the next; True if all succeed."""
    data = None
    for container, *command in steps:
        completed = subprocess.run(["docker", "exec", "-i", container, *command], input=data, capture_output=True,
                                   timeout=10, check=False)
        if completed.returncode != 0:
            return False
        data = completed.stdout
    return True


class Prober(threading.Thread):
    def __init__(self, steps):
        super().__init__(daemon=True)
        self.steps, self.samples, self.stopping = steps, [], threading.Event()

    def run(self):
        while not self.stopping.is_set():
            self.samples.append((time.monotonic(), probe_once(self.steps)))
            time.sleep(0.25)

    def longest_outage(self):
        longest, failed_since = 0.0, None
        for moment, succeeded in self.samples:
            if not succeeded and failed_since is None:
                failed_since = moment
            elif succeeded and failed_since is not None:
                longest, failed_since = max(longest, moment - failed_since), None
        if failed_since is not None:
            longest = max(longest, self.samples[-1][0] - failed_since)
        return longest


def rotate(arguments, secret):
    with tempfile.NamedTemporaryFile("w", suffix=".json") as extra:
        json.dump({secret: SECRETS[secret]()}, extra)
        extra.flush()
        command = [str(PROJECT / ".venv" / "bin" / "ansible-playbook"), "-i", arguments.inventory,
                   *arguments.extra, "-e", "@" + extra.name, arguments.playbook]
        started = time.monotonic()
        completed = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, check=False)
        if completed.returncode != 0:
            sys.exit("benchmark: the run rotating %s failed:\n%s" % (secret, completed.stdout[-3000:]))
        return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secret", choices=sorted(SECRETS) + ["all"], default="all")
    parser.add_argument("--prefix", default="pharos-lab", help="containers <prefix>-login and <prefix>-compute")
    parser.add_argument("--inventory", default=str(PROJECT / "inventories" / "lab"))
    parser.add_argument("--playbook", default=str(PROJECT / "playbooks" / "site.yml"))
    parser.add_argument("--member", default="pharosalice", help="a member whose name SSSD resolves")
    parser.add_argument("--extra", action="append", default=[],
                        help="another ansible-playbook option, e.g. --extra=--extra-vars=name=value")
    arguments = parser.parse_args()
    chosen = sorted(SECRETS) if arguments.secret == "all" else [arguments.secret]
    names = list(probes(arguments.prefix, arguments.member))
    print("| secret | run | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for secret in chosen:
        probers = {name: Prober(steps) for name, steps in probes(arguments.prefix, arguments.member).items()}
        for prober in probers.values():
            prober.start()
        time.sleep(2)
        wall = rotate(arguments, secret)
        time.sleep(5)
        for prober in probers.values():
            prober.stopping.set()
            prober.join()
        print("| %s | %.0f s | %s |" % (secret, wall, " | ".join("%.1f s" % probers[name].longest_outage()
                                                                  for name in names)), flush=True)


if __name__ == "__main__":
    main()
