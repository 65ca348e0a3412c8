# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Waldur offering of a Site: plan (desired vs current), apply, and the read-only contract.

plan() is a pure function of (desired, current offering): check mode returns its actions
unchanged, a real run sends exactly those actions, so --check predicts a run exactly.
Nothing here imports httpx; apply() and read_offering() take a client that does.
"""

from __future__ import annotations

import copy

OFFERINGS = "marketplace-provider-offerings/"
MANAGED_COMPONENT_FIELDS = ("type", "name", "billing_type", "measured_unit", "unit_factor",
                            "limit_period", "limit_amount", "description")
# docs/allocations.md: an order of n node-hours becomes
# GrpTRESMins=node=60n for the allocation's whole lifetime, and each order carries its own
# quantity, so the component has no limit_amount of its own.
SITE_NODE_COMPONENT = {
    "type": "node", "name": "Node-hours", "billing_type": "limit", "measured_unit": "hours",
    "unit_factor": 60, "limit_period": "total", "limit_amount": None, "description": None,
}
STATE_ACTIONS = {
    # (current Waldur state, desired module state) -> actions, in order
    ("Draft", "active"): ["activate"], ("Paused", "active"): ["unpause"],
    ("Draft", "paused"): ["activate", "pause"], ("Active", "paused"): ["pause"],
}
LIFECYCLE_ACTIONS = ("activate", "pause", "unpause")
# Waldur refuses these without a billing plan ("Offering does not have any billing plans.").
ACTIONS_NEEDING_A_PLAN = ("activate", "unpause")
OFFERING_MANAGEMENT_SETTING = "ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT"
MODULE_STATE_OF = {"Active": "active", "Paused": "paused"}


class PlanError(Exception):
    """The declaration cannot be reached from what Waldur holds; the message says why and how."""


def offering_label(offering):
    return "%s (%s)" % (offering.get("name"), offering.get("uuid"))


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def component_view(component, fields=MANAGED_COMPONENT_FIELDS):
    """The managed fields of a component, as comparable values (absent reads as None)."""
    return {name: _number(component.get(name)) for name in fields}


def desired_component(component):
    """A declared component, with what Waldur stores for a field left out: unit_factor 1, the
    type as name, an empty measured_unit and a limit_period of month (OfferingComponent.save)."""
    result = {name: component.get(name) for name in MANAGED_COMPONENT_FIELDS}
    if result["unit_factor"] is None:
        result["unit_factor"] = 1
    if not result["name"]:
        result["name"] = result["type"]
    if result["measured_unit"] is None:
        result["measured_unit"] = ""
    if not result["limit_period"]:
        result["limit_period"] = "month"
    return result


def _component_fields(component):
    """Fields to compare: description only when the declaration sets one."""
    return tuple(name for name in MANAGED_COMPONENT_FIELDS if name != "description" or component.get("description") is not None)


def _component_body(component):
    return {name: value for name, value in component.items() if name != "description" or value is not None}


def component_differences(declared, current):
    """[(field, current value, declared value)] for every managed field that differs."""
    fields = _component_fields(declared)
    have, want = component_view(current, fields), component_view(declared, fields)
    return [(name, current.get(name), declared[name]) for name in fields if have[name] != want[name]]


def _action(action, summary, body=None):
    return {"action": action, "summary": summary, "body": body}


def view(offering, plugin_option_names):
    """What the diff shows of an offering: state, the managed plugin_options, the components."""
    if offering is None:
        return {}
    plugin_options = offering.get("plugin_options") or {}
    components = {}
    for component in offering.get("components") or []:
        components[component["type"]] = {name: component.get(name) for name in MANAGED_COMPONENT_FIELDS
                                         if name != "type" and (name != "description" or component.get(name))}
    return {
        "name": offering.get("name"),
        "uuid": offering.get("uuid"),
        "state": offering.get("state"),
        "plugin_options": {name: plugin_options.get(name) for name in sorted(plugin_option_names)},
        "components": dict(sorted(components.items())),
    }


def plan(desired, current, in_use=False):
    """Actions that take `current` (an offering dict, or None) to `desired`; and the predicted offering.

    desired: name, state (present|active|paused), plugin_options (dict or None: unmanaged),
    components (list or None: unmanaged), plan_name (a billing plan to create when the offering
    has none, or None), and for a create: allow_create, type, category_url, customer_url,
    description. in_use: the offering has resources, so Waldur removes none of its components.
    """
    plugin_options = desired.get("plugin_options")
    components = [desired_component(component) for component in desired["components"]] \
        if desired.get("components") is not None else None
    _check_components(components)
    actions = []

    if current is None:
        if not desired.get("allow_create"):
            raise PlanError("No offering named %r in customer %s. Fix: give its uuid, correct name or customer, or set "
                            "allow_create: true to create it." % (desired.get("name"), desired.get("customer_uuid")))
        body = {"name": desired["name"], "type": desired["type"], "category": desired["category_url"],
                "customer": desired["customer_url"]}
        if desired.get("description") is not None:
            body["description"] = desired["description"]
        if plugin_options:
            body["plugin_options"] = dict(plugin_options)
        if components:
            body["components"] = [_component_body(component) for component in components]
        actions.append(_action("create", "create offering %r in customer %s (state Draft)"
                               % (desired["name"], desired.get("customer_uuid")), body))
        predicted = {"name": desired["name"], "uuid": None, "state": "Draft",
                     "plugin_options": dict(plugin_options or {}),
                     "components": [dict(component) for component in components or []]}
    else:
        predicted = copy.deepcopy(current)
        label = offering_label(current)
        current_options = current.get("plugin_options") or {}
        if plugin_options:
            # update_integration merges what it is sent key by key: only the changed keys go.
            changed = sorted(name for name in plugin_options if current_options.get(name, object()) != plugin_options[name])
            if changed:
                actions.append(_action("update_integration", "set plugin_options %s of offering %s"
                                       % (", ".join(changed), label),
                                       {"plugin_options": dict((name, plugin_options[name]) for name in changed)}))
                predicted["plugin_options"] = dict(current_options, **plugin_options)
        if components is not None:
            component_actions, kept = _component_actions(components, current, in_use)
            actions.extend(component_actions)
            predicted["components"] = [dict(component) for component in components] + kept

    state = desired.get("state", "present")
    current_state = predicted["state"]
    if state != "present" and MODULE_STATE_OF.get(current_state) != state:
        steps = STATE_ACTIONS.get((current_state, state))
        if steps is None:
            raise PlanError("Offering %s is %s and cannot be made %s: Waldur moves an offering only between Draft, "
                            "Active and Paused. Fix: restore it in Waldur, or declare a new offering."
                            % (offering_label(predicted) if current else repr(desired["name"]), current_state, state))
        if any(step in ACTIONS_NEEDING_A_PLAN for step in steps) and not predicted.get("plans"):
            actions.append(_plan_action(desired, predicted, current))
            predicted["plans"] = [{"name": desired["plan_name"]}]
        for step in steps:
            body = {"paused_reason": desired.get("paused_reason") or ""} if step == "pause" else {}
            actions.append(_action(step, "%s offering %s" % (step, offering_label(predicted) if current
                                                             else repr(desired["name"])), body))
        predicted["state"] = "Active" if state == "active" else "Paused"
    return actions, predicted


def _plan_action(desired, predicted, current):
    label = offering_label(predicted) if current else repr(desired["name"])
    if not desired.get("plan_name"):
        raise PlanError("Offering %s has no billing plan, and Waldur activates no offering without one (\"Offering does "
                        "not have any billing plans.\"). Fix: set plan_name to have one created, or create a plan for "
                        "the offering in Waldur." % label)
    return _action("create_plan", "create billing plan %r of offering %s" % (desired["plan_name"], label),
                   {"name": desired["plan_name"]})


def _check_components(components):
    if components is None:
        return
    types = [component["type"] for component in components]
    duplicates = sorted({name for name in types if types.count(name) > 1})
    if duplicates:
        raise PlanError("components declares type %s more than once. Fix: declare each component type once."
                        % ", ".join(duplicates))


def _component_actions(components, current, in_use):
    """The component actions, and the undeclared components kept because resources use them."""
    label = offering_label(current)
    have = {component["type"]: component for component in current.get("components") or []}
    actions = []
    for component in components:
        existing = have.get(component["type"])
        if existing is None:
            actions.append(_action("create_offering_component", "add component %s to offering %s"
                                   % (component["type"], label), _component_body(component)))
            continue
        differences = component_differences(component, existing)
        if differences:
            actions.append(_action(
                "update_offering_component", "set component %s of offering %s: %s" % (
                    component["type"], label, ", ".join("%s %r -> %r" % difference for difference in differences)),
                dict(_component_body(component), uuid=existing["uuid"])))
    declared = {component["type"] for component in components}
    kept = []
    for component_type, existing in sorted(have.items()):
        if component_type in declared:
            continue
        if in_use:
            kept.append(existing)  # Waldur refuses: "cannot be removed because it is already used"
            continue
        actions.append(_action("remove_offering_component", "remove component %s (not declared) from offering %s"
                               % (component_type, label), {"uuid": existing["uuid"]}))
    return actions, kept


def kept_components(desired, predicted):
    """The types of the components the offering keeps though the declaration does not name them."""
    declared = {component["type"] for component in desired.get("components") or []}
    return sorted(component["type"] for component in predicted.get("components") or []
                  if component["type"] not in declared)


def lifecycle_refusal(actions, me, offering, allowed_for_provider):
    """Why Waldur would refuse the planned state change to this user, or None when it would not."""
    steps = [action["action"] for action in actions if action["action"] in LIFECYCLE_ACTIONS]
    if not steps or me.get("is_staff") or allowed_for_provider:
        return None
    return ("The declared state needs %s of offering %s, but the token's user %s is not Waldur staff: on a Waldur whose "
            "setting %s is off (its default), only staff may activate, pause or unpause an offering. Nothing was "
            "written. Fix: have a staff user change the state (and declare state: present), or have Waldur's operators "
            "turn %s on, so that CUSTOMER.OWNER of the provider organisation may, and set "
            "allow_service_provider_offering_management: true."
            % (" then ".join(steps), offering_label(offering) if offering else "(to be created)", me.get("username"),
               OFFERING_MANAGEMENT_SETTING, OFFERING_MANAGEMENT_SETTING))


def diff(current, predicted, desired):
    """before/after for Ansible's --diff: only what the module manages, never a secret."""
    option_names = set((desired.get("plugin_options") or {}).keys())
    return {"before": view(current, option_names), "after": view(predicted, option_names)}


# -- talking to Waldur (through a module_utils.waldur.WaldurClient) ------------------------------

def read_offering(client, offering_uuid=None, name=None, customer_uuid=None):
    """The offering by uuid, or by exact name within a customer; None when the name matches none."""
    if offering_uuid:
        try:
            return client.get(OFFERINGS + offering_uuid.replace("-", "") + "/")
        except Exception as error:  # a WaldurError; module_utils.waldur is not imported here to keep this pure
            if getattr(error, "status", None) == 404:
                raise PlanError("No offering with uuid %s is visible to the token's user. Fix: check the uuid, and that "
                                "the user holds a role on the provider organisation." % offering_uuid) from None
            raise
    found = client.list_all(OFFERINGS, {"customer_uuid": customer_uuid, "name_exact": name})
    found = [offering for offering in found if offering.get("name") == name]
    if len(found) > 1:
        raise PlanError("%d offerings are named %r in customer %s: %s. Fix: give the uuid of the one to manage."
                        % (len(found), name, customer_uuid, ", ".join(offering["uuid"] for offering in found)))
    if not found:
        return None
    # The list may be a summary; the detail is what the plan compares against.
    return client.get(OFFERINGS + found[0]["uuid"] + "/")


def dropped_plugin_options(declared, offering):
    """The declared plugin_options that the offering, as Waldur returns it, does not hold."""
    held = offering.get("plugin_options") or {}
    return sorted(name for name, value in (declared or {}).items() if held.get(name, object()) != value)


def offering_in_use(client, offering_uuid):
    """Whether any resource, in any state, belongs to the offering: Waldur then keeps its components."""
    query = {"offering_uuid": offering_uuid, "page_size": 1, "field": "uuid"}
    found = client.get("marketplace-provider-resources/", query)
    return bool(found)


def apply(client, offering_uuid, actions):
    """Send the planned actions in order; returns the offering uuid (new when one was created)."""
    for action in actions:
        if action["action"] == "create":
            created = client.post(OFFERINGS, action["body"], creates=True)
            offering_uuid = created["uuid"]
            continue
        if action["action"] == "create_plan":
            client.post("marketplace-plans/", dict(action["body"], offering=client.url(OFFERINGS + offering_uuid + "/")),
                        creates=True)
            continue
        client.post("%s%s/%s/" % (OFFERINGS, offering_uuid, action["action"]), action["body"])
    return offering_uuid


# -- the contract (docs/waldur_offering.md, "The contract") ------------------------------------------

CONTRACT_CLAUSES = ("offering_active", "billing_plan", "username_generation_policy",
                    "service_provider_can_create_offering_user", "provider_role", "node_component")


def _clause(name, failure):
    return {"clause": name, "ok": failure is None, "message": failure or "holds"}


def check_contract(offering, me, node_component):
    """Every clause of the Site's offering contract, each with ok and a message; reads nothing itself."""
    label = offering_label(offering)
    options = offering.get("plugin_options") or {}
    results = []

    state = offering.get("state")
    results.append(_clause("offering_active", None if state == "Active" else (
        "offering %s is %s, not Active: the Site agent receives no orders for it. Fix: run pharos.hpc.waldur_offering "
        "with state: active, or activate the offering in Waldur." % (label, state))))

    results.append(_clause("billing_plan", None if offering.get("plans") else (
        "offering %s has no billing plan: Waldur accepts no usage report for a resource without a plan (\"Resource "
        "must have a plan to report usage.\") and activates no offering without one. Fix: run "
        "pharos.hpc.waldur_offering with plan_name set, or create a plan for the offering in Waldur." % label)))

    policy = options.get("username_generation_policy")
    if policy == "service_provider":
        failure = None
    elif policy == "identity_claim":
        failure = ("offering %s has username_generation_policy identity_claim: Waldur, not the Site agent, would own "
                   "username generation and the expected POSIX/Slurm member would never be created. Fix: set "
                   "plugin_options.username_generation_policy: service_provider." % label)
    else:
        failure = ("offering %s has username_generation_policy %s, not service_provider: the Site agent's LDAP "
                   "username backend is authoritative only under service_provider. Fix: set "
                   "plugin_options.username_generation_policy: service_provider." % (label, policy or "(unset)"))
    results.append(_clause("username_generation_policy", failure))

    can_create = options.get("service_provider_can_create_offering_user")
    results.append(_clause("service_provider_can_create_offering_user", None if can_create is True else (
        "offering %s has service_provider_can_create_offering_user %s: the Site agent could not create the offering "
        "users it names. Fix: set plugin_options.service_provider_can_create_offering_user: true."
        % (label, "false" if can_create is False else "unset"))))

    results.append(_clause("provider_role", _provider_role_failure(offering, me)))

    expected = desired_component(node_component)
    current = {component.get("type"): component for component in offering.get("components") or []}.get(expected["type"])
    if current is None:
        failure = ("offering %s has no %s component: the Site agent would have nowhere to report node-hours. Fix: run "
                   "playbooks/offering.yml (pharos.hpc.waldur_offering, converge) to add it." % (label, expected["type"]))
    else:
        differences = "; ".join("%s is %r, expected %r" % difference
                                for difference in component_differences(expected, current))
        failure = None if not differences else (
            "the %s component of offering %s differs from the Site's: %s. Fix: run playbooks/offering.yml "
            "(pharos.hpc.waldur_offering, converge) to set it." % (expected["type"], label, differences))
    results.append(_clause("node_component", failure))
    return results


def _provider_role_failure(offering, me):
    """None when the token's user may report dated usage for the offering's resources.

    Waldur checks RESOURCE.SET_USAGE on the offering's customer itself for a dated report
    (ComponentUsageCreateSerializer.validate): a staff user, or CUSTOMER.OWNER of that customer.
    CUSTOMER.MANAGER's role is on the service provider, and an offering manager's on the
    offering: both are refused with HTTP 400.
    """
    customer = offering.get("customer_uuid")
    if me.get("is_staff"):
        return None
    held = []
    for permission in me.get("permissions") or []:
        if permission.get("is_active") is False:
            continue
        role, scope_type = permission.get("role_name"), permission.get("scope_type")
        if role == "CUSTOMER.OWNER" and scope_type == "customer" and _same_uuid(permission.get("scope_uuid"), customer):
            return None
        held.append("%s on %s %s" % (role, scope_type, permission.get("scope_name") or permission.get("scope_uuid")))
    return ("the token's user %s does not hold CUSTOMER.OWNER on the provider organisation %s (%s) (it holds: %s): "
            "Waldur accepts the Site agent's dated usage reports only from a holder of RESOURCE.SET_USAGE on that "
            "organisation itself, and refuses a service provider manager (CUSTOMER.MANAGER) or an offering manager "
            "with HTTP 400 \"Only staff users and service providers can specify date for backfilling.\". Fix: grant "
            "that user CUSTOMER.OWNER on %s." % (me.get("username"), offering.get("customer_name"), customer,
                                                 "; ".join(held) or "no role", offering.get("customer_name")))


def _same_uuid(left, right):
    return bool(left) and bool(right) and str(left).replace("-", "").lower() == str(right).replace("-", "").lower()
