"""The offering planner as a pure function: (declaration, offering) -> actions. No network."""

import copy
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "collections"))

from ansible_collections.pharos.hpc.plugins.module_utils.waldur_offering import (  # noqa: E402  pylint: disable=wrong-import-position
    SITE_NODE_COMPONENT, PlanError, check_contract, plan)

SITE_OPTIONS = {"username_generation_policy": "service_provider", "service_provider_can_create_offering_user": True}
NODE = dict(SITE_NODE_COMPONENT, uuid="aa" * 16, offering_uuid="bb" * 16)
CONVERGED = {"uuid": "bb" * 16, "name": "Icarus HPC", "state": "Active", "customer_uuid": "cc" * 16,
             "customer_name": "Icarus provider", "plugin_options": dict(SITE_OPTIONS, homedir_prefix="/home/"),
             "components": [NODE], "plans": [{"uuid": "dd" * 16, "name": "Node-hours"}]}
DESIRED = {"name": "Icarus HPC", "customer_uuid": "cc" * 16, "state": "active", "plugin_options": SITE_OPTIONS,
           "components": [dict(SITE_NODE_COMPONENT)]}


def drifted(**changes):
    offering = copy.deepcopy(CONVERGED)
    for path, value in changes.items():
        target = offering
        *parents, leaf = path.split("__")
        for parent in parents:
            target = target[int(parent)] if parent.isdigit() else target[parent]
        target[leaf] = value
    return offering


CASES = [
    ("converged", CONVERGED, []),
    ("paused", drifted(state="Paused"), [("unpause", {})]),
    ("policy", drifted(plugin_options__username_generation_policy="anonymized"),
     [("update_integration", {"plugin_options": {"username_generation_policy": "service_provider"}})]),
    ("unit_factor stored as float", drifted(components__0__unit_factor=60.0), []),
    ("limit_amount set", drifted(components__0__limit_amount=10.0),
     [("update_offering_component", dict(SITE_NODE_COMPONENT, uuid=NODE["uuid"], description=None))]),
]


@pytest.mark.parametrize(("offering", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_the_plan_is_exactly_the_difference(offering, expected):
    actions = plan(DESIRED, offering)[0]
    expected = [(name, {key: value for key, value in body.items() if value is not None or key == "limit_amount"})
                for name, body in expected]
    assert [(action["action"], action["body"]) for action in actions] == expected


def test_only_the_changed_plugin_options_are_sent_and_the_others_are_predicted_kept():
    # Waldur's update_integration merges what it is sent into what it holds.
    actions, predicted = plan(DESIRED, drifted(plugin_options__service_provider_can_create_offering_user=False))
    assert actions[0]["body"] == {"plugin_options": {"service_provider_can_create_offering_user": True}}
    assert predicted["plugin_options"]["homedir_prefix"] == "/home/"


def test_an_activation_without_a_plan_creates_the_declared_plan_first_or_is_refused():
    offering = drifted(state="Draft", plans=[])
    actions = plan(dict(DESIRED, plan_name="Node-hours"), offering)[0]
    assert [(action["action"], action["body"]) for action in actions] == [
        ("create_plan", {"name": "Node-hours"}), ("activate", {})]
    with pytest.raises(PlanError, match="has no billing plan.*Fix: set plan_name"):
        plan(DESIRED, offering)


def test_a_component_of_an_offering_in_use_is_kept_not_removed():
    offering = drifted()
    offering["components"].append(dict(NODE, type="cpu", uuid="ee" * 16))
    assert [action["action"] for action in plan(DESIRED, offering)[0]] == ["remove_offering_component"]
    actions, predicted = plan(DESIRED, offering, in_use=True)
    assert actions == [] and [component["type"] for component in predicted["components"]] == ["node", "cpu"]


def test_a_component_declared_without_unit_or_period_matches_what_waldur_stores():
    stored = dict(NODE, type="gpu", uuid="ee" * 16, billing_type="usage", name="gpu", measured_unit="",
                  limit_period="month", unit_factor=1, limit_amount=None)
    offering = drifted()
    offering["components"].append(stored)
    declared = dict(DESIRED, components=[dict(SITE_NODE_COMPONENT), {"type": "gpu", "billing_type": "usage"}])
    assert plan(declared, offering)[0] == []


def test_a_component_type_declared_twice_is_refused():
    with pytest.raises(PlanError, match="declares type node more than once"):
        plan(dict(DESIRED, components=[SITE_NODE_COMPONENT, SITE_NODE_COMPONENT]), CONVERGED)


def test_planning_does_not_touch_the_offering_it_reads():
    offering = drifted(state="Draft", components__0__unit_factor=1, plans=[])
    snapshot = copy.deepcopy(offering)
    plan(dict(DESIRED, plan_name="Node-hours"), offering)
    assert offering == snapshot


def test_the_contract_of_a_converged_offering_holds_for_its_owner():
    me = {"username": "pharos-agent", "permissions": [
        {"role_name": "CUSTOMER.OWNER", "scope_type": "customer", "scope_uuid": "cc" * 16}]}
    assert all(clause["ok"] for clause in check_contract(CONVERGED, me, SITE_NODE_COMPONENT))


def test_an_offering_manager_alone_fails_the_provider_role_clause():
    me = {"username": "pharos-agent", "permissions": [
        {"role_name": "OFFERING.MANAGER", "scope_type": "offering", "scope_uuid": "bb" * 16, "customer_uuid": "cc" * 16}]}
    failed = [clause["clause"] for clause in check_contract(CONVERGED, me, SITE_NODE_COMPONENT) if not clause["ok"]]
    assert failed == ["provider_role"]
