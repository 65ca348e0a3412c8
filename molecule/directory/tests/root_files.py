"""Files only root reads, for the secrets the directory's tools take from a file (ldapwhoami -y)."""


def write_root_only(host, path, secret):
    """path on the host, mode 0600, holding secret without a trailing newline (as -y reads it)."""
    written = host.run("umask 077 && cat > %s <<'SECRET'\n%s\nSECRET\ntruncate -s -1 %s" % (path, secret, path))
    assert written.rc == 0, written.stderr
    return path
