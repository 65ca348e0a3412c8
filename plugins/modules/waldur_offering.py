#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: waldur_offering
short_description: The Site's Waldur offering, its components, and the contract the Site agent relies on
version_added: 0.1.0
description:
  - Finds the provider offering by O(uuid), or by O(name) within the customer O(customer_uuid), and makes its state,
    its plugin_options and its components match the declaration. Creates it when O(allow_create=true).
  - plugin_options are merged into what Waldur holds; keys the declaration does not name are kept.
  - With O(mode=contract) it changes nothing and checks the Site's contract - what the upstream Site agent needs of
    the offering (see C(docs/waldur_offering.md), "The contract"); every failed clause is reported by name in one
    run.
author:
  - Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.waldur
attributes:
  check_mode:
    support: full
    description: Returns exactly the actions and diff a real run would apply, and sends no write to Waldur.
  diff_mode:
    support: full
    description: Shows the state, the declared plugin_options and the components before and after.
options:
  mode:
    description:
      - V(converge) plans and applies the declaration.
      - V(contract) only reads, and fails naming every clause of the Site's contract that does not hold - the
        offering is Active; C(username_generation_policy) is C(service_provider);
        C(service_provider_can_create_offering_user) is true; the token's user holds CUSTOMER.OWNER on the provider
        organisation (Waldur accepts the Site agent's dated usage reports from no other role); the offering has a
        billing plan; the node component matches.
    type: str
    choices: [converge, contract]
    default: converge
  uuid:
    description:
      - UUID of the offering. When given, O(name) and O(customer_uuid) are not used to find it.
    type: str
  name:
    description:
      - Exact name of the offering within O(customer_uuid); the name of a created offering.
    type: str
  customer_uuid:
    description:
      - UUID of the provider organisation (Waldur customer) that owns the offering.
      - Required with O(name) and to create.
    type: str
  state:
    description:
      - V(active) and V(paused) make the offering Active or Paused (a Draft offering is activated first).
      - V(present) leaves its state as it is (a created offering stays Draft).
      - An Archived or Unavailable offering is not revived; the module fails and says so.
    type: str
    choices: [present, active, paused]
    default: active
  paused_reason:
    description:
      - Reason sent when the offering is paused.
    type: str
  allow_service_provider_offering_management:
    description:
      - Whether this Waldur lets the provider organisation's owners change an offering's state. Set it to match
        Waldur's setting C(ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT), which is off by default.
      - While it is false, a declared O(state) that needs C(activate), C(pause) or C(unpause) fails before any write
        unless the token's user is Waldur staff, and the error says who can make the change.
    type: bool
    default: false
  plan_name:
    description:
      - Name of a billing plan to create when the offering has none and the declared O(state) needs it activated.
        Waldur activates no offering without a plan, and accepts no usage report for a resource without one.
      - Omitted, an offering without a plan that must be activated is an error that names the fix.
    type: str
  allow_create:
    description:
      - Create the offering when no offering named O(name) exists in O(customer_uuid).
      - Without it, a missing offering is an error.
    type: bool
    default: false
  type:
    description:
      - Offering type of a created offering; the Site agent serves C(Marketplace.Slurm).
    type: str
    default: Marketplace.Slurm
  category_uuid:
    description:
      - UUID of the marketplace category of a created offering. Required to create.
    type: str
  description:
    description:
      - Description of a created offering.
    type: str
  plugin_options:
    description:
      - plugin_options to set, merged into the offering's current ones.
      - The Site needs C(username_generation_policy=service_provider) and
        C(service_provider_can_create_offering_user=true).
    type: dict
  components:
    description:
      - Every component the offering must have, by C(type). A component of another type is removed, unless the
        offering has resources - Waldur then refuses to remove any component, and the module keeps it and lists it
        in RV(kept_components).
      - When omitted, the Site's one component, C(node) - limit-billed, C(limit_period=total), C(unit_factor=60),
        measured in C(hours), with no C(limit_amount); an order of n node-hours becomes C(GrpTRESMins=node=60n)
        (see C(docs/allocations.md)).
    type: list
    elements: dict
    suboptions:
      type:
        description: Component type; for Slurm, the TRES it maps to.
        type: str
        required: true
      name:
        description: Display name. Defaults to the type.
        type: str
      billing_type:
        description: How Waldur bills it.
        type: str
        choices: [fixed, usage, limit, one, few]
        required: true
      measured_unit:
        description: Unit shown to buyers. Omitted, Waldur stores an empty one.
        type: str
      unit_factor:
        description: Conversion factor Waldur records as metadata; the Site agent converts with its own.
        type: int
        default: 1
      limit_period:
        description: Period a limit covers; V(total) means the order's whole lifetime. Omitted, Waldur stores V(month).
        type: str
        choices: [month, quarterly, annual, total]
      limit_amount:
        description: Limit of the component itself. Omitted means none (an existing one is cleared).
        type: float
      description:
        description: Description. Omitted means not managed.
        type: str
notes:
  - "Run it where httpx is installed, usually the controller with C(delegate_to: localhost)."
  - Waldur has no PUT or PATCH for offerings; the module sends the POST actions C(update_integration),
    C(create_offering_component), C(update_offering_component), C(remove_offering_component), C(activate),
    C(pause) and C(unpause), and creates a plan through C(marketplace-plans).
  - Waldur keeps only the plugin_options it knows; a declared option it drops fails the run by name.
seealso:
  - name: Operator notes
    description: docs/waldur_offering.md in this collection.
    link: https://github.com/pharos-ai-factory/pharos-hpc/blob/main/docs/waldur_offering.md
"""

EXAMPLES = r"""
- name: The Site's offering is Active, with the node component and the Site agent's username policy
  pharos.hpc.waldur_offering:
    api_url: https://waldur.example.org/api/
    token_file: /etc/pharos-hpc/secrets/waldur-token
    ca_file: /etc/pharos-hpc/waldur-ca.pem
    name: Icarus HPC
    customer_uuid: 0e0f4f9a2b2c4c7e9a0d4bd5c4a1f0aa
    plugin_options:
      username_generation_policy: service_provider
      service_provider_can_create_offering_user: true
  delegate_to: localhost

- name: Create it when it does not exist yet, with a plan, and activate it (owners may, on this Waldur)
  pharos.hpc.waldur_offering:
    api_url: https://waldur.example.org/api/
    token_file: /etc/pharos-hpc/secrets/waldur-token
    name: Icarus HPC
    customer_uuid: 0e0f4f9a2b2c4c7e9a0d4bd5c4a1f0aa
    category_uuid: 5b8d2f0c7a1e4c3d9b6a2e1f0c9d8b7a
    allow_create: true
    plan_name: Node-hours
    allow_service_provider_offering_management: true
    plugin_options:
      username_generation_policy: service_provider
      service_provider_can_create_offering_user: true
  delegate_to: localhost

- name: Check the contract before activating the Site agent (reads only)
  pharos.hpc.waldur_offering:
    api_url: https://waldur.example.org/api/
    token_file: /etc/pharos-hpc/secrets/waldur-token
    uuid: 3f2a6c1d9e8b4a7f8c2d1e0f9a8b7c6d
    mode: contract
  delegate_to: localhost
"""

RETURN = r"""
actions:
  description:
    - The actions planned (check mode) or sent, in order; each has C(action) (the Waldur endpoint), C(summary) and
      C(body). Empty when nothing differs, and always empty with O(mode=contract).
  returned: always
  type: list
  elements: dict
  sample:
    - action: update_offering_component
      summary: "set component node of offering Icarus HPC (3f2a...): unit_factor 1 -> 60"
      body: {uuid: 9c1d..., type: node, name: Node-hours, billing_type: limit, unit_factor: 60}
offering:
  description:
    - The offering after the run (predicted in check mode), as the diff shows it - name, uuid (null for one check mode
      would create), state, the declared plugin_options and the components.
  returned: success
  type: dict
contract:
  description: With O(mode=contract), every clause with C(clause), C(ok) and C(message).
  returned: when O(mode=contract)
  type: list
  elements: dict
  sample:
    - clause: offering_active
      ok: true
      message: holds
failed_clauses:
  description: With O(mode=contract), the names of the clauses that do not hold.
  returned: when O(mode=contract)
  type: list
  elements: str
kept_components:
  description: Components not declared that the module did not remove, because resources of the offering exist.
  returned: when O(mode=converge)
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.pharos.hpc.plugins.module_utils.waldur import (
    HAS_HTTPX, HTTPX_IMPORT_ERROR, WALDUR_MUTUALLY_EXCLUSIVE, WALDUR_REQUIRED_ONE_OF, WaldurClient, WaldurError,
    read_token, waldur_argument_spec)
from ansible_collections.pharos.hpc.plugins.module_utils.waldur_offering import (
    LIFECYCLE_ACTIONS, OFFERING_MANAGEMENT_SETTING, SITE_NODE_COMPONENT, PlanError, apply, check_contract, diff,
    dropped_plugin_options, kept_components, lifecycle_refusal, offering_in_use, plan, read_offering, view)

COMPONENT_OPTIONS = dict(
    type=dict(type="str", required=True),
    name=dict(type="str"),
    billing_type=dict(type="str", required=True, choices=["fixed", "usage", "limit", "one", "few"]),
    measured_unit=dict(type="str"),
    unit_factor=dict(type="int", default=1),
    limit_period=dict(type="str", choices=["month", "quarterly", "annual", "total"]),
    limit_amount=dict(type="float"),
    description=dict(type="str"),
)


def argument_spec():
    spec = waldur_argument_spec()
    spec.update(
        mode=dict(type="str", choices=["converge", "contract"], default="converge"),
        uuid=dict(type="str"),
        name=dict(type="str"),
        customer_uuid=dict(type="str"),
        state=dict(type="str", choices=["present", "active", "paused"], default="active"),
        paused_reason=dict(type="str"),
        allow_service_provider_offering_management=dict(type="bool", default=False),
        plan_name=dict(type="str"),
        allow_create=dict(type="bool", default=False),
        type=dict(type="str", default="Marketplace.Slurm"),
        category_uuid=dict(type="str"),
        description=dict(type="str"),
        plugin_options=dict(type="dict"),
        components=dict(type="list", elements="dict", options=COMPONENT_OPTIONS),
    )
    return spec


def desired_from(params, client):
    return {
        "name": params["name"], "customer_uuid": params["customer_uuid"], "state": params["state"],
        "paused_reason": params["paused_reason"], "allow_create": params["allow_create"], "type": params["type"],
        "plan_name": params["plan_name"],
        "description": params["description"], "plugin_options": params["plugin_options"],
        "components": params["components"] if params["components"] is not None else [dict(SITE_NODE_COMPONENT)],
        "category_url": client.url("marketplace-categories/%s/" % params["category_uuid"]) if params["category_uuid"] else None,
        "customer_url": client.url("customers/%s/" % params["customer_uuid"]) if params["customer_uuid"] else None,
    }


def run_contract(module, client, offering, desired):
    if offering is None:
        module.fail_json(msg="No offering named %r in customer %s is visible to the token's user. Fix: give its uuid, "
                         "or correct name and customer_uuid; and grant the user CUSTOMER.OWNER on the provider "
                         "organisation, as Waldur shows a provider's offerings only to roles on it."
                         % (module.params["name"], module.params["customer_uuid"]),
                         actions=[], contract=[], failed_clauses=[])
    node = next((component for component in desired["components"] if component["type"] == "node"), SITE_NODE_COMPONENT)
    clauses = check_contract(offering, client.get("users/me/"), node)
    failed = [clause for clause in clauses if not clause["ok"]]
    result = dict(changed=False, actions=[], contract=clauses, failed_clauses=[clause["clause"] for clause in failed],
                  offering=view(offering, set((desired["plugin_options"] or {}).keys())))
    if failed:
        module.fail_json(msg="The Waldur offering contract does not hold (%d of %d clauses failed): %s"
                         % (len(failed), len(clauses), " | ".join("%s: %s" % (clause["clause"], clause["message"])
                                                                  for clause in failed)), **result)
    module.exit_json(**result)


def run_converge(module, client, current, desired):
    in_use = bool(current) and offering_in_use(client, current["uuid"])
    actions, predicted = plan(desired, current, in_use)
    changes_state = any(action["action"] in LIFECYCLE_ACTIONS for action in actions)
    me = client.get("users/me/") if changes_state else {}
    refusal = lifecycle_refusal(actions, me, current, module.params["allow_service_provider_offering_management"])
    if refusal:
        module.fail_json(msg=refusal, actions=actions)
    option_names = set((desired["plugin_options"] or {}).keys())
    result = dict(changed=bool(actions), actions=actions, diff=diff(current, predicted, desired),
                  offering=view(predicted, option_names), kept_components=kept_components(desired, predicted))
    if module.check_mode or not actions:
        module.exit_json(**result)
    done = []
    offering_uuid = current["uuid"] if current else None
    try:
        for action in actions:
            offering_uuid = apply(client, offering_uuid, [action])
            done.append(action["action"])
    except WaldurError as error:
        hint = ""
        if error.status == 403 and actions[len(done)]["action"] in LIFECYCLE_ACTIONS:
            hint = (" Waldur lets only staff change an offering's state unless its setting %s is on; then "
                    "CUSTOMER.OWNER of the provider organisation may." % OFFERING_MANAGEMENT_SETTING)
        module.fail_json(msg="%s%s (applied before it: %s; a re-run plans from what Waldur then holds and finishes the "
                             "rest)" % (error, hint, ", ".join(done) or "nothing"), actions=actions, applied=done)
    after = client.get("marketplace-provider-offerings/%s/" % offering_uuid)
    result["offering"] = view(after, option_names)
    dropped = dropped_plugin_options(desired["plugin_options"], after)
    if dropped:
        module.fail_json(msg="Waldur did not keep the plugin_options %s of offering %s: it drops options it does not "
                             "know. Fix: remove them from the declaration, or check their names against Waldur's."
                             % (", ".join(dropped), after.get("name")), **result)
    module.exit_json(**result)


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        mutually_exclusive=WALDUR_MUTUALLY_EXCLUSIVE,
        required_one_of=WALDUR_REQUIRED_ONE_OF + [("uuid", "name")],
        required_by={"name": ("customer_uuid",)},
        required_if=[("allow_create", True, ("name", "customer_uuid", "category_uuid"))],
        supports_check_mode=True,
    )
    if not HAS_HTTPX:
        module.fail_json(msg=missing_required_lib("httpx"), exception=HTTPX_IMPORT_ERROR)
    params = module.params
    try:
        token = read_token(params["token"], params["token_file"])
        module.no_log_values.add(token)
        client = WaldurClient(params["api_url"], token, params["ca_file"], params["timeout"], params["retries"])
        desired = desired_from(params, client)
        current = read_offering(client, params["uuid"], params["name"], params["customer_uuid"])
        if params["mode"] == "contract":
            run_contract(module, client, current, desired)
        run_converge(module, client, current, desired)
    except (WaldurError, PlanError) as error:
        module.fail_json(msg=str(error), actions=[])


if __name__ == "__main__":
    main()
