#!/usr/bin/env python3
"""How long a member's key takes to reach sshd, and to leave it, at the Site's real settings.

Runs against `make lab` (full mode), or the journey scenario's Site (adopt mode, with --container
and --state): the SSH access agent's stand-in polls the Site API every
pharos_ssh_access_poll_seconds and writes keys over ldapi as pharos-ssh-access, and sshd's key
command reads them from the directory at each login. Each trial submits a fresh key for a
benchmark member to the Site API's stand-in, as the control plane grants it, and times until
`ssh` with that key logs in; then it revokes the key the same way and times until the login is
refused. One login a second, each from its own loopback address, so that sshd's per-source
penalties never decide a trial. It prints each trial, the median and the maximum next to the
figures the Pharos laboratory measured on its development host (four runs, October 2026), and the
trials over the Site's window. It measures; it never passes or fails on time.

    .venv/bin/python benchmarks/key_propagation.py --runs 20
    .venv/bin/python benchmarks/key_propagation.py --runs 20 --container pharos-journey-login \
        --state ~/.cache/molecule/<checkout>/journey/waldur
"""

import argparse
import itertools
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml


PROJECT = Path(__file__).resolve().parents[1]
MEMBER = "pharosbench"
REFERENCE_LOGIN = "55-64 s"
REFERENCE_REFUSE = "12-32 s"
SOURCES = ("127.0.%d.%d" % (third, fourth) for third, fourth in itertools.product(range(1, 255), range(2, 255)))


def site_values():
    """The lab inventory's values, which make lab and the journey scenario both use."""
    return yaml.safe_load((PROJECT / "inventories" / "lab" / "group_vars" / "all" / "site.yml").read_text(encoding="utf-8"))


def site_window():
    """The window the journey asserts: pharos_key_window_seconds, never above the cache
    lifetime plus the agent's poll."""
    site = site_values()
    return min(site["pharos_key_window_seconds"],
               site["pharos_cache_seconds"] + site["pharos_ssh_access_poll_seconds"])


def inside(container, script, check=True):
    completed = subprocess.run(["docker", "exec", "-i", container, "bash", "-s"], input=script, text=True,
                               capture_output=True, check=False)
    if check and completed.returncode != 0:
        sys.exit("benchmark: %s failed in %s: %s" % (script.splitlines()[0], container, completed.stderr.strip()))
    return completed


def people_of(container):
    """The members' entries, as the key command reads them: the Pharos suffix, in either mode."""
    settings = inside(container, "cat /etc/pharos-hpc/directory-keys.json").stdout
    return json.loads(settings)["people_dn"]


def prepare(container, people, uid, gid):
    """The benchmark member, created as root over ldapi (the directory's administrator)."""
    groups = people.replace("ou=people,", "ou=groups,", 1)
    inside(container, """ldapadd -c -Q -Y EXTERNAL -H ldapi:/// >/dev/null 2>&1 <<'LDIF' || true
dn: uid={m},{people}
objectClass: inetOrgPerson
objectClass: posixAccount
objectClass: ldapPublicKey
uid: {m}
cn: {m}
sn: {m}
uidNumber: {uid}
gidNumber: {gid}
homeDirectory: /nonexistent
loginShell: /bin/sh

dn: cn={m},{groups}
objectClass: posixGroup
cn: {m}
gidNumber: {gid}
LDIF
ldapmodify -c -Q -Y EXTERNAL -H ldapi:/// >/dev/null 2>&1 <<'LDIF' || true
dn: cn=pharos-members,{groups}
changetype: modify
add: memberUid
memberUid: {m}
LDIF
# SSSD serves the group from its cache until the cache expires.
for _ in $(seq 150); do getent group pharos-members | grep -q {m} && exit 0; sleep 1; done
echo "pharos-members does not list {m} after 150 s: create the group first"; exit 1
""".format(m=MEMBER, people=people, groups=groups, uid=uid, gid=gid))
    return people


def site_api(container):
    """The URL the controller reaches the Site API's stand-in at."""
    origin = inside(container, "sed -n 's/^CENTRAL_SITE_API_URL=//p' /etc/pharos-hpc/ssh-access.env").stdout.strip()
    address = inside(container, "getent hosts site-api.lab").stdout.split()[0]
    return "https://%s:%s" % (address, origin.rsplit(":", 1)[1])


def submit(url, state, keys):
    """The member's keys, through scripts/site-api-keys as an administrator submits them."""
    completed = subprocess.run([sys.executable, str(PROJECT / "scripts" / "site-api-keys"), "--url", url,
                                "--ca", str(state / "ca.pem"), "--token-file", str(state / "site-api-operator-token"),
                                MEMBER, *keys], capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        sys.exit("benchmark: %s" % completed.stderr.strip())


def new_key(container):
    inside(container, "rm -f /root/{m}-key /root/{m}-key.pub && ssh-keygen -q -t ed25519 -N '' -C {m} "
                      "-f /root/{m}-key".format(m=MEMBER))
    return inside(container, "cat /root/%s-key.pub" % MEMBER).stdout.strip()


def seconds_until(container, logs_in, limit):
    start = time.monotonic()
    while time.monotonic() - start < limit:
        attempt = inside(container, "ssh -n -b " + next(SOURCES) + " -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                                    "-o ConnectTimeout=5 -i /root/%s-key %s@127.0.0.1 true" % (MEMBER, MEMBER),
                         check=False)
        if (attempt.returncode == 0) == logs_in:
            return time.monotonic() - start
        time.sleep(1)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--container", default="pharos-lab-login")
    parser.add_argument("--state", type=Path, default=PROJECT / ".lab" / "waldur",
                        help="the Waldur simulator's state directory (its CA and the Site API's operator token)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--uid", type=int, default=5499990, help="the benchmark member's uidNumber (in the Site's range)")
    parser.add_argument("--gid", type=int, default=5549990, help="its primary gidNumber (in the member GID range)")
    parser.add_argument("--limit", type=int, default=300, help="give up after this many seconds")
    arguments = parser.parse_args()

    prepare(arguments.container, people_of(arguments.container), arguments.uid, arguments.gid)
    url = site_api(arguments.container)
    submit(url, arguments.state, [])
    seconds_until(arguments.container, False, arguments.limit)
    rows = []
    # A member submits or revokes at any moment of the agent's cycle: without a random pause each
    # trial would start right after the cycle that ended the one before, always a full poll away.
    poll = site_values()["pharos_ssh_access_poll_seconds"]
    for run in range(1, arguments.runs + 1):
        time.sleep(random.uniform(0, poll))
        submit(url, arguments.state, [new_key(arguments.container)])
        login = seconds_until(arguments.container, True, arguments.limit)
        time.sleep(random.uniform(0, poll))
        submit(url, arguments.state, [])
        refuse = seconds_until(arguments.container, False, arguments.limit)
        rows.append((run, login, refuse))
        print("trial %d: %s, %s" % (run, login, refuse), file=sys.stderr, flush=True)

    def shown(value):
        return "> %d s" % arguments.limit if value is None else "%.1f s" % value

    print("| trial | key submitted -> login | key revoked -> refused |")
    print("|---|---|---|")
    for run, login, refuse in rows:
        print("| %d | %s | %s |" % (run, shown(login), shown(refuse)))
    for name, pick in (("median", statistics.median), ("maximum", max)):
        logins = [login for _run, login, _refuse in rows if login is not None]
        refusals = [refuse for _run, _login, refuse in rows if refuse is not None]
        if logins and refusals:
            print("| %s | %.1f s | %.1f s |" % (name, pick(logins), pick(refusals)))
    print("| Pharos laboratory (reference) | %s | %s |" % (REFERENCE_LOGIN, REFERENCE_REFUSE))
    window = site_window()
    over = [run for run, login, refuse in rows if login is None or refuse is None or max(login, refuse) > window]
    print("\nthe Site's window: %d s; trials over it: %s" % (window, over or "none"))


if __name__ == "__main__":
    main()
