# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One pharos_release run: read the host once, plan, return the plan in check mode, else
apply it, require health, and restore the predecessor when activation fails.

run() takes the systemd interface and the command runner as arguments, so the module passes
systemctl and run_command, and tests pass their own.
"""

from __future__ import annotations

import os
import stat
import time

from ansible_collections.pharos.hpc.plugins.module_utils import site_env_rules
from ansible_collections.pharos.hpc.plugins.module_utils.release.activate import Activation, write_atomically
from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import ReleaseError, fingerprint as release_fingerprint, sha256_bytes
from ansible_collections.pharos.hpc.plugins.module_utils.release.health import failures, run_probes
from ansible_collections.pharos.hpc.plugins.module_utils.release.host import HostError, read_active_record, read_host, read_release_link
from ansible_collections.pharos.hpc.plugins.module_utils.release.layout import Layout
from ansible_collections.pharos.hpc.plugins.module_utils.release.plan import ACTIVATING, PlanError, plan, predict, target_release
from ansible_collections.pharos.hpc.plugins.module_utils.release.signature import (
    DIGEST, ISSUED_FORMAT, SignatureError, issued_of, verify as verify_signature)
from ansible_collections.pharos.hpc.plugins.module_utils.release.stage import (
    StageError, inspect_archive, installed_manifest, release_units, stage, unit_digests)
from ansible_collections.pharos.hpc.plugins.module_utils.release.systemd import SystemdError
from ansible_collections.pharos.hpc.plugins.module_utils.site_env import SiteEnvError
from ansible_collections.pharos.hpc.plugins.module_utils.waldur import WaldurError, read_token

SITE_AGENT_TEMPLATE = "waldur-site-agent@.service"
PROBES = ("units", "offering", "site_api")


class RunError(Exception):
    """The run failed; result holds what the module returns with the message."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result or {}


def read_site_env(path, manifest=None, required=False):
    """site.env's checked values ({} when absent and not required)."""
    if not os.path.lexists(path):
        if required:
            raise RunError("%s does not exist: a release is installed with the Site's values, whose fingerprint it "
                           "records (docs/release.md). Fix: write site.env first, from the collection's "
                           "docs/examples/site.env.example or the one in the release." % path)
        return {}
    try:
        return site_env_rules.check_file(path, components=list(manifest["components"]) if manifest else None,
                                         dependency_mode=manifest["dependency_mode"] if manifest else None)
    except SiteEnvError as error:
        raise RunError(str(error)) from None


def unit_names(manifest, components, instances):
    """The units to run: each unit file of the components, a template once per instance."""
    names = []
    for file_name, component in release_units(manifest, components).items():
        if not file_name.endswith("@.service"):
            names.append(file_name)
            continue
        chosen = instances.get(file_name) or []
        if not chosen:
            raise RunError("Unit %s of component %s is a template and no instance is named. Fix: set instances: {%s: "
                           "[...]} or SITE_AGENT_MODES in site.env." % (file_name, component, file_name))
        names += ["%s@%s.service" % (file_name[:-len("@.service")], instance) for instance in chosen]
    return names


def _health_config(params, site_env):
    root = params["root"]

    def under_root(path):
        return os.path.join(root, path.lstrip("/"))
    return {
        "health_timeout": params["health_timeout"], "health_settle": params["health_settle"],
        "waldur_url": params.get("waldur_url") or site_env.get("WALDUR_API_URL"),
        "token_file": params.get("token_file") or under_root("/etc/pharos-hpc/secrets/site-agent-token"),
        "ca_file": params.get("ca_file") or under_root("/etc/pharos-hpc/site-agent-ca.crt"),
        "offering_uuid": params.get("offering_uuid") or site_env.get("CENTRAL_OFFERING_UUID"),
        "site_api_url": params.get("site_api_url") or site_env.get("CENTRAL_SITE_API_URL"),
        "site_api_ca_file": params.get("site_api_ca_file") or under_root("/etc/pharos-hpc/site-api-ca.crt"),
    }


def token_reader(hidden):
    """The probes' token reader for a module: the token from its file's first line, added to
    hidden (the module's no_log_values); a RunError naming the file when it cannot be read."""
    def read(path):
        try:
            value = read_token(None, path)
        except WaldurError as error:
            raise RunError(str(error)) from None
        hidden.add(value)
        return value
    return read


def probe_config(params, site_env, read_token):
    """The health options of the probes selected; the token is read from its file only when needed."""
    config = _health_config(params, site_env)
    selected = params["probes"]
    if "offering" in selected:
        if not (config["waldur_url"] and config["offering_uuid"]):
            raise RunError("The offering probe needs waldur_url and offering_uuid (or WALDUR_API_URL and "
                           "CENTRAL_OFFERING_UUID in site.env). Fix: give them, or leave offering out of probes.")
        config["waldur_token"] = read_token(config["token_file"])
    else:
        config["offering_uuid"] = None
    if "site_api" in selected:
        if not config["site_api_url"]:
            raise RunError("The site_api probe needs site_api_url (or CENTRAL_SITE_API_URL in site.env). Fix: give it, "
                           "or leave site_api out of probes.")
    else:
        config["site_api_url"] = None
    return config


def signed_archive(params, archive):
    """The archive's signature, checked on this host against the pinned key, and the release id
    and digest it names checked against what the controller checked (when given)."""
    if not params.get("signer_key"):
        raise RunError("An archive is installed only once its signature is checked on this host. Fix: give "
                       "signer_key, the release signer's public key (PEM), as release.yml does.")
    try:
        signed = verify_signature(archive, params["signer_key"], "the pinned release signer key (signer_key)")
    except (SignatureError, OSError) as error:
        raise RunError("%s Nothing was changed." % error) from None
    expected = (params.get("expect_release_id") or signed.release_id,
                params.get("expect_archive_sha256") or signed.archive)
    if (signed.release_id, signed.archive) != expected:
        raise RunError("The archive on this host, %s, is not the one the controller checked: its signature names "
                       "release %s, %s, and the controller checked release %s, %s. Nothing was changed. Fix: run "
                       "again; if it persists, find who replaced the archive on the host."
                       % (archive, signed.release_id, signed.archive, expected[0], expected[1]))
    return signed


def _target(params, layout, host_links):
    """(release id, manifest, {unit file: sha256}, archive, signed) of the release the run acts on."""
    archive = params.get("archive")
    if archive:
        signed = signed_archive(params, archive)
        manifest, units = inspect_archive(archive)
        if manifest["release_id"] != signed.release_id:
            raise RunError("The archive %s holds release %s, but its signature names release %s: the archive was put "
                           "under another release's signature. Nothing was changed. Fix: take the archive and its "
                           ".sig from the release channel together."
                           % (archive, manifest["release_id"], signed.release_id))
        if params.get("release_id") and params["release_id"] != manifest["release_id"]:
            raise RunError("The archive %s holds release %s, not %s. Fix: give the matching archive or release_id."
                           % (archive, manifest["release_id"], params["release_id"]))
        digests = {name: sha256_bytes(data) for name, data in units.items()}
        return manifest["release_id"], manifest, digests, archive, signed
    release_id = target_release(params["state"], params.get("release_id"), host_links)
    if release_id is None:
        return None, None, {}, None, None
    if not os.path.isfile(layout.fingerprint_file(release_id)):
        if params["state"] in ("present", "active", "rolled_back"):
            return release_id, None, {}, None, None     # plan() names what is missing
        raise RunError("Release %s is not installed on this host." % release_id)
    manifest = installed_manifest(layout, release_id)
    return release_id, manifest, None, None, None


ROTATION_FIX = ("if the platform rotated its release signer key, run once with -e pharos_release_rotate_signer=true "
                "(the module's rotate_signer), which records the new key")


def recorded_signer(layout):
    """The release signer's fingerprint this host recorded at its first install, or None when it
    recorded none yet; RunError for anything at that path that pharos_release did not write."""
    try:
        status = os.lstat(layout.signer)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(status.st_mode):
        raise RunError("%s is not a file, so pharos_release did not write it, and the release signer this host "
                       "trusts cannot be read. Nothing was changed. Fix: remove it, and run again with the Site's "
                       "pinned key; the next install records that key's fingerprint there." % layout.signer)
    with open(layout.signer, "rb") as handle:
        text = handle.read(200).decode("ascii", "replace").strip()
    return text


def pinned_signer(layout, archive, signed, rotate):
    """What the host recorded of the release signer, after refusing an archive signed by another
    key unless the run names a rotation: the key that signed is the one sent with the archive,
    so only this record, kept on the host, tells a replaced key from the Site's own."""
    recorded = recorded_signer(layout)
    if recorded is None or recorded == signed.signer or rotate:
        return recorded
    if not DIGEST.match(recorded):
        raise RunError("%s holds %r, not a release signer fingerprint (sha256:<hex>), so the archive's signer %s "
                       "cannot be compared with the one this host trusts. Nothing was changed. Fix: %s."
                       % (layout.signer, recorded[:80], signed.signer, ROTATION_FIX))
    raise RunError("This host trusts the release signer %s, recorded in %s at its first install, and the archive %s "
                   "is signed by another key, %s: an archive signed by a key other than the Site's release signer is "
                   "refused, and nothing was changed. Fix: %s; otherwise put the platform's public key back as "
                   "pharos_release_signer_key and find who replaced it."
                   % (recorded, layout.signer, archive, signed.signer, ROTATION_FIX))


def signed_at(layout, release_id):
    """When the installed release's archive was signed, from the statement kept at its install;
    None for a release installed by an earlier version of the collection, which kept none."""
    try:
        with open(layout.statement_file(release_id), encoding="ascii") as handle:
            return issued_of(handle.read())
    except (OSError, UnicodeDecodeError):
        return None


def installed_at(layout, release_id):
    """When the release was installed (UTC, as a statement writes times), from its fingerprint file,
    written last at install and never again; None when it has none."""
    try:
        return time.strftime(ISSUED_FORMAT, time.gmtime(os.stat(layout.fingerprint_file(release_id)).st_mtime))
    except OSError:
        return None


def refuse_downgrade(layout, release_id, signed, current, allow_downgrade):
    """An activation of a release signed before the active one is a downgrade: refused unless
    the run says allow_downgrade. rolled_back is the deliberate way back and is not checked.

    A release installed by an earlier version of the collection kept no statement. As the active
    release, it was signed (if at all) before it was installed, so a release signed at or after
    its install time is newer, and one signed before is refused as possibly older. As the
    target, nothing shows it is newer, and it is refused (docs/release.md, "Signature")."""
    if allow_downgrade or not current or current == release_id:
        return
    if signed is None and not os.path.isfile(layout.fingerprint_file(release_id)):
        return      # not installed: plan() names what is missing
    allow = "allow_downgrade: true (pharos_release_allow_downgrade=true)"
    back = "to return to an earlier release on purpose, run rollback.yml (state: rolled_back)"
    target_time = signed.issued if signed else signed_at(layout, release_id)
    current_time = signed_at(layout, current)
    if target_time is None:
        raise RunError("Release %s was installed by an earlier version of the collection, which kept no signing time, "
                       "so nothing shows that it is newer than the active release %s: activating it is refused as a "
                       "possible downgrade, and nothing was changed. Fix: %s, or activate it with %s."
                       % (release_id, current, back, allow))
    if current_time is not None:
        if target_time < current_time:
            raise RunError("Release %s was signed at %s, before the active release %s (signed at %s): activating it "
                           "is a downgrade, and nothing was changed. Fix: %s, or activate it with %s."
                           % (release_id, target_time, current, current_time, back, allow))
        return
    current_install = installed_at(layout, current)
    if current_install is None or target_time < current_install:
        raise RunError("Release %s was signed at %s, and the active release %s was installed by an earlier version of "
                       "the collection, which kept no signing time, %s: %s may be older than %s, so activating it is "
                       "refused as a possible downgrade, and nothing was changed. Fix: if %s is the newer release, "
                       "activate it once with %s; %s."
                       % (release_id, target_time, current,
                          "at %s, after that signing" % current_install if current_install else "and has no install time",
                          release_id, current, release_id, allow, back))


def _components(params, state, site_env, record):
    """The components a run acts on: as given, else site.env's for an activation, else the active record's."""
    components = params.get("components") or (site_env.get("ACTIVATION_COMPONENTS", "").split()
                                              if state in ACTIVATING else []) or record.get("components") or []
    if state in ACTIVATING and not components:
        raise RunError("No component to activate. Fix: set components, or ACTIVATION_COMPONENTS in site.env.")
    return components


def _check_components(layout, release_id, manifest, components):
    """Refuse components the release does not carry, and an installed release that changed since its install."""
    if os.path.isfile(layout.fingerprint_file(release_id)):
        installed_manifest(layout, release_id, components)
    elif set(components) - set(manifest["components"]):
        raise RunError("Release %s does not carry %s (it carries %s). Fix: correct components or "
                       "ACTIVATION_COMPONENTS." % (release_id, ", ".join(sorted(set(components) - set(
                           manifest["components"]))), ", ".join(sorted(manifest["components"]))))


def _units(params, site_env, manifest, components, record):
    """The units a run acts on: the release's for the components, else the active record's."""
    instances = dict(params.get("instances") or {})
    if site_env.get("SITE_AGENT_MODES"):
        instances.setdefault(SITE_AGENT_TEMPLATE, site_env["SITE_AGENT_MODES"].split())
    return unit_names(manifest, components, instances) if manifest else list(record.get("units") or [])


class ReleaseRun:
    """One run: its inputs, what it read from the host and the steps it planned, then one method
    per state (BY_STATE) that applies them. The module passes systemctl and run_command as
    systemd and command; tests pass their own."""

    def __init__(self, params, systemd, command, check_mode, read_token, sleep, clock):
        self.params, self.state, self.check_mode = params, params["state"], check_mode
        self.systemd, self.command, self.read_token, self.sleep, self.clock = systemd, command, read_token, sleep, clock
        self.layout = Layout(params["root"])
        self.release_id = self.archive = self.signed = self.fingerprint = self.host = self.desired = None
        self.signer = None
        self.site_env, self.components, self.units, self.steps, self.result = {}, [], [], [], {}

    def plan(self):
        """Read the host once and plan; RunError for whatever stops the run before anything changes."""
        try:
            self._read_and_plan()
        except (HostError, PlanError, StageError, SystemdError, ReleaseError) as error:
            raise RunError(str(error)) from None
        self.result = {"changed": bool(self.steps), "release_id": self.release_id, "fingerprint": self.fingerprint,
                       "steps": self.steps, "units": self.units, "components": self.components,
                       "diff": predict(self.host, self.steps, self.desired)}

    def _read_and_plan(self):
        layout, state = self.layout, self.state
        links = {"current": read_release_link(layout.current), "previous": read_release_link(layout.previous)}
        self.release_id, manifest, digests, self.archive, self.signed = _target(self.params, layout, links)
        if self.signed:
            self.signer = pinned_signer(layout, self.archive, self.signed, self.params.get("rotate_signer"))
        if state == "active" and self.release_id:
            refuse_downgrade(layout, self.release_id, self.signed, links["current"], self.params.get("allow_downgrade"))
        self.site_env = read_site_env(self.params.get("site_env") or layout.site_env, manifest,
                                      required=bool(self.archive) and state in ("present", "active"))
        record = read_active_record(layout) or {}
        self.components = _components(self.params, state, self.site_env, record)
        if manifest is not None and state in ACTIVATING:
            _check_components(layout, self.release_id, manifest, self.components)
        self.units = _units(self.params, self.site_env, manifest, self.components, record)
        if manifest is not None and digests is None:
            digests = unit_digests(layout, self.release_id, manifest, self.components)
        self.host = read_host(layout, self.components, sorted(digests or {}), self.units, self.systemd)
        if self.signed:
            self.host["signer"] = self.signer
        self.fingerprint = release_fingerprint(manifest, self.site_env) if self.archive else None
        self.desired = {"state": state, "release_id": self.release_id, "archive": self.archive,
                        "signer": self.signed.signer if self.signed else None,
                        "fingerprint": self.fingerprint, "components": self.components, "units": self.units,
                        "unit_files": {name: digest for name, digest in (digests or {}).items()
                                       if name in release_units(manifest, self.components)} if manifest else {}}
        self.steps = plan(self.desired, self.host)

    def report(self):
        """info: what the host holds, read only; with probes, the health of what runs, judged as an
        activation judges it."""
        self.result.update(current=self.host["current"], previous=self.host["previous"],
                           installed=sorted(self.host["installed"]), active_record=self.host["active_record"],
                           unit_states=self.host["units"])
        if self.params.get("probes"):
            config = probe_config(self.params, self.site_env, self.read_token)
            self.result["health"] = run_probes(config, self.systemd, self.units, sleep=self.sleep, clock=self.clock)
        return self.result

    def install(self):
        """present: stage the release when it is not installed yet, and record its signer."""
        if not self.check_mode:
            self._install_when_planned()
        return self.result

    def stop(self):
        """stopped: stop and disable the units; the steps done stay done when one fails."""
        if self.check_mode or not self.steps:
            return self.result
        try:
            Activation(self.layout, self.systemd, self.release_id, self.host["units"]).apply(self.steps)
        except (SystemdError, OSError) as error:
            raise RunError("Stopping release %s failed: %s. Fix: see the cause, then re-run; the steps done stay done."
                           % (self.release_id, error), self.result) from None
        return self.result

    def activate(self):
        """active and rolled_back: stage when planned, apply the steps with health required before
        the record is written, and restore the predecessor when anything fails."""
        if self.check_mode:
            return self.result
        config = probe_config(self.params, self.site_env, self.read_token)
        steps = self._install_when_planned()
        if not steps:
            return self._require_health(config)
        activation = Activation(self.layout, self.systemd, self.release_id, self.host["units"])
        try:
            activation.apply(steps, health=lambda: self._probe(config))
        except Exception as error:  # pylint: disable=broad-except  # any failure must restore the predecessor
            raise RunError(_restored_message(activation, self.release_id, self.host, error),
                           dict(self.result, restored=True)) from None
        self.result["current"] = self.release_id
        return self.result

    def _install_when_planned(self):
        """Stage the release and record its signer, each when the plan starts with it; returns the
        steps that follow."""
        steps = self.steps
        if steps and steps[0]["step"] == "stage":
            try:
                stage(self.layout, self.archive, self.fingerprint, self.command, self.params["python"],
                      self.site_env.get("PYTHON_INDEX_URL"), self.signed.statement)
            except (StageError, ReleaseError, OSError) as error:
                raise RunError("%s Nothing was activated." % error, dict(self.result, changed=False)) from None
            steps = steps[1:]
        if steps and steps[0]["step"] == "record_signer":
            try:
                write_atomically(self.layout.signer, (steps[0]["signer"] + "\n").encode("ascii"), 0o444)
            except OSError as error:
                raise RunError("The release signer %s could not be recorded in %s: %s. Nothing was activated. Fix: "
                               "see the cause, then run again." % (steps[0]["signer"], self.layout.signer, error),
                               self.result) from None
            steps = steps[1:]
        return steps

    def _probe(self, config):
        """The failed probes' messages; the result keeps every probe's outcome."""
        probes = run_probes(config, self.systemd, self.units, sleep=self.sleep, clock=self.clock)
        self.result["health"] = probes
        return failures(probes)

    def _require_health(self, config):
        failed = self._probe(config)
        if failed:
            raise RunError("Release %s is active and nothing was changed, but its health does not hold: %s"
                           % (self.release_id, " | ".join(failed)), self.result)
        return self.result


BY_STATE = {"present": ReleaseRun.install, "active": ReleaseRun.activate, "rolled_back": ReleaseRun.activate,
            "stopped": ReleaseRun.stop, "info": ReleaseRun.report}


def run(params, systemd, command, check_mode, read_token, sleep=time.sleep, clock=time.monotonic):
    """The module's result for params; RunError with the result to fail with."""
    release_run = ReleaseRun(params, systemd, command, check_mode, read_token, sleep, clock)
    release_run.plan()
    return BY_STATE[release_run.state](release_run)


def _restored_message(activation, release_id, host, error):
    cause = "Activation of release %s failed: %s." % (release_id, str(error).rstrip(".") or type(error).__name__)
    try:
        said = activation.restore()
    except (SystemdError, OSError) as restore_error:
        return ("%s Restoring the predecessor failed too: %s. Fix: run pharos_release with state: rolled_back%s once "
                "the cause is fixed." % (cause, restore_error, " and release_id: %s" % host["current"]
                                         if host["current"] else ""))
    if host["current"] and host["current"] != release_id:
        return "%s The earlier release %s is active again (%s)." % (cause, host["current"], "; ".join(said))
    if host["current"]:
        return "%s Release %s stays current with its earlier unit files and units (%s)." % (
            cause, release_id, "; ".join(said))
    return "%s No release was active before; the host is back to that (%s)." % (cause, "; ".join(said))
