"""slurm_account's planner fed with reads recorded from Slurm 24.11.5 (tests/fixtures/sacctmgr).

seed_tree is the Site's association tree (docs/allocations.md) as the module wrote it; drifted_tree is that tree after an
administrator's hand edits; fresh_cluster is a cluster with only its root.
"""

import copy
from pathlib import Path

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils import sacctmgr, slurm_batch, slurm_tree, slurm_write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sacctmgr"

SEED_ACCOUNTS = [
    {"name": "pharos", "description": "Pharos platform", "organization": "pharos", "fairshare": 100,
     "coordinators": ["pharos-agent", "pharos-runtime"]},
    {"name": "pharos_default", "parent": "pharos", "description": "members default", "limits": {"MaxSubmitJobs": 0}},
    {"name": "pharos_a_hpc", "parent": "pharos", "description": "project hpc",
     "limits": {"GrpTRESMins": "node=600", "GrpTRES": "cpu=4,mem=1024", "MaxWall": "72:00:00", "GrpSubmitJobs": 50}},
    {"name": "pharos_a_qual", "parent": "pharos", "description": "Project HPC qualification",
     "limits": {"GrpTRESMins": {"node": 60}}},
    {"name": "pharos_a_gone", "parent": "pharos", "state": "terminated"},
]
SEED_USERS = [
    {"name": "pharos-agent", "default_account": "pharos"},
    {"name": "pharos-runtime", "default_account": "pharos", "limits": {"MaxSubmitJobs": 0}},
    {"name": "PharosAlice", "default_account": "pharos_default", "accounts": ["pharos_a_hpc", "pharos_a_qual"]},
    {"name": "pharosbob", "default_account": "pharos_default", "accounts": ["pharos_a_hpc"]},
    {"name": "pharoscarol", "default_account": "pharos_default", "accounts": ["pharos_a_qual"]},
]


def recorded(state):
    return sacctmgr.read_tree({name: (FIXTURES / state / f"{name}.txt").read_text()
                               for name in ("associations", "accounts", "users")})


def declared(accounts=None, users=None):
    return slurm_tree.declare(SEED_ACCOUNTS if accounts is None else accounts, SEED_USERS if users is None else users)


def summary(changes):
    """Each change as one comparable tuple: action, object, and what it sets."""
    rows = []
    for change in changes:
        target = change.get("user") or change.get("account")
        if change["action"] in ("remove_associations", "remove_user"):
            rows.append((change["action"], change["user"], tuple(change["accounts"])))
        elif change["action"] == "remove_accounts":
            rows.append((change["action"], tuple(change["accounts"])))
        elif "settings" in change:
            rows.append((change["action"], target, change.get("account") if "user" in change else None,
                         tuple(sorted(change["settings"].items()))))
        elif change["action"] in ("add_coordinators", "remove_coordinators"):
            rows.append((change["action"], target, tuple(change["users"])))
        elif change["action"] == "add_association":
            rows.append((change["action"], change["user"], change["account"]))
        elif change["action"] == "set_default_account":
            rows.append((change["action"], change["user"], change["from"], change["to"]))
        else:
            rows.append((change["action"], target))
    return rows


def with_account(name, **fields):
    accounts = copy.deepcopy(SEED_ACCOUNTS)
    for account in accounts:
        if account["name"] == name:
            account.update(fields)
    return accounts


# --- values compare the way Slurm stores them -------------------------------------------

@pytest.mark.parametrize(("declared_value", "stored"), [
    ("cpu=4,mem=1G", {"cpu": 4, "mem": 1024}),
    ("mem=1024", {"mem": 1024}),
    ("MEM=2g,Node=2", {"mem": 2048, "node": 2}),
    ({"node": 600}, {"node": 600}),
    ("node=600,cpu=-1", {"node": 600}),
    ("gres/gpu=2", {"gres/gpu": 2}),
    ("", None),
])
def test_tres_limits_normalise_to_slurms_units(declared_value, stored):
    assert sacctmgr.normalise_tres(declared_value) == stored


@pytest.mark.parametrize(("text", "minutes"), [
    ("72:00:00", 4320), ("3-00:00:00", 4320), ("3-00", 4320), ("01:30:00", 90), (90, 90), ("90", 90),
    ("2:30", 3), ("1-12:30", 2190), ("-1", None), ("", None),
])
def test_wall_limits_normalise_to_minutes(text, minutes):
    assert sacctmgr.normalise_minutes(text) == minutes


@pytest.mark.parametrize(("value", "message"), [
    ("node600", "is not name=amount"),
    ("mem=1X", "is not a memory size"),
    ("node=-5", "must be 0 or more"),
])
def test_malformed_tres_is_refused_with_its_value(value, message):
    with pytest.raises(sacctmgr.SlurmValueError, match=message):
        sacctmgr.normalise_tres(value, "account pharos_a_x GrpTRESMins")


def test_the_recorded_seed_tree_parses_with_own_limits_only():
    tree = recorded("seed_tree")
    assert tree["accounts"]["pharos_a_hpc"]["limits"] == {
        "GrpTRESMins": {"node": 600}, "GrpTRES": {"cpu": 4, "mem": 1024}, "MaxSubmitJobs": None,
        "GrpSubmitJobs": 50, "MaxWall": 4320, "QOS": None}
    # WOPLimits: a member's association under pharos_default does not show the account's MaxSubmitJobs=0
    assert tree["associations"][("pharosalice", "pharos_default")]["limits"]["MaxSubmitJobs"] is None
    assert tree["users"]["pharosalice"]["default_account"] == "pharos_default"
    assert tree["users"]["root"]["admin_level"] == "administrator"


# --- every kind of change ---------------------------------------------------------------

def test_the_seed_tree_already_written_plans_nothing():
    assert slurm_tree.plan(declared(), recorded("seed_tree"), unlisted="remove") == []


def test_a_fresh_cluster_gets_the_whole_tree_parents_first():
    changes = slurm_tree.plan(declared(), recorded("fresh_cluster"))
    assert summary(changes)[:5] == [("add_account", "pharos"), ("add_account", "pharos_a_gone"),
                                    ("add_account", "pharos_a_hpc"), ("add_account", "pharos_a_qual"),
                                    ("add_account", "pharos_default")]
    added = [row[1:] for row in summary(changes) if row[0] == "add_association"]
    assert sorted(added) == sorted([
        ("pharos-agent", "pharos"), ("pharos-runtime", "pharos"), ("pharosalice", "pharos_default"),
        ("pharosalice", "pharos_a_hpc"), ("pharosalice", "pharos_a_qual"), ("pharosbob", "pharos_default"),
        ("pharosbob", "pharos_a_hpc"), ("pharoscarol", "pharos_default"), ("pharoscarol", "pharos_a_qual")])
    assert summary(changes)[-1] == ("add_coordinators", "pharos", ("pharos-agent", "pharos-runtime"))
    terminated = next(c for c in changes if c.get("account") == "pharos_a_gone")
    assert terminated["limits"] == {"GrpTRESMins": {"node": 0}, "MaxSubmitJobs": 0, "GrpSubmitJobs": 0}


def test_hand_edits_are_planned_back_exactly():
    changes = slurm_tree.plan(declared(), recorded("drifted_tree"), unlisted="remove")
    assert summary(changes) == [
        ("modify_account", "pharos_a_hpc", None, (
            ("GrpTRES", ({"cpu": 4, "mem": 2048}, {"cpu": 4, "mem": 1024})),
            ("GrpTRESMins", ({"node": 1200}, {"node": 600})),
            ("description", ("project hpc (renamed)", "project hpc")))),
        ("modify_association", "pharos-runtime", "pharos", (("MaxSubmitJobs", (None, 0)),)),
        ("set_default_account", "pharosalice", "pharos_a_hpc", "pharos_default"),
        ("add_association", "pharosbob", "pharos_a_hpc"),
        ("remove_user", "pharosdave", ("pharos_a_stray",)),
        ("remove_accounts", ("pharos_a_stray",)),
        ("add_coordinators", "pharos", ("pharos-runtime",)),
    ]


def test_unlisted_associations_and_accounts_are_kept_by_default():
    changes = slurm_tree.plan(declared(), recorded("drifted_tree"), unlisted="keep")
    assert not [c for c in changes if c["action"].startswith("remove")]


def test_a_member_who_left_every_project_keeps_only_the_default_account():
    users = [dict(user, accounts=[]) if user["name"] == "pharosbob" else user for user in SEED_USERS]
    changes = slurm_tree.plan(declared(users=users), recorded("seed_tree"), unlisted="remove")
    assert summary(changes) == [("remove_associations", "pharosbob", ("pharos_a_hpc",))]


def test_a_terminated_allocation_loses_its_users_and_its_limits_but_stays():
    users = [dict(user, accounts=[a for a in user.get("accounts", []) if a != "pharos_a_hpc"]) for user in SEED_USERS]
    changes = slurm_tree.plan(declared(with_account("pharos_a_hpc", state="terminated"), users),
                              recorded("seed_tree"), unlisted="keep")
    assert summary(changes) == [
        ("modify_account", "pharos_a_hpc", None, (
            ("GrpSubmitJobs", (50, 0)), ("GrpTRESMins", ({"node": 600}, {"node": 0})), ("MaxSubmitJobs", (None, 0)))),
        ("remove_associations", "pharosalice", ("pharos_a_hpc",)),
        ("remove_associations", "pharosbob", ("pharos_a_hpc",)),
    ]


def test_an_absent_account_is_removed_with_its_associations():
    users = [dict(user, accounts=[a for a in user.get("accounts", []) if a != "pharos_a_qual"]) for user in SEED_USERS]
    changes = slurm_tree.plan(declared(with_account("pharos_a_qual", state="absent"), users), recorded("seed_tree"))
    assert summary(changes) == [
        ("remove_associations", "pharosalice", ("pharos_a_qual",)),
        ("remove_associations", "pharoscarol", ("pharos_a_qual",)),
        ("remove_accounts", ("pharos_a_qual",)),
    ]


def test_moving_an_account_and_changing_coordinators():
    accounts = with_account("pharos_a_qual", parent="pharos_a_hpc") + [
        {"name": "pharos_default", "parent": "pharos", "coordinators": ["pharoscarol"]}]
    accounts = [a for a in accounts if not (a["name"] == "pharos_default" and "coordinators" not in a)]
    accounts = with_account_list(accounts, "pharos", coordinators=["pharos-agent"])
    changes = slurm_tree.plan(declared(accounts), recorded("seed_tree"))
    assert summary(changes) == [
        ("move_account", "pharos_a_qual"),
        ("remove_coordinators", "pharos", ("pharos-runtime",)),
        ("add_coordinators", "pharos_default", ("pharoscarol",)),
    ]


def with_account_list(accounts, name, **fields):
    return [dict(account, **fields) if account["name"] == name else account for account in accounts]


# --- refusals before any write ----------------------------------------------------------

def test_a_coordinator_raising_an_allocation_is_refused_with_the_reason_and_the_fix():
    changes = slurm_tree.plan(declared(with_account("pharos_a_hpc", limits={"GrpTRESMins": "node=1200"})),
                              recorded("seed_tree"))
    refusals = slurm_tree.coordinator_refusals(changes, "pharos-agent", recorded("seed_tree"))
    assert refusals == ["coordinator pharos-agent cannot raise GrpTRESMins of pharos_a_hpc from node=600 to node=1200"]
    assert "order a new allocation" in slurm_tree.COORDINATOR_RULE


@pytest.mark.parametrize("limits", [{"GrpTRESMins": -1}, {"GrpSubmitJobs": 60}, {"MaxWall": "4-00:00:00"}])
def test_clearing_or_raising_any_limit_as_coordinator_is_refused(limits):
    changes = slurm_tree.plan(declared(with_account("pharos_a_hpc", limits=limits)), recorded("seed_tree"))
    assert slurm_tree.coordinator_refusals(changes, "pharos-agent", recorded("seed_tree"))


def test_lowering_or_setting_a_first_limit_as_coordinator_is_allowed():
    accounts = with_account("pharos_a_hpc", limits={"GrpTRESMins": "node=300", "MaxSubmitJobs": 10})
    changes = slurm_tree.plan(declared(accounts), recorded("seed_tree"))
    assert changes and slurm_tree.coordinator_refusals(changes, "pharos-agent", recorded("seed_tree")) == []


@pytest.mark.parametrize("actor", ["root", "pharos-admin"])
def test_administrators_may_raise(actor):
    current = recorded("seed_tree")
    current["users"]["pharos-admin"] = {"default_account": "root", "admin_level": "operator"}
    changes = slurm_tree.plan(declared(with_account("pharos_a_hpc", limits={"GrpTRESMins": "node=1200"})), current)
    assert slurm_tree.coordinator_refusals(changes, actor, current) == []


@pytest.mark.parametrize(("accounts", "users", "message"), [
    (with_account("pharos_a_hpc", parent="pharos_nowhere"), None, "names parent pharos_nowhere, which neither exists"),
    (with_account("pharos_a_hpc", state="terminated"), None, "user pharosalice lists account pharos_a_hpc, which is declared terminated"),
    (None, [{"name": "pharoseve", "default_account": "pharos_a_missing"}], "lists account pharos_a_missing"),
    (SEED_ACCOUNTS + [{"name": "pharos", "parent": "root"}], None, "account pharos is declared twice"),
    (with_account("pharos_a_hpc", description="it's"), None, "may not contain quotes"),
    (with_account("pharos_a_hpc", limits={"GrpTRESMinutes": 5}), None, "unknown limit 'GrpTRESMinutes'"),
    (SEED_ACCOUNTS + [{"name": "pharos a hpc", "parent": "pharos"}], None, "is not a Slurm name"),
])
def test_a_bad_declaration_is_refused_naming_the_object(accounts, users, message):
    with pytest.raises(slurm_tree.PlanError, match=message):
        slurm_tree.plan(declared(accounts, users), recorded("seed_tree"))


def test_removing_an_undeclared_users_default_association_is_refused_before_writing():
    current = recorded("drifted_tree")
    current["associations"][("pharosdave", "root")] = {"fairshare": 1, "limits": {}}  # outside the managed tree
    with pytest.raises(slurm_tree.PlanError, match="pharosdave would lose the association with pharos_a_stray"):
        slurm_tree.plan(declared(), current, unlisted="remove")


# --- the diff and the writes ------------------------------------------------------------

def test_the_diff_shows_the_tree_before_and_after():
    changes = slurm_tree.plan(declared(), recorded("drifted_tree"), unlisted="remove")
    shown = slurm_tree.diff(declared(), recorded("drifted_tree"), changes)
    assert "  account pharos_a_stray description=\"pharos_a_stray\" organization=\"pharos\" MaxWall=10min\n" in shown["before"]
    assert "pharos_a_stray" not in shown["after"]
    assert "GrpTRESMins=node=1200" in shown["before"] and "GrpTRESMins=node=600" in shown["after"]
    assert "    user pharosalice (default)\n" in shown["after"].split("account pharos_default")[1]


def test_the_diff_of_a_converged_tree_is_empty():
    shown = slurm_tree.diff(declared(), recorded("seed_tree"), [])
    assert shown["before"] == shown["after"]


def test_additions_go_in_one_load_file_parents_first():
    changes = slurm_tree.plan(declared(), recorded("fresh_cluster"))
    text = slurm_batch.batches("rec", changes, recorded("fresh_cluster"))["additions"]
    lines = text.splitlines()
    assert lines[:3] == ["Cluster - 'rec'", "Parent - 'root'",
                         "Account - 'pharos':Description='pharos platform':Organization='pharos':Fairshare=100"]
    assert "Account - 'pharos_a_hpc':Description='project hpc':Organization='pharos':GrpSubmitJobs=50:" \
           "GrpTRES=cpu=4,mem=1024:GrpTRESMins=node=600:MaxWallDurationPerJob=4320" in lines
    assert lines.index("Parent - 'pharos_a_hpc'") > lines.index("Parent - 'pharos'")


def test_hand_edits_are_written_back_as_one_load_and_one_session():
    current = recorded("drifted_tree")
    changes = slurm_tree.plan(declared(), current, unlisted="remove")
    written = slurm_batch.batches("rec", changes, current)
    assert written["additions"] == "Cluster - 'rec'\nParent - 'pharos_a_hpc'\nUser - 'pharosbob':DefaultAccount='pharos_default'\n"
    assert written["modifications"].splitlines() == [
        "Cluster - 'rec'",
        "Parent - 'pharos'",
        "Account - 'pharos_a_hpc':Description='project hpc':GrpTRES=cpu=4,mem=1024:GrpTRESMins=node=600",
        "User - 'pharos-runtime':MaxSubmitJobs=0",
        "Parent - 'pharos_default'",
        "User - 'pharosalice':DefaultAccount='pharos_default'",
    ]
    assert written["session"] == [
        "delete user where name=pharosdave cluster=rec",
        "delete account where name=pharos_a_stray cluster=rec",
        "add coordinator account=pharos names=pharos-runtime",
    ]


def test_a_removed_tres_is_cleared_with_minus_one():
    assert sacctmgr.format_tres_change({"cpu": 8, "node": 2}, {"node": 4}) == "cpu=-1,node=4"


class RecordingSlurm:
    """Answers the three reads from a recording and counts every Slurm process started."""

    def __init__(self, state):
        self.outputs = {name: (FIXTURES / state / f"{name}.txt").read_text() for name in ("associations", "accounts", "users")}
        self.calls = []

    def __call__(self, argv, data=None, timeout=None):
        self.calls.append(argv)
        for name, read in sacctmgr.read_commands("sacctmgr", "rec").items():
            if argv == read:
                return 0, self.outputs[name], ""
        return 0, "", ""


@pytest.mark.parametrize("allocations", [10, 1000])
def test_the_number_of_slurm_processes_does_not_grow_with_the_tree(allocations):
    accounts = SEED_ACCOUNTS + [{"name": "pharos_a_%04d" % n, "parent": "pharos", "limits": {"GrpTRESMins": "node=%d" % (60 * n)}}
                                for n in range(allocations)]
    users = SEED_USERS + [{"name": "member%04d" % n, "default_account": "pharos_default", "accounts": ["pharos_a_%04d" % n]}
                          for n in range(allocations)]
    slurm = RecordingSlurm("drifted_tree")
    client = sacctmgr.SlurmClient(slurm, "rec")
    current = client.read()
    changes = slurm_tree.plan(slurm_tree.declare(accounts, users), current, unlisted="remove")
    slurm_write.write(client, changes, current, [])
    assert len(changes) > 2 * allocations
    assert client.processes == 3 + 3  # the three reads, two loads and one session


def test_users_known_only_in_another_cluster_get_their_default_from_their_first_association():
    # Regression: DefaultAccount is per cluster; read without the cluster it looked like drift.
    current = recorded("fresh_cluster")
    assert current["users"]["pharosalice"]["default_account"] is None
    changes = slurm_tree.plan(declared(), current)
    assert not [change for change in changes if change["action"] == "set_default_account"]
    assert slurm_tree.predict(current, changes)["users"]["pharosalice"]["default_account"] == "pharos_default"
