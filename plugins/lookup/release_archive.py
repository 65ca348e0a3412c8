# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: release_archive
author: Pharos HPC engineering (@pharos-ai-factory)
short_description: Check a release archive on the controller and say what it carries
version_added: 0.1.0
description:
  - First checks each archive's signature, C(<archive>.sig), against the release signer's
    public key that O(signer_key) pins, before anything in the archive is read. SHA256SUMS and
    the pip hashes travel inside the archive and prove nothing about who made it. The signature
    names the release id, which must be the manifest's, and the archive's SHA-256.
  - Then unpacks each given release archive into a temporary directory on the controller, checks
    its SHA256SUMS (missing, extra and altered files, links, paths outside the release are all
    refused) and its manifest, and removes the directory again (docs/release.md).
  - Returns what a preflight needs before anything reaches a host - the release id, its
    components, dependency mode and Python version, and with O(site_env) the fingerprint an
    install records.
options:
  _terms:
    description: Paths of release archives on the controller.
    required: true
    type: list
    elements: path
  signer_key:
    description:
      - The release signer's Ed25519 public key (PEM) on the controller, as the platform
        publishes it; the inventory's C(pharos_release_signer_key).
      - An empty value is refused as unset (a C(path) option would read it as the working
        directory).
    type: str
    required: true
  signer_fingerprint:
    description:
      - The fingerprint (C(sha256:<hex>) of the raw public key) the platform publishes for its
        release signer; the inventory's C(pharos_release_signer_fingerprint), kept apart from the
        key file. A key file whose fingerprint differs is refused, naming both, before any
        signature is read.
      - Empty or unset checks no fingerprint; the login node still refuses a signer other than
        the one it recorded at its first install (docs/release.md, "Signature").
    type: str
    version_added: 0.3.0
  site_env:
    description:
      - A site.env on the controller; its values are checked against the release's components
        and go into the returned fingerprint.
    type: path
"""

EXAMPLES = r"""
- name: Check the archive and compare its fingerprint with the one the host recorded
  ansible.builtin.set_fact:
    archive: >-
      {{ lookup('pharos.hpc.release_archive', 'dist/2026.11.0.tar.gz',
                signer_key='files/release-signer.pem', site_env='files/site.env',
                signer_fingerprint=pharos_release_signer_fingerprint) }}
"""

RETURN = r"""
_raw:
  description:
    - One dictionary per archive - C(release_id), C(components) (list), C(dependency_mode),
      C(python_version), C(fingerprint) (null without O(site_env)), C(signer), the pinned
      signer's fingerprint, and what the signature states - C(archive_sha256), the archive's
      digest, and C(issued), when it was signed (UTC).
  type: list
  elements: dict
"""

import os

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import fingerprint
from ansible_collections.pharos.hpc.plugins.module_utils.release.signature import SignatureError, check_fingerprint, verify
from ansible_collections.pharos.hpc.plugins.module_utils.release.stage import StageError, inspect_archive
from ansible_collections.pharos.hpc.plugins.module_utils.site_env import SiteEnvError
from ansible_collections.pharos.hpc.plugins.module_utils.site_env_rules import check_file


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        site_env = self.get_option("site_env")
        signer_key = os.path.expanduser(os.path.expandvars(self.get_option("signer_key") or ""))
        signer_pem = self._signer_pem(signer_key)
        pinned = self._pinned_fingerprint(self.get_option("signer_fingerprint"))
        results = []
        for archive in terms:
            if not os.path.isfile(archive):
                raise AnsibleLookupError("pharos.hpc.release_archive: %s is not a file on the controller. Fix: give "
                                         "the path of the release archive there." % archive)
            try:
                signed = verify(archive, signer_pem, signer_key, pinned, "pharos_release_signer_fingerprint")
            except (SignatureError, OSError) as error:
                raise AnsibleLookupError("pharos.hpc.release_archive: %s" % error)
            try:
                manifest, _units = inspect_archive(archive)
                values = check_file(site_env, list(manifest["components"]), manifest["dependency_mode"]) if site_env else None
            except StageError as error:
                raise AnsibleLookupError("pharos.hpc.release_archive: %s" % error)
            except (SiteEnvError, OSError) as error:
                raise AnsibleLookupError("pharos.hpc.release_archive: %s: %s" % (site_env, error))
            if manifest["release_id"] != signed.release_id:
                raise AnsibleLookupError(
                    "pharos.hpc.release_archive: %s holds release %s, but its signature names release %s: the archive "
                    "was put under another release's signature. Fix: take the archive and its .sig from the release "
                    "channel together." % (archive, manifest["release_id"], signed.release_id))
            results.append({"release_id": manifest["release_id"], "components": sorted(manifest["components"]),
                            "dependency_mode": manifest["dependency_mode"],
                            "python_version": manifest.get("python_version"),
                            "fingerprint": fingerprint(manifest, values) if values is not None else None,
                            "signer": signed.signer, "archive_sha256": signed.archive, "issued": signed.issued})
        return results

    @staticmethod
    def _pinned_fingerprint(value):
        if value in (None, ""):
            return None
        try:
            return check_fingerprint(value, "pharos_release_signer_fingerprint")
        except SignatureError as error:
            raise AnsibleLookupError("pharos.hpc.release_archive: %s Fix: set it as the platform publishes it, or "
                                     "leave it unset." % error)

    @staticmethod
    def _signer_pem(path):
        if not path:
            raise AnsibleLookupError("pharos.hpc.release_archive: no release signer is pinned. Fix: set "
                                     "pharos_release_signer_key to the release signer's public key on the controller.")
        try:
            with open(path, "rb") as handle:
                return handle.read(65536)
        except OSError as error:
            raise AnsibleLookupError("pharos.hpc.release_archive: the pinned release signer key %s cannot be read "
                                     "(%s). Fix: set pharos_release_signer_key to the public key's path on the "
                                     "controller." % (path, error.strerror or error))
