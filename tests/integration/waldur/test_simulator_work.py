"""The Site's work in the simulator, driven through waldur-api-client as the Site agent drives it:
orders from pending-provider to done, resources and their teams, offering users' states, and
usage reports, each refusal with Waldur's status and body. Results are read from the
simulator's state, not from what the client was told."""

import datetime
import ssl

import httpx
import pytest
from conftest import TOKEN
from waldur_api_client import AuthenticatedClient
from waldur_api_client.api.marketplace_component_usages import (
    marketplace_component_usages_list, marketplace_component_usages_set_usage, marketplace_component_usages_set_user_usages)
from waldur_api_client.api.marketplace_component_user_usages import marketplace_component_user_usages_list
from waldur_api_client.api.marketplace_offering_users import (
    marketplace_offering_users_begin_creating, marketplace_offering_users_list, marketplace_offering_users_partial_update,
    marketplace_offering_users_retrieve, marketplace_offering_users_set_pending_additional_validation,
    marketplace_offering_users_set_validation_complete)
from waldur_api_client.api.marketplace_orders import (
    marketplace_orders_approve_by_provider, marketplace_orders_list, marketplace_orders_retrieve,
    marketplace_orders_set_backend_id, marketplace_orders_set_state_done)
from waldur_api_client.api.marketplace_plans import marketplace_plans_retrieve
from waldur_api_client.api.marketplace_provider_offerings import marketplace_provider_offerings_check_unique_backend_id
from waldur_api_client.api.marketplace_provider_resources import (
    marketplace_provider_resources_retrieve, marketplace_provider_resources_set_as_erred,
    marketplace_provider_resources_set_backend_id, marketplace_provider_resources_set_endpoints,
    marketplace_provider_resources_set_limits, marketplace_provider_resources_set_membership_sync_statuses,
    marketplace_provider_resources_team_list)
from waldur_api_client.api.users import users_me_retrieve
from waldur_api_client.api.marketplace_service_providers import (
    marketplace_service_providers_keys_list, marketplace_service_providers_projects_list)
from waldur_api_client.models import (
    CheckUniqueBackendIDRequest, ComponentUsageCreateRequest, ComponentUsageItemRequest,
    ComponentUserUsageBulkCreateRequest, ComponentUserUsageCreateRequest, MemberSyncStatusReportRequest,
    OfferingUserState, OfferingUserStateTransitionRequest, OrderApproveByProviderRequest, OrderBackendIDRequest,
    OrderState, PatchedOfferingUserRequest, ResourceBackendIDRequest, ResourceEndpointRequest, ResourceEndpointsRequest,
    ResourceSetLimitsRequest, ResourceSetLimitsRequestLimits, ResourceSetStateErredRequest, ResourceState, UserMe)

OFFERING = "ab" * 16
MANAGER_TOKEN = "0123456789abcdef0123456789abcdef01234567"
NODE = {"type": "node", "name": "Node-hours", "billing_type": "limit", "measured_unit": "hours", "unit_factor": 60,
        "limit_period": "total"}
SITE_OPTIONS = {"username_generation_policy": "service_provider", "service_provider_can_create_offering_user": True}


class Work:
    """An Active offering of the Site, a consumer's project with two members, and one pending order."""

    def __init__(self, site):
        self.site, self.waldur = site, site.waldur
        self.waldur.add_offering("Icarus HPC", site.customer_uuid, site.category_uuid, offering_uuid=OFFERING,
                                 components=[NODE], plugin_options=SITE_OPTIONS)
        consumer = self.waldur.add_customer("University")
        self.alice = self.waldur.add_user("alice", "a" * 40)
        self.bob = self.waldur.add_user("bob", "b" * 40)
        self.project = self.waldur.add_project("Climate runs", consumer,
                                               [(self.alice, "PROJECT.MANAGER"), (self.bob, "PROJECT.MEMBER")])
        self.order = self.waldur.add_order(OFFERING, self.project, "Climate 2026", {"node": 10})
        self.resource = self.waldur.state.orders[self.order]["marketplace_resource_uuid"]

    def client(self, token=TOKEN):
        return AuthenticatedClient(base_url=self.waldur.origin, token=token,
                                   verify_ssl=ssl.create_default_context(cafile=str(self.site.pki.ca_file)))

    def raw(self, method, path, token=TOKEN, **kwargs):
        with httpx.Client(base_url=self.waldur.origin, headers={"Authorization": "Token " + token},
                          verify=ssl.create_default_context(cafile=str(self.site.pki.ca_file))) as client:
            return client.request(method, path, **kwargs)

    def grant_manager(self, role, scope_type, scope_uuid):
        manager = self.waldur.add_user("manager", MANAGER_TOKEN)
        self.waldur.grant(manager, role, scope_type, scope_uuid, customer_uuid=self.site.customer_uuid)
        return manager


@pytest.fixture
def work(site):
    return Work(site)


def test_an_order_goes_from_pending_provider_to_done_with_its_backend_id_and_limits(work):
    client = work.client()
    (pending,) = marketplace_orders_list.sync(client=client, offering_uuid=OFFERING, state=[OrderState.PENDING_PROVIDER])
    approved = marketplace_orders_approve_by_provider.sync(uuid=pending.uuid.hex, client=client,
                                                           body=OrderApproveByProviderRequest())
    assert approved.detail == "Order has been approved and is being processed."
    assert marketplace_orders_retrieve.sync(uuid=pending.uuid.hex, client=client).state.value == "executing"
    resource = marketplace_provider_resources_retrieve.sync(uuid=work.resource, client=client)
    assert (resource.slug, resource.project_slug, resource.state.value) == ("climate-2026", "climate-runs", "Creating")
    marketplace_provider_resources_set_backend_id.sync(uuid=work.resource, client=client,
                                                       body=ResourceBackendIDRequest(backend_id="pharos_a_climate-2026"))
    limits = ResourceSetLimitsRequestLimits.from_dict({"node": 10})
    marketplace_provider_resources_set_limits.sync(uuid=work.resource, client=client,
                                                   body=ResourceSetLimitsRequest(limits=limits))
    done = marketplace_orders_set_state_done.sync_detailed(uuid=pending.uuid.hex, client=client)
    assert done.status_code == 200

    order, stored = work.waldur.state.orders[work.order], work.waldur.state.resources[work.resource]
    assert order["state"] == "done"
    assert (stored["state"], stored["backend_id"], stored["limits"]) == ("OK", "pharos_a_climate-2026", {"node": 10})


def test_an_order_is_approved_once_and_done_only_when_executing(work):
    path = "/api/marketplace-orders/%s/" % work.order
    assert work.raw("POST", path + "set_state_done/").json() == {"detail": "Valid states for operation: executing."}
    assert work.raw("POST", path + "approve_by_provider/", json={}).status_code == 200
    again = work.raw("POST", path + "approve_by_provider/", json={})
    assert (again.status_code, again.json()) == (409, {"detail": "Valid states for operation: pending-provider."})


def test_an_offering_manager_may_finish_an_order_but_not_approve_it(work):
    work.grant_manager("OFFERING.MANAGER", "offering", OFFERING)
    path = "/api/marketplace-orders/%s/" % work.order
    assert work.raw("POST", path + "approve_by_provider/", token=MANAGER_TOKEN, json={}).status_code == 403
    assert work.raw("POST", path + "approve_by_provider/", json={}).status_code == 200
    assert work.raw("POST", path + "set_state_done/", token=MANAGER_TOKEN).status_code == 200


def test_the_providers_approval_merges_its_attributes_into_the_order(work):
    path = "/api/marketplace-orders/%s/" % work.order
    approved = work.raw("POST", path + "approve_by_provider/", json={"attributes": {"partition": "batch"}})
    assert approved.status_code == 200
    assert work.waldur.state.orders[work.order]["attributes"] == {"name": "Climate 2026", "partition": "batch"}


def test_an_order_action_its_offering_type_does_not_serve_is_405_after_the_state_check(work):
    """OrderViewSet's OfferingTypeValidator: set_state_erred serves site agent offerings alone,
    set_state_done also basic and support ones; the state is checked first (409)."""
    basic = work.waldur.add_offering("Consulting", work.site.customer_uuid, work.site.category_uuid,
                                     offering_type="Marketplace.Basic", components=[NODE])["uuid"]
    order = work.waldur.add_order(basic, work.project, "Advice", {"node": 1})
    path = "/api/marketplace-orders/%s/" % order
    assert work.raw("POST", path + "set_state_done/").status_code == 409
    assert work.raw("POST", path + "approve_by_provider/", json={}).status_code == 200
    erred = work.raw("POST", path + "set_state_erred/", json={"error_message": "x"})
    assert (erred.status_code, erred.json()) == (405, {"detail": 'Method "The order\'s offering with Marketplace.Basic '
                                                                 'type does not support this action" not allowed.'})
    assert work.waldur.state.orders[order]["state"] == "executing"
    assert work.raw("POST", path + "set_state_done/").status_code == 200


def test_an_erred_create_order_ends_its_resource_and_keeps_the_message(work):
    path = "/api/marketplace-orders/%s/" % work.order
    work.raw("POST", path + "approve_by_provider/", json={})
    erred = work.raw("POST", path.replace(work.order, _dashed(work.order)) + "set_state_erred/",
                     json={"error_message": "sacctmgr: account exists", "error_traceback": "Traceback ..."})
    assert erred.status_code == 200
    order = work.waldur.state.orders[work.order]
    assert (order["state"], order["error_message"]) == ("erred", "sacctmgr: account exists")
    assert work.waldur.state.resources[work.resource]["state"] == "Terminated"  # it had no backend id yet
    # BaseOrderSerializer.get_fields hides the traceback from everyone but staff and support.
    shown = work.raw("GET", path).json()
    assert shown["error_message"] == "sacctmgr: account exists" and "error_traceback" not in shown
    listed = work.raw("GET", "/api/marketplace-orders/").json()
    assert listed and all("error_traceback" not in order for order in listed)
    work.waldur.add_user("staff", "5" * 40, is_staff=True)
    assert work.raw("GET", path, token="5" * 40).json()["error_traceback"] == "Traceback ..."


def test_a_rejected_order_terminates_its_new_resource(work):
    rejected = work.raw("POST", "/api/marketplace-orders/%s/reject_by_provider/" % work.order, json={})
    assert rejected.status_code == 200
    assert work.waldur.state.resources[work.resource]["state"] == "Terminated"


def test_a_resource_team_lists_the_projects_members_with_their_offering_users(work):
    work.waldur.add_offering_user(OFFERING, work.alice, username="alice01")
    team = marketplace_provider_resources_team_list.sync(uuid=work.resource, client=work.client())
    members = {member.username: (member.role, member.offering_user_username, member.offering_user_state)
               for member in team}
    assert members["alice"][:2] == ("PROJECT.MANAGER", "alice01") and members["alice"][2].value == "OK"
    assert members["bob"] == ("PROJECT.MEMBER", None, None)


def test_set_limits_refuses_a_component_the_offering_does_not_have(work):
    answer = work.raw("POST", "/api/marketplace-provider-resources/%s/set_limits/" % work.resource,
                      json={"limits": {"gpu": 1}})
    assert (answer.status_code, answer.json()) == (400, {"limits": "Unknown component types: gpu"})


def test_an_offering_user_moves_through_waldurs_states(work):
    client = work.client()
    offering_user = work.waldur.add_offering_user(OFFERING, work.bob)
    assert marketplace_offering_users_begin_creating.sync_detailed(uuid=offering_user, client=client).status_code == 200
    again = work.raw("POST", "/api/marketplace-offering-users/%s/begin_creating/" % _dashed(offering_user))
    assert (again.status_code, again.json()) == (400, {"detail": "Cannot transition to CREATING from current state: 2. "
                                                                 "Valid states for operation: Requested, Error creating."})
    patched = marketplace_offering_users_partial_update.sync(uuid=offering_user, client=client,
                                                             body=PatchedOfferingUserRequest(username="bob01"))
    assert patched.username == "bob01"
    assert work.waldur.state.offering_users[offering_user]["state"] == "OK"  # a username completes creation
    listed = marketplace_offering_users_list.sync(client=client, offering_uuid=[OFFERING], state=[OfferingUserState.OK])
    assert [item.username for item in listed] == ["bob01"]


def test_offering_users_are_hidden_where_the_provider_may_not_create_them(work):
    work.waldur.add_offering_user(OFFERING, work.bob)
    assert len(marketplace_offering_users_list.sync(client=work.client(), offering_uuid=[OFFERING])) == 1
    work.waldur.state.offerings[OFFERING]["plugin_options"]["service_provider_can_create_offering_user"] = False
    assert marketplace_offering_users_list.sync(client=work.client(), offering_uuid=[OFFERING]) == []


def _finished(work):
    work.raw("POST", "/api/marketplace-orders/%s/approve_by_provider/" % work.order, json={})
    work.raw("POST", "/api/marketplace-orders/%s/set_state_done/" % work.order)


def _dated_report(hours, date=None):
    date = date or datetime.datetime.now(datetime.timezone.utc).replace(day=1, hour=0, minute=0, second=0,
                                                                        microsecond=0)
    return ComponentUsageCreateRequest(usages=[ComponentUsageItemRequest(type_="node", amount=str(hours))],
                                       resource=None, date=date)


def test_a_dated_usage_report_from_the_providers_owner_is_stored_for_its_month(work):
    _finished(work)
    body = _dated_report(12.5)
    body.resource = work.resource
    answer = marketplace_component_usages_set_usage.sync_detailed(client=work.client(), body=body)
    assert answer.status_code == 201
    (usage,) = work.waldur.state.component_usages.values()
    assert (usage["type"], usage["usage"], usage["billing_period"]) == (
        "node", "12.50", body.date.date().replace(day=1).isoformat())
    listed = marketplace_component_usages_list.sync(client=work.client(), resource_uuid=work.resource)
    assert [item.usage for item in listed] == ["12.50"]
    users = ComponentUserUsageBulkCreateRequest(usages=[ComponentUserUsageCreateRequest(username="alice01", usage="12.5")])
    per_user = marketplace_component_usages_set_user_usages.sync_detailed(uuid=usage["uuid"], client=work.client(),
                                                                          body=users)
    assert per_user.status_code == 201
    (read,) = marketplace_component_user_usages_list.sync(client=work.client(), resource_uuid=work.resource,
                                                          component_usage_billing_period=datetime.date.fromisoformat(usage["billing_period"]))
    assert (read.username, read.usage, read.component_type) == ("alice01", "12.50", "node")


def test_user_usages_land_in_their_own_dates_month_and_a_total_left_at_zero_becomes_their_sum(work):
    """ComponentUsageViewSet.set_user_usages: an item dated in an earlier month goes to that month's
    usage, made at zero if there is none; _sync_component_usage_total then sets a zero total to the
    sum of its users' usages, and leaves a reported total alone."""
    _finished(work)
    body = _dated_report(0)
    body.resource = work.resource
    assert marketplace_component_usages_set_usage.sync_detailed(client=work.client(), body=body).status_code == 201
    (current,) = work.waldur.state.component_usages.values()
    earlier = datetime.datetime.fromisoformat(current["billing_period"]) - datetime.timedelta(days=3)
    users = ComponentUserUsageBulkCreateRequest(usages=[
        ComponentUserUsageCreateRequest(username="alice01", usage="2.5"),
        ComponentUserUsageCreateRequest(username="bob01", usage="1.5"),
        ComponentUserUsageCreateRequest(username="alice01", usage="4", date=earlier.replace(tzinfo=datetime.timezone.utc))])
    answer = marketplace_component_usages_set_user_usages.sync_detailed(uuid=current["uuid"], client=work.client(), body=users)
    assert answer.status_code == 201
    by_period = {usage["billing_period"]: usage for usage in work.waldur.state.component_usages.values()}
    backfilled = by_period[earlier.date().replace(day=1).isoformat()]
    assert (current["usage"], sorted(current["user_usages"])) == ("4.00", ["alice01", "bob01"])
    assert (backfilled["usage"], sorted(backfilled["user_usages"]), backfilled["description"]) == (
        "4.00", ["alice01"], "Created for user usage backfill")
    body = _dated_report(9)
    body.resource = work.resource
    marketplace_component_usages_set_usage.sync_detailed(client=work.client(), body=body)
    marketplace_component_usages_set_user_usages.sync_detailed(uuid=current["uuid"], client=work.client(), body=users)
    assert current["usage"] == "9.00"


def test_a_dated_usage_report_from_a_service_provider_manager_is_refused(work):
    """Mastermind's marketplace/views.py, ComponentUsageViewSet.set_usage (commit d0aee6b6, within
    the 8.1.3 client's API): the serializer validates first (a date from a user who is not the
    provider is a 400), then `if not has_permission(request, PermissionEnum.SET_RESOURCE_USAGE,
    resource.offering.customer) and not has_permission(request, PermissionEnum.SET_RESOURCE_USAGE,
    resource.offering): raise PermissionDenied()`. CUSTOMER.MANAGER's role is on the service
    provider, neither of those scopes: 403 without a date."""
    _finished(work)
    work.grant_manager("CUSTOMER.MANAGER", "service_provider", work.site.provider_uuid)
    body = _dated_report(3).to_dict()
    body["resource"] = work.resource
    refused = work.raw("POST", "/api/marketplace-component-usages/set_usage/", token=MANAGER_TOKEN, json=body)
    assert (refused.status_code, refused.json()) == (
        400, {"date": ["Only staff users and service providers can specify date for backfilling."]})
    undated = dict(body)
    del undated["date"]
    assert work.raw("POST", "/api/marketplace-component-usages/set_usage/", token=MANAGER_TOKEN,
                    json=undated).status_code == 403
    assert work.waldur.state.component_usages == {}


def test_an_offering_manager_reports_usage_only_without_a_date(work):
    _finished(work)
    work.grant_manager("OFFERING.MANAGER", "offering", OFFERING)
    body = _dated_report(3).to_dict()
    body["resource"] = work.resource
    assert work.raw("POST", "/api/marketplace-component-usages/set_usage/", token=MANAGER_TOKEN,
                    json=body).status_code == 400
    del body["date"]
    assert work.raw("POST", "/api/marketplace-component-usages/set_usage/", token=MANAGER_TOKEN,
                    json=body).status_code == 201


@pytest.mark.parametrize(("make", "expected"), [
    (lambda work: work.waldur.state.resources[work.resource].update(plan_uuid=None),
     {"resource": ["Resource must have a plan to report usage."]}),
    (lambda work: work.waldur.state.resources[work.resource].update(state="Creating"),
     {"resource": ["Resource is not in valid state."]}),
], ids=["no plan", "not OK"])
def test_usage_for_a_resource_waldur_cannot_bill_is_refused(work, make, expected):
    _finished(work)
    make(work)
    body = _dated_report(1).to_dict()
    body["resource"] = work.resource
    refused = work.raw("POST", "/api/marketplace-component-usages/set_usage/", json=body)
    assert (refused.status_code, refused.json()) == (400, expected)


def test_the_service_provider_lists_its_projects_and_their_members_keys_for_its_owner_only(work):
    work.waldur.add_ssh_key(work.alice, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDq alice@laptop")
    provider = work.site.provider_uuid
    projects = marketplace_service_providers_projects_list.sync(service_provider_uuid=provider, client=work.client())
    assert [project.slug for project in projects] == ["climate-runs"]
    keys = marketplace_service_providers_keys_list.sync(service_provider_uuid=provider, client=work.client())
    assert [key.public_key.split()[-1] for key in keys] == ["alice@laptop"]
    work.grant_manager("CUSTOMER.MANAGER", "service_provider", provider)
    assert work.raw("GET", "/api/marketplace-service-providers/%s/projects/" % provider,
                    token=MANAGER_TOKEN).status_code == 403


def _dashed(hex_uuid):
    return "%s-%s-%s-%s-%s" % (hex_uuid[:8], hex_uuid[8:12], hex_uuid[12:16], hex_uuid[16:20], hex_uuid[20:])


STAFF_TOKEN = "5" * 40


def _staff(work):
    work.waldur.add_user("staff", STAFF_TOKEN, is_staff=True)


def test_terminating_an_allocation_puts_a_terminate_order_before_the_provider(work):
    _finished(work)
    _staff(work)
    answer = work.raw("POST", "/api/marketplace-resources/%s/terminate/" % work.resource, token=STAFF_TOKEN, json={})
    assert answer.status_code == 200
    order = work.waldur.state.orders[answer.json()["order_uuid"]]
    assert (order["type"], order["state"], order["marketplace_resource_uuid"]) == (
        "Terminate", "pending-provider", work.resource)
    assert work.waldur.state.resources[work.resource]["state"] == "Terminating"
    again = work.raw("POST", "/api/marketplace-resources/%s/terminate/" % work.resource, token=STAFF_TOKEN, json={})
    assert (again.status_code, again.json()) == (409, {"detail": "Valid states for operation: OK, Erred."})


def test_an_allocation_of_an_unavailable_offering_is_not_terminated(work):
    _finished(work)
    _staff(work)
    work.waldur.state.offerings[OFFERING]["state"] = "Unavailable"
    refused = work.raw("POST", "/api/marketplace-resources/%s/terminate/" % work.resource, token=STAFF_TOKEN, json={})
    assert (refused.status_code, refused.json()) == (400, ["Offering is unavailable."])
    assert [order["type"] for order in work.waldur.state.orders.values()] == ["Create"]


def test_a_member_who_leaves_the_project_leaves_its_resources_team(work):
    _finished(work)
    _staff(work)
    provider_only = work.raw("POST", "/api/projects/%s/delete_user/" % work.project,
                             json={"user": work.bob, "role": "PROJECT.MEMBER"})
    assert provider_only.status_code == 403
    left = work.raw("POST", "/api/projects/%s/delete_user/" % work.project, token=STAFF_TOKEN,
                    json={"user": work.bob, "role": "PROJECT.MEMBER"})
    assert left.status_code == 200
    team = marketplace_provider_resources_team_list.sync(uuid=work.resource, client=work.client())
    assert [member.username for member in team] == ["alice"]


# The Site agent's side paths (waldur-site-agent 1.0.8rc9), each read back through the
# waldur-api-client 8.1.3 function the agent calls, which parses the answer with its model.
def test_a_pending_offering_user_gets_its_account_once_validation_completes(work):
    client = work.client()
    offering_user = work.waldur.add_offering_user(OFFERING, work.bob)
    marketplace_offering_users_begin_creating.sync_detailed(uuid=offering_user, client=client)
    pending = marketplace_offering_users_set_pending_additional_validation.sync_detailed(
        uuid=offering_user, client=client,
        body=OfferingUserStateTransitionRequest(comment="Sign the usage policy", comment_url="https://site.example/aup"))
    assert pending.status_code == 200
    shown = marketplace_offering_users_retrieve.sync(uuid=offering_user, client=client)
    assert (shown.state, shown.service_provider_comment) == (OfferingUserState.PENDING_ADDITIONAL_VALIDATION,
                                                             "Sign the usage policy")
    assert marketplace_offering_users_set_validation_complete.sync_detailed(uuid=offering_user,
                                                                            client=client).status_code == 200
    shown = marketplace_offering_users_retrieve.sync(uuid=offering_user, client=client)
    assert (shown.state, shown.service_provider_comment) == (OfferingUserState.OK, "")
    again = work.raw("POST", "/api/marketplace-offering-users/%s/set_validation_complete/" % offering_user)
    assert (again.status_code, again.json()) == (400, {"detail": "Cannot transition to OK from current state: 5. Valid "
                                                                 "states for operation: Pending account linking, Pending "
                                                                 "additional validation."})


def test_offering_users_are_listed_by_their_providing_organisation(work):
    """What the ldap plugin asks before it releases a departed user's entry: the user's offering
    users at the same provider, by the offering user's customer_uuid (_live_account_elsewhere)."""
    work.waldur.add_offering_user(OFFERING, work.bob)
    client = work.client()
    (found,) = marketplace_offering_users_list.sync(client=client, user_uuid=work.bob,
                                                    provider_uuid=work.site.customer_uuid)
    assert found.customer_uuid.hex == work.site.customer_uuid
    assert marketplace_offering_users_list.sync(client=client, provider_uuid=work.site.provider_uuid) == []


def test_a_resource_set_as_erred_keeps_the_message_and_a_service_provider_manager_may_not(work):
    work.grant_manager("CUSTOMER.MANAGER", "service_provider", work.site.provider_uuid)
    path = "/api/marketplace-provider-resources/%s/set_as_erred/" % work.resource
    assert work.raw("POST", path, token=MANAGER_TOKEN, json={}).status_code == 403
    erred = marketplace_provider_resources_set_as_erred.sync_detailed(
        uuid=work.resource, client=work.client(),
        body=ResourceSetStateErredRequest(error_message="sacctmgr: connection refused"))
    assert erred.status_code == 200
    resource = marketplace_provider_resources_retrieve.sync(uuid=work.resource, client=work.client())
    assert (resource.state, resource.error_message) == (ResourceState.ERRED, "sacctmgr: connection refused")


def test_a_resources_endpoints_are_replaced_as_a_whole(work):
    client = work.client()
    for names in (["login", "docs"], ["login"]):
        answer = marketplace_provider_resources_set_endpoints.sync_detailed(
            uuid=work.resource, client=client,
            body=ResourceEndpointsRequest(endpoints=[ResourceEndpointRequest(name=name, url="https://%s.example" % name)
                                                     for name in names]))
        assert answer.status_code == 200
    resource = marketplace_provider_resources_retrieve.sync(uuid=work.resource, client=client)
    assert [(endpoint.name, endpoint.url) for endpoint in resource.endpoints] == [("login", "https://login.example")]


def test_membership_sync_statuses_are_refused_unless_the_offering_enables_them(work):
    body = {"statuses": [{"username": "bob01", "scope_type": "resource", "role_name": "member", "state": "synced"},
                         {"username": "nobody", "scope_type": "resource", "role_name": "member", "state": "synced"}]}
    path = "/api/marketplace-provider-resources/%s/set_membership_sync_statuses/" % work.resource
    refused = work.raw("POST", path, json=body)
    assert (refused.status_code, refused.json()) == (409, {"detail": "Membership sync status is not enabled for this "
                                                                     "offering."})
    work.waldur.state.offerings[OFFERING]["plugin_options"]["enable_membership_sync_status"] = True
    work.waldur.add_offering_user(OFFERING, work.bob, username="bob01", state="OK")
    result = marketplace_provider_resources_set_membership_sync_statuses.sync(
        uuid=work.resource, client=work.client(), body=MemberSyncStatusReportRequest.from_dict(body))
    assert (result.stored, result.skipped) == (1, ["nobody"])


def test_an_orders_backend_id_is_set_once_and_checked_for_uniqueness_among_resources(work):
    client = work.client()
    changed = marketplace_orders_set_backend_id.sync(uuid=work.order, client=client,
                                                     body=OrderBackendIDRequest(backend_id="job-42"))
    again = marketplace_orders_set_backend_id.sync(uuid=work.order, client=client,
                                                   body=OrderBackendIDRequest(backend_id="job-42"))
    assert (changed.status, again.status) == ("Order backend_id has been changed.",
                                                   "Order backend_id is not changed.")
    marketplace_provider_resources_set_backend_id.sync(uuid=work.resource, client=client,
                                                       body=ResourceBackendIDRequest(backend_id="pharos_a_climate"))
    for backend_id, unique in (("pharos_a_climate", False), ("pharos_a_other", True)):
        answer = marketplace_provider_offerings_check_unique_backend_id.sync(
            uuid=OFFERING, client=client, body=CheckUniqueBackendIDRequest(backend_id=backend_id))
        assert answer.is_unique is unique


def test_a_plan_is_read_by_the_offerings_owner_and_hidden_from_an_offering_manager(work):
    plan = next(uuid for uuid, plan in work.waldur.state.plans.items() if plan["offering_uuid"] == OFFERING)
    details = marketplace_plans_retrieve.sync(uuid=plan, client=work.client())
    assert details.uuid.hex == plan and details.name == "Default"
    work.grant_manager("OFFERING.MANAGER", "offering", OFFERING)
    hidden = work.raw("GET", "/api/marketplace-plans/%s/" % plan, token=MANAGER_TOKEN)
    assert (hidden.status_code, hidden.json()) == (404, {"detail": "No Plan matches the given query."})


def test_an_offering_user_carries_the_users_first_and_last_name(work):
    # OfferingUserSerializer's user_first_name and user_last_name, which the agent's LDAP plugin
    # writes as givenName and sn.
    carol = work.waldur.add_user("carol", "c" * 40, first_name="Carol", last_name="Jones")
    work.waldur.add_offering_user(OFFERING, carol)
    (found,) = marketplace_offering_users_list.sync(client=work.client(), offering_uuid=[OFFERING], user_uuid=carol)
    assert (found.user_first_name, found.user_last_name, found.user_full_name) == ("Carol", "Jones", "Carol Jones")


def test_users_me_answers_in_the_usersme_shape(work):
    me = users_me_retrieve.sync(client=work.client())
    assert isinstance(me, UserMe)
    assert me.username == "pharos-agent"
