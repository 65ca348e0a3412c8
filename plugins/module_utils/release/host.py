# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a host holds now, read once per run, in the layout of layout.py.

plan.plan() turns what read_host() returns into the steps of a run.
"""

from __future__ import annotations

import json
import os

from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import RELEASE_ID, sha256_bytes


class HostError(Exception):
    """The host holds something at a managed path that pharos_release did not make; the message says
    how to fix it."""


def read_link(path):
    """The target of the symlink at path, None when nothing is there; HostError for anything else."""
    if not os.path.lexists(path):
        return None
    if not os.path.islink(path):
        raise HostError("%s is not a symlink, so it was not made by pharos_release. Fix: move it aside (it may be a "
                        "hand-made install) and re-run." % path)
    return os.readlink(path)


def read_release_link(path):
    """The release id a current or previous link names, or None."""
    target = read_link(path)
    if target is None:
        return None
    release_id = target[len("releases/"):] if target.startswith("releases/") else None
    if not release_id or not RELEASE_ID.match(release_id):
        raise HostError("%s points at %s, not at releases/<release-id>. Fix: point it at an installed release or "
                        "remove it, then re-run." % (path, target))
    return release_id


def read_fingerprint(layout, release_id):
    path = layout.fingerprint_file(release_id)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="ascii") as handle:
        return handle.read().strip()


def installed_releases(layout):
    """{release id: fingerprint} of every complete release (one whose fingerprint was written)."""
    if not os.path.isdir(layout.releases):
        return {}
    found = {}
    for name in sorted(os.listdir(layout.releases)):
        if RELEASE_ID.match(name) and os.path.isdir(layout.release(name)):
            fingerprint = read_fingerprint(layout, name)
            if fingerprint:
                found[name] = fingerprint
    return found


def read_active_record(layout):
    if not os.path.isfile(layout.active_record):
        return None
    with open(layout.active_record, encoding="utf-8") as handle:
        try:
            record = json.load(handle)
        except ValueError:
            raise HostError("%s is not the JSON pharos_release writes. Fix: remove it; the current link still says "
                            "which release is active." % layout.active_record) from None
    return record if isinstance(record, dict) else None


def read_unit_files(layout, names):
    """{unit file name: sha256 of the installed file, or None when absent}."""
    found = {}
    for name in names:
        path = layout.unit_file(name)
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                found[name] = sha256_bytes(handle.read())
        else:
            found[name] = None
    return found


def read_host(layout, components, unit_file_names, units, systemd):
    """What the host holds now, read once: links, releases, the active record, unit files and unit states."""
    record = read_active_record(layout)
    watched = list(units) + [unit for unit in (record or {}).get("units", []) if unit not in units]
    return {
        "current": read_release_link(layout.current),
        "previous": read_release_link(layout.previous),
        "installed": installed_releases(layout),
        "active_record": record,
        "links": {component: read_link(layout.component_link(component)) for component in components},
        "unit_files": read_unit_files(layout, unit_file_names),
        "units": systemd.states(watched) if watched else {},
    }
