"""sshd's AuthorizedKeysCommand for members: the keys the directory holds at this login.

The keys are read from the directory at each login, as the read-only identity cn=pharos-keys
(SASL EXTERNAL over ldapi as this command's Unix user), so a key that the SSH access agent writes
or removes counts at the next login instead of after SSSD's cache expires. SSSD stays the source
of identities: the name must be an account SSSD serves from the directory, and a name or UID that
a local account holds never gets a directory key (docs/directory.md, "Local names"), nor does a
name whose UID in the directory is not the UID SSSD serves for it.

When the directory does not answer, the keys last read for the member count until they are as
old as the Site's cache lifetime, and no longer. Each refusal is logged (authpriv).

sshd runs it isolated, as the user AuthorizedKeysCommandUser names (pharos-keys), so that no
environment variable, user site or working directory decides what Python loads:

    /usr/bin/python3 -I /usr/local/libexec/pharos/directory-keys <user>
"""

import json
import os
import subprocess
import sys
import syslog
import time

CONFIG = "/etc/pharos-hpc/directory-keys.json"
# libldap's ldapi:/// on Debian; ldap3 needs the socket's path in the URI.
LDAPI = "ldapi://%2Frun%2Fslapd%2Fldapi"
TIMEOUT_SECONDS = 3


class DirectoryUnavailable(Exception):
    pass


def log(user, message):
    syslog.openlog("pharos-directory-keys", 0, syslog.LOG_AUTHPRIV)
    syslog.syslog(syslog.LOG_WARNING, "no directory key for %s: %s" % (user, message))


def passwd(source, key):
    """The passwd entry's fields from one NSS source, or None."""
    found = subprocess.run(["getent", "-s", source, "passwd", key], capture_output=True, text=True, check=False)
    return found.stdout.split(":") if found.returncode == 0 else None


def read_directory(people_dn, user):
    """(uidNumber, keys) of the member's entry now, or None when it has no entry."""
    import ldap3
    from ldap3.core.exceptions import LDAPException
    from ldap3.utils.conv import escape_filter_chars

    try:
        # An empty authorization identity: without it ldap3 sends no initial response.
        connection = ldap3.Connection(ldap3.Server(LDAPI, connect_timeout=TIMEOUT_SECONDS),
                                      authentication=ldap3.SASL, sasl_mechanism=ldap3.EXTERNAL,
                                      sasl_credentials="", receive_timeout=TIMEOUT_SECONDS, raise_exceptions=True)
        connection.bind()
        try:
            connection.search(people_dn, "(&(objectClass=posixAccount)(uid=%s))" % escape_filter_chars(user),
                              search_scope=ldap3.LEVEL, attributes=["uidNumber", "sshPublicKey"])
            entries = [entry["attributes"] for entry in connection.response if entry.get("type") == "searchResEntry"]
        finally:
            connection.unbind()
    except LDAPException as error:
        raise DirectoryUnavailable("%s: %s" % (type(error).__name__, error)) from error
    if len(entries) != 1:
        return None
    uid_number = entries[0].get("uidNumber")
    uid_number = uid_number[0] if isinstance(uid_number, list) else uid_number
    # sshPublicKey is an octet string, which ldap3 returns as bytes.
    keys = [key.decode() if isinstance(key, bytes) else key for key in entries[0].get("sshPublicKey", [])]
    return str(uid_number), [key.strip() for key in keys if key.strip() and "\n" not in key.strip()]


class LastRead:
    """The keys last read for each member, kept by this command's own user (its record directory is
    its own, mode 0700): what counts while the directory does not answer, and for how long."""

    def __init__(self, directory):
        self.directory = directory

    def path(self, uid):
        return os.path.join(self.directory, "%s.json" % uid)

    def keep(self, uid, user, keys):
        """Best effort: a record that cannot be written costs only the fallback, never this login."""
        partial = self.path(uid) + ".partial"
        try:
            with open(partial, "w", encoding="utf-8") as record:
                json.dump({"user": user, "keys": keys}, record)
            os.replace(partial, self.path(uid))
        except OSError:
            pass

    def keys(self, uid, user, lifetime):
        """(keys, age in seconds) while the record is younger than lifetime, else ([], age or None)."""
        try:
            age = time.time() - os.stat(self.path(uid)).st_mtime
            with open(self.path(uid), encoding="utf-8") as record:
                kept = json.load(record)
        except (OSError, ValueError):
            return [], None
        if kept.get("user") != user or not 0 <= age < lifetime:
            return [], age
        return list(kept.get("keys", [])), age


def member_keys(user, config, directory=read_directory, lookup=passwd):
    """The lines sshd gets for user, and why none when there are none."""
    if lookup("files", user) is not None:
        return [], "a local account has this name"
    entry = lookup("sss", user)
    if entry is None:
        return [], None
    uid = entry[2]
    if lookup("files", uid) is not None:
        return [], "a local account has its UID %s" % uid
    last_read = LastRead(config["record_directory"])
    try:
        found = directory(config["people_dn"], user)
    except DirectoryUnavailable as error:
        keys, age = last_read.keys(uid, user, config["cache_seconds"])
        if keys:
            return keys, None
        shown = "none kept" if age is None else "those read %d s ago are past the cache lifetime of %d s" % (
            age, config["cache_seconds"])
        return [], "the directory does not answer (%s), and %s" % (error, shown)
    if found is None:
        last_read.keep(uid, user, [])
        return [], "the directory has no entry for it now"
    directory_uid, keys = found
    if directory_uid != uid:
        # Whichever side is stale, the keys belong to the directory's UID and the login would open
        # SSSD's: an old UID's files, processes and jobs. Nothing is kept for SSSD's UID either, so the
        # fallback cannot hand back keys read before the entry changed.
        last_read.keep(uid, user, [])
        if lookup("files", directory_uid) is not None:
            return [], "a local account has its directory UID %s" % directory_uid
        return [], ("the directory's entry has UID %s but SSSD serves UID %s; it logs in again when SSSD's "
                    "cached entry expires or after 'sss_cache -u %s'" % (directory_uid, uid, user))
    last_read.keep(uid, user, keys)
    return keys, None


def main(argv):
    if len(argv) != 2:
        print("usage: directory-keys <user>", file=sys.stderr)
        return 2
    with open(CONFIG, encoding="utf-8") as settings:
        config = json.load(settings)
    keys, refusal = member_keys(argv[1], config)
    if refusal:
        log(argv[1], refusal)
    for key in keys:
        print(key)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
