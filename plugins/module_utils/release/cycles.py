# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The agents' cycles as their journals tell them: the last line, the last cycle that did not
fail, and the last error.

Both agents log one JSON object a line. The Site agent (upstream waldur-site-agent, through
structlog) begins each pass over its offerings with "Number of offerings to process ..."; a pass
it cannot finish is logged with its traceback (logger.exception, the record's "exception"), and
that pass failed. An error without a traceback (one order Slurm refused, a setting upstream
warns of on every pass) is the unit's last error, but its pass went on. The SSH access agent
logs one line a cycle, as event "cycle" when it succeeded and "error" when it did not. Lines that
are not JSON (systemd's own) belong to no cycle.

What is reported of a line is redacted first and cut after: the agents' own secrets (given) are
masked wherever they appear, and whatever has the shape of one (a bearer or token header, a JWT,
a token= or password= value, a password in a URL) is replaced, since a journal is read by people
who may not read the secrets."""

from __future__ import annotations

import datetime
import json
import re

PASS_BEGINS = "Number of offerings to process"
ONE_LINE_CYCLES = ("cycle", "error")
ERROR_LEVELS = ("error", "critical")
MESSAGE_LIMIT = 300
MASK = "********"  # as Ansible masks a module's no_log values
REDACTED = "[redacted]"
SHAPES = (
    (re.compile(r"\b(bearer|token|basic)(\s+)[A-Za-z0-9._~+/=-]{16,}", re.IGNORECASE), r"\1\2" + REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]*){0,2}"), REDACTED),
    (re.compile(r"""([\w-]*(?:token|password|passwd|secret|api_?key)[\w-]*["']?\s*[=:]\s*["']?)[^\s"'&,;}]+""",
                re.IGNORECASE), r"\1" + REDACTED),
    (re.compile(r"(://[^/\s:@]+:)[^/\s@]+@"), r"\1" + REDACTED + "@"),
)


def journal_entries(text):
    """(time, message) of each entry of `journalctl --output json`, oldest first."""
    entries = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
            microseconds = int(entry["__REALTIME_TIMESTAMP"])
        except (ValueError, KeyError, TypeError):
            continue
        message = entry.get("MESSAGE")
        if isinstance(message, list):  # journald gives a message that is not UTF-8 as its bytes
            message = bytes(message).decode("utf-8", "replace")
        moment = datetime.datetime.fromtimestamp(microseconds / 1e6, datetime.timezone.utc)
        entries.append((moment.isoformat(timespec="seconds"), message or ""))
    return entries


def _record(message):
    try:
        record = json.loads(message)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def redact(text, hidden=()):
    """text with each secret of hidden masked and whatever looks like a secret replaced, cut to
    MESSAGE_LIMIT characters; the secrets go first, so a cut never leaves part of one."""
    for secret in sorted((secret for secret in hidden if secret), key=len, reverse=True):
        text = text.replace(secret, MASK)
    for shape, replacement in SHAPES:
        text = shape.sub(replacement, text)
    return text[:MESSAGE_LIMIT]


def summary(entries, hidden=()):
    """The last line, the end of the last cycle that did not fail, and the last error, of
    journal_entries(); `last_cycle_failed` when the most recent cycle failed. What is reported of
    a line is redact()ed with the secrets of hidden."""
    cycles = []  # {"end": time, "good": bool}, oldest first
    last_error = None
    for moment, message in entries:
        record = _record(message)
        if record is None:
            continue
        event = str(record.get("event", ""))
        if event.startswith(PASS_BEGINS) or event in ONE_LINE_CYCLES:
            cycles.append({"good": True})
        if str(record.get("level", "")).lower() in ERROR_LEVELS or event == "error":
            last_error = {"time": moment, "message": redact(str(record.get("message") or event), hidden)}
            if cycles and (event == "error" or record.get("exception")):
                cycles[-1]["good"] = False
        if cycles:
            cycles[-1]["end"] = moment
    good = [cycle["end"] for cycle in cycles if cycle["good"]]
    return {"last_log": "%s %s" % (entries[-1][0], redact(entries[-1][1], hidden)) if entries else None,
            "last_good_cycle": good[-1] if good else None, "last_error": last_error,
            "last_cycle_failed": bool(cycles) and not cycles[-1]["good"]}
