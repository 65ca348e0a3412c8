"""A written plan is read back through only the accounts and users it touched, and a change
Slurm dropped is still caught: written once more, then reported."""

from pathlib import Path

from ansible_collections.pharos.hpc.plugins.module_utils import sacctmgr, slurm_batch, slurm_tree, slurm_write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sacctmgr"
SHOW = ["sacctmgr", "--noheader", "--parsable2", "show"]


class FilteringSlurm:
    """Answers whole and targeted reads from the recorded seed tree, filtering rows by name as
    sacctmgr's `where accounts=`, `users=` and `names=` do. A write (a load or commands on
    standard input) runs ``on_write`` over the association rows: Slurm keeping the change, or,
    left out, dropping it."""

    def __init__(self, on_write=None):
        self.rows = {name: (FIXTURES / "seed_tree" / f"{name}.txt").read_text().splitlines()
                     for name in ("associations", "accounts", "users")}
        self.on_write = on_write
        self.calls = []
        self.written = []

    def __call__(self, argv, data=None, timeout=None):
        self.calls.append(argv)
        if argv[:4] != SHOW:
            self.written.append(data)
            if self.on_write:
                self.rows["associations"] = [self.on_write(row) for row in self.rows["associations"]]
            return 0, "", ""
        kind = argv[4]
        where = argv[argv.index("where") + 1:] if "where" in argv else []
        conditions = dict(word.split("=", 1) for word in where)
        name_column = {"associations": None, "accounts": 0, "users": 0}[kind]
        rows = self.rows[kind]
        for key, column in (("accounts", 0), ("users", 1), ("names", name_column)):
            if key in conditions:
                wanted = set(conditions[key].split(","))
                rows = [row for row in rows if row.split("|")[column] in wanted]
        return 0, "".join(row + "\n" for row in rows), ""

    def reads(self):
        return [argv for argv in self.calls if argv[:4] == SHOW]


def seed_declaration(hpc_hours=10):
    accounts = [
        {"name": "pharos", "description": "pharos platform"},
        {"name": "pharos_a_hpc", "parent": "pharos", "limits": {"GrpTRESMins": "node=%d" % (60 * hpc_hours)}},
    ]
    return slurm_tree.declare(accounts, [{"name": "pharosbob", "default_account": "pharos_default",
                                          "accounts": ["pharos_a_hpc"]}])


def repair(slurm, desired):
    client = sacctmgr.SlurmClient(slurm, "rec")
    current = client.read()
    changes = slurm_tree.plan(desired, current)
    remaining = slurm_write.write_and_confirm(client, desired, current, changes, [], "keep")
    return changes, remaining


def raise_hpc_to_twenty_hours(row):
    return row.replace("pharos_a_hpc||pharos||1|node=600|", "pharos_a_hpc||pharos||1|node=1200|")


def test_one_changed_limit_is_written_as_one_modify_and_read_back_through_its_account_alone():
    slurm = FilteringSlurm(on_write=raise_hpc_to_twenty_hours)

    changes, remaining = repair(slurm, seed_declaration(hpc_hours=20))

    assert [change["action"] for change in changes] == ["modify_account"]
    assert remaining == []
    assert slurm.written == ["modify account where name=pharos_a_hpc cluster=rec set GrpTRESMins=node=1200\n"]
    whole, after = slurm.reads()[:3], slurm.reads()[3:]
    assert all(not any(word.startswith(("accounts=", "users=", "names=")) for word in argv) for argv in whole)
    targeted = sorted((argv[4], argv[-1]) for argv in after)
    assert targeted == [("accounts", "names=pharos_a_hpc"), ("associations", "accounts=pharos_a_hpc")]
    assert len(slurm.calls) == 3 + 1 + 2  # the whole tree, one write, the account's two reads


def test_a_change_slurm_drops_is_caught_by_the_targeted_read_written_again_and_reported():
    slurm = FilteringSlurm(on_write=None)

    changes, remaining = repair(slurm, seed_declaration(hpc_hours=20))

    assert remaining == changes
    assert len(slurm.written) == 2


def test_a_read_back_keeps_what_it_did_not_read():
    current = sacctmgr.read_tree({name: (FIXTURES / "seed_tree" / f"{name}.txt").read_text()
                                  for name in ("associations", "accounts", "users")})
    bob = {"default_account": "pharos_a_hpc", "admin_level": "none"}
    fresh = {"accounts": {}, "associations": {}, "users": {"pharosbob": bob}}

    merged = sacctmgr.merge_tree(current, fresh, accounts={"pharos_a_gone"}, users={"pharosbob"})

    assert "pharos_a_gone" not in merged["accounts"]  # read, and gone from Slurm
    assert merged["accounts"]["pharos_a_hpc"] == current["accounts"]["pharos_a_hpc"]  # not read: kept
    assert not [key for key in merged["associations"] if key[0] == "pharosbob"]
    assert ("pharosalice", "pharos_a_hpc") in merged["associations"]
    assert merged["users"]["pharosbob"]["default_account"] == "pharos_a_hpc"


def test_a_coordinator_change_reads_back_every_account_below_it():
    current = sacctmgr.read_tree({name: (FIXTURES / "seed_tree" / f"{name}.txt").read_text()
                                  for name in ("associations", "accounts", "users")})
    changes = [{"action": "add_coordinators", "account": "pharos", "users": ["pharoscarol"]}]

    accounts, users = slurm_tree.touched_names(current, changes)

    assert accounts == {"pharos", "pharos_a_gone", "pharos_a_hpc", "pharos_a_qual", "pharos_default"}
    assert users == set()


def test_many_changed_values_in_a_small_tree_go_as_one_load():
    current = sacctmgr.read_tree({name: (FIXTURES / "seed_tree" / f"{name}.txt").read_text()
                                  for name in ("associations", "accounts", "users")})
    changes = [{"action": "modify_account", "account": name, "settings": {"MaxSubmitJobs": (None, 5)}}
               for name in ("pharos_a_hpc", "pharos_a_qual")]

    written = slurm_batch.batches("rec", changes, current)

    assert written["modification_commands"] == []
    assert written["modifications"].splitlines() == [
        "Cluster - 'rec'", "Parent - 'pharos'",
        "Account - 'pharos_a_hpc':MaxSubmitJobs=5", "Account - 'pharos_a_qual':MaxSubmitJobs=5"]


def test_a_modify_command_clears_what_a_load_clears():
    changes = [{"action": "modify_association", "user": "pharosbob", "account": "pharos_a_hpc",
                "settings": {"QOS": (("normal",), None), "GrpTRES": ({"cpu": 4, "mem": 1024}, {"cpu": 8}),
                             "MaxWall": (60, None), "fairshare": (1, "parent")}}]

    assert slurm_batch.modification_commands("rec", changes) == [
        "modify user where name=pharosbob account=pharos_a_hpc cluster=rec set "
        "Fairshare=parent GrpTRES=cpu=8,mem=-1 MaxWall=-1 QOS="]


def test_a_large_plan_is_read_back_whole():
    slurm = FilteringSlurm()
    client = sacctmgr.SlurmClient(slurm, "rec")
    current = client.read()
    changes = [{"action": "add_association", "user": "member%04d" % n, "account": "pharos_a_hpc",
                "default_account": "pharos_a_hpc", "fairshare": None, "limits": {}}
               for n in range(slurm_write.TARGETED_READ_LIMIT)]

    slurm_write.read_back(client, current, changes)

    # The reads run side by side in threads: which of them sacctmgr starts first is not fixed.
    assert sorted(slurm.reads()[3:]) == sorted(sacctmgr.read_commands("sacctmgr", "rec").values())
