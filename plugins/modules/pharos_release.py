#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: pharos_release
short_description: Install, activate, roll back and stop an immutable Pharos HPC release on a Site host
version_added: 0.1.0
description:
  - Installs a release archive made by C(scripts/pharos-release-build) as the read-only
    C(/opt/pharos-hpc/releases/<release-id>), each component in its own virtualenv installed offline with pip
    isolated, C(--require-hashes --no-deps --only-binary=:all:).
  - Activates a release - verifies its SHA256SUMS again, records the current release as C(previous), switches
    C(/opt/pharos-hpc/current) atomically, installs the release's unit files, enables and restarts the selected
    units, and requires health. A failure restores the predecessor's links, unit files and units, and the task
    fails saying that the earlier release is active again.
  - Reads the host once, plans the steps, and applies exactly those steps; C(--check) returns the same plan.
  - Retained releases, configuration, secrets and journals are never deleted.
author:
  - Pharos HPC engineering (@pharos-ai-factory)
attributes:
  check_mode:
    support: full
    description:
      - Returns the exact steps and diff of a real run and writes nothing below O(root). The archive is still
        unpacked into a temporary directory and verified, so a tampered archive fails in check mode too.
      - Health is not probed in check mode.
  diff_mode:
    support: full
    description:
      - Which release is current and previous, the digest of each unit file, and each unit's state.
      - With O(archive), the release signer's fingerprint the host records (C(signer)).
options:
  state:
    description:
      - V(present) installs the release from O(archive) and activates nothing. The same release id is never
        installed twice with other inputs - a different manifest or site.env fingerprint is refused.
      - V(active) installs the release when O(archive) is given, then activates it with O(components).
      - V(rolled_back) activates O(release_id), or the recorded C(previous) release when O(release_id) is omitted;
        the release it leaves becomes C(previous).
      - V(stopped) stops and disables the active release's units and keeps everything else.
      - M(pharos.hpc.pharos_release_info) reports what is installed and active without changing anything.
    type: str
    choices: [present, active, rolled_back, stopped]
    default: active
  archive:
    description:
      - Path on the managed host of the release archive C(<release-id>.tar.gz). Copy it there first.
      - Its release id comes from its manifest.
    type: path
  release_id:
    description:
      - The installed release to activate or roll back to, when O(archive) is not given.
    type: str
  signer_key:
    description:
      - The release signer's Ed25519 public key (PEM text) that the Site pins. Required with O(archive) - the
        archive's signature, C(<archive>.sig) beside it on the host, is checked against it before anything in
        the archive is read, and the release id it names must be the manifest's.
      - The statement it signs (release id, archive digest, signing time) is kept with the installed release.
      - The first install on a host records the key's fingerprint in C(/opt/pharos-hpc/signer) (read-only), and an
        archive signed by another key is refused after that, naming both fingerprints, unless O(rotate_signer) is
        true. The key travels with the archive from the controller, so only this record tells a replaced key from
        the Site's own.
    type: str
    version_added: 0.2.0
  rotate_signer:
    description:
      - Accept an archive signed by another key than the one the host recorded, and record the new key's
        fingerprint in its place. Give it for the one run after the platform rotated its release signer key
        (C(-e pharos_release_rotate_signer=true)), never as a standing setting.
      - Only acts with O(archive). Check mode shows the change of recorded signer in the diff and writes nothing.
    type: bool
    default: false
    version_added: 0.3.0
  expect_release_id:
    description:
      - The release id the controller checked the archive's signature for; the signature on the host must name it.
    type: str
    version_added: 0.2.0
  expect_archive_sha256:
    description:
      - The archive digest (C(sha256:<hex>)) the controller checked; the signature on the host must name it.
    type: str
    version_added: 0.2.0
  allow_downgrade:
    description:
      - V(active) refuses a release whose archive was signed before the active release's, a downgrade, unless this
        is true. V(rolled_back) is the deliberate way back and is never refused as a downgrade.
      - A release installed by an earlier version of the collection kept no signed statement. As the active release,
        its install time stands in for its signing time (it was signed before it was installed), so a release signed
        before that time is refused. As the release to activate, it is always refused without this option; a
        rollback to it is not.
    type: bool
    default: false
    version_added: 0.2.0
  components:
    description:
      - Components to activate; each must be in the release's manifest.
      - Defaults to C(ACTIVATION_COMPONENTS) of site.env, and for V(stopped) to the active record's.
    type: list
    elements: str
  instances:
    description:
      - Instances of template units, by unit file name, for example C({waldur-site-agent@.service:[report]}).
      - C(waldur-site-agent@.service) defaults to C(SITE_AGENT_MODES) of site.env.
    type: dict
  site_env:
    description:
      - The Site's C(site.env), checked by the strict reader. Its values are part of the install fingerprint.
      - Defaults to C(etc/pharos-hpc/site.env) below O(root).
    type: path
  root:
    description:
      - Directory every managed path is below. Leave it at C(/) on a host; tests give a temporary directory.
    type: path
    default: /
  python:
    description:
      - The interpreter the virtualenvs are made with. Its C(3.N) must be the manifest's C(python_version).
    type: str
    default: python3
  probes:
    description:
      - Health probes an activation requires. V(units) - every selected unit is active. V(offering) - the
        offering reads Active in Waldur through the Site agent's token and CA. V(site_api) - the Site API origin
        answers HTTP 2xx or 4xx over TLS verified against its CA.
      - No probe follows a redirect; the Site API probe sends no credential.
    type: list
    elements: str
    choices: [units, offering, site_api]
    default: [units, offering, site_api]
  waldur_url:
    description: Waldur API address, ending in C(/api/). Defaults to C(WALDUR_API_URL) of site.env.
    type: str
  token_file:
    description:
      - File on the host whose first line is the Site agent's Waldur token. The token is never an option value,
        never logged and never shown in a diff or an error.
      - Defaults to C(/etc/pharos-hpc/secrets/site-agent-token) below O(root).
    type: path
  ca_file:
    description: CA of Waldur's certificate. Defaults to C(/etc/pharos-hpc/site-agent-ca.crt) below O(root).
    type: path
  offering_uuid:
    description: The Site's offering. Defaults to C(CENTRAL_OFFERING_UUID) of site.env.
    type: str
  site_api_url:
    description: The Site API origin, C(https://host[:port]). Defaults to C(CENTRAL_SITE_API_URL) of site.env.
    type: str
  site_api_ca_file:
    description: CA of the Site API edge. Defaults to C(/etc/pharos-hpc/site-api-ca.crt) below O(root).
    type: path
  health_timeout:
    description: Seconds the units may take to become active, and the timeout of each HTTP probe.
    type: float
    default: 60
  health_settle:
    description: Seconds to wait after starting the units before the first probe, so a unit that exits is seen.
    type: float
    default: 3
requirements:
  - systemd on the managed host; Python 3 with the C(venv) module (Debian C(python3-venv)).
  - PyYAML on the managed host (Debian C(python3-yaml)).
  - httpx on the managed host for the V(offering) and V(site_api) probes.
  - cryptography on the managed host to check an archive's signature (Debian C(python3-cryptography)).
notes:
  - Layout - C(/opt/pharos-hpc/releases/<id>/release) (the verified archive),
    C(/opt/pharos-hpc/releases/<id>/venvs/<component>), C(/opt/pharos-hpc/current) and C(previous) links,
    C(/opt/pharos-hpc/<component>) -> C(current/venvs/<component>), C(/var/lib/pharos-hpc/active-release).
seealso:
  - name: The release
    description: docs/release.md in this collection.
    link: https://github.com/pharos-ai-factory/pharos-hpc/blob/main/docs/release.md
"""

EXAMPLES = r"""
- name: Copy the release and its signature to the host
  ansible.builtin.copy:
    src: dist/{{ item }}
    dest: /var/lib/pharos-hpc/incoming/{{ item }}
    mode: "0644"
  loop: [2026.11.0.tar.gz, 2026.11.0.tar.gz.sig]

- name: Install and activate it (components and modes from site.env)
  pharos.hpc.pharos_release:
    archive: /var/lib/pharos-hpc/incoming/2026.11.0.tar.gz
    signer_key: "{{ lookup('ansible.builtin.file', 'files/release-signer.pub.pem') }}"
    state: active

- name: Return to the release that was active before
  pharos.hpc.pharos_release:
    state: rolled_back
"""

RETURN = r"""
release_id:
  description: The release the run acted on (for V(stopped), the current one).
  returned: always
  type: str
  sample: 2026.11.0
fingerprint:
  description:
    - SHA-256 of the archive's manifest and site.env's values, which an install records; null without O(archive).
    - A host that holds the same release id with another fingerprint refuses it.
  returned: always
  type: str
steps:
  description: The plan, applied in order (in check mode, what a run would apply); empty when nothing differs.
  returned: always
  type: list
  elements: dict
  sample:
    - {step: switch_current, summary: "point current at releases/2026.11.1 (was 2026.11.0)", release_id: 2026.11.1}
units:
  description: The units of the selected components.
  returned: always
  type: list
  elements: str
health:
  description: Each probe of the activation with C(probe), C(ok) and C(message).
  returned: when an activation ran its probes
  type: list
  elements: dict
restored:
  description: True when activation failed and the predecessor was restored.
  returned: on a failed activation
  type: bool
current:
  description: The release that is current after an activation.
  returned: after an activation
  type: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import YAML_IMPORT_ERROR
from ansible_collections.pharos.hpc.plugins.module_utils.release.systemd import Systemctl
from ansible_collections.pharos.hpc.plugins.module_utils.release.run import PROBES, RunError, run, token_reader


def argument_spec():
    return dict(
        state=dict(type="str", choices=["present", "active", "rolled_back", "stopped"], default="active"),
        archive=dict(type="path"),
        release_id=dict(type="str"),
        signer_key=dict(type="str", no_log=False),
        expect_release_id=dict(type="str"),
        expect_archive_sha256=dict(type="str"),
        allow_downgrade=dict(type="bool", default=False),
        rotate_signer=dict(type="bool", default=False),
        components=dict(type="list", elements="str"),
        instances=dict(type="dict"),
        site_env=dict(type="path"),
        root=dict(type="path", default="/"),
        python=dict(type="str", default="python3"),
        probes=dict(type="list", elements="str", choices=list(PROBES), default=list(PROBES)),
        waldur_url=dict(type="str"),
        token_file=dict(type="path", no_log=False),
        ca_file=dict(type="path"),
        offering_uuid=dict(type="str"),
        site_api_url=dict(type="str"),
        site_api_ca_file=dict(type="path"),
        health_timeout=dict(type="float", default=60.0),
        health_settle=dict(type="float", default=3.0),
    )


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True,
                           required_if=[("state", "present", ("archive", "release_id"), True)])
    if YAML_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib("PyYAML (Debian: python3-yaml)"), exception=YAML_IMPORT_ERROR)

    def command(argv):
        return module.run_command(argv, environ_update={"PIP_NO_INPUT": "1"})

    systemd = Systemctl(command, module.get_bin_path("systemctl") or "systemctl")
    try:
        result = run(module.params, systemd, command, module.check_mode, token_reader(module.no_log_values))
    except RunError as error:
        module.fail_json(msg=str(error), **error.result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
