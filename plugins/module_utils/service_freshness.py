# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Whether a running systemd unit still runs files that changed after it took them in.

A unit takes its files in when its main process starts, or when it reloads. A restart shows in
systemd's record of the main process; a reload does not, so whoever reloads records the time in
a file of its own (``record_applied``). A unit whose files changed after the later of the two is
stale: the run that changed them stopped before it restarted or reloaded the unit.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

APPLIED_DIRECTORY = "/run/pharos-hpc/applied"
RUNNING_STATES = ("active", "reloading", "activating")


@dataclass(frozen=True)
class ChangedFile:
    path: str
    modified_at: float


@dataclass(frozen=True)
class Freshness:
    running: bool
    changed_since: tuple[ChangedFile, ...]

    @property
    def stale(self) -> bool:
        return bool(self.changed_since)


def parse_show(output: str) -> dict[str, str]:
    """`systemctl show --property=...` prints one KEY=VALUE per line."""
    properties = {}
    for line in output.splitlines():
        key, separator, value = line.partition("=")
        if separator:
            properties[key] = value
    return properties


def main_process_started_at(properties: dict[str, str], now: float, now_monotonic: float) -> float | None:
    """The wall-clock time the unit's main process started, or None when the unit does not run.

    A unit without a main process (a socket) counts from when it last became active. systemd
    records both on the monotonic clock in microseconds; converting them against the clocks read
    now keeps the microseconds that the printed wall-clock timestamps drop.
    """
    if properties.get("ActiveState") not in RUNNING_STATES:
        return None
    started_monotonic = int(properties.get("ExecMainStartTimestampMonotonic") or 0) or int(
        properties.get("ActiveEnterTimestampMonotonic") or 0)
    if started_monotonic == 0:
        return None
    return now - (now_monotonic - started_monotonic / 1_000_000)


def applied_record_path(unit: str, directory: str | None = None) -> str:
    return os.path.join(directory or APPLIED_DIRECTORY, unit.replace("/", "_"))


def recorded_applied_at(unit: str, directory: str | None = None) -> float | None:
    try:
        return os.stat(applied_record_path(unit, directory)).st_mtime
    except FileNotFoundError:
        return None


def record_applied(unit: str, directory: str | None = None) -> str:
    path = applied_record_path(unit, directory)
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    with open(path, "w", encoding="utf-8") as record:
        record.write(f"{unit} runs the files it reads as of {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n")
    return path


def files_modified_at(paths: list[str]) -> list[ChangedFile]:
    found = []
    for path in paths:
        try:
            found.append(ChangedFile(path, os.stat(path).st_mtime))
        except FileNotFoundError:
            continue
    return found


def freshness(started_at: float | None, recorded_at: float | None, files: list[ChangedFile]) -> Freshness:
    """Files modified after the unit last took its files in; none when the unit does not run."""
    if started_at is None:
        return Freshness(running=False, changed_since=())
    applied_at = max(started_at, recorded_at or started_at)
    newer = tuple(changed for changed in files if changed.modified_at > applied_at)
    return Freshness(running=True, changed_since=newer)
