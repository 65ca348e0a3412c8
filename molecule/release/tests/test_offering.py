"""playbooks/offering.yml: with the node component changed in Waldur, check.yml refuses and
names the playbook; its dry run predicts the fix and sends nothing; its run restores the
contract, and a second run changes nothing. Leaves the offering as the scenario made it."""

from scenario import OFFERING_UUID, changed_count, run_playbook, waldur

testinfra_hosts = ["ansible://login"]

OFFERING = "marketplace-provider-offerings/%s/" % OFFERING_UUID


def node_component(host):
    offering = waldur(host, "GET", OFFERING, as_user="waldur-staff")
    return next(component for component in offering["components"] if component["type"] == "node")


def test_a_changed_node_component_is_refused_by_check_and_restored_by_offering_yml(host):
    node = node_component(host)
    changed = {key: node[key] for key in ("uuid", "type", "name", "billing_type", "measured_unit", "limit_period")}
    waldur(host, "POST", OFFERING + "update_offering_component/", dict(changed, unit_factor=1), as_user="waldur-staff")
    try:
        rc, output = run_playbook("check.yml", succeed=False)
        text = " ".join(output.split())
        assert rc != 0
        assert "unit_factor is 1, expected 60" in text and "Fix: run playbooks/offering.yml" in text, output[-3000:]

        assert changed_count(run_playbook("offering.yml", "--check", "--diff")) == 1
        assert node_component(host)["unit_factor"] == 1

        assert changed_count(run_playbook("offering.yml")) == 1
        assert node_component(host)["unit_factor"] == 60
        assert changed_count(run_playbook("offering.yml")) == 0
        assert changed_count(run_playbook("check.yml")) == 0
    finally:
        if node_component(host)["unit_factor"] != 60:
            waldur(host, "POST", OFFERING + "update_offering_component/", dict(changed, unit_factor=60),
                   as_user="waldur-staff")
