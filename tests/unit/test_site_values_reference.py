"""docs/site-values.md names every value a Site's inventory sets: each Site value validate.yml
checks, and each value of the production example's group_vars."""

import re

import yaml

VALUE = re.compile(r"`((?:icarus_hpc|pharos|slurm|openldap|munge)_[a-z_]+)`")


def referenced(project):
    return set(VALUE.findall((project / "docs" / "site-values.md").read_text()))


def test_every_value_validate_yml_reads_is_in_the_reference(project):
    validate = (project / "playbooks" / "validate.yml").read_text()
    checked = set(re.findall(r"\b(pharos_[a-z_]+?)(?:/max)?\b", validate))
    assert checked, "validate.yml reads no Site value"
    assert sorted(checked - referenced(project)) == []


def test_every_value_of_the_production_example_is_in_the_reference(project):
    group_vars = project / "docs" / "examples" / "production" / "group_vars" / "all"
    example = {}
    for name in ("site.yml", "release.yml", "secrets.yml"):
        example.update(yaml.safe_load((group_vars / name).read_text()))
    assert "pharos_site_mode" in example
    assert sorted(set(example) - referenced(project)) == []
