"""The lab engine builds its images from the Debian mirror the machine already uses."""

import pytest

BOOKWORM_DEB822 = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
"""

ONE_LINE = """\
# deb http://commented.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian.gpg] https://one.example/debian bookworm main
deb https://one.example/debian-security bookworm-security main
"""


@pytest.fixture
def no_mirror_override(monkeypatch):
    monkeypatch.delenv("PHAROS_LAB_MIRROR", raising=False)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_mirrors_are_read_from_deb822_sources(tmp_path, lab_engine, no_mirror_override):
    sources = write(tmp_path, "debian.sources", BOOKWORM_DEB822)
    assert lab_engine.debian_mirrors([sources]) == (
        "http://mirror.example/debian", "http://mirror.example/debian-security")


def test_mirrors_are_read_from_one_line_sources_ignoring_options_and_comments(
        tmp_path, lab_engine, no_mirror_override):
    sources = write(tmp_path, "sources.list", ONE_LINE)
    assert lab_engine.debian_mirrors([sources]) == (
        "https://one.example/debian", "https://one.example/debian-security")


def test_files_that_apt_ignores_are_ignored(tmp_path, lab_engine, no_mirror_override):
    disabled = write(tmp_path, "other.list.disabled", "deb http://disabled.example/debian trixie main\n")
    used = write(tmp_path, "debian.sources", BOOKWORM_DEB822)
    assert lab_engine.debian_mirrors([disabled, used])[0] == "http://mirror.example/debian"


def test_security_mirror_is_derived_when_none_is_configured(tmp_path, lab_engine, no_mirror_override):
    sources = write(tmp_path, "sources.list", "deb http://only.example/debian bookworm main\n")
    assert lab_engine.debian_mirrors([sources]) == (
        "http://only.example/debian", "http://only.example/debian-security")


def test_the_environment_overrides_the_configured_mirror(tmp_path, lab_engine, monkeypatch):
    monkeypatch.setenv("PHAROS_LAB_MIRROR", "http://override.example/debian")
    sources = write(tmp_path, "debian.sources", BOOKWORM_DEB822)
    assert lab_engine.debian_mirrors([sources])[0] == "http://override.example/debian"


def test_a_machine_without_a_debian_mirror_gets_an_actionable_error(tmp_path, lab_engine, no_mirror_override):
    sources = write(tmp_path, "sources.list", "deb http://archive.ubuntu.example/ubuntu noble main\n")
    with pytest.raises(lab_engine.LabError, match="PHAROS_LAB_MIRROR"):
        lab_engine.debian_mirrors([sources])


def test_image_sources_point_trixie_at_the_machines_mirrors(lab_engine):
    sources = lab_engine.deb822_sources("http://m.example/debian", "http://m.example/debian-security")
    stanzas = [dict(line.split(": ", 1) for line in stanza.splitlines()) for stanza in sources.split("\n\n")]
    assert [(s["URIs"], s["Suites"]) for s in stanzas] == [
        ("http://m.example/debian", "trixie trixie-updates"),
        ("http://m.example/debian-security", "trixie-security"),
    ]
