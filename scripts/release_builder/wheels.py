# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wheels as the builder handles them: a wheel's name, version and tags read from its file name
with packaging, as pip reads them; the console scripts it provides; and the hash-pinned
requirements file that locks a component's wheels.

A requirements file has one line per distribution, ``name==version --hash=sha256:<hex>``,
sorted by name, so that ``pip install --require-hashes --no-deps`` installs exactly the
locked wheels and nothing else.
"""

import configparser
import re
import zipfile

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import ReleaseError

REQUIREMENT_LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s=]+) --hash=sha256:([0-9a-f]{64})\Z")
WHEEL_SUFFIX = ".whl"


def _parsed(filename):
    """packaging's (name, version, build, tags) of a wheel's file name; ReleaseError if it is none."""
    try:
        return parse_wheel_filename(filename)
    except InvalidWheelFilename:
        raise ReleaseError("wheel %s" % filename, ["its name is not name-version-python-abi-platform.whl"]) from None


def wheel_identity(filename):
    """(canonical name, version, python tag, abi tag, platform tag) of a wheel's file name.

    The tags are given as the file name spells them (py2.py3 stays one tag): packaging expands
    them into a set of tags, which does not keep the name's order.
    """
    name, version = _parsed(filename)[:2]
    python, abi, platform = filename[:-len(WHEEL_SUFFIX)].rsplit("-", 3)[1:]
    return name, str(version), python, abi, platform


def is_pure_python3(filename):
    """True when the wheel is built for Python 3 and for no particular ABI or platform, so it
    installs on the target's Python whatever Python built it."""
    tags = _parsed(filename)[3]
    return all(tag.abi == "none" and tag.platform == "any" for tag in tags) and \
        any(tag.interpreter.startswith("py3") for tag in tags)


def console_scripts(wheels):
    """The names of the console scripts the wheels (paths by file name) provide."""
    names = set()
    for path in wheels.values():
        with zipfile.ZipFile(path) as archive:
            for member in archive.namelist():
                if member.endswith(".dist-info/entry_points.txt"):
                    parser = configparser.ConfigParser(delimiters=("=",))
                    parser.optionxform = str
                    parser.read_string(archive.read(member).decode("utf-8"))
                    if parser.has_section("console_scripts"):
                        names.update(parser.options("console_scripts"))
    return names


def requirements_text(pins):
    """The requirements file for [(name, version, sha256)], sorted by canonical name.

    One distribution may appear once only: two wheels of it would be two hashes to one pin.
    """
    lines, seen = [], {}
    for name, version, digest in sorted(pins, key=lambda pin: canonicalize_name(pin[0])):
        key = canonicalize_name(name)
        if key in seen:
            raise ReleaseError("requirements", ["%s is pinned twice (%s and %s)" % (key, seen[key], version)])
        seen[key] = version
        lines.append("%s==%s --hash=sha256:%s\n" % (key, version, digest))
    return "".join(lines)


def parse_requirements(text):
    """[(canonical name, version, sha256)] of a requirements file written by requirements_text();
    ReleaseError naming every line that is not one exact hash-pinned distribution."""
    pins, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        match = REQUIREMENT_LINE.match(line)
        if not match:
            problems.append("line %d is not 'name==version --hash=sha256:<hex>'" % number)
            continue
        name, version, digest = match.groups()
        pins.append((canonicalize_name(name), version, digest))
    if problems:
        raise ReleaseError("requirements", problems)
    return pins
