# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that turn the Site's values into what slapd reads.

integer_range_regex: slapo-constraint has no numeric range type, so a range of IDs becomes a
POSIX extended regular expression that matches exactly the decimal numbers of the range.

ldif_entry: the attributes of a one-entry LDIF file (no folded lines, no base64 values), so a
schema can be kept as plain LDIF in a role and still be applied by pharos.hpc.ldap_entry.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

from ansible.errors import AnsibleFilterError


def _digits(first, last):
    return first if first == last else "[%s-%s]" % (first, last)


def _any_digits(count):
    if count == 0:
        return ""
    return "[0-9]" if count == 1 else "[0-9]{%d}" % count


def _same_length(low, high):
    """Patterns for low..high, two decimal strings of the same length, low <= high."""
    if low == high:
        return [low]
    if len(low) == 1:
        return [_digits(low, high)]
    if low[0] == high[0]:
        return [low[0] + pattern for pattern in _same_length(low[1:], high[1:])]
    rest = len(low) - 1
    patterns = []
    first = int(low[0])
    if low[1:] != "0" * rest:
        patterns += [low[0] + pattern for pattern in _same_length(low[1:], "9" * rest)]
        first += 1
    last = int(high[0])
    upper = []
    if high[1:] != "9" * rest:
        upper = [high[0] + pattern for pattern in _same_length("0" * rest, high[1:])]
        last -= 1
    if first <= last:
        patterns.append(_digits(str(first), str(last)) + _any_digits(rest))
    return patterns + upper


def integer_range_patterns(minimum, maximum):
    """The alternatives of a regular expression matching minimum..maximum, without signs or leading zeros."""
    try:
        minimum, maximum = int(minimum), int(maximum)
    except (TypeError, ValueError):
        raise AnsibleFilterError("integer_range_regex needs two integers, got %r and %r" % (minimum, maximum))
    if minimum < 0 or minimum > maximum:
        raise AnsibleFilterError("integer_range_regex needs 0 <= minimum <= maximum, got %d and %d" % (minimum, maximum))
    patterns = []
    for length in range(len(str(minimum)), len(str(maximum)) + 1):
        low = max(minimum, 10 ** (length - 1) if length > 1 else 0)
        high = min(maximum, 10 ** length - 1)
        patterns += _same_length(str(low), str(high))
    return patterns


def integer_range_regex(ranges):
    """``[[5000000, 5499999], ...]`` -> ``^(50[0-9]{5}|5[1-4][0-9]{5}|...)$``, anchored."""
    patterns = []
    for pair in ranges:
        if len(pair) != 2:
            raise AnsibleFilterError("integer_range_regex takes a list of [minimum, maximum] pairs, got %r" % (pair,))
        patterns += integer_range_patterns(pair[0], pair[1])
    return "^(%s)$" % "|".join(patterns)


def ldif_entry(text):
    """``{"dn": ..., "attributes": {name: [values]}}`` of a one-entry LDIF text."""
    entry = {"dn": None, "attributes": {}}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith(" ") or ":" not in line or line.split(":", 1)[1].startswith(":"):
            raise AnsibleFilterError("LDIF line %d: folded lines and base64 values are not supported; "
                                     "write each value on one line" % number)
        name, value = line.split(":", 1)
        value = value.strip()
        if name.lower() == "dn":
            if entry["dn"] is not None:
                raise AnsibleFilterError("LDIF line %d: a second entry; give one entry per file" % number)
            entry["dn"] = value
        else:
            entry["attributes"].setdefault(name, []).append(value)
    if entry["dn"] is None:
        raise AnsibleFilterError("The LDIF has no dn: line")
    return entry


def ldif_entries(text):
    """``[{"dn": ..., name: [values]}]`` of ldapsearch's unwrapped LDIF output (-o ldif-wrap=no)."""
    entries = []
    for block in text.strip().split("\n\n"):
        entry = {}
        for line in block.splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            name, _colon, value = line.partition(":")
            if value.startswith(":"):
                value = base64.b64decode(value[1:].strip()).decode("utf-8")
            if name.lower() == "dn":
                entry["dn"] = value.strip()
            else:
                entry.setdefault(name, []).append(value.strip())
        if entry:
            entries.append(entry)
    return entries


class FilterModule(object):
    def filters(self):
        return {
            "integer_range_regex": integer_range_regex,
            "ldif_entry": ldif_entry,
            "ldif_entries": ldif_entries,
        }
