"""What the Site owns on its hosts, read straight from the containers: each file the Site's
administrators wrote, with its SHA-256, and the Site's own accounts, directory entries and
access rules. Adopt mode must leave all of it as it was.

Run as a script, it records the state as JSON: python site_state.py <file>."""

import json
import subprocess
import sys

LOGIN, NODE, DTN = "pharos-adopt-login", "pharos-adopt-node", "pharos-adopt-dtn"
HOSTS = (LOGIN, NODE, DTN)

EVERY_HOST = ["/etc/slurm/slurm.conf", "/etc/munge/munge.key", "/etc/nsswitch.conf",
              "/etc/ssh/sshd_config", "/etc/sudoers.d/ops", "/etc/pam.d/common-account",
              "/etc/pam.d/sshd"]
SITE_FILES = {
    LOGIN: EVERY_HOST + [
        "/etc/slurm/slurmdbd.conf", "/etc/sssd/sssd.conf", "/etc/default/slapd",
        "/etc/ldap/slapd.d/cn=config/olcDatabase={1}mdb.ldif",
        "/home/alice/.ssh/authorized_keys", "/etc/mysql/mariadb.cnf",
    ],
    NODE: EVERY_HOST,
    DTN: EVERY_HOST,
}

# The Site's associations: everything outside Pharos's tree (accounts named pharos*).
SITE_ACCOUNTS = ("sacctmgr --noheader --parsable2 show associations "
                 "format=cluster,account,user,parentname,share,grptresmins,maxjobs "
                 "| grep -v '|pharos' | sort")
SITE_ENTRIES = "ldapsearch -LLL -Q -o ldif-wrap=no -Y EXTERNAL -H ldapi:/// -b dc=example"
SITE_RULES = ("ldapsearch -LLL -Q -o ldif-wrap=no -Y EXTERNAL -H ldapi:/// -s base "
              "-b 'olcDatabase={1}mdb,cn=config' olcAccess olcSuffix olcRootDN")


def on(host, command, stdin=None):
    attach = ["-i"] if stdin is not None else []
    result = subprocess.run(["docker", "exec", *attach, host, "sh", "-c", command], input=stdin,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, f"{host}: {command}: {result.stderr}"
    return result.stdout


def digests(host):
    output = on(host, "sha256sum " + " ".join(f"'{path}'" for path in SITE_FILES[host]))
    return {line.split(None, 1)[1].strip(): line.split(None, 1)[0] for line in output.splitlines()}


def state():
    return {
        "files": {host: digests(host) for host in HOSTS},
        "accounts": on(LOGIN, SITE_ACCOUNTS),
        "entries": on(LOGIN, SITE_ENTRIES),
        "rules": on(LOGIN, SITE_RULES),
    }


if __name__ == "__main__":
    with open(sys.argv[1], "w", encoding="utf-8") as handle:
        json.dump(state(), handle, indent=1, sort_keys=True)
