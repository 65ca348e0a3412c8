# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""A Site's own SSSD and NSS settings, read as SSSD and glibc read them, for adopt mode's checks.

In adopt mode the Site owns sssd.conf, which holds its bind password (``ldap_default_authtok``),
so the files are read on the host and only findings leave it: no line of a Site file is
returned, only the values the checks name (a responder list, a cache lifetime, a file name).

SSSD reads sssd.conf, then each ``*.conf`` of its ``conf.d`` that does not start with a dot, in
name order; a later file's value of a section's option wins. Lines starting with ``#`` or ``;``
are comments, and whitespace around ``=`` and the value is dropped.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

PHAROS_DOMAIN = "domain/pharos"
RESPONDERS = ("nss", "pam", "ssh")
SSSD_DEFAULT_MEMCACHE_SECONDS = "300"
SECTION = re.compile(r"\s*\[([^\]]*)\]\s*\Z")
OPTION = re.compile(r"\s*([^=#;\s][^=]*?)\s*=\s*(.*?)\s*\Z")


@dataclass(frozen=True)
class Setting:
    path: str
    number: int
    value: str


@dataclass
class SssdFile:
    path: str
    sections: dict

    def get(self, section, option):
        return self.sections.get(section, {}).get(option)


def parse(path, text):
    """{section: {option: Setting}} of one file; a second value in the same file wins."""
    sections = {}
    current = None
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip()[0] in "#;":
            continue
        header = SECTION.match(line)
        if header:
            current = sections.setdefault(header.group(1).strip(), {})
            continue
        option = OPTION.match(line)
        if option and current is not None:
            current[option.group(1)] = Setting(path, number, option.group(2))
    return SssdFile(path, sections)


def snippet_paths(directory):
    """The snippets SSSD reads from conf.d, in its order."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return [os.path.join(directory, name) for name in sorted(names)
            if name.endswith(".conf") and not name.startswith(".") and os.path.isfile(os.path.join(directory, name))]


def read(path):
    """The file parsed, or None when it does not exist."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return parse(path, handle.read())
    except FileNotFoundError:
        return None


def effective(files, section, option):
    """The Setting SSSD uses: the last file's that sets it, or None."""
    found = [sssd_file.get(section, option) for sssd_file in files]
    found = [setting for setting in found if setting is not None]
    return found[-1] if found else None


@dataclass(frozen=True)
class AdoptWants:
    host: str
    snippet: str
    cache_seconds: int


def conflicts(files, wants):
    """Each Site file that defines the domain Pharos adds."""
    return [f"{sssd_file.path} has a [{PHAROS_DOMAIN}] section already, the name of the domain Pharos "
            f"adds in {wants.snippet}: rename the Site's domain (its section and the domains line)."
            for sssd_file in files if sssd_file.path != wants.snippet and PHAROS_DOMAIN in sssd_file.sections]


def preconditions(main_path, files, nsswitch, wants):
    """Each SSSD or NSS setting of the Site that Pharos needs and that does not hold. files are the
    ones SSSD reads, sssd.conf first (empty when it does not exist); Pharos's own snippet sets
    none of these."""
    if not files or files[0].path != main_path:
        findings = [f"{main_path} on {wants.host} does not exist; adopt mode joins an SSSD that runs "
                    "already. Configure SSSD for the Site's own users first."]
    else:
        site_files = [sssd_file for sssd_file in files if sssd_file.path != wants.snippet]
        findings = [responders_unmet(site_files, wants), memcache_unmet(site_files, wants)]
    return [finding for finding in findings + [nsswitch_unmet(nsswitch, wants)] if finding]


def responders_unmet(files, wants):
    setting = effective(files, "sssd", "services")
    services = [name.strip() for name in setting.value.split(",") if name.strip()] if setting else []
    missing = [name for name in RESPONDERS if name not in services]
    if not missing:
        return None
    where = f"{setting.path} on {wants.host} line {setting.number}" if setting else f"{files[0].path} on {wants.host}"
    return (f"{where}: the [sssd] services line lists {', '.join(services) or 'nothing'}; members need nss "
            "(names), pam (the access check) and ssh (their keys). Change the line to "
            f"'services = {', '.join(services + missing)}'.")


def memcache_unmet(files, wants):
    setting = effective(files, "nss", "memcache_timeout")
    value = setting.value if setting else SSSD_DEFAULT_MEMCACHE_SECONDS
    if value.isdigit() and int(value) <= wants.cache_seconds:
        return None
    path = setting.path if setting else files[0].path
    return (f"{path} on {wants.host}: SSSD's fast cache keeps an entry {value} s ([nss] memcache_timeout"
            f"{'' if setting else ', by default'}), so a member's changed key or membership would wait that long; "
            f"Pharos's key window needs at most {wants.cache_seconds} s (pharos_cache_seconds). Set "
            f"'memcache_timeout = {wants.cache_seconds}' in the [nss] section of {path}.")


def nsswitch_unmet(nsswitch, wants):
    """nsswitch is /etc/nsswitch.conf's text."""
    lines = nsswitch.split("\n")
    if all(any(re.match(rf"{database}:.*\bsss\b", line) for line in lines) for database in ("passwd", "group")):
        return None
    return (f"/etc/nsswitch.conf on {wants.host}: the passwd and group lines must list sss, or members have no "
            "names on this host. Add sss to both lines, after files.")
