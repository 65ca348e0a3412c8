#!/usr/bin/env python3
"""How long a key takes to reach sshd through the directory and SSSD, and to leave it.

Runs against a converged login node (a lab container, reached with `docker exec`), with the
Site's own cache lifetime (icarus_hpc_cache_seconds, 90 s in the lab inventory). Each run:
the SSH access agent's identity (Unix user pharos-ssh-access, SASL EXTERNAL over ldapi) adds a
fresh key to a benchmark member, the script times until `ssh` with that key logs in, removes
the key the same way, and times until the login is refused. It prints a table next to seed
001's laboratory figures. It measures; it never passes or fails on time.

    benchmarks/key_propagation.py --container pharos-lab-login --runs 3
"""

import argparse
import statistics
import subprocess
import sys
import time

MEMBER = "pharosbench"
SEED_LOGIN = "55-64 s"
SEED_REFUSE = "12-32 s"
SEED_WINDOW = 120


def inside(container, script, check=True):
    completed = subprocess.run(["docker", "exec", "-i", container, "bash", "-s"], input=script, text=True,
                               capture_output=True, check=False)
    if check and completed.returncode != 0:
        sys.exit("benchmark: %s failed in %s: %s" % (script.splitlines()[0], container, completed.stderr.strip()))
    return completed


def suffix_of(container):
    found = inside(container, "ldapsearch -LLL -Q -Y EXTERNAL -H ldapi:/// -b olcDatabase={1}mdb,cn=config "
                              "-s base olcSuffix")
    return [line.split(": ", 1)[1] for line in found.stdout.splitlines() if line.startswith("olcSuffix: ")][0]


def prepare(container, suffix, uid, gid):
    """The benchmark member (created as root over ldapi, the directory's administrator) and its key."""
    people, groups = "ou=people,ou=pharos," + suffix, "ou=groups,ou=pharos," + suffix
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
getent group pharos-members | grep -q {m} || {{ echo "pharos-members does not list {m}: create the group first"; exit 1; }}
rm -f /root/{m}-key /root/{m}-key.pub && ssh-keygen -q -t ed25519 -N '' -C {m} -f /root/{m}-key
""".format(m=MEMBER, people=people, groups=groups, uid=uid, gid=gid))
    return people


def set_key(container, people, present):
    change = ("replace: sshPublicKey\nsshPublicKey: $(cat /root/%s-key.pub)" % MEMBER if present
              else "replace: sshPublicKey")
    inside(container, """runuser -u pharos-ssh-access -- ldapmodify -Q -Y EXTERNAL -H ldapi:/// >/dev/null <<LDIF
dn: uid=%s,%s
changetype: modify
%s
LDIF
""" % (MEMBER, people, change))


def seconds_until(container, logs_in, limit):
    start = time.monotonic()
    while time.monotonic() - start < limit:
        attempt = inside(container, "ssh -n -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                                    "-o ConnectTimeout=5 -i /root/%s-key %s@127.0.0.1 true" % (MEMBER, MEMBER),
                         check=False)
        if (attempt.returncode == 0) == logs_in:
            return time.monotonic() - start
        time.sleep(1)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--container", default="pharos-lab-login")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--uid", type=int, default=5499990, help="the benchmark member's uidNumber (in the Site's range)")
    parser.add_argument("--gid", type=int, default=5549990, help="its primary gidNumber (in the member GID range)")
    parser.add_argument("--limit", type=int, default=300, help="give up after this many seconds")
    arguments = parser.parse_args()

    people = prepare(arguments.container, suffix_of(arguments.container), arguments.uid, arguments.gid)
    set_key(arguments.container, people, present=False)
    seconds_until(arguments.container, False, arguments.limit)
    rows = []
    for run in range(1, arguments.runs + 1):
        set_key(arguments.container, people, present=True)
        login = seconds_until(arguments.container, True, arguments.limit)
        set_key(arguments.container, people, present=False)
        refuse = seconds_until(arguments.container, False, arguments.limit)
        rows.append((run, login, refuse))

    def shown(value):
        return "> %d s" % arguments.limit if value is None else "%.1f s" % value

    print("| run | key added -> login | key removed -> refused |")
    print("|---|---|---|")
    for run, login, refuse in rows:
        print("| %d | %s | %s |" % (run, shown(login), shown(refuse)))
    logins = [login for _run, login, _refuse in rows if login is not None]
    refusals = [refuse for _run, _login, refuse in rows if refuse is not None]
    if logins and refusals:
        print("| median | %.1f s | %.1f s |" % (statistics.median(logins), statistics.median(refusals)))
    print("| seed 001 (lab) | %s | %s |" % (SEED_LOGIN, SEED_REFUSE))
    print("\nwindow accepted by the administrators: %d s" % SEED_WINDOW)


if __name__ == "__main__":
    main()
