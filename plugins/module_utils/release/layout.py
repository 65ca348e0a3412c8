# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where releases live on a host (docs/release.md, "Layout"), every path below a root that is /
on a real host:

    /opt/pharos-hpc/releases/<id>/release/    the verified archive content (SHA256SUMS holds)
    /opt/pharos-hpc/releases/<id>/venvs/<c>/  each component's offline virtualenv
    /opt/pharos-hpc/releases/<id>/fingerprint written last: a release without it is incomplete
    /opt/pharos-hpc/current  -> releases/<id> the active release, switched atomically
    /opt/pharos-hpc/previous -> releases/<id> what current pointed at before the last switch
    /opt/pharos-hpc/<c>      -> current/venvs/<c> the stable path a unit's ExecStart names
    /opt/pharos-hpc/signer                    the release signer's key fingerprint, recorded at the
                                              first install (0444), changed only by a named rotation
    /var/lib/pharos-hpc/active-release        JSON, written only after health held
    /etc/systemd/system/<unit>                the release's unit files, installed as they are
"""

from __future__ import annotations

import os


class Layout:
    """Every path the module reads or writes, below root (/ on a host, a temporary directory in tests)."""

    def __init__(self, root="/"):
        self.root = root
        self.base = os.path.join(root, "opt", "pharos-hpc")
        self.releases = os.path.join(self.base, "releases")
        self.current = os.path.join(self.base, "current")
        self.previous = os.path.join(self.base, "previous")
        self.signer = os.path.join(self.base, "signer")
        self.state_dir = os.path.join(root, "var", "lib", "pharos-hpc")
        self.active_record = os.path.join(self.state_dir, "active-release")
        self.unit_dir = os.path.join(root, "etc", "systemd", "system")
        self.site_env = os.path.join(root, "etc", "pharos-hpc", "site.env")

    def release(self, release_id):
        return os.path.join(self.releases, release_id)

    def release_files(self, release_id):
        return os.path.join(self.releases, release_id, "release")

    def venvs(self, release_id):
        return os.path.join(self.releases, release_id, "venvs")

    def venv(self, release_id, component):
        return os.path.join(self.venvs(release_id), component)

    def fingerprint_file(self, release_id):
        return os.path.join(self.releases, release_id, "fingerprint")

    def statement_file(self, release_id):
        """The signed statement the release was installed under (its id, archive digest, signing time)."""
        return os.path.join(self.releases, release_id, "signed-statement")

    def component_link(self, component):
        return os.path.join(self.base, component)

    def unit_file(self, name):
        return os.path.join(self.unit_dir, name)


def release_link_target(release_id):
    return "releases/" + release_id


def component_link_target(component):
    return "current/venvs/" + component
