"""The simulator's endpoints for the Site agent's polling loops, called through waldur-api-client.

The calls are the ones waldur-site-agent 1.0.8rc9 makes, with its arguments, so a status code
or a field the agent's client would not accept fails here.
"""

import json
import ssl

import httpx
import pytest
from conftest import TOKEN
from waldur_api_client import AuthenticatedClient
from waldur_api_client.api.marketplace_offering_users import marketplace_offering_users_list
from waldur_api_client.api.marketplace_orders import marketplace_orders_list
from waldur_api_client.api.marketplace_provider_offerings import (
    marketplace_provider_offerings_user_attribute_config_retrieve)
from waldur_api_client.api.marketplace_provider_resources import marketplace_provider_resources_list
from waldur_api_client.api.marketplace_service_providers import marketplace_service_providers_list
from waldur_api_client.api.marketplace_site_agent_identities import (
    marketplace_site_agent_identities_create, marketplace_site_agent_identities_list,
    marketplace_site_agent_identities_register_service, marketplace_site_agent_identities_update)
from waldur_api_client.api.marketplace_site_agent_services import marketplace_site_agent_services_register_processor
from waldur_api_client.api.version import version_retrieve
from waldur_api_client.errors import UnexpectedStatus
from waldur_api_client.models import (
    AgentIdentityRequest, AgentProcessorCreateRequest, AgentServiceCreateRequest, OrderState, ResourceState,
    ServiceProviderFieldEnum)

OFFERING_UUID = "ab" * 16
OTHER_TOKEN = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def agent_site(site):
    """The Site as the launcher seeds it: a service provider and its Active offering."""
    site.waldur.add_offering("Icarus HPC", site.customer_uuid, site.category_uuid, offering_uuid=OFFERING_UUID)
    return site


def client_of(site, token=TOKEN):
    return AuthenticatedClient(base_url=site.waldur.origin, token=token,
                               verify_ssl=ssl.create_default_context(cafile=str(site.pki.ca_file)))


def identity_request(name="agent-" + OFFERING_UUID):
    return AgentIdentityRequest(offering=OFFERING_UUID, name=name, version="1.0.8rc9", config_file_path="",
                                config_file_content="", dependencies=[])


def test_an_identity_is_created_then_found_by_name_and_updated_in_place(agent_site):
    client = client_of(agent_site)
    assert marketplace_site_agent_identities_list.sync(client=client, name="agent-" + OFFERING_UUID) == []
    created = marketplace_site_agent_identities_create.sync(client=client, body=identity_request())
    (found,) = marketplace_site_agent_identities_list.sync(client=client, name="agent-" + OFFERING_UUID)
    assert found.uuid == created.uuid and found.offering.hex == OFFERING_UUID
    updated = marketplace_site_agent_identities_update.sync(uuid=created.uuid.hex, client=client,
                                                            body=identity_request())
    assert updated.uuid == created.uuid and len(agent_site.waldur.state.agent_identities) == 1


def test_a_service_is_created_once_then_returned_active_on_every_later_registration(agent_site):
    client = client_of(agent_site)
    identity = marketplace_site_agent_identities_create.sync(client=client, body=identity_request())
    body = AgentServiceCreateRequest(name="order_process", mode="order_process")
    first, again = [marketplace_site_agent_identities_register_service.sync_detailed(
        uuid=identity.uuid.hex, client=client, body=body) for attempt in ("first", "again")]
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.parsed.uuid == again.parsed.uuid and again.parsed.state.value == "Active"
    (listed,) = marketplace_site_agent_identities_list.sync(client=client, name="agent-" + OFFERING_UUID)
    assert [service.name for service in listed.services] == ["order_process"]


def test_a_processor_is_created_once_then_its_last_run_is_stamped_again(agent_site):
    client = client_of(agent_site)
    identity = marketplace_site_agent_identities_create.sync(client=client, body=identity_request())
    service = marketplace_site_agent_identities_register_service.sync(
        uuid=identity.uuid.hex, client=client, body=AgentServiceCreateRequest(name="report", mode="report"))
    body = AgentProcessorCreateRequest(name="OfferingReportProcessor",
                                       backend_type="waldur_site_agent_slurm.backend.SlurmBackend",
                                       backend_version="1.0.8rc9")
    first, again = [marketplace_site_agent_services_register_processor.sync_detailed(
        uuid=service.uuid.hex, client=client, body=body) for attempt in ("first", "again")]
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.parsed.uuid == first.parsed.uuid and again.parsed.last_run >= first.parsed.last_run


def test_an_identity_for_an_offering_the_token_does_not_manage_is_forbidden(agent_site):
    agent_site.waldur.add_user("stranger", OTHER_TOKEN)
    with pytest.raises(UnexpectedStatus) as raised:
        marketplace_site_agent_identities_create.sync(client=client_of(agent_site, OTHER_TOKEN),
                                                      body=identity_request())
    assert raised.value.status_code == 403 and b"You do not have permission" in raised.value.content
    assert agent_site.waldur.state.agent_identities == {}


def test_an_identity_without_its_offering_is_a_field_error(agent_site):
    response = httpx.post(agent_site.waldur.api_url + "marketplace-site-agent-identities/",
                          json={"name": "agent-x"}, headers={"Authorization": "Token " + TOKEN},
                          verify=ssl.create_default_context(cafile=str(agent_site.pki.ca_file)))
    assert response.status_code == 400 and response.json() == {"offering": ["This field is required."]}


def test_the_offerings_service_provider_is_found_by_customer_with_only_the_fields_asked_for(agent_site):
    response = marketplace_service_providers_list.sync_detailed(
        client=client_of(agent_site), customer_uuid=agent_site.customer_uuid, field=[ServiceProviderFieldEnum.UUID])
    (provider_uuid,) = agent_site.waldur.state.service_providers
    assert json.loads(response.content) == [{"uuid": provider_uuid}]
    assert marketplace_service_providers_list.sync(client=client_of(agent_site), customer_uuid="cd" * 16) == []


def test_a_site_without_orders_resources_or_offering_users_lists_none_of_them(agent_site):
    client = client_of(agent_site)
    assert marketplace_orders_list.sync_all(
        client=client, offering_uuid=OFFERING_UUID, state=[OrderState.PENDING_PROVIDER, OrderState.EXECUTING]) == []
    assert marketplace_provider_resources_list.sync_all(
        client=client, offering_uuid=[OFFERING_UUID], state=[ResourceState.OK, ResourceState.ERRED]) == []
    assert marketplace_offering_users_list.sync_all(client=client, offering_uuid=[OFFERING_UUID],
                                                    is_restricted=False) == []


def test_an_empty_list_is_one_page_with_its_links_and_count(agent_site):
    response = httpx.get(agent_site.waldur.api_url + "marketplace-orders/",
                         params={"offering_uuid": OFFERING_UUID, "state": ["pending-provider", "executing"]},
                         headers={"Authorization": "Token " + TOKEN},
                         verify=ssl.create_default_context(cafile=str(agent_site.pki.ca_file)))
    assert response.status_code == 200 and response.json() == []
    assert response.headers["X-Result-Count"] == "0"
    assert 'rel="next"' not in response.headers["Link"] and "state=executing" in response.headers["Link"]


def test_an_offering_without_its_own_user_attribute_config_exposes_waldurs_default(agent_site):
    config = marketplace_provider_offerings_user_attribute_config_retrieve.sync(
        uuid=OFFERING_UUID, client=client_of(agent_site))
    assert config.is_default is True and config.exposed_fields == ["username", "full_name", "email"]
    assert config.expose_username is True and config.expose_phone_number is False


def test_another_method_on_a_known_path_is_not_allowed(agent_site):
    response = httpx.delete(agent_site.waldur.api_url + "marketplace-orders/",
                            headers={"Authorization": "Token " + TOKEN},
                            verify=ssl.create_default_context(cafile=str(agent_site.pki.ca_file)))
    assert response.status_code == 405 and response.json() == {"detail": 'Method "DELETE" not allowed.'}


def test_version_and_the_readiness_probes_users_me_answer_the_agent(agent_site):
    assert version_retrieve.sync(client=client_of(agent_site)).version
    response = httpx.get(agent_site.waldur.api_url + "users/me/", params={"field": "uuid"},
                         headers={"Authorization": "Token " + TOKEN},
                         verify=ssl.create_default_context(cafile=str(agent_site.pki.ca_file)))
    assert response.json() == {"uuid": agent_site.user_uuid}


def test_a_wrong_token_is_refused_before_any_agent_endpoint(agent_site):
    with pytest.raises(UnexpectedStatus) as raised:
        marketplace_orders_list.sync(client=client_of(agent_site, OTHER_TOKEN), offering_uuid=OFFERING_UUID)
    assert raised.value.status_code == 401
