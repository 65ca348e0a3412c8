# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Pharos HPC release: its manifest, its SHA256SUMS and its fingerprint (docs/release.md).

A release is one directory (packed as <release_id>.tar.gz) holding manifest.yml, the
hash-pinned requirements of each component, the wheels (wheelhouse mode), the unit files,
site.env.example and SHA256SUMS over every other file. Nothing in it may be a symlink, and
every path stays inside the release root, so verifying it never reads outside it.

Pure Python (PyYAML only), importable without Ansible.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import traceback

from ansible_collections.pharos.hpc.plugins.module_utils.release import unit_rules

try:
    import yaml
except ImportError:  # only where the module runs; the controller's ansible-core has PyYAML
    yaml = None
    YAML_IMPORT_ERROR = traceback.format_exc()
else:
    YAML_IMPORT_ERROR = None

MANIFEST_NAME = "manifest.yml"
SUMS_NAME = "SHA256SUMS"
FORMAT = 1
DEPENDENCY_MODES = ("index", "wheelhouse")
RELEASE_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\Z")
COMPONENT_NAME = re.compile(r"[a-z][a-z0-9-]*\Z")
# A component's stable link is /opt/pharos-hpc/<name>, beside the host's own entries there.
LAYOUT_NAMES = ("current", "previous", "releases", "signer")
# A release installs its units under the Site's own names only, so that it can never replace
# a unit of the host's (ssh.service, a systemd-* unit) in /etc/systemd/system.
UNIT_NAME = re.compile(r"(pharos-[a-z0-9-]+|waldur-site-agent)@?\.service\Z")
ENTRY_POINT = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
MANIFEST_FIELDS = {"format", "release_id", "dependency_mode", "python_version", "site_env_example", "components"}
COMPONENT_FIELDS = {"requirements", "units", "entry_points"}
SUMS_LINE = re.compile(r"([0-9a-f]{64}) [ *](.+)\Z")
CHUNK = 1024 * 1024


class ReleaseError(ValueError):
    """A manifest or release that must not be used; str() lists every problem, one per line."""

    def __init__(self, what, problems):
        self.problems = list(problems)
        super().__init__("%s is refused:\n%s" % (what, "\n".join("- " + problem for problem in self.problems)))


def _relative_path_problem(path):
    """Why path cannot name a file inside a release root, or None."""
    if not isinstance(path, str) or not path:
        return "is not a path"
    if path.startswith("/") or "\\" in path or "\0" in path:
        return "is not a relative path inside the release"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "has an empty, . or .. part: paths stay inside the release"
    return None


def _component_problems(name, component):
    where = "component %s" % name
    if not COMPONENT_NAME.match(str(name)):
        return ["%s: the name must be lowercase letters, digits and - (like site-agent)" % where]
    if name in LAYOUT_NAMES:
        return ["%s: the name is one the host's release tree uses (/opt/pharos-hpc/%s); name the component "
                "otherwise (like site-agent)" % (where, name)]
    if not isinstance(component, dict):
        return ["%s must be a mapping with requirements, units and entry_points" % where]
    problems = ["%s: unknown field %s (known: %s)" % (where, field, ", ".join(sorted(COMPONENT_FIELDS)))
                for field in sorted(set(component) - COMPONENT_FIELDS)]
    requirements = component.get("requirements")
    if requirements != "requirements/%s.txt" % name:
        problems.append("%s: requirements must be requirements/%s.txt, not %r" % (where, name, requirements))
    units = component.get("units")
    if not isinstance(units, list) or not units:
        problems.append("%s: units must list at least one unit file under units/" % where)
    else:
        for unit in units:
            if not (isinstance(unit, str) and unit.startswith("units/") and UNIT_NAME.match(unit[6:])):
                problems.append("%s: unit %r is not units/pharos-<name>.service, units/pharos-<name>@.service or "
                                "units/waldur-site-agent@.service" % (where, unit))
            elif unit[6:] in unit_rules.ROLE_UNITS:
                problems.append("%s: unit %r is one the collection's roles install on the same hosts; name the "
                                "release's own unit otherwise" % (where, unit))
    entry_points = component.get("entry_points")
    if not isinstance(entry_points, list) or not entry_points or \
            not all(isinstance(entry, str) and ENTRY_POINT.match(entry) for entry in entry_points):
        problems.append("%s: entry_points must list the console scripts its units run" % where)
    return problems


def manifest_problems(manifest):
    """Every problem of a parsed manifest; [] when it is a valid one."""
    if not isinstance(manifest, dict):
        return ["the manifest is not a mapping"]
    problems = ["unknown field %s (known: %s)" % (field, ", ".join(sorted(MANIFEST_FIELDS)))
                for field in sorted(set(manifest) - MANIFEST_FIELDS)]
    if manifest.get("format") != FORMAT:
        problems.append("format must be %d, not %r: this collection reads format %d only" % (FORMAT, manifest.get("format"), FORMAT))
    if not isinstance(manifest.get("release_id"), str) or not RELEASE_ID.match(manifest["release_id"]):
        problems.append("release_id %r must be 1-64 characters of a-z, 0-9, . _ - starting with a letter or digit"
                        % manifest.get("release_id"))
    if manifest.get("dependency_mode") not in DEPENDENCY_MODES:
        problems.append("dependency_mode must be index or wheelhouse, not %r" % manifest.get("dependency_mode"))
    if not re.match(r"3\.[0-9]+\Z", str(manifest.get("python_version", ""))):
        problems.append("python_version must be the target interpreter's 3.N, not %r" % manifest.get("python_version"))
    if manifest.get("site_env_example") != "site.env.example":
        problems.append("site_env_example must be site.env.example")
    components = manifest.get("components")
    if not isinstance(components, dict) or not components:
        return problems + ["components must map each component's name to its requirements, units and entry_points"]
    owners = {}
    for name, component in components.items():
        problems.extend(_component_problems(name, component))
        for unit in (component.get("units") or []) if isinstance(component, dict) else []:
            if unit in owners:
                problems.append("unit %s belongs to both %s and %s" % (unit, owners[unit], name))
            owners.setdefault(unit, name)
    return problems


def load_manifest(text):
    """The manifest of a YAML text, or ReleaseError naming every problem."""
    try:
        manifest = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ReleaseError("manifest.yml", ["it is not YAML: %s" % error]) from None
    problems = manifest_problems(manifest)
    if problems:
        raise ReleaseError("manifest.yml", problems)
    return manifest


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_bytes(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def walk(root):
    """(files, problems): every regular file under root as a sorted relative path, and every
    symlink or special file found there (a release holds neither)."""
    files, problems = [], []
    for directory, subdirectories, names in os.walk(root):
        subdirectories.sort()
        for name in sorted(subdirectories + names):
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                problems.append("%s is a symlink: a release holds only regular files and directories" % relative)
            elif stat.S_ISREG(mode):
                files.append(relative)
            elif not stat.S_ISDIR(mode):
                problems.append("%s is not a regular file" % relative)
    return sorted(files), problems


def sums_problems(root):
    """Every way root differs from its SHA256SUMS: missing, extra, altered files, symlinks,
    special files, malformed lines and paths that leave the root. [] when it matches."""
    sums_path = os.path.join(root, SUMS_NAME)
    if os.path.islink(sums_path) or not os.path.isfile(sums_path):
        return ["%s is missing or not a regular file" % SUMS_NAME]
    listed, problems = {}, []
    with open(sums_path, "r", encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle.read().splitlines(), start=1):
            match = SUMS_LINE.match(line)
            if not match:
                problems.append("%s line %d is not '<sha256>  <path>'" % (SUMS_NAME, number))
                continue
            digest, path = match.groups()
            escape = _relative_path_problem(path)
            if escape:
                problems.append("%s line %d: %s %s" % (SUMS_NAME, number, path, escape))
            elif path in listed or path == SUMS_NAME:
                problems.append("%s line %d: %s is listed %s" % (
                    SUMS_NAME, number, path, "again" if path in listed else "though it is the list itself"))
            else:
                listed[path] = digest
    files, walk_problems = walk(root)
    problems.extend(walk_problems)
    present = set(files) - {SUMS_NAME}
    for path in sorted(set(listed) - present):
        if not os.path.islink(os.path.join(root, path)):
            problems.append("%s is listed in %s but missing" % (path, SUMS_NAME))
    for path in sorted(present - set(listed)):
        problems.append("%s is not listed in %s: an extra file" % (path, SUMS_NAME))
    for path in sorted(present & set(listed)):
        if sha256_file(os.path.join(root, path)) != listed[path]:
            problems.append("%s does not match its SHA-256 in %s: it was altered" % (path, SUMS_NAME))
    return problems


def unit_problems(root, manifest):
    """Unit files the manifest does not declare, and declared ones that would run beyond their
    account (unit_rules.py: read as systemd reads them)."""
    declared = {unit for component in manifest["components"].values() for unit in component["units"]}
    directory = os.path.join(root, "units")
    present = {"units/" + name for name in os.listdir(directory)} if os.path.isdir(directory) else set()
    problems = ["%s is not declared by any component: a release carries only the units it installs" % path
                for path in sorted(present - declared)]
    for path in sorted(declared & present):
        with open(os.path.join(root, path), "r", encoding="utf-8", errors="replace") as handle:
            problems.extend(unit_rules.problems(path, handle.read()))
    return problems


def verify(root):
    """The release's manifest after SHA256SUMS and the manifest's own references all hold;
    ReleaseError naming every problem otherwise."""
    problems = sums_problems(root)
    manifest = None
    manifest_path = os.path.join(root, MANIFEST_NAME)
    if os.path.isfile(manifest_path) and not os.path.islink(manifest_path):
        with open(manifest_path, "r", encoding="utf-8") as handle:
            try:
                manifest = load_manifest(handle.read())
            except ReleaseError as error:
                problems.extend(error.problems)
    else:
        problems.append("%s is missing" % MANIFEST_NAME)
    if manifest is not None:
        referenced = [manifest["site_env_example"]]
        for component in manifest["components"].values():
            referenced += [component["requirements"]] + component["units"]
        problems.extend("%s names %s, which the release does not hold" % (MANIFEST_NAME, path)
                        for path in referenced if not os.path.isfile(os.path.join(root, path)))
        problems.extend(unit_problems(root, manifest))
    if problems:
        raise ReleaseError("release %s" % os.path.basename(os.path.normpath(root)), problems)
    return manifest


def fingerprint(manifest, site_env_values):
    """sha256:<hex> of a manifest and a site.env's values, for refusing to install a release id
    again with other inputs: one release id is one set of code and values. Key order, comments
    and YAML layout do not change it; any value does."""
    canonical = json.dumps({"manifest": manifest, "site_env": dict(site_env_values)},
                           sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()
