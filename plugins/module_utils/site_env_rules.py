# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Site's rules over the values of site.env (docs/release.md, "site.env").

validate() applies every rule and returns every violation at once, so one run of check tells
the administrator everything that must change. A rule that compares two values runs only when
both values passed their own rules, so one typo is reported once, not three times.

No value is quoted back whole: a message names the key and the line, and quotes a word or a host
of a value only when site_env.shown() allows it, so a token pasted into site.env is never printed.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from ansible_collections.pharos.hpc.plugins.module_utils.site_env import (
    KNOWN_KEYS, OPTIONAL_KEYS, SiteEnvError, Violation, parse, read_bytes, shown, values)

AGENT_MODES = ("order_process", "membership_sync", "report")
OFFERING_UUID = re.compile(r"[0-9a-f]{32}\Z")
DISTINGUISHED_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*=[^,=+]+(,[A-Za-z][A-Za-z0-9-]*=[^,=+]+)*\Z")
PARTITION_NAME = re.compile(r"[A-Za-z0-9_.-]+\Z")
COMPONENT_NAME = re.compile(r"[a-z][a-z0-9-]*\Z")
NUMBER = re.compile(r"(0|[1-9][0-9]*)\Z")
# Debian: 0-999 are system IDs; 60000-65535 hold the globally allocated IDs, systemd's
# DynamicUser= range 61184-65519 and nobody (65534); 4294967295 is (uid_t)-1.
FIRST_ORDINARY_ID = 1000
RESERVED_IDS = (60000, 65535)
LAST_ID = 4294967294
SERVICE_IDS = (("PHAROS_AGENT_UID", "PHAROS_SSH_ACCESS_UID"), ("PHAROS_AGENT_GID", "PHAROS_SSH_ACCESS_GID"))
RANGES = {"member UID": ("MEMBER_UID_MIN", "MEMBER_UID_MAX"), "member GID": ("MEMBER_GID_MIN", "MEMBER_GID_MAX"),
          "project GID": ("PROJECT_GID_MIN", "PROJECT_GID_MAX")}


DNS_NAME = re.compile(r"(?=.{1,253}\.?\Z)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?\Z")


def _is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_host(host):
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return bool(DNS_NAME.match(host))


HOST_LIMIT = 64


def _url(line, schemes, loopback=False, origin_only=False):
    """Violations of one URL value. The value is never quoted, and of its parts only a host that
    shown() allows, after the URL was found to hold no credentials: a password may sit anywhere
    in a URL that a reader splits in an unexpected place."""
    def violation(rule, fix):
        return [Violation(line.key, line.number, rule, fix)]
    if "@" in line.value:
        return violation("embeds credentials in the URL",
                         "remove user:password@ from it; tokens and passwords live in /etc/pharos-hpc/secrets")
    try:
        parts = urlsplit(line.value)
        hostname = parts.hostname
    except ValueError:
        return violation("is not a well-formed URL", "write scheme://host[:port]/path, with an IPv6 address in [ ]")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if parts.scheme not in schemes:
        return violation("must use %s" % " or ".join("%s://" % scheme for scheme in schemes),
                         "write a %s:// URL" % schemes[0])
    if "?" in line.value:
        return violation("has a query or fragment", "remove everything from the ?")
    if parts.scheme == "ldapi":
        return []
    if port == 0 or parts.netloc.endswith(":"):
        return violation("has a port that is not a number from 1 to 65535", "correct the port, or remove the :")
    if not hostname:
        return violation("names no host", "write %s://host..." % parts.scheme)
    if not _is_host(hostname):
        return violation("names a host that is neither a DNS name nor an IP address (a space, a % escape or "
                         "another character a resolver would read otherwise)",
                         "write the host's name in letters, digits, - and ., or its address")
    if loopback and not _is_loopback(hostname):
        host = shown(hostname, HOST_LIMIT)
        return violation("is not on host loopback%s" % (" (%s)" % host if host else ""),
                         "use 127.0.0.1, ::1 or localhost: this service speaks plaintext or must stay on the host")
    if origin_only and parts.path:
        host = shown(hostname, HOST_LIMIT)
        origin = ("%s://%s%s" % (parts.scheme, "[%s]" % host if ":" in host else host, ":%d" % port if port else "")
                  if host else "the scheme, the host and the port")
        return violation("is not an origin (it has a path)",
                         "write only %s; the agents append /v1/site/... themselves" % origin)
    return []


def _number(line):
    return int(line.value) if NUMBER.match(line.value) else None


def _ordinary_id_rule(line, what):
    number = _number(line)
    if number is None:
        return [Violation(line.key, line.number, "is not a whole number", "write the %s in decimal digits" % what)]
    if number > LAST_ID:
        return [Violation(line.key, line.number, "is above %d, the largest %s" % (LAST_ID, what),
                          "choose a %s from 1000-59999 or 65536-4294967294 that no other account uses" % what)]
    if number < FIRST_ORDINARY_ID or RESERVED_IDS[0] <= number <= RESERVED_IDS[1]:
        return [Violation(line.key, line.number, "is %d, a system or reserved ID" % number,
                          "choose a %s from 1000-59999 or 65536-4294967294 that no other account uses" % what)]
    return []


def _words(line, allowed, what):
    found, violations = [], []
    if "," in line.value:
        return [], [Violation(line.key, line.number, "separates %s with commas" % what, "separate them with spaces")]
    for position, word in enumerate(line.value.split(), start=1):
        named = shown(word) or "word %d" % position
        if allowed is not None and word not in allowed:
            violations.append(Violation(line.key, line.number, "names %s, which is not one of %s" % (named, ", ".join(allowed)),
                                        "remove %s or correct its spelling" % named))
        elif word in found:
            violations.append(Violation(line.key, line.number, "names %s twice" % named, "name it once"))
        else:
            found.append(word)
    return found, violations


def _modes(line):
    found, violations = _words(line, AGENT_MODES, "modes")
    if not violations and "report" not in found:
        violations.append(Violation(line.key, line.number, "does not include report",
                                    "add report: usage reaches Waldur only through the report mode"))
    return violations


def _partition(line):
    return [] if PARTITION_NAME.match(line.value) else [Violation(
        line.key, line.number, "is not a Slurm partition name", "use letters, digits, _ . and - only")]


KEY_RULES = {
    "WALDUR_API_URL": lambda line: _url(line, ("https",)),
    "CENTRAL_SITE_API_URL": lambda line: _url(line, ("https",), origin_only=True),
    "PYTHON_INDEX_URL": lambda line: _url(line, ("https",)),
    "NATIVE_SITE_AGENT_LDAP_URI": lambda line: _url(line, ("ldap",), loopback=True),
    "NATIVE_SSH_ACCESS_LDAP_URI": lambda line: _url(line, ("ldapi",)),
    "SLURMRESTD_URL": lambda line: _url(line, ("http", "https"), loopback=True),
    "CENTRAL_OFFERING_UUID": lambda line: [] if OFFERING_UUID.match(line.value) else [Violation(
        line.key, line.number, "is not 32 lowercase hex characters",
        "copy the offering's UUID from Waldur and write it in lower case without dashes")],
    "LDAP_BASE_DN": lambda line: [] if DISTINGUISHED_NAME.match(line.value) else [Violation(
        line.key, line.number, "is not a distinguished name", "write it as dc=example,dc=org")],
    "SLURM_COMPUTE_PARTITION": _partition,
    "SLURM_STAGING_PARTITION": _partition,
    "SITE_AGENT_MODES": _modes,
}


def _ranges(lines, valid):
    """{label: (low, high)} for the ranges whose two ends are valid, with violations."""
    ranges, violations = {}, []
    for label, (low_key, high_key) in RANGES.items():
        if low_key not in valid or high_key not in valid:
            continue
        low, high = int(lines[low_key].value), int(lines[high_key].value)
        if low > high:
            violations.append(Violation(high_key, lines[high_key].number,
                                        "(%d) is below %s (%d)" % (high, low_key, low), "swap or correct the two ends"))
        else:
            ranges[label] = (low, high)
    return ranges, violations


def _cross_rules(lines, valid):
    violations = []
    compute, staging = lines.get("SLURM_COMPUTE_PARTITION"), lines.get("SLURM_STAGING_PARTITION")
    if compute and staging and {compute.key, staging.key} <= valid and compute.value == staging.value:
        partition = shown(compute.value)
        violations.append(Violation(staging.key, staging.number,
                                    "is the compute partition too%s" % (" (%s)" % partition if partition else ""),
                                    "name the Internet-enabled staging partition: compute nodes stay offline"))
    ranges, range_violations = _ranges(lines, valid)
    violations.extend(range_violations)
    if "member GID" in ranges and "project GID" in ranges:
        (low, high), (other_low, other_high) = ranges["member GID"], ranges["project GID"]
        if low <= other_high and other_low <= high:
            violations.append(Violation("PROJECT_GID_MIN", lines["PROJECT_GID_MIN"].number,
                                        "overlaps the member GID range %d-%d" % (low, high),
                                        "give project groups a GID range of their own: the Site agent allocates it"))
    for pair in SERVICE_IDS:
        kind = "UID" if pair[0].endswith("UID") else "GID"
        if set(pair) <= valid and lines[pair[0]].value == lines[pair[1]].value:
            violations.append(Violation(pair[1], lines[pair[1]].number, "equals %s" % pair[0],
                                        "give each service account its own %s" % kind))
        for key in pair:
            if key not in valid:
                continue
            number = int(lines[key].value)
            for label, (low, high) in ranges.items():
                if label.endswith(kind) and low <= number <= high:
                    violations.append(Violation(key, lines[key].number, "(%d) lies in the %s range %d-%d" % (number, label, low, high),
                                                "choose a %s outside every member and project range" % kind))
    return violations


def validate(lines, components=None, dependency_mode=None):
    """Every violation of the Site's rules by parsed lines; [] when they all hold.

    components: the release manifest's component names, to check ACTIVATION_COMPONENTS
    against; dependency_mode: the manifest's mode (index requires PYTHON_INDEX_URL).
    """
    violations, valid = [], set()
    required = [key for key in KNOWN_KEYS if key not in OPTIONAL_KEYS]
    if dependency_mode == "index":
        required.append("PYTHON_INDEX_URL")
    for key in required:
        if key not in lines:
            violations.append(Violation(key, None, "is missing", "add %s=... (%s)" % (key, KNOWN_KEYS[key])))
    for key, line in lines.items():
        if key.endswith(("_UID", "_GID")):
            found = _ordinary_id_rule(line, "UID" if key.endswith("UID") else "GID")
        elif key.endswith(("_MIN", "_MAX")):
            found = [] if _number(line) is not None and _number(line) >= FIRST_ORDINARY_ID else [Violation(
                key, line.number, "is not a whole number of 1000 or more", "write an ID outside the system range 0-999")]
        elif key == "ACTIVATION_COMPONENTS":
            names, found = _words(line, None if components is None else sorted(components), "components")
            found += [Violation(key, line.number, "names %s, which is not a component name" % (shown(name) or "a word"),
                                "correct its spelling") for name in names if not COMPONENT_NAME.match(name)]
        else:
            found = KEY_RULES[key](line)
        violations.extend(found)
        if not found:
            valid.add(key)
    violations.extend(_cross_rules(lines, valid))
    return violations


def check(text, components=None, dependency_mode=None, file_violations=()):
    """The values of a site.env text when it is well formed and every rule holds; SiteEnvError
    naming every violation otherwise (with file_violations, those of the file it came from)."""
    lines, violations = parse(text)
    violations = list(file_violations) + violations + validate(lines, components, dependency_mode)
    if violations:
        raise SiteEnvError(sorted(violations, key=lambda violation: (violation.line is None, violation.line or 0)))
    return values(lines)


def check_file(path, components=None, dependency_mode=None):
    data, file_violations = read_bytes(path)
    return check(data, components, dependency_mode, file_violations)
