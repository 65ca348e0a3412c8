"""site.env's strict reader and the Site's rules (seed 002 §2, §3, §5).

Every case starts from the shipped release/site.env.example, which must pass, and changes
one line; the refusal must name the key, the line, the rule and the fix.
"""

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils import site_env, site_env_rules

COMPONENTS = ["site-agent", "ssh-access"]


@pytest.fixture(scope="module")
def example(project):
    return (project / "release" / "site.env.example").read_text()


def with_line(text, key, value):
    """text with KEY's line replaced by value (a whole line), and that line's number."""
    lines = text.split("\n")
    number = next(index for index, line in enumerate(lines) if line.startswith(key + "="))
    lines[number] = value
    return "\n".join(lines), number + 1


def refusal(text, **context):
    with pytest.raises(site_env.SiteEnvError) as raised:
        site_env_rules.check(text, **context)
    return raised.value


def test_the_shipped_example_passes_every_rule_and_names_every_known_key(example):
    values = site_env_rules.check(example, components=COMPONENTS, dependency_mode="wheelhouse")
    assert set(values) == set(site_env.KNOWN_KEYS) - site_env.OPTIONAL_KEYS
    for key in site_env.KNOWN_KEYS:
        assert key in example, "site.env.example does not document %s" % key


def test_nothing_is_taken_from_the_environment(example, monkeypatch):
    text, _number = with_line(example, "SLURMRESTD_URL", "")
    monkeypatch.setenv("SLURMRESTD_URL", "http://127.0.0.1:6820")
    error = refusal(text)
    assert [(violation.key, violation.rule) for violation in error.violations] == [("SLURMRESTD_URL", "is missing")]


def test_a_value_is_taken_literally_with_everything_after_the_first_equals_sign():
    lines, violations = site_env.parse("WALDUR_API_URL=https://w.example.org/api/?a=b\n")
    assert violations == []
    assert lines["WALDUR_API_URL"] == site_env.Line("WALDUR_API_URL", "https://w.example.org/api/?a=b", 1)


SYNTAX_CASES = [
    ("WALDUR_API_URL=\"https://w.example.org/api/\"", "WALDUR_API_URL", "holds a quote", "without quotes"),
    ("WALDUR_API_URL='https://w.example.org/api/'", "WALDUR_API_URL", "holds a quote", "without quotes"),
    ("WALDUR_API_URL=https://${HOST}/api/", "WALDUR_API_URL", "holds substitution syntax", "literal value"),
    ("WALDUR_API_URL=https://`hostname`/api/", "WALDUR_API_URL", "holds substitution syntax", "literal value"),
    ("WALDUR_API_URL=https://w.example.org/api/\\", "WALDUR_API_URL", "holds a backslash", "literal value"),
    ("WALDUR_API_URL=https://w.example.org/api/ # Waldur", "WALDUR_API_URL", "holds a #", "own line"),
    ("WALDUR_API_URL=https://w.example.org/api/ ", "WALDUR_API_URL", "ends with whitespace", "trailing spaces"),
    ("WALDUR_API_URL=https://w.example.org/\tapi/", "WALDUR_API_URL", "holds a control character", "remove it"),
    ("WALDUR_API_URL = https://w.example.org/api/", "WALDUR_API_URL", "has spaces around", "no spaces around ="),
    ("export WALDUR_API_URL=https://w.example.org/api/", "WALDUR_API_URL", "starts with export", "never sourced"),
    ("WALDUR_API_URL", None, "is not KEY=value", "write KEY=value"),
    ("waldur_api_url=https://w.example.org/api/", "waldur_api_url", "is not a key", "site.env.example"),
    ("WALDUR_API_URL=", "WALDUR_API_URL", "is empty", "give it a value"),
    ("WALDUR_API_URI=https://w.example.org/api/", "WALDUR_API_URI", "is not a site.env key", "did you mean WALDUR_API_URL?"),
    ("WALDUR_API_URL=https://w.example.org/api/\r", None, "carriage return", "Unix line endings"),
]


@pytest.mark.parametrize(("line", "key", "rule", "fix"), SYNTAX_CASES, ids=[case[0] for case in SYNTAX_CASES])
def test_a_line_another_reader_would_read_differently_is_refused_with_its_line(example, line, key, rule, fix):
    text, number = with_line(example, "WALDUR_API_URL", line)
    violations = [violation for violation in refusal(text).violations if violation.line == number]
    assert len(violations) == 1, violations
    assert (violations[0].key, rule in violations[0].rule, fix in violations[0].fix) == (key, True, True), violations[0]
    assert str(violations[0]).startswith("site.env line %d" % number)


def test_a_duplicate_key_is_refused_naming_both_lines(example):
    text = example + "SLURM_STAGING_PARTITION=other\n"
    first = next(number for number, line in enumerate(example.split("\n"), 1) if line.startswith("SLURM_STAGING_PARTITION="))
    violation, = refusal(text).violations
    assert violation.key == "SLURM_STAGING_PARTITION"
    assert violation.rule == "is set again (first on line %d)" % first
    assert violation.line == len(example.split("\n"))


def test_a_file_that_is_not_utf8_is_refused():
    violation, = refusal(b"WALDUR_API_URL=https://w\xe9.example.org/\n").violations
    assert "not UTF-8" in violation.rule


RULE_CASES = [
    ("WALDUR_API_URL", "http://w.example.org/api/", "must use https://", "https:// URL"),
    ("WALDUR_API_URL", "https://agent:s3cret@w.example.org/api/", "embeds credentials", "/etc/pharos-hpc/secrets"),
    ("CENTRAL_SITE_API_URL", "https://site.example.org/v1/site/", "is not an origin", "https://site.example.org;"),
    ("CENTRAL_SITE_API_URL", "https://site.example.org/", "is not an origin", "append /v1/site"),
    ("CENTRAL_SITE_API_URL", "https://site.example.org?x=1", "has a query or fragment", "remove everything"),
    ("CENTRAL_SITE_API_URL", "https://token@site.example.org", "embeds credentials", "remove user:password@"),
    ("CENTRAL_OFFERING_UUID", "0123456789ABCDEF0123456789ABCDEF", "is not 32 lowercase hex", "lower case without dashes"),
    ("CENTRAL_OFFERING_UUID", "01234567-89ab-cdef-0123-456789abcdef", "is not 32 lowercase hex", "without dashes"),
    ("NATIVE_SITE_AGENT_LDAP_URI", "ldap://ldap.example.org:389", "is not on host loopback", "127.0.0.1"),
    ("NATIVE_SITE_AGENT_LDAP_URI", "ldaps://127.0.0.1:636", "must use ldap://", "ldap:// URL"),
    ("NATIVE_SITE_AGENT_LDAP_URI", "ldap://127.0.0.1:99999", "port", "correct the port"),
    ("NATIVE_SSH_ACCESS_LDAP_URI", "ldap://127.0.0.1:389", "must use ldapi://", "ldapi:// URL"),
    ("SLURMRESTD_URL", "http://10.0.0.5:6820", "is not on host loopback (10.0.0.5)", "127.0.0.1"),
    ("SLURMRESTD_URL", "http://[::1]:6820", None, None),
    ("SLURMRESTD_URL", "http://localhost:6820", None, None),
    ("SLURM_STAGING_PARTITION", "compute", "is the compute partition too", "staging partition"),
    ("SLURM_COMPUTE_PARTITION", "compute,debug", "is not a Slurm partition name", "letters, digits"),
    ("PHAROS_AGENT_UID", "999", "system or reserved ID", "1000-59999"),
    ("PHAROS_AGENT_UID", "65534", "system or reserved ID", "1000-59999"),
    ("PHAROS_AGENT_UID", "-5", "is not a whole number", "decimal digits"),
    ("PHAROS_AGENT_UID", "5000123", "lies in the member UID range 5000000-5499999", "outside every member"),
    ("PHAROS_SSH_ACCESS_UID", "4100001", "equals PHAROS_AGENT_UID", "its own UID"),
    ("PHAROS_SSH_ACCESS_GID", "4100001", "equals PHAROS_AGENT_GID", "its own GID"),
    ("PHAROS_AGENT_GID", "5560000", "lies in the project GID range 5550000-5599999", "outside every member"),
    ("PHAROS_SSH_ACCESS_GID", "5500000", "lies in the member GID range 5500000-5549999", "outside every member"),
    ("MEMBER_UID_MAX", "4999999", "is below MEMBER_UID_MIN", "swap or correct"),
    ("MEMBER_GID_MIN", "12", "1000 or more", "outside the system range"),
    ("PROJECT_GID_MIN", "5540000", "overlaps the member GID range 5500000-5549999", "range of their own"),
    ("SITE_AGENT_MODES", "order_process membership_sync", "does not include report", "add report"),
    ("SITE_AGENT_MODES", "order_process,report", "separates modes with commas", "spaces"),
    ("SITE_AGENT_MODES", "report event_process", "names event_process, which is not one of", "remove event_process"),
    ("SITE_AGENT_MODES", "report report", "names report twice", "name it once"),
    ("ACTIVATION_COMPONENTS", "site-agent slurm-runtime", "names slurm-runtime, which is not one of site-agent, ssh-access",
     "remove slurm-runtime"),
    ("LDAP_BASE_DN", "icarus-hpc.pharos", "is not a distinguished name", "dc=example,dc=org"),
]


def rule_id(case):
    return "%s=%s" % case[:2]


@pytest.mark.parametrize(("key", "value", "rule", "fix"), RULE_CASES, ids=[rule_id(case) for case in RULE_CASES])
def test_a_value_that_breaks_a_site_rule_is_refused_with_key_line_rule_and_fix(example, key, value, rule, fix):
    text, number = with_line(example, key, "%s=%s" % (key, value))
    if rule is None:
        assert site_env_rules.check(text, components=COMPONENTS)[key] == value
        return
    violations = refusal(text, components=COMPONENTS).violations
    assert len(violations) == 1, "\n".join(map(str, violations))
    violation = violations[0]
    assert rule in violation.rule and fix in violation.fix, str(violation)
    assert violation.line == number or violation.key != key, str(violation)


def test_a_refused_url_with_credentials_is_never_quoted_back(example):
    text, _number = with_line(example, "WALDUR_API_URL", "WALDUR_API_URL=https://agent:s3cret@w.example.org/api/")
    assert "s3cret" not in str(refusal(text))


def test_every_violation_is_reported_in_one_run_in_line_order(example):
    text = example
    for key, value in [("WALDUR_API_URL", "http://w/"), ("CENTRAL_OFFERING_UUID", "x"),
                       ("SLURM_STAGING_PARTITION", "compute"), ("SITE_AGENT_MODES", "order_process")]:
        text, _number = with_line(text, key, "%s=%s" % (key, value))
    text += "UNKNOWN_KEY=1\n"
    error = refusal(text, components=COMPONENTS)
    assert [violation.key for violation in error.violations] == [
        "WALDUR_API_URL", "CENTRAL_OFFERING_UUID", "SLURM_STAGING_PARTITION", "SITE_AGENT_MODES", "UNKNOWN_KEY"]
    assert str(error).startswith("site.env is refused (5 problems):")


def test_index_mode_requires_an_https_python_index_and_wheelhouse_mode_does_not(example):
    violation, = refusal(example, dependency_mode="index").violations
    assert (violation.key, violation.rule) == ("PYTHON_INDEX_URL", "is missing")
    text = example + "PYTHON_INDEX_URL=http://pypi.example.org/simple/\n"
    violation, = refusal(text, dependency_mode="index").violations
    assert (violation.key, violation.rule) == ("PYTHON_INDEX_URL", "must use https://")
    assert site_env_rules.check(example + "PYTHON_INDEX_URL=https://pypi.example.org/simple/\n", dependency_mode="index")


def test_activation_components_are_checked_against_the_manifest_only_when_it_is_given(example):
    text, _number = with_line(example, "ACTIVATION_COMPONENTS", "ACTIVATION_COMPONENTS=site-agent slurm-runtime")
    assert site_env_rules.check(text)["ACTIVATION_COMPONENTS"] == "site-agent slurm-runtime"
    assert refusal(text, components=["site-agent"]).violations[0].key == "ACTIVATION_COMPONENTS"


def test_a_file_is_read_as_bytes_from_its_path(example, tmp_path):
    path = tmp_path / "site.env"
    path.write_text(example)
    assert site_env_rules.check_file(str(path), components=COMPONENTS)["CENTRAL_OFFERING_UUID"] == "0123456789abcdef0123456789abcdef"
    lines, violations = site_env.read(str(path))
    assert violations == [] and lines["SITE_AGENT_MODES"].number > 1
