"""An index-mode release installed for real: its archive carries only the wheels built from
source, and the host fetches every other pinned wheel over TLS from the Site's package index,
which this test serves on the controller (https://waldur.lab:18455/simple/, the simulator's
certificate, its CA in the host's trust store). Installed, not activated; the release that
runs is left alone."""

import http.server
import re
import ssl
import tarfile
import threading
from pathlib import Path

import pytest
from scenario import (BUILT_HERE, RELEASES, SIMULATOR, current, rebuilt_release_b, release, release_b_wheels,
                      site_env_with)

testinfra_hosts = ["ansible://login"]

INDEX_PORT = 18455
INDEX_URL = "https://waldur.lab:%d/simple/" % INDEX_PORT
HOST_CA = "/usr/local/share/ca-certificates/pharos-test-index.crt"
WORK = "/root/index-release"


def simple_index(root, wheels):
    """A PEP 503 index of wheels under root/simple, each file under root/files."""
    (root / "files").mkdir(parents=True)
    projects = {}
    for name, data in wheels.items():
        (root / "files" / name).write_bytes(data)
        projects.setdefault(re.sub(r"[-_.]+", "-", name.split("-")[0]).lower(), []).append(name)
    for project, names in projects.items():
        (root / "simple" / project).mkdir(parents=True)
        links = "".join('<a href="../../files/%s">%s</a>\n' % (name, name) for name in sorted(names))
        (root / "simple" / project / "index.html").write_text("<!DOCTYPE html><html><body>\n%s</body></html>\n" % links)


@pytest.fixture
def package_index(tmp_path):
    """The index served over TLS on every address of the controller; yields the paths it was asked for."""
    # What a Site's index holds: the upstream wheels, not the ones the release builder makes.
    simple_index(tmp_path / "index", {name: data for name, data in release_b_wheels().items()
                                      if not name.lower().startswith(BUILT_HERE)})
    asked = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *arguments, **keywords):
            super().__init__(*arguments, directory=str(tmp_path / "index"), **keywords)

        def log_message(self, format, *arguments):  # noqa: A002 - the base class names it so
            asked.append(self.path)

    server = http.server.ThreadingHTTPServer(("0.0.0.0", INDEX_PORT), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(SIMULATOR / "server.pem"), str(SIMULATOR / "server.key"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield asked
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def host_trusts_the_index(host):
    host.ansible("copy", "src=%s dest=%s mode=0644" % (SIMULATOR / "ca.pem", HOST_CA), check=False)
    host.check_output("update-ca-certificates >/dev/null")
    yield
    host.check_output("rm -f %s && update-ca-certificates --fresh >/dev/null && rm -rf %s" % (HOST_CA, WORK))


def test_an_index_mode_release_installs_its_pinned_wheels_from_the_sites_index(host, tmp_path, package_index,
                                                                               host_trusts_the_index):
    archive = rebuilt_release_b(tmp_path / "release-index.tar.gz", release_id="release-index", index_mode=True)
    site_env = site_env_with(tmp_path / "site.env", ACTIVATION_COMPONENTS="site-agent ssh-access")
    Path(site_env).write_text(Path(site_env).read_text() + "PYTHON_INDEX_URL=%s\n" % INDEX_URL)
    host.check_output("install -d -m 0700 %s" % WORK)
    for source in (archive, Path(str(archive) + ".sig"), Path(site_env)):
        copied = host.ansible("copy", "src=%s dest=%s/%s mode=0600" % (source, WORK, source.name), check=False)
        assert not copied.get("failed"), copied
    before = current(host)

    installed = release(host, state="present", archive="%s/release-index.tar.gz" % WORK, site_env="%s/site.env" % WORK,
                        signer_key=(RELEASES / "signer.pub.pem").read_text())
    assert installed.get("changed") is True and not installed.get("failed"), installed
    # Only the wheels built from source came in the archive; the others came from the index.
    with tarfile.open(archive) as carried_archive:
        carried = [Path(name).name for name in carried_archive.getnames() if name.endswith(".whl")]
    assert carried and all(name.lower().startswith(BUILT_HERE) for name in carried), carried
    fetched = {Path(path).name for path in package_index if path.startswith("/files/")}
    assert any(name.startswith("httpx-") for name in fetched), package_index
    venv = "/opt/pharos-hpc/releases/release-index/venvs/ssh-access/bin/python"
    assert host.run("%s -c 'import httpx, ldap3, pharos_ssh_access_standin'" % venv).rc == 0
    assert current(host) == before
