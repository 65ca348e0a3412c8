"""The simulator answers offering calls as Waldur 8.1 does: who may make them, in which order the
checks run, and the exact status and body of each refusal (docs/waldur_offering.md lists the
Mastermind source each answer follows)."""

import ssl

import httpx
import pytest
from conftest import TOKEN

OFFERINGS = "/api/marketplace-provider-offerings/"
OTHER_TOKEN = "0123456789abcdef0123456789abcdef01234567"
STAFF_TOKEN = "5afe5afe5afe5afe5afe5afe5afe5afe5afe5afe"
NODE = {"type": "node", "name": "Node-hours", "billing_type": "limit", "measured_unit": "hours", "unit_factor": 60,
        "limit_period": "total"}


def api(site, token=TOKEN):
    return httpx.Client(base_url=site.waldur.origin, verify=ssl.create_default_context(cafile=str(site.pki.ca_file)),
                        headers={"Authorization": "Token " + token})


@pytest.fixture
def default_waldur(site):
    """Waldur as it ships: only staff may change an offering's state."""
    site.waldur.state.settings["ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT"] = False
    return site


def draft(site, plans=()):
    return site.waldur.add_offering("Icarus HPC", site.customer_uuid, site.category_uuid, state="Draft",
                                    components=[NODE], plans=plans)["uuid"]


def action(site, offering_uuid, name, body=None, token=TOKEN):
    with api(site, token) as client:
        return client.post("%s%s/%s/" % (OFFERINGS, offering_uuid, name), json=body if body is not None else {})


def test_only_staff_may_activate_on_a_default_waldur(default_waldur):
    offering = draft(default_waldur, plans=["Default"])
    refused = action(default_waldur, offering, "activate")
    assert (refused.status_code, refused.json()) == (403, {"detail": "You do not have permission to perform this action."})
    default_waldur.waldur.add_user("staff", STAFF_TOKEN, is_staff=True)
    done = action(default_waldur, offering, "activate", token=STAFF_TOKEN)
    assert (done.status_code, done.json()) == (200, {"detail": "Offering state updated.", "state": "Active"})


def test_the_setting_lets_the_providers_owner_change_state_but_not_a_user_without_a_role(site):
    offering = draft(site, plans=["Default"])
    site.waldur.add_user("nobody", OTHER_TOKEN)
    assert action(site, offering, "activate", token=OTHER_TOKEN).status_code == 404  # not even visible
    assert action(site, offering, "activate").json()["state"] == "Active"


def test_an_offering_without_a_plan_is_not_activated(site):
    offering = draft(site)
    refused = action(site, offering, "activate")
    assert (refused.status_code, refused.json()) == (400, ["Offering does not have any billing plans."])
    assert site.waldur.state.offerings[offering]["state"] == "Draft"


def test_a_bad_state_transition_is_a_400_not_a_409(site):
    offering = draft(site, plans=["Default"])
    refused = action(site, offering, "pause")
    assert (refused.status_code, refused.json()) == (400, ["Offering state is invalid."])


def test_update_integration_merges_plugin_options_key_by_key_and_drops_unknown_keys(site):
    offering = draft(site)
    site.waldur.state.offerings[offering]["plugin_options"] = {"homedir_prefix": "/home/"}
    answer = action(site, offering, "update_integration",
                    {"plugin_options": {"username_generation_policy": "service_provider", "no_such_option": 1}})
    assert answer.status_code == 200
    assert site.waldur.state.offerings[offering]["plugin_options"] == {
        "homedir_prefix": "/home/", "username_generation_policy": "service_provider"}


def test_only_staff_change_the_list_of_disabled_resource_actions(site):
    """OfferingIntegrationUpdateSerializer.validate: a changed list from anyone but staff is a 400;
    the list as it stands passes."""
    offering = draft(site)
    site.waldur.state.offerings[offering]["plugin_options"] = {"disabled_resource_actions": ["set_limits"]}
    refused = action(site, offering, "update_integration", {"plugin_options": {"disabled_resource_actions": []}})
    assert (refused.status_code, refused.json()) == (
        400, {"plugin_options": ["Only staff can change list of disabled actions."]})
    same = action(site, offering, "update_integration",
                  {"plugin_options": {"disabled_resource_actions": ["set_limits"], "homedir_prefix": "/x/"}})
    assert same.status_code == 200
    site.waldur.add_user("staff", STAFF_TOKEN, is_staff=True)
    assert action(site, offering, "update_integration", {"plugin_options": {"disabled_resource_actions": []}},
                  token=STAFF_TOKEN).status_code == 200
    assert site.waldur.state.offerings[offering]["plugin_options"] == {
        "disabled_resource_actions": [], "homedir_prefix": "/x/"}


def test_a_component_in_use_is_not_removed(site):
    offering = draft(site)
    site.waldur.add_resource(offering, "alloc one")
    component = site.waldur.state.offerings[offering]["components"][0]["uuid"]
    refused = action(site, offering, "remove_offering_component", {"uuid": component})
    assert (refused.status_code, refused.json()) == (
        400, {"details": "The component Node-hours cannot be removed because it is already used"})


def test_an_unknown_component_is_an_empty_404(site):
    offering = draft(site)
    for name, body in (("update_offering_component", dict(NODE, uuid="0" * 32)),
                       ("remove_offering_component", {"uuid": "0" * 32})):
        answer = action(site, offering, name, body)
        assert (answer.status_code, answer.content) == (404, b"")


def test_a_null_measured_unit_is_refused_and_an_omitted_limit_period_is_stored_as_month(site):
    offering = draft(site)
    refused = action(site, offering, "create_offering_component", {"type": "cpu", "name": "CPU", "billing_type": "usage",
                                                                   "measured_unit": None})
    assert (refused.status_code, refused.json()) == (400, {"measured_unit": ["This field may not be null."]})
    created = action(site, offering, "create_offering_component", {"type": "cpu", "name": "CPU", "billing_type": "usage"})
    assert (created.status_code, created.content) == (201, b"")
    cpu = [c for c in site.waldur.state.offerings[offering]["components"] if c["type"] == "cpu"][0]
    assert (cpu["limit_period"], cpu["measured_unit"]) == ("month", "")


def test_a_token_without_a_role_may_not_change_integration_or_components(site):
    offering = draft(site)
    site.waldur.add_user("manager elsewhere", OTHER_TOKEN)
    other_customer = site.waldur.add_customer("Elsewhere")
    site.waldur.grant(site.waldur.state.tokens[OTHER_TOKEN], "CUSTOMER.OWNER", "customer", other_customer)
    for name, body in (("update_integration", {"plugin_options": {"homedir_prefix": "/x/"}}),
                       ("create_offering_component", {"type": "cpu", "name": "CPU", "billing_type": "usage"})):
        # The offering is visible to no one outside its provider, as Waldur filters the queryset first.
        assert action(site, offering, name, body, token=OTHER_TOKEN).status_code == 404


def test_an_offering_manager_may_change_integration_but_not_state(site):
    offering = draft(site, plans=["Default"])
    manager = site.waldur.add_user("offering manager", OTHER_TOKEN)
    site.waldur.grant(manager, "OFFERING.MANAGER", "offering", offering, customer_uuid=site.customer_uuid)
    assert action(site, offering, "update_integration", {"plugin_options": {"homedir_prefix": "/x/"}},
                  token=OTHER_TOKEN).status_code == 200
    assert action(site, offering, "activate", token=OTHER_TOKEN).status_code == 403  # OFFERING.CREATE it lacks


def test_an_archived_offering_takes_no_update(site):
    offering = draft(site)
    site.waldur.state.offerings[offering]["state"] = "Archived"
    refused = action(site, offering, "update_integration", {"plugin_options": {"homedir_prefix": "/x/"}})
    assert (refused.status_code, refused.json()) == (400, ["It is not possible to update archived offering."])


def test_an_offering_is_created_only_by_an_owner_of_a_customer_that_is_a_service_provider(site):
    plain = site.waldur.add_customer("Not a provider")
    site.waldur.grant(site.user_uuid, "CUSTOMER.OWNER", "customer", plain)
    body = {"name": "x", "type": "Marketplace.Slurm", "category": site.waldur.api_url + "marketplace-categories/%s/"
            % site.category_uuid}
    with api(site) as client:
        refused = client.post(OFFERINGS, json=dict(body, customer=site.waldur.api_url + "customers/%s/" % plain))
        assert (refused.status_code, refused.json()) == (400, {"customer": ["Customer should be a service provider."]})
        site.waldur.add_user("nobody", OTHER_TOKEN)
    with api(site, OTHER_TOKEN) as client:
        forbidden = client.post(OFFERINGS, json=dict(body, customer=site.waldur.api_url + "customers/%s/"
                                                     % site.customer_uuid))
        assert forbidden.status_code == 403


def test_users_me_lists_only_active_roles(site):
    site.waldur.grant(site.user_uuid, "CUSTOMER.OWNER", "customer", site.waldur.add_customer("Expired"), is_active=False)
    with api(site) as client:
        roles = client.get("/api/users/me/").json()["permissions"]
    assert [role["scope_uuid"] for role in roles] == [site.customer_uuid]


@pytest.mark.parametrize("name, body", [("update_overview", {"name": "Icarus HPC, renamed"}),
                                        ("update_type", {"type": "Marketplace.Basic"})])
def test_what_an_offering_is_changes_past_draft_only_for_staff_on_a_default_waldur(default_waldur, name, body):
    """marketplace.views.can_update_offering: Draft, or staff, or the setting."""
    offering = draft(default_waldur, plans=["Default"])
    assert action(default_waldur, offering, name, body).status_code == 200
    default_waldur.waldur.state.offerings[offering]["state"] = "Active"
    refused = action(default_waldur, offering, name, body)
    assert (refused.status_code, refused.json()) == (403, {"detail": "You do not have permission to perform this action."})
    default_waldur.waldur.add_user("staff", STAFF_TOKEN, is_staff=True)
    assert action(default_waldur, offering, name, body, token=STAFF_TOKEN).status_code == 200
    default_waldur.waldur.state.settings["ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT"] = True
    assert action(default_waldur, offering, name, body).status_code == 200


def test_the_integration_of_an_active_offering_is_still_the_owners_to_change(default_waldur):
    offering = draft(default_waldur, plans=["Default"])
    default_waldur.waldur.state.offerings[offering]["state"] = "Active"
    changed = action(default_waldur, offering, "update_integration", {"plugin_options": {"auto_approve_in_service_provider_projects": True}})
    assert changed.status_code == 200


def test_an_update_answers_200_with_an_empty_body(site):
    # views.ProviderOfferingViewSet._update_action: Response(status=HTTP_200_OK), no data.
    offering = draft(site)
    answer = action(site, offering, "update_overview", {"name": "Icarus HPC nodes"})
    assert (answer.status_code, answer.content) == (200, b"")
    assert site.waldur.state.offerings[offering]["name"] == "Icarus HPC nodes"


def test_a_field_the_serializer_does_not_declare_is_ignored_as_drf_ignores_it(site):
    offering = draft(site)
    answer = action(site, offering, "update_overview", {"name": "Icarus HPC nodes", "no_such_field": 1})
    assert answer.status_code == 200
    assert site.waldur.state.offerings[offering]["name"] == "Icarus HPC nodes"
    assert "no_such_field" not in site.waldur.state.offerings[offering]


def test_a_component_update_without_a_uuid_is_refused_before_its_fields_are_read(site):
    # views.update_offering_component: no uuid is a 400 with "details", whatever else the body holds.
    offering = draft(site)
    refused = action(site, offering, "update_offering_component", {"name": "Node-hours"})
    assert (refused.status_code, refused.json()) == (400, {"details": "UUID for offering component was not provided."})


def test_a_component_update_is_partial(site):
    # The serializer runs with partial=True: a body with the uuid and one field changes that field alone.
    offering = draft(site)
    component = site.waldur.state.offerings[offering]["components"][0]
    answer = action(site, offering, "update_offering_component", {"uuid": component["uuid"], "unit_factor": 30})
    assert answer.status_code == 200, answer.text
    assert (component["unit_factor"], component["type"], component["billing_type"]) == (30, "node", "limit")
