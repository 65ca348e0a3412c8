# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Building a release from a component spec (docs/release.md, "Building").

For each component: build its own projects and its allowed source-only dependencies into
wheels, resolve its requirements with `pip download --only-binary=:all:` for the target
Python, and lock every wheel as `name==version --hash=sha256:...`. Then copy the unit files
and site.env.example, write manifest.yml and SHA256SUMS, verify them, and pack
<output>/<release-id>.tar.gz deterministically, and with a signing key its signature
<release-id>.tar.gz.sig.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from ansible_collections.pharos.hpc.plugins.module_utils.release import contents, signature
from release_builder.archive import FIXED_MTIME, dump_manifest, pack, write_sums
from release_builder.wheels import WHEEL_SUFFIX, console_scripts, is_pure_python3, requirements_text, wheel_identity

SPEC_FIELDS = {"dependency_mode", "site_env_example", "components"}
SPEC_COMPONENT_FIELDS = {"requirements", "build_from_source", "build_environment", "projects", "units",
                         "entry_points"}


class BuildError(Exception):
    """A spec or a build step that cannot go on; str() says what and how to fix it."""


def load_spec(path):
    spec = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    problems = []
    if not isinstance(spec, dict) or not isinstance(spec.get("components"), dict):
        raise BuildError("%s: a spec is a mapping with dependency_mode, site_env_example and components" % path)
    problems += ["unknown field %s" % field for field in sorted(set(spec) - SPEC_FIELDS)]
    for name, component in spec["components"].items():
        problems += ["component %s: unknown field %s" % (name, field)
                     for field in sorted(set(component or {}) - SPEC_COMPONENT_FIELDS)]
        for requirement in (component or {}).get("requirements", []) + (component or {}).get("build_from_source", []):
            if "==" not in requirement:
                problems.append("component %s: %s is not pinned with == (a release locks exact versions)" % (name, requirement))
        environment = (component or {}).get("build_environment", {})
        if not isinstance(environment, dict) or not all(
                isinstance(key, str) and isinstance(value, str) for key, value in environment.items()):
            problems.append("component %s: build_environment maps variable names to strings (quote numbers)" % name)
    if problems:
        raise BuildError("%s is refused:\n- %s" % (path, "\n- ".join(problems)))
    return spec


def pip(arguments, options, environment=None):
    """pip isolated from the machine's pip configuration and environment, on the chosen index."""
    command = [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check", "--no-input",
               "--cache-dir", str(options.cache_dir), *arguments, "--index-url", options.index_url]
    completed = subprocess.run(command, capture_output=True, text=True, check=False,
                               env=dict(environment or os.environ, SOURCE_DATE_EPOCH=str(FIXED_MTIME)))
    if completed.returncode != 0:
        raise BuildError("pip %s failed:\n%s" % (arguments[0], completed.stderr.strip()[-3000:]))


def build_local_wheels(name, component, base, directory, options):
    """Wheels of the component's own projects and allowed source-only dependencies; returns
    their pins (name==version) for the resolution."""
    with tempfile.TemporaryDirectory() as scratch:
        for index, project in enumerate(component.get("projects", [])):
            # A copy: building in place would leave build/ and *.egg-info in the checkout.
            copy = Path(scratch) / ("project-%d" % index)
            shutil.copytree(base / project, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            pip(["wheel", "--no-deps", "--wheel-dir", str(directory), str(copy)], options)
        environment = dict(os.environ, **component.get("build_environment", {}))
        for requirement in component.get("build_from_source", []):
            pip(["wheel", "--no-deps", "--no-binary=:all:", "--wheel-dir", str(directory), requirement], options,
                environment)
    pins = []
    for wheel in sorted(directory.glob("*" + WHEEL_SUFFIX)):
        if not is_pure_python3(wheel.name):
            raise BuildError("component %s: %s is not a pure Python wheel, so it cannot be built here for another "
                             "Python; ask for a binary wheel upstream" % (name, wheel.name))
        pins.append("%s==%s" % wheel_identity(wheel.name)[:2])
    return pins


def resolve(name, component, base, work, options):
    """{wheel file name: path} of every wheel the component needs, for the target Python."""
    local = work / ("local-" + name)
    downloads = work / ("wheels-" + name)
    local.mkdir()
    downloads.mkdir()
    top = build_local_wheels(name, component, base, local, options) + list(component.get("requirements", []))
    requirements = work / ("top-%s.txt" % name)
    requirements.write_text("".join(line + "\n" for line in top))
    target = ["--python-version", options.python_version] + sum((["--platform", tag] for tag in options.platform), [])
    pip(["download", "--only-binary=:all:", *target, "--find-links", str(local), "--dest", str(downloads),
         "-r", str(requirements)], options)
    wheels = {path.name: path for path in sorted(downloads.iterdir())}
    not_wheels = [file_name for file_name in wheels if not file_name.endswith(WHEEL_SUFFIX)]
    if not_wheels:
        raise BuildError("component %s: pip fetched files that are not wheels: %s" % (name, ", ".join(not_wheels)))
    return wheels, {path.name for path in local.glob("*" + WHEEL_SUFFIX)}


def stage_component(name, component, base, root, work, options, wheelhouse):
    wheels, built_here = resolve(name, component, base, work, options)
    missing = set(component.get("entry_points", [])) - console_scripts(wheels)
    if missing:
        raise BuildError("component %s: no wheel provides the console script %s" % (name, ", ".join(sorted(missing))))
    pins = []
    for file_name, path in wheels.items():
        wheel_name, version = wheel_identity(file_name)[:2]
        digest = contents.sha256_file(path)
        pins.append((wheel_name, version, digest))
        if options.dependency_mode == "wheelhouse" or file_name in built_here:
            if file_name in wheelhouse and wheelhouse[file_name] != digest:
                raise BuildError("%s resolved to two different files across components" % file_name)
            wheelhouse[file_name] = digest
            shutil.copyfile(path, root / "wheelhouse" / file_name)
    (root / "requirements" / ("%s.txt" % name)).write_text(requirements_text(pins))
    units = []
    for unit in component.get("units", []):
        shutil.copyfile(base / unit, root / "units" / Path(unit).name)
        units.append("units/" + Path(unit).name)
    return {"requirements": "requirements/%s.txt" % name, "units": units,
            "entry_points": list(component.get("entry_points", []))}


def build(options):
    """Build the release options describe; returns (archive path, number of wheels in wheelhouse/)."""
    spec_path = Path(options.spec).resolve()
    spec, base = load_spec(spec_path), spec_path.parent
    options.dependency_mode = spec.get("dependency_mode")
    archive = Path(options.output_dir) / ("%s.tar.gz" % options.release_id)
    if archive.exists():
        raise BuildError("%s exists: a release id is built once; choose a new --release-id" % archive)
    with tempfile.TemporaryDirectory(prefix="pharos-release-") as scratch:
        work, root = Path(scratch) / "work", Path(scratch) / options.release_id
        for directory in (work, root / "requirements", root / "units", root / "wheelhouse"):
            directory.mkdir(parents=True)
        wheelhouse, components = {}, {}
        for name, component in spec["components"].items():
            components[name] = stage_component(name, component, base, root, work, options, wheelhouse)
        if not wheelhouse:
            (root / "wheelhouse").rmdir()
        shutil.copyfile(base / spec["site_env_example"], root / "site.env.example")
        manifest = {"format": contents.FORMAT, "release_id": options.release_id,
                    "dependency_mode": options.dependency_mode, "python_version": options.python_version,
                    "site_env_example": "site.env.example", "components": components}
        (root / contents.MANIFEST_NAME).write_text(dump_manifest(manifest), encoding="utf-8")
        write_sums(root)
        contents.verify(root)
        Path(options.output_dir).mkdir(parents=True, exist_ok=True)
        partial = archive.with_name(archive.name + ".partial")
        pack(root, partial, options.release_id)
        if options.signing_key:
            signature_path = Path(str(archive) + signature.SIGNATURE_SUFFIX)
            signature_path.write_text(signature.sign(str(partial), Path(options.signing_key).read_bytes(),
                                                     options.release_id), encoding="ascii")
        partial.rename(archive)
    return archive, len(wheelhouse)
