"""Whether a running unit still runs files that changed after it read them."""

import os

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils.service_freshness import (
    ChangedFile,
    files_modified_at,
    freshness,
    main_process_started_at,
    parse_show,
    record_applied,
    recorded_applied_at,
)

NOW = 1_800_000_000.0
NOW_MONOTONIC = 5_000.0


def shown(state, started_monotonic_microseconds):
    return parse_show(f"ActiveState={state}\nExecMainStartTimestampMonotonic={started_monotonic_microseconds}\n")


def test_systemctl_show_is_read_as_properties():
    assert parse_show("ActiveState=active\nExecMainStartTimestampMonotonic=123\n\nId=a=b\n") == {
        "ActiveState": "active", "ExecMainStartTimestampMonotonic": "123", "Id": "a=b"}


def test_the_start_is_the_monotonic_start_on_the_wall_clock_to_the_microsecond():
    started = main_process_started_at(shown("active", 4_000_250_001), NOW, NOW_MONOTONIC)
    assert started == pytest.approx(NOW - 999.749999, abs=1e-6)


def test_a_socket_without_a_main_process_counts_from_when_it_became_active():
    properties = parse_show("ActiveState=active\nExecMainStartTimestampMonotonic=0\nActiveEnterTimestampMonotonic=4000000000\n")
    assert main_process_started_at(properties, NOW, NOW_MONOTONIC) == pytest.approx(NOW - 1000.0, abs=1e-6)


@pytest.mark.parametrize(("state", "started"), [("inactive", 4_000_000_000), ("failed", 4_000_000_000), ("active", 0)])
def test_a_unit_that_does_not_run_has_no_start(state, started):
    assert main_process_started_at(shown(state, started), NOW, NOW_MONOTONIC) is None


def test_a_file_changed_after_the_start_makes_the_unit_stale():
    result = freshness(100.0, None, [ChangedFile("/etc/a", 99.0), ChangedFile("/etc/b", 100.5)])
    assert result.stale and [changed.path for changed in result.changed_since] == ["/etc/b"]


def test_files_changed_before_the_start_leave_the_unit_current():
    assert not freshness(100.0, None, [ChangedFile("/etc/a", 99.999999)]).stale


def test_a_recorded_reload_after_the_change_makes_the_unit_current():
    assert not freshness(100.0, 101.0, [ChangedFile("/etc/a", 100.5)]).stale


def test_a_reload_recorded_before_a_later_restart_does_not_count_against_it():
    assert not freshness(200.0, 101.0, [ChangedFile("/etc/a", 150.0)]).stale
    assert freshness(100.0, 101.0, [ChangedFile("/etc/a", 150.0)]).stale


def test_a_unit_that_does_not_run_is_never_stale():
    result = freshness(None, None, [ChangedFile("/etc/a", NOW)])
    assert not result.running and not result.stale


def test_a_missing_file_is_skipped(tmp_path):
    present = tmp_path / "present.conf"
    present.write_text("x")
    os.utime(present, (50.0, 50.0))
    assert files_modified_at([str(present), str(tmp_path / "absent.conf")]) == [ChangedFile(str(present), 50.0)]


def test_a_recorded_reload_is_read_back_and_absent_before_any(tmp_path):
    directory = str(tmp_path / "applied")
    assert recorded_applied_at("ssh", directory) is None
    path = record_applied("ssh", directory)
    assert os.path.dirname(path) == directory and "ssh runs the files" in open(path, encoding="utf-8").read()
    assert recorded_applied_at("ssh", directory) == os.stat(path).st_mtime


def test_a_template_instance_has_a_record_of_its_own(tmp_path):
    directory = str(tmp_path)
    record_applied("waldur-site-agent@order_process.service", directory)
    assert recorded_applied_at("waldur-site-agent@order_process.service", directory) is not None
    assert recorded_applied_at("waldur-site-agent@membership_sync.service", directory) is None
