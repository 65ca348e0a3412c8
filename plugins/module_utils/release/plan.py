# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of a pharos_release run: the steps, in order, that take the host to a state.

plan() is a pure function of (desired, host): check mode returns it unchanged and a real run
applies exactly its steps, so --check predicts a run. predict() gives the diff: which release
becomes current and previous, which unit files and which units change, and which release
signer the host records.
"""

from __future__ import annotations

import copy

from ansible_collections.pharos.hpc.plugins.module_utils.release.layout import component_link_target

STATES = ("present", "active", "rolled_back", "stopped", "info")
ACTIVATING = ("active", "rolled_back")


class PlanError(Exception):
    """The requested state cannot be reached from what the host holds; the message says how to fix it."""


def target_release(state, release_id, host):
    """The release a state acts on: the named one, previous for a rollback, current to stop or report."""
    if state == "rolled_back" and not release_id:
        if not host["previous"]:
            raise PlanError("No previous release is recorded (/opt/pharos-hpc/previous is absent), so there is nothing "
                            "to roll back to. Fix: name the release to return to with release_id.")
        return host["previous"]
    if state in ("stopped", "info") and not release_id:
        return host["current"]
    return release_id


def _step(step, summary, **fields):
    return dict(fields, step=step, summary=summary)


def _stage_steps(desired, host):
    release_id = desired["release_id"]
    installed = host["installed"].get(release_id)
    if installed is None:
        if not desired.get("archive"):
            raise PlanError("Release %s is not installed on this host (no complete /opt/pharos-hpc/releases/%s). Fix: "
                            "give the archive to install it, or name an installed release (installed: %s)."
                            % (release_id, release_id, ", ".join(sorted(host["installed"])) or "none"))
        return [_step("stage", "stage release %s from %s and install its components offline"
                      % (release_id, desired["archive"]), release_id=release_id)]
    if desired.get("fingerprint") and installed != desired["fingerprint"]:
        raise PlanError("Release %s is already installed with other inputs (fingerprint %s, these are %s): the archive's "
                        "manifest or site.env differ from the ones it was installed with, and a release id is never "
                        "reused (docs/release.md). Fix: build the change as a new release id." %
                        (release_id, installed, desired["fingerprint"]))
    return []


def _signer_steps(desired, host):
    """Record the signer of the archive when the host holds no record of it yet, or after a
    rotation that run.pinned_signer() accepted."""
    signer = desired.get("signer")
    if not signer or signer == host.get("signer"):
        return []
    return [_step("record_signer", "record the release signer %s (was %s)" % (signer, host.get("signer") or "none"),
                  signer=signer, was=host.get("signer"))]


def _activation_steps(desired, host):
    release_id, units = desired["release_id"], desired["units"]
    steps = []
    switched = host["current"] != release_id
    if switched:
        if host["current"]:
            steps.append(_step("record_previous", "record %s as previous" % host["current"], release_id=host["current"]))
        steps.append(_step("switch_current", "point current at releases/%s (was %s)" % (release_id, host["current"] or "absent"),
                           release_id=release_id, was=host["current"]))
    for component in desired["components"]:
        if host["links"].get(component) != component_link_target(component):
            steps.append(_step("link_component", "link /opt/pharos-hpc/%s to current/venvs/%s" % (component, component),
                               component=component))
    changed_files = []
    for name, digest in sorted(desired["unit_files"].items()):
        if host["unit_files"].get(name) != digest:
            action = "update" if host["unit_files"].get(name) else "create"
            steps.append(_step("install_unit", "%s unit file %s" % (action, name), unit_file=name, action=action))
            changed_files.append(name)
    if changed_files:
        steps.append(_step("daemon_reload", "reload systemd's unit files"))
    states = host["units"]
    retired = [unit for unit in ((host["active_record"] or {}).get("units") or []) if unit not in units
               and states.get(unit, {}).get("active") in ("active", "activating", "reloading")]
    if retired:
        steps.append(_step("stop_units", "stop %s (no longer selected)" % ", ".join(retired), units=retired))
    to_enable = [unit for unit in units if states.get(unit, {}).get("enabled") != "enabled"]
    if to_enable:
        steps.append(_step("enable_units", "enable %s" % ", ".join(to_enable), units=to_enable))
    to_restart = [unit for unit in units if switched or _file_of(unit) in changed_files
                  or states.get(unit, {}).get("active") != "active"]
    if to_restart:
        steps.append(_step("restart_units", "restart %s" % ", ".join(to_restart), units=to_restart))
    record = {"release_id": release_id, "components": list(desired["components"]), "units": list(units), "state": "active"}
    if steps or host["active_record"] != record:
        steps.append(_step("record_active", "record %s as the active release once health holds" % release_id, record=record))
    return steps


def _stop_steps(desired, host):
    units = desired["units"] or list((host["active_record"] or {}).get("units") or [])
    states = host["units"]
    steps = []
    running = [unit for unit in units if states.get(unit, {}).get("active") not in ("inactive", "failed", None)]
    if running:
        steps.append(_step("stop_units", "stop %s" % ", ".join(running), units=running))
    enabled = [unit for unit in units if states.get(unit, {}).get("enabled") == "enabled"]
    if enabled:
        steps.append(_step("disable_units", "disable %s" % ", ".join(enabled), units=enabled))
    record = host["active_record"]
    if record and record.get("state") != "stopped":
        steps.append(_step("record_stopped", "record release %s as stopped" % record.get("release_id"),
                           record=dict(record, state="stopped")))
    return steps


def _file_of(unit):
    """The unit file a unit is loaded from: waldur-site-agent@report.service -> waldur-site-agent@.service."""
    if "@" in unit:
        return unit.split("@", 1)[0] + "@.service"
    return unit


def plan(desired, host):
    """The steps, in order, that take host to desired.

    desired: state, release_id (resolved with target_release), archive (or None), fingerprint of the
    archive's inputs (or None), components, units (unit names to run), unit_files ({name: sha256} of
    the target release), signer (the fingerprint of the key that signed the archive, or None).
    host: read_host()'s result, with signer, the fingerprint the host recorded, when an archive is given.
    """
    state = desired["state"]
    if state not in STATES:
        raise PlanError("state %s is not one of %s" % (state, ", ".join(STATES)))
    if state == "info":
        return []
    if state == "stopped":
        return _stop_steps(desired, host)
    if state == "rolled_back" and desired["release_id"] not in host["installed"]:
        raise PlanError("Cannot roll back to release %s: it is not installed on this host (installed: %s). Fix: name an "
                        "installed release, or install it first with state: present and its archive."
                        % (desired["release_id"], ", ".join(sorted(host["installed"])) or "none"))
    steps = _stage_steps(desired, host) if state != "rolled_back" else []
    steps += _signer_steps(desired, host)
    if state in ACTIVATING:
        steps += _activation_steps(desired, host)
    return steps


def view(host, units):
    """What the diff shows: the current and previous releases, the unit files' digests and the units'
    states, and the release signer recorded when the run reads it (a run with an archive)."""
    shown = {
        "current": host["current"],
        "previous": host["previous"],
        "unit_files": dict(sorted(host["unit_files"].items())),
        "units": {unit: host["units"].get(unit, {}).get("active", "inactive") for unit in units},
    }
    if "signer" in host:
        shown["signer"] = host["signer"]
    return shown


def predict(host, steps, desired):
    """The host view after the steps, without touching anything."""
    units = list(dict.fromkeys(list(desired["units"]) + list((host["active_record"] or {}).get("units") or [])))
    after = copy.deepcopy(view(host, units))
    for step in steps:
        if step["step"] == "record_previous":
            after["previous"] = step["release_id"]
        elif step["step"] == "switch_current":
            after["current"] = step["release_id"]
        elif step["step"] == "install_unit":
            after["unit_files"][step["unit_file"]] = desired["unit_files"][step["unit_file"]]
        elif step["step"] == "restart_units":
            after["units"].update((unit, "active") for unit in step["units"])
        elif step["step"] == "stop_units":
            after["units"].update((unit, "inactive") for unit in step["units"])
        elif step["step"] == "record_signer":
            after["signer"] = step["signer"]
    return {"before": view(host, units), "after": after}
