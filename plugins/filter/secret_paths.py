# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The release preflight's judgement of where the agents' secrets come from (docs/release.md,
"Secrets and trust").

The secrets are adopted as root from the token directory, or kept in /etc/pharos-hpc/secrets.
Whoever may change one of those files, or rename a directory on the way to it, chooses what the
agents authenticate with; whoever may read a credential holds it. So every directory from / down
to the secrets is root's alone to change, a credential is root's alone to read as well, and a CA
certificate, which is public, is root's alone to change.

directories_up_to_root gives the directories to look at; secret_path_problems judges what the
stat module (follow: false) found there, as sentences that name the path, what was found, the
rule and the fix.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath

SECRETS_DIRECTORY = "/etc/pharos-hpc/secrets"
# Bits that give a group or other users anything: a credential has none of them.
GROUP_AND_OTHER = 0o077
GROUP_AND_OTHER_WRITE = 0o022


def directories_up_to_root(path):
    """[path, its parent, ..., /] of an absolute path, normalised; [] for an empty path, and only
    the path itself for a relative one (secret_path_problems refuses it)."""
    if not path:
        return []
    path = posixpath.normpath(path)
    if not path.startswith("/"):
        return [path]
    chain = [path]
    while chain[-1] != "/":
        chain.append(posixpath.dirname(chain[-1]))
    return chain


def _mode(stat):
    return int(str(stat.get("mode", "0")), 8)


def _found(stat):
    return "owner UID %s, mode %s" % (stat.get("uid"), stat.get("mode"))


def _changeable(stat):
    """Anyone but root may change it: another owner, or a group or other users with write."""
    return stat.get("uid") != 0 or bool(_mode(stat) & GROUP_AND_OTHER_WRITE)


def _directory_problem(path, stat, token_directory):
    inside = path.rstrip("/") + "/"
    on_token_path = path == token_directory or token_directory.startswith(inside)
    on_secrets_path = path == SECRETS_DIRECTORY or SECRETS_DIRECTORY.startswith(inside)
    if path == token_directory:
        what = "The token directory %s" % path
    elif path == SECRETS_DIRECTORY:
        what = "The secrets directory %s" % path
    else:
        below = ["the token directory %s" % token_directory] if on_token_path else []
        below += ["the secrets directory %s" % SECRETS_DIRECTORY] if on_secrets_path else []
        what = "The directory %s above %s" % (path, " and ".join(below))
    if stat.get("islnk"):
        why = "a link (to %s)" % stat.get("lnk_target")
        fix = ("give the token directory by its path without links (readlink -f %s)" % token_directory if on_token_path
               else "make %s a real directory, owned by root" % path)
    elif not stat.get("isdir"):
        why, fix = "not a directory", "make %s a directory, owned by root and writable by root alone" % path
    elif _changeable(stat):
        why = "not root's alone (%s)" % _found(stat)
        fix = ("give a token directory all of whose directories only root may change (below /root, for example)"
               if on_token_path and not on_secrets_path and path != token_directory
               else "chown root:root %s && chmod go-w %s" % (path, path))
    else:
        return None
    return ("%s is %s: the secrets below it are adopted as root, so it and every directory above it must be a real "
            "directory that only root may change (owned by root, writable by no group and no other user). Fix: %s."
            % (what, why, fix))


def _file_problem(directory, name, stat, token_directory, public):
    path = "%s/%s" % (directory, name)
    where = ("in the token directory %s" % directory if directory == token_directory
             else "adopted in %s" % directory)
    rule = ("a CA certificate is public, but only root may change it" if name in public
            else "a credential is a regular file that only root may read or change (mode 0600 or 0400)")
    if stat.get("islnk"):
        why, fix = "a link", "write the file itself there, owned by root with mode %s" % ("0644" if name in public else "0600")
        rule = "nothing is adopted through a link"
    elif not stat.get("isreg"):
        why, fix = "not a regular file", "write the file itself there, owned by root with mode 0600"
    elif _changeable(stat):
        why = "not root's alone (%s)" % _found(stat)
        fix = "chown root:root %s && chmod %s %s" % (path, "go-w" if name in public else "0600", path)
    elif name not in public and _mode(stat) & GROUP_AND_OTHER:
        why = "readable by others than root (%s)" % _found(stat)
        fix = ("chmod 0600 %s; if anyone else logs in to this host, take the secret as known and have the central "
               "step replace it" % path)
    else:
        return None
    return "Secret %s %s is %s: %s. Fix: %s." % (name, where, why, rule, fix)


def secret_path_problems(directories, files, token_directory="", public=()):
    """Each problem of the directories and secret files the preflight looked at, as a sentence.

    directories: the results of a stat loop (follow: false) over directories_up_to_root of the
    token directory and of /etc/pharos-hpc/secrets, each with item (the path) and stat.
    files: the results of a stat loop over [directory, secret name] pairs, each with item and stat.
    public: the names of the secrets that are CA certificates, which any user may read.
    Paths that do not exist, or were not looked at, have no problem here: a missing secret is
    reported where the secrets are gathered.
    """
    token_directory = posixpath.normpath(token_directory) if token_directory else ""
    problems = []
    if token_directory and not token_directory.startswith("/"):
        problems.append("The token directory %s is not an absolute path: the secrets are adopted from a directory "
                        "named from /. Fix: give pharos_token_directory as an absolute path." % token_directory)
    seen = set()
    for result in directories or []:
        stat = result.get("stat") or {}
        path = posixpath.normpath(str(result.get("item", "")))
        if not stat.get("exists") or path in seen:
            continue
        seen.add(path)
        problem = _directory_problem(path, stat, token_directory)
        if problem:
            problems.append(problem)
    for result in files or []:
        stat = result.get("stat") or {}
        if not stat.get("exists"):
            continue
        directory, name = result["item"]
        problem = _file_problem(posixpath.normpath(directory), name, stat, token_directory, public)
        if problem:
            problems.append(problem)
    return problems


class FilterModule(object):
    def filters(self):
        return {"directories_up_to_root": directories_up_to_root, "secret_path_problems": secret_path_problems}
