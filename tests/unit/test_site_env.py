"""site.env's strict reader and the Site's rules (docs/release.md, "site.env").

Every case starts from the shipped docs/examples/site.env.example, which must pass, and changes
one line; the refusal must name the key, the line, the rule and the fix.
"""

import os

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils import site_env, site_env_rules

COMPONENTS = ["site-agent", "ssh-access"]


@pytest.fixture(scope="module")
def example(project):
    return (project / "docs" / "examples" / "site.env.example").read_text()


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
    ("WALDUR_API_URL=https://w.example.org/\tapi/", "WALDUR_API_URL", "holds a control or invisible character (U+0009)",
     "remove it"),
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


@pytest.mark.parametrize("line", ["https://admin:S3cret@waldur.example.org/api/?x=1",
                                  "export https://admin:S3cret@w.example.org/?a=b",
                                  "https://admin:S3cret@w.example.org/ = x"])
def test_a_pasted_line_that_is_not_key_value_is_refused_without_repeating_it(example, line):
    text, number = with_line(example, "WALDUR_API_URL", line)
    violations = [violation for violation in refusal(text).violations if violation.line == number]
    assert len(violations) == 1 and violations[0].key is None, violations
    message = str(refusal(text))
    assert "site.env line %d" % number in message
    assert "S3cret" not in message and "admin" not in message, message


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
    ("WALDUR_API_URL", "https://ex ample.org/api/", "names a host that is neither a DNS name nor an IP address",
     "letters, digits, - and ."),
    ("WALDUR_API_URL", "https://h%40evil/api/", "names a host that is neither a DNS name nor an IP address",
     "letters, digits, - and ."),
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


# Classes of bad input that once crashed, hung or slipped through: each case is one member of
# its class, and every member must be refused with its key and line.

INVISIBLE = ["\u0085", "\u0080", "\u009f", "\u2028", "\u2029", "\u200b", "\u202e", "\ufeff", "\u001c", "\u007f",
             "\ue000"]


@pytest.mark.parametrize("character", INVISIBLE, ids=lambda character: "U+%04X" % ord(character))
def test_a_control_separator_or_invisible_character_in_a_value_is_refused_naming_its_code_point(example, character):
    text, number = with_line(example, "SITE_AGENT_MODES", "SITE_AGENT_MODES=order_process%smembership_sync report"
                             % character)
    # The line is refused, so the key is also reported missing.
    violation, _missing = refusal(text, components=COMPONENTS).violations
    assert (violation.key, violation.line) == ("SITE_AGENT_MODES", number)
    assert violation.rule == "holds a control or invisible character (U+%04X)" % ord(character)


@pytest.mark.parametrize("space", ["\u00a0", "\u2007", "\u202f", "\u3000", "\u2003", "\u1680"],
                         ids=lambda character: "U+%04X" % ord(character))
def test_a_space_other_than_ascii_inside_a_list_is_refused_rather_than_read_as_a_separator(example, space):
    text, number = with_line(example, "ACTIVATION_COMPONENTS", "ACTIVATION_COMPONENTS=site-agent%sssh-access" % space)
    violation, _missing = refusal(text, components=COMPONENTS).violations
    assert (violation.key, violation.line) == ("ACTIVATION_COMPONENTS", number)
    assert violation.rule == "holds a space other than the ASCII space (U+%04X)" % ord(space)


URL_KEYS = ["WALDUR_API_URL", "CENTRAL_SITE_API_URL", "NATIVE_SITE_AGENT_LDAP_URI", "SLURMRESTD_URL"]
HOSTS = {"WALDUR_API_URL": "https://w.example.org", "CENTRAL_SITE_API_URL": "https://site.example.org",
         "NATIVE_SITE_AGENT_LDAP_URI": "ldap://127.0.0.1", "SLURMRESTD_URL": "http://127.0.0.1"}


@pytest.mark.parametrize("key", URL_KEYS)
@pytest.mark.parametrize("broken", ["{scheme}://[127.0.0.1", "{scheme}://[::1", "{scheme}://127.0.0.1]:80",
                                    "{scheme}://[not-an-address]:80"])
def test_a_malformed_url_is_refused_with_its_key_and_line_instead_of_crashing(example, key, broken):
    text, number = with_line(example, key, "%s=%s" % (key, broken.format(scheme=HOSTS[key].split(":")[0])))
    violation, = refusal(text, components=COMPONENTS).violations
    assert (violation.key, violation.line, violation.rule) == (key, number, "is not a well-formed URL")


@pytest.mark.parametrize("key", URL_KEYS)
@pytest.mark.parametrize(("suffix", "rule"), [(":", "has a port that is not a number from 1 to 65535"),
                                              (":0", "has a port that is not a number from 1 to 65535"),
                                              (":65536", "has a port that is not a number from 1 to 65535"),
                                              (":http", "has a port that is not a number from 1 to 65535"),
                                              ("?", "has a query or fragment"),
                                              ("/?", "has a query or fragment")])
def test_an_empty_or_zero_port_and_an_empty_query_are_refused(example, key, suffix, rule):
    text, number = with_line(example, key, "%s=%s%s" % (key, HOSTS[key], suffix))
    violation, = refusal(text, components=COMPONENTS).violations
    assert (violation.key, violation.line, violation.rule) == (key, number, rule)


@pytest.mark.parametrize("key", URL_KEYS + ["PYTHON_INDEX_URL"])
@pytest.mark.parametrize("url", ["https://agent:Pa55-word-7@host.example.org/",
                                 "https://agent:Pa55/word-7@host.example.org",
                                 "https://host.example.org/agent:Pa55-word-7@x",
                                 "https://[::1/agent:Pa55-word-7@x",
                                 "ldap://agent:Pa55?word-7@127.0.0.1"])
def test_a_refused_url_is_never_quoted_back_with_a_password_it_carries(example, key, url):
    text = example + "\n%s=%s\n" % (key, url) if key == "PYTHON_INDEX_URL" else with_line(
        example, key, "%s=%s" % (key, url))[0]
    error = refusal(text, components=COMPONENTS)
    assert "Pa55" not in str(error) and "word-7" not in str(error)
    assert any(violation.key == key for violation in error.violations)


def test_a_fifo_in_place_of_site_env_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "site.env"
    os.mkfifo(fifo)
    with pytest.raises(site_env.SiteEnvError) as raised:
        site_env_rules.check_file(str(fifo))
    assert "is a FIFO, not a regular file" in str(raised.value)


@pytest.mark.parametrize(("make", "kind"), [(lambda path: path.mkdir(), "a directory"),
                                            (lambda path: path.symlink_to("/dev/null"), "a character device")])
def test_a_directory_or_device_in_place_of_site_env_is_refused_naming_what_it_is(tmp_path, make, kind):
    path = tmp_path / "site.env"
    make(path)
    with pytest.raises(site_env.SiteEnvError) as raised:
        site_env_rules.check_file(str(path))
    assert "is %s, not a regular file" % kind in str(raised.value)


@pytest.mark.parametrize(("mode", "refused"), [(0o646, True), (0o666, True), (0o602, True), (0o644, False),
                                               (0o664, False), (0o600, False)])
def test_a_site_env_every_user_may_write_is_refused_with_its_mode(example, tmp_path, mode, refused):
    path = tmp_path / "site.env"
    path.write_text(example)
    path.chmod(mode)
    if not refused:
        assert site_env_rules.check_file(str(path), components=COMPONENTS)
        return
    with pytest.raises(site_env.SiteEnvError) as raised:
        site_env_rules.check_file(str(path), components=COMPONENTS)
    violation, = raised.value.violations
    assert violation.rule == "is writable by every user (mode %04o)" % mode and "chmod o-w" in violation.fix


# A token pasted into site.env, on a line of its own or as a value: no message prints it back, nor
# a part of it long enough to matter.
BASE64_TOKEN = "c2l0ZS1hZ2VudC10b2tlbi1vZi10aGUtbGFi"  # 36 characters, padded below
BASE32_TOKEN = "JBSWY3DPEHPK3PXPMFRGGZDFMZTWQ2LK"
HEX_TOKEN = "9f2c4e1a7b3d5f6081a2c3d4e5f60718293a4b5c"

PASTED_TOKENS = [
    ("WALDUR_API_URL", BASE64_TOKEN + "==", BASE64_TOKEN),
    ("WALDUR_API_URL", BASE64_TOKEN + "=", BASE64_TOKEN),
    ("WALDUR_API_URL", BASE32_TOKEN + "======", BASE32_TOKEN),
    ("WALDUR_API_URL", HEX_TOKEN, HEX_TOKEN),
    ("WALDUR_API_URL", "export " + BASE64_TOKEN + "==", BASE64_TOKEN),
    ("WALDUR_API_URL", BASE32_TOKEN + " = x", BASE32_TOKEN),
    ("SITE_AGENT_MODES", "SITE_AGENT_MODES=report " + BASE64_TOKEN + "==", BASE64_TOKEN),
    ("ACTIVATION_COMPONENTS", "ACTIVATION_COMPONENTS=site-agent " + HEX_TOKEN, HEX_TOKEN),
    ("SLURMRESTD_URL", "SLURMRESTD_URL=http://%s:6820" % HEX_TOKEN, HEX_TOKEN),
    ("CENTRAL_SITE_API_URL", "CENTRAL_SITE_API_URL=https://%s/v1/site/" % HEX_TOKEN, HEX_TOKEN),
    ("PHAROS_AGENT_UID", "PHAROS_AGENT_UID=%s" % ("7" * 40), "7" * 40),
]


@pytest.mark.parametrize(("key", "line", "token"), PASTED_TOKENS, ids=[case[1][:40] for case in PASTED_TOKENS])
def test_a_token_pasted_into_site_env_is_never_quoted_back_not_even_in_part(example, key, line, token):
    text, number = with_line(example, key, line)
    message = str(refusal(text, components=["site-agent", "ssh-access"]))
    assert "site.env line %d" % number in message, message
    for start in range(0, len(token) - 8):
        assert token[start:start + 8] not in message, message


def test_a_padded_base64_line_is_refused_by_its_line_number_alone(example):
    text, number = with_line(example, "WALDUR_API_URL", BASE64_TOKEN + "==")
    violation = next(violation for violation in refusal(text).violations if violation.line == number)
    assert violation.key is None
    assert str(violation) == ("site.env line %d does not start with a key: the text before its first = is not one "
                              "(capital letters, digits and _); write KEY=value with a key from the collection's "
                              "docs/examples/site.env.example." % number)


def test_a_line_that_is_not_key_value_names_only_the_first_few_characters_of_a_key_like_word(example):
    text, number = with_line(example, "NATIVE_SITE_AGENT_LDAP_URI", "NATIVE_SITE_AGENT_LDAP_URI: ldap://127.0.0.1")
    violation = next(violation for violation in refusal(text).violations if violation.line == number)
    assert violation.rule == "is not KEY=value, a comment or blank (it begins NATIVE_SIT...)"
    assert "127.0.0.1" not in str(violation)
