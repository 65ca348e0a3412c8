# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: site_env
author: Pharos HPC engineering (@pharos-ai-factory)
short_description: Read a site.env strictly and check the Site's rules
version_added: 0.1.0
description:
  - Reads each given site.env file on the controller with a strict KEY=value reader (never
    sourced, nothing substituted, nothing taken from the environment) and checks every Site
    rule (see C(docs/release.md), "site.env").
  - Returns one dictionary of the file's values per term, or fails naming every violation
    at once, each with its key, line, rule and fix.
options:
  _terms:
    description: Paths of site.env files on the controller, looked up in a role's C(files/) first.
    required: true
    type: list
    elements: path
  components:
    description:
      - The release manifest's component names; ACTIVATION_COMPONENTS must name only these.
      - Not checked when neither this nor O(manifest) is given.
    type: list
    elements: str
  dependency_mode:
    description: The release's dependency mode; C(index) requires PYTHON_INDEX_URL.
    type: str
    choices: [index, wheelhouse]
  manifest:
    description:
      - Path of a release's manifest.yml; its components and dependency_mode are used
        unless O(components) or O(dependency_mode) are given.
    type: path
"""

EXAMPLES = r"""
- name: Read the Site's values, checked against the release being installed
  ansible.builtin.set_fact:
    site: "{{ lookup('pharos.hpc.site_env', '/etc/pharos-hpc/site.env', manifest=release_root ~ '/manifest.yml') }}"

- name: Check a site.env before it is copied to the login node
  ansible.builtin.debug:
    msg: "{{ lookup('pharos.hpc.site_env', 'files/site.env', components=['site-agent', 'ssh-access']) }}"
"""

RETURN = r"""
_raw:
  description: One dictionary per term, the file's keys and literal values in file order.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import ReleaseError, load_manifest
from ansible_collections.pharos.hpc.plugins.module_utils.site_env import SiteEnvError
from ansible_collections.pharos.hpc.plugins.module_utils.site_env_rules import check_file


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        components, mode = self.get_option("components"), self.get_option("dependency_mode")
        if self.get_option("manifest"):
            try:
                with open(self.get_option("manifest"), "r", encoding="utf-8") as handle:
                    manifest = load_manifest(handle.read())
            except (OSError, ReleaseError) as error:
                raise AnsibleLookupError("pharos.hpc.site_env: %s" % error)
            components = list(manifest["components"]) if components is None else components
            mode = manifest["dependency_mode"] if mode is None else mode
        results = []
        for term in terms:
            if not term:
                raise AnsibleLookupError("pharos.hpc.site_env: no site.env is named. Fix: set pharos_site_env_file in "
                                         "the inventory to the path of the Site's site.env on the controller.")
            # Like the file lookup: a role's files/ first, then the path as given.
            path = self.find_file_in_search_path(variables, "files", term, ignore_missing=True) or term
            try:
                results.append(dict(check_file(path, components, mode)))
            except OSError as error:
                raise AnsibleLookupError("pharos.hpc.site_env: cannot read %s: %s" % (term, error.strerror))
            except SiteEnvError as error:
                raise AnsibleLookupError("pharos.hpc.site_env: %s %s" % (term, str(error).replace("site.env is refused", "is refused", 1)))
        return results
