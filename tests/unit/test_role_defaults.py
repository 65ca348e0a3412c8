"""Each role's own defaults hold its argument spec.

site.yml checks the values a host's variables give each role (pharos.hpc.role_values) and starts
the roles without Ansible's own check, which also read the role's defaults: a default of the
wrong type would reach the role unchecked. The defaults are the collection's, so they are checked
here, each entry point against the defaults/main.yml it runs with. A default that is a template
is rendered only on a host, and left to the role's own tests.
"""

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.pharos.hpc.plugins.action.role_values import ROLES, role_options

ENTRY_POINTS = [(spec_file.parents[1].name, entry_point)
                for spec_file in sorted(ROLES.glob("*/meta/argument_specs.yml"))
                for entry_point in yaml.safe_load(spec_file.read_text())["argument_specs"]]


@pytest.mark.parametrize(("role", "entry_point"), ENTRY_POINTS, ids=lambda value: value)
def test_the_role_defaults_hold_the_spec_of_each_entry_point(role, entry_point):
    options = role_options(role, entry_point)
    defaults_file = ROLES / role / "defaults" / "main.yml"
    defaults = (yaml.safe_load(defaults_file.read_text()) or {}) if defaults_file.exists() else {}
    given = {name: value for name, value in defaults.items() if name in options and "{{" not in str(value)}
    # A required option is the inventory's to give: the defaults hold the others.
    optional = {name: dict(option, required=False) for name, option in options.items()}
    found = ArgumentSpecValidator(optional).validate(given, validate_role_argument_spec=True)
    assert found.error_messages == [], f"{role}/defaults/main.yml against {entry_point}: {found.error_messages}"


def test_the_defaults_are_read_for_every_role_site_yml_checks():
    """The check above reads every role whose values site.yml checks in one step."""
    checked = {role for role, _ in ENTRY_POINTS}
    assert {"munge", "openldap", "sssd", "sshd", "job_identity", "scratch", "slurm", "slurm_accounts"} <= checked
