"""pharos.hpc.waldur_offering against the Waldur API simulator, over TLS with a test CA.

Every case starts from a fresh simulated Waldur: one provider organisation whose service
account (the token's user) is its CUSTOMER.OWNER.
"""

import json
import time

import pytest
from conftest import SITE_PLUGIN_OPTIONS, TOKEN, run_ansible, run_module
from waldur_simulator import ApiError

from ansible_collections.pharos.hpc.plugins.module_utils.waldur import WaldurClient

OFFERINGS = "/api/marketplace-provider-offerings/"
SITE_NODE = dict(type="node", name="Node-hours", billing_type="limit", measured_unit="hours", unit_factor=60,
                 limit_period="total")


def converged(site, **overrides):
    result = run_module(site.args(**overrides))
    assert not result.get("failed"), result
    return site.offering()


def write_paths(site):
    """Each write by the name of the module's action: the endpoint's last part, or what a POST to a
    collection creates."""
    collections = {OFFERINGS: "create", "/api/marketplace-plans/": "create_plan"}
    return [(method, collections.get(path) or path.rsplit("/", 2)[-2]) for method, path, _body in site.waldur.writes()]


def predicted_then_applied(site, **overrides):
    """Check mode, then a real run; asserts the check changed nothing and predicted the run exactly."""
    before = site.waldur.snapshot()
    site.waldur.requests.clear()
    check = run_module(site.args(**overrides), check=True)
    assert not check.get("failed"), check
    assert site.waldur.writes() == [], "check mode sent a write"
    assert site.waldur.snapshot() == before, "check mode changed Waldur's state"

    real = run_module(site.args(**overrides))
    assert not real.get("failed"), real
    assert real["actions"] == check["actions"]
    assert real["diff"]["after"] == dict(check["diff"]["after"], uuid=real["diff"]["after"]["uuid"])
    assert write_paths(site) == [("POST", action["action"]) for action in check["actions"]]
    again = run_module(site.args(**overrides))
    assert again["changed"] is False and again["actions"] == [], again
    return check


def test_a_missing_offering_is_created_active_with_the_node_component_and_the_site_plugin_options(site):
    check = predicted_then_applied(site)
    assert [action["action"] for action in check["actions"]] == ["create", "create_plan", "activate"]
    offering = site.offering()
    assert offering["state"] == "Active"
    assert offering["plugin_options"] == SITE_PLUGIN_OPTIONS
    (node,) = offering["components"]
    assert {name: node.get(name) for name in ("type", "billing_type", "limit_period", "unit_factor", "measured_unit")} \
        == {"type": "node", "billing_type": "limit", "limit_period": "total", "unit_factor": 60, "measured_unit": "hours"}
    assert node.get("limit_amount") is None


def test_a_missing_offering_is_not_created_unless_asked_and_the_error_says_how(site):
    result = run_module(site.args(allow_create=False))
    assert result["failed"]
    assert "No offering named 'Icarus HPC'" in result["msg"] and "allow_create: true" in result["msg"]
    assert site.waldur.state.offerings == {}


def test_a_converged_offering_found_by_uuid_reports_zero_changed(site):
    offering = converged(site)
    result = run_module(site.args(uuid=offering["uuid"], name=None, customer_uuid=None, allow_create=None))
    assert result["changed"] is False and result["actions"] == []
    assert [request[1] for request in site.waldur.writes()] == [
        OFFERINGS, "/api/marketplace-plans/", OFFERINGS + offering["uuid"] + "/activate/"]


def _set_state(state):
    def drift(offering):
        offering["state"] = state
    return drift


def _set_option(name, value):
    def drift(offering):
        offering["plugin_options"][name] = value
    return drift


def _drop_option(name):
    def drift(offering):
        del offering["plugin_options"][name]
    return drift


def _set_node(name, value):
    def drift(offering):
        offering["components"][0][name] = value
    return drift


def _remove_node(offering):
    offering["components"].clear()


def _add_cpu_component(offering):
    offering["components"].append({"uuid": "c0ffee00c0ffee00c0ffee00c0ffee00", "offering_uuid": offering["uuid"],
                                   "type": "cpu", "name": "CPU", "billing_type": "usage", "measured_unit": "hours",
                                   "unit_factor": 1})


DRIFTS = {
    "state Paused": (_set_state("Paused"), ["unpause"]),
    "state Draft": (_set_state("Draft"), ["activate"]),
    "username_generation_policy identity_claim": (
        _set_option("username_generation_policy", "identity_claim"), ["update_integration"]),
    "service_provider_can_create_offering_user missing": (_drop_option("service_provider_can_create_offering_user"),
                                                          ["update_integration"]),
    "component name": (_set_node("name", "CPU hours"), ["update_offering_component"]),
    "component billing_type": (_set_node("billing_type", "usage"), ["update_offering_component"]),
    "component measured_unit": (_set_node("measured_unit", "minutes"), ["update_offering_component"]),
    "component unit_factor": (_set_node("unit_factor", 1), ["update_offering_component"]),
    "component limit_period": (_set_node("limit_period", "month"), ["update_offering_component"]),
    "component limit_amount": (_set_node("limit_amount", 1000.0), ["update_offering_component"]),
    "missing component": (_remove_node, ["create_offering_component"]),
    "extra component": (_add_cpu_component, ["remove_offering_component"]),
}


@pytest.mark.parametrize("drift", DRIFTS, ids=list(DRIFTS))
def test_each_kind_of_drift_is_predicted_by_check_mode_then_converged_in_one_run(site, drift):
    make_drift, expected_actions = DRIFTS[drift]
    converged(site)
    make_drift(site.offering())
    check = predicted_then_applied(site)
    assert [action["action"] for action in check["actions"]] == expected_actions
    assert check["diff"]["before"] != check["diff"]["after"]


def test_a_changed_component_field_is_named_in_the_summary_and_the_diff(site):
    converged(site)
    site.offering()["components"][0]["unit_factor"] = 1
    check = run_module(site.args(), check=True)
    (action,) = check["actions"]
    assert "unit_factor 1 -> 60" in action["summary"]
    assert check["diff"]["before"]["components"]["node"]["unit_factor"] == 1
    assert check["diff"]["after"]["components"]["node"]["unit_factor"] == 60


def test_plugin_options_the_declaration_does_not_name_are_kept(site):
    converged(site)
    site.offering()["plugin_options"].update(homedir_prefix="/home/", username_generation_policy="anonymized")
    predicted_then_applied(site)
    assert site.offering()["plugin_options"] == dict(SITE_PLUGIN_OPTIONS, homedir_prefix="/home/")


def test_paused_state_pauses_an_active_offering_with_its_reason_and_a_draft_one_is_activated_first(site):
    converged(site)
    check = predicted_then_applied(site, state="paused", paused_reason="maintenance")
    assert [action["action"] for action in check["actions"]] == ["pause"]
    assert site.offering()["state"] == "Paused" and site.offering()["paused_reason"] == "maintenance"
    site.offering()["state"] = "Draft"
    check = predicted_then_applied(site, state="paused")
    assert [action["action"] for action in check["actions"]] == ["activate", "pause"]


def test_an_archived_offering_is_not_revived_and_the_error_says_why(site):
    converged(site)
    site.offering()["state"] = "Archived"
    result = run_module(site.args())
    assert result["failed"] and "is Archived and cannot be made active" in result["msg"]
    assert site.waldur.writes()[-1][1].endswith("/activate/"), "only the first run's writes"


def test_a_declared_component_set_replaces_the_site_default(site):
    components = [dict(type="node", name="Node-hours", billing_type="limit", measured_unit="hours", unit_factor=60,
                       limit_period="total"),
                  dict(type="storage", billing_type="limit", measured_unit="TB", limit_period="total",
                       description="Project storage")]
    converged(site)
    check = predicted_then_applied(site, components=components)
    assert [action["action"] for action in check["actions"]] == ["create_offering_component"]
    storage = [component for component in site.offering()["components"] if component["type"] == "storage"][0]
    assert storage["description"] == "Project storage" and storage["name"] == "storage"


# -- the contract ---------------------------------------------------------------------------------

def _other_customer_owner(site):
    site.waldur.revoke_all(site.user_uuid)
    other = site.waldur.add_customer("Someone else")
    site.waldur.grant(site.user_uuid, "CUSTOMER.OWNER", "customer", other)
    site.waldur.grant(site.user_uuid, "OFFERING.MANAGER", "offering", site.offering()["uuid"],
                      customer_uuid=site.customer_uuid)


EVERY_CLAUSE = ["offering_active", "billing_plan", "username_generation_policy",
                "service_provider_can_create_offering_user", "provider_role", "node_component"]

CLAUSES = {
    "offering_active": (_set_state("Paused"), ["is Paused, not Active"]),
    "username_generation_policy": (_set_option("username_generation_policy", "identity_claim"), [
        "identity_claim", "Waldur, not the Site agent, would own username generation",
        "the expected POSIX/Slurm member would never be created"]),
    "service_provider_can_create_offering_user": (_set_option("service_provider_can_create_offering_user", False),
                                                  ["service_provider_can_create_offering_user false"]),
    "provider_role": (None, ["does not hold CUSTOMER.OWNER on the provider organisation Icarus provider",
                             "OFFERING.MANAGER on offering", "Only staff users and service providers can specify date"]),
    "node_component": (_set_node("unit_factor", 1), ["unit_factor is 1, expected 60"]),
}


def test_the_contract_holds_on_a_converged_offering_and_changes_nothing(site):
    offering = converged(site)
    before = site.waldur.snapshot()
    result = run_module(site.args(mode="contract", uuid=offering["uuid"]))
    assert not result.get("failed"), result
    assert result["failed_clauses"] == [] and result["changed"] is False
    assert [clause["clause"] for clause in result["contract"] if clause["ok"]] == EVERY_CLAUSE
    assert site.waldur.snapshot() == before and len(site.waldur.writes()) == 3


@pytest.mark.parametrize("clause", CLAUSES, ids=list(CLAUSES))
def test_each_contract_clause_failing_alone_is_reported_by_name_with_its_reason(site, clause):
    make_drift, phrases = CLAUSES[clause]
    converged(site)
    if make_drift is None:
        _other_customer_owner(site)
    else:
        make_drift(site.offering())
    before = site.waldur.snapshot()
    result = run_module(site.args(mode="contract"))
    assert result["failed"] is True
    assert result["failed_clauses"] == [clause]
    assert "(1 of 6 clauses failed)" in result["msg"] and clause + ": " in result["msg"]
    for phrase in phrases:
        assert phrase in result["msg"], result["msg"]
    assert site.waldur.snapshot() == before


def test_every_failed_clause_is_reported_in_one_run(site):
    converged(site)
    for make_drift, _phrases in CLAUSES.values():
        if make_drift is None:
            _other_customer_owner(site)
        else:
            make_drift(site.offering())
    result = run_module(site.args(mode="contract"))
    assert result["failed_clauses"] == list(CLAUSES)
    assert "(5 of 6 clauses failed)" in result["msg"]


def test_a_service_provider_manager_alone_does_not_see_the_offering_and_is_told_which_role_to_grant(site):
    converged(site)
    site.waldur.revoke_all(site.user_uuid)
    site.waldur.grant(site.user_uuid, "CUSTOMER.MANAGER", "service_provider", site.provider_uuid,
                      customer_uuid=site.customer_uuid)
    result = run_module(site.args(mode="contract"))
    # Waldur shows a provider's offerings to roles on its customer or on the offering only.
    assert result["failed"] and "is visible to the token's user" in result["msg"]
    assert "grant the user CUSTOMER.OWNER on the provider organisation" in result["msg"]


def test_a_staff_token_without_any_role_holds_every_contract_clause(site):
    converged(site)
    site.waldur.revoke_all(site.user_uuid)
    site.waldur.state.users[site.user_uuid]["is_staff"] = True
    result = run_module(site.args(mode="contract"))
    assert not result.get("failed"), result["msg"]
    assert result["failed_clauses"] == [], result["failed_clauses"]
    # Every clause was judged and held, provider_role too although the user holds no role at all.
    assert [(clause["clause"], clause["ok"], clause["message"]) for clause in result["contract"]] == [
        (name, True, "holds") for name in EVERY_CLAUSE]


def test_the_contract_names_a_missing_billing_plan_and_its_fix(site):
    offering = converged(site)
    site.waldur.state.plans.clear()
    result = run_module(site.args(mode="contract", uuid=offering["uuid"]))
    assert result["failed_clauses"] == ["billing_plan"]
    assert "Resource must have a plan to report usage." in result["msg"] and "plan_name" in result["msg"]


def test_the_contract_refuses_an_expired_role(site):
    converged(site)
    site.waldur.revoke_all(site.user_uuid)
    site.waldur.grant(site.user_uuid, "CUSTOMER.OWNER", "customer", site.customer_uuid, is_active=False)
    site.waldur.grant(site.user_uuid, "OFFERING.MANAGER", "offering", site.offering()["uuid"],
                      customer_uuid=site.customer_uuid)
    result = run_module(site.args(mode="contract"))
    assert result["failed_clauses"] == ["provider_role"]
    assert "CUSTOMER.OWNER on customer" not in result["msg"], "an inactive role is not listed as held"


# -- faults ---------------------------------------------------------------------------------------

def test_two_500_answers_are_retried_and_the_run_then_succeeds(site):
    converged(site)
    site.offering()["state"] = "Paused"
    site.waldur.faults.fail_next(2)
    result = run_module(site.args())
    assert not result.get("failed"), result
    assert result["changed"] and site.offering()["state"] == "Active"
    assert site.waldur.faults.status_count == 0


def test_a_persistent_500_fails_clearly_after_the_bounded_retries_without_the_token(site):
    converged(site)
    site.waldur.faults.fail_next(100)
    started = time.monotonic()
    result = run_module(site.args(retries=2))
    assert result["failed"]
    assert "failed GET /api/marketplace-provider-offerings/" in result["msg"]
    assert "HTTP 500" in result["msg"] and "tried 3 times" in result["msg"]
    assert "Fix:" in result["msg"]
    assert TOKEN not in str(result)
    assert site.waldur.faults.status_count == 97, "exactly 1 + retries requests"
    assert time.monotonic() - started < 10


def test_a_500_on_create_is_not_repeated_so_no_second_offering_can_appear_and_a_rerun_finishes(site):
    handle = site.waldur.handle

    def created_then_failed(method, path, query, body):
        answer = handle(method, path, query, body)
        if method == "POST" and path == OFFERINGS:
            raise ApiError(500, {"detail": "Server Error (500)"})
        return answer

    site.waldur.handle = created_then_failed
    result = run_module(site.args())
    site.waldur.handle = handle
    assert result["failed"] and "tried once" in result["msg"] and "cannot make two offerings" in result["msg"]
    assert len(site.waldur.state.offerings) == 1 and site.offering()["state"] == "Draft"
    finish = run_module(site.args())
    assert [action["action"] for action in finish["actions"]] == ["create_plan", "activate"]
    assert len(site.waldur.state.offerings) == 1 and site.offering()["state"] == "Active"


def test_an_answer_slower_than_the_timeout_is_retried(site):
    converged(site)
    site.waldur.faults.delay_next(1, 1.5)
    result = run_module(site.args(timeout=0.5))
    assert not result.get("failed"), result
    assert result["changed"] is False


@pytest.mark.parametrize("status", [307, 302])
def test_a_redirect_is_not_followed_and_the_other_host_receives_no_token(site, other_host, status):
    converged(site)
    site.waldur.faults.redirect_next(1, other_host.origin, status=status)
    result = run_module(site.args())
    assert result["failed"]
    assert "HTTP %d, a redirect to 127.0.0.2" % status in result["msg"]
    assert "was not followed and the token was not sent there" in result["msg"]
    assert other_host.received == []
    assert TOKEN not in str(result)


def test_a_wrong_token_is_refused_with_the_fix_and_without_the_token(site, tmp_path):
    wrong = tmp_path / "wrong-token"
    wrong.write_text("0123456789abcdef-not-the-token\n")
    result = run_module(site.args(token_file=str(wrong)))
    assert result["failed"] and "HTTP 401: Invalid token." in result["msg"]
    assert "0123456789abcdef-not-the-token" not in str(result)


def test_an_untrusted_server_certificate_is_refused(site):
    result = run_module(site.args(ca_file=None, retries=0))
    assert result["failed"] and "CERTIFICATE_VERIFY_FAILED" in result["msg"]


def test_the_client_follows_paging_on_the_same_host_and_reads_every_offering(site):
    client = WaldurClient(site.waldur.api_url, TOKEN, str(site.pki.ca_file), timeout=2.0, retries=0)
    for number in range(20):
        client.post("marketplace-provider-offerings/", {
            "name": "Offering %02d" % number, "type": "Marketplace.Slurm",
            "category": client.url("marketplace-categories/%s/" % site.category_uuid),
            "customer": client.url("customers/%s/" % site.customer_uuid)}, creates=True)
    site.waldur.requests.clear()
    offerings = client.list_all("marketplace-provider-offerings/", {"customer_uuid": site.customer_uuid}, page_size=7)
    assert sorted(offering["name"] for offering in offerings) == ["Offering %02d" % number for number in range(20)]
    assert len(site.waldur.requests) == 3
    client.close()


# -- as Ansible runs it ----------------------------------------------------------------------------

def test_ansible_creates_then_reports_zero_changed_and_check_mode_predicts_exactly(site):
    check, completed = run_ansible(site.args(), "--check", "--diff")
    assert check["changed"] is True, completed.stdout
    assert site.waldur.state.offerings == {} and site.waldur.writes() == []
    real, completed = run_ansible(site.args(), "--diff")
    assert real["changed"] is True, completed.stdout
    assert real["actions"] == check["actions"]
    assert site.offering()["state"] == "Active"
    again, completed = run_ansible(site.args())
    assert again["changed"] is False and again["actions"] == [], completed.stdout
    site.offering()["components"][0]["unit_factor"] = 1
    before = site.waldur.snapshot()
    drift_check, _completed = run_ansible(site.args(), "--check", "--diff")
    assert [action["action"] for action in drift_check["actions"]] == ["update_offering_component"]
    assert site.waldur.snapshot() == before
    assert TOKEN not in completed.stdout + completed.stderr


def test_ansible_masks_a_token_given_as_an_option(site):
    arguments = site.args()
    del arguments["token_file"]
    # The token travels in a file of extra vars, never in argv.
    result, completed = run_ansible(dict(arguments, token="{{ waldur_token }}"), "-e",
                                    "@" + str(write_vars(site, waldur_token=TOKEN)))
    assert result["changed"] is True
    assert TOKEN not in completed.stdout + completed.stderr


def write_vars(site, **variables):
    path = site.token_file.parent / "vars.json"
    path.write_text(json.dumps(variables))
    return path


# -- what a default Waldur refuses ----------------------------------------------------------------

def test_on_a_default_waldur_an_owner_token_cannot_activate_and_nothing_is_written(site):
    site.waldur.state.settings["ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT"] = False
    for check in (True, False):
        result = run_module(site.args(allow_service_provider_offering_management=False), check=check)
        assert result["failed"], result
        assert "ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT" in result["msg"] and "staff" in result["msg"]
        assert "Nothing was written" in result["msg"]
    assert site.waldur.writes() == [] and site.waldur.state.offerings == {}


def test_on_a_default_waldur_a_staff_token_activates(site):
    site.waldur.state.settings["ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT"] = False
    site.waldur.state.users[site.user_uuid]["is_staff"] = True
    predicted_then_applied(site, allow_service_provider_offering_management=False)
    assert site.offering()["state"] == "Active"


def test_a_module_told_wrongly_that_owners_may_activate_explains_the_403(site):
    site.waldur.state.settings["ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT"] = False
    result = run_module(site.args())
    assert result["failed"] and "HTTP 403" in result["msg"]
    assert "only staff change an offering's state unless its setting ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT" \
        in result["msg"]
    assert run_module(site.args(allow_service_provider_offering_management=False))["failed"]


def test_an_offering_without_a_plan_is_not_activated_and_the_error_names_the_fix(site):
    result = run_module(site.args(plan_name=None))
    assert result["failed"] and "has no billing plan" in result["msg"] and "plan_name" in result["msg"]
    assert site.waldur.writes() == []


def test_a_component_that_resources_use_is_kept_and_reported_not_removed(site):
    converged(site)
    _add_cpu_component(site.offering())
    site.waldur.add_resource(site.offering()["uuid"], "alloc one")
    check = predicted_then_applied(site)
    assert check["actions"] == [] and check["kept_components"] == ["cpu"]
    assert [component["type"] for component in site.offering()["components"]] == ["node", "cpu"]


def test_a_component_declared_without_unit_or_period_converges_to_zero_changed(site):
    components = [dict(SITE_NODE, limit_amount=None), dict(type="gpu", billing_type="usage")]
    converged(site, components=components)
    again = run_module(site.args(components=components))
    assert again["changed"] is False, again["actions"]
    gpu = [component for component in site.offering()["components"] if component["type"] == "gpu"][0]
    assert (gpu["measured_unit"], gpu["limit_period"]) == ("", "month")


def test_only_the_changed_plugin_options_are_sent(site):
    converged(site)
    site.offering()["plugin_options"]["username_generation_policy"] = "anonymized"
    site.waldur.requests.clear()
    run_module(site.args())
    (write,) = site.waldur.writes()
    assert write[2] == {"plugin_options": {"username_generation_policy": "service_provider"}}


def test_a_plugin_option_waldur_does_not_know_fails_the_run_by_name(site):
    result = run_module(site.args(plugin_options=dict(SITE_PLUGIN_OPTIONS, no_such_option=True)))
    assert result["failed"] and "no_such_option" in result["msg"] and "drops options it does not know" in result["msg"]
