"""The agents' last good cycle and last error, read from their journals as status.yml shows them.
The lines are the agents' own: upstream waldur-site-agent's structlog JSON, and the SSH access
agent's one line a cycle."""

import json

from ansible_collections.pharos.hpc.plugins.module_utils.release.cycles import journal_entries, summary

SECOND = 1_796_438_000  # 2026-12-05T02:33:20Z


def journal(*messages):
    """`journalctl --output json --output-fields MESSAGE` text, one entry a second."""
    return "\n".join(json.dumps({"__CURSOR": "s=1", "__REALTIME_TIMESTAMP": str((SECOND + offset) * 1_000_000),
                                 "MESSAGE": message})
                     for offset, message in enumerate(messages))


def at(offset):
    return "2026-12-05T02:33:%02d+00:00" % (20 + offset)


def site_agent(event, level="info", **fields):
    return json.dumps(dict(fields, event=event, level=level, logger="waldur_site_agent.backend",
                           timestamp="2026-12-05T02:34:32.511930+00:00"))


def access_agent(event, **fields):
    return json.dumps(dict(fields, event=event, agent="pharos-ssh-access-standin", time=SECOND))


PASS = [site_agent("Number of offerings to process: 1"), site_agent("Processing offering Icarus HPC"),
        site_agent("There are no pending or executing orders")]
FAILED_PASS = [site_agent("Number of offerings to process: 1"),
               site_agent("Unable to process the offering due to the error: 401 Unauthorized", level="error",
                          exception="Traceback (most recent call last):\n  ...\nhttpx.HTTPStatusError: 401"),
               site_agent("Registered new processor")]


def read(*messages):
    return summary(journal_entries(journal(*messages)))


def test_times_are_the_journals_in_utc():
    assert journal_entries(journal("one", "two")) == [("2026-12-05T02:33:20+00:00", "one"),
                                                       ("2026-12-05T02:33:21+00:00", "two")]


def test_a_site_agent_pass_without_an_error_is_good_until_its_last_line():
    status = read("Started waldur-site-agent@report.service", *PASS)
    assert status == {"last_log": at(3) + " " + PASS[-1], "last_good_cycle": at(3), "last_error": None,
                      "last_cycle_failed": False}


def test_a_pass_the_agent_could_not_finish_failed_and_is_the_last_error():
    status = read(*PASS, *FAILED_PASS)
    assert status["last_good_cycle"] == at(2)
    assert status["last_error"] == {"time": at(4), "message": "Unable to process the offering due to the error: "
                                                              "401 Unauthorized"}
    assert status["last_cycle_failed"] is True


def test_a_good_pass_after_a_failed_one_clears_the_failure_but_keeps_the_last_error():
    status = read(*FAILED_PASS, *PASS)
    assert status["last_good_cycle"] == at(5)
    assert status["last_error"]["time"] == at(1)
    assert status["last_cycle_failed"] is False


def test_the_access_agent_logs_one_line_a_cycle():
    status = read(access_agent("cycle", written=[], waiting=[]),
                  access_agent("error", stage="directory", message="LDAPSocketOpenError: no socket"))
    assert status["last_good_cycle"] == at(0)
    assert status["last_error"] == {"time": at(1), "message": "LDAPSocketOpenError: no socket"}
    assert status["last_cycle_failed"] is True
    assert read(access_agent("error", stage="site_api", message="refused"),
                access_agent("cycle", written=["pharosalice"]))["last_cycle_failed"] is False


def test_an_error_without_a_traceback_is_the_last_error_but_its_pass_went_on():
    complaint = site_agent("Offering Icarus HPC uses the 'ldap' username management backend, for which Waldur is "
                           "the source of truth, but its username_generation_policy is 'service_provider'.", level="error")
    status = read(*PASS[:2], complaint, PASS[2])
    assert status["last_error"]["time"] == at(2) and status["last_error"]["message"].startswith("Offering Icarus HPC")
    assert status["last_good_cycle"] == at(3)
    assert status["last_cycle_failed"] is False


def test_an_error_before_the_first_cycle_read_counts_for_no_cycle():
    status = read(site_agent("Traceback of a crash", level="critical"), *PASS)
    assert status["last_error"]["time"] == at(0)
    assert status["last_good_cycle"] == at(3)
    assert status["last_cycle_failed"] is False


def test_lines_that_are_not_json_belong_to_no_cycle():
    status = read("Started pharos-ssh-access-agent.service", "Traceback (most recent call last):", "[1, 2]")
    assert status == {"last_log": at(2) + " [1, 2]", "last_good_cycle": None, "last_error": None,
                      "last_cycle_failed": False}


def test_an_empty_journal_has_nothing_to_say():
    assert read() == {"last_log": None, "last_good_cycle": None, "last_error": None, "last_cycle_failed": False}


def test_a_message_that_is_not_utf8_is_read_with_replacements():
    text = json.dumps({"__REALTIME_TIMESTAMP": str(SECOND * 1_000_000), "MESSAGE": list(b"caf\xe9")})
    assert journal_entries(text) == [(at(0), "caf\ufffd")]


def test_a_long_error_message_is_cut():
    status = read(access_agent("error", stage="directory", message="x" * 1000))
    assert len(status["last_error"]["message"]) == 300
