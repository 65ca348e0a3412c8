"""The job_identity role in adopt mode, on a host whose NSS does not read the recorded members
(this machine's /etc/nsswitch.conf lists no extrausers): the main entry point stops before any
change, the package's install included. site.yml checks that before any host changes and runs
the role's checked entry point, which leaves the check out."""

from pathlib import Path

import pytest
from test_files_in_place import play

ROLE = "pharos.hpc.job_identity : "
RANGES = dict(job_identity_member_uid_min=5000000, job_identity_member_uid_max=5999999,
              job_identity_member_gid_min=5000000, job_identity_member_gid_max=5999999)


def role(entry_point):
    return {"name": f"the role's {entry_point} entry point", "ansible.builtin.include_role": {
        "name": "pharos.hpc.job_identity", "tasks_from": entry_point},
        "vars": dict(RANGES, job_identity_site_mode="adopt")}


@pytest.fixture
def nss_without_extrausers():
    if "extrausers" in Path("/etc/nsswitch.conf").read_text():
        pytest.skip("this machine's NSS reads extrausers: nothing for adopt mode to refuse here")


def test_the_main_entry_point_in_adopt_mode_stops_before_the_package_is_installed(project, tmp_path,
                                                                                  nss_without_extrausers):
    results = play(project, tmp_path, [role("main")], "--check")
    stop = results[ROLE + "Stop on what the Site must change first"]
    assert stop["failed"] is True
    assert "Adopt mode stopped before any change on localhost" in stop["msg"]
    assert "the passwd line does not list extrausers" in stop["msg"]
    assert ROLE + "Install libnss-extrausers" not in results, sorted(results)


def test_the_checked_entry_point_leaves_the_check_to_the_play_before_it(project, tmp_path, nss_without_extrausers):
    results = play(project, tmp_path, [role("checked")], "--check")
    assert ROLE + "Read the Site's /etc/nsswitch.conf" not in results, sorted(results)
    assert ROLE + "Install libnss-extrausers" in results, sorted(results)
