"""The release manifest, SHA256SUMS over a release tree, and the install fingerprint (docs/release.md, "manifest.yml")."""

import copy
import os

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils.release import contents as release
from release_builder.archive import dump_manifest, write_sums

MANIFEST = {
    "format": 1, "release_id": "2026.11.0", "dependency_mode": "wheelhouse", "python_version": "3.13",
    "site_env_example": "site.env.example",
    "components": {
        "site-agent": {"requirements": "requirements/site-agent.txt", "units": ["units/waldur-site-agent@.service"],
                       "entry_points": ["waldur_site_agent"]},
        "ssh-access": {"requirements": "requirements/ssh-access.txt", "units": ["units/pharos-ssh-access-agent.service"],
                       "entry_points": ["pharos-ssh-access-agent"]},
    },
}
FILES = {
    "manifest.yml": dump_manifest(MANIFEST),
    "site.env.example": "WALDUR_API_URL=https://waldur.example.org/api/\n",
    "requirements/site-agent.txt": "waldur-site-agent==1.0.8rc9 --hash=sha256:" + "a" * 64 + "\n",
    "requirements/ssh-access.txt": "pharos-ssh-access-standin==0.1.0 --hash=sha256:" + "b" * 64 + "\n",
    "units/waldur-site-agent@.service": "[Service]\nUser=pharos-agent\n",
    "units/pharos-ssh-access-agent.service": "[Service]\nUser=pharos-ssh-access\n",
    "wheelhouse/six-1.17.0-py2.py3-none-any.whl": "not really a wheel, but bytes to hash\n",
}


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "2026.11.0"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    write_sums(str(root))
    return root


def changed(**fields):
    manifest = copy.deepcopy(MANIFEST)
    for dotted, value in fields.items():
        *path, last = dotted.split("__")
        holder = manifest
        for part in path:
            holder = holder[part]
        if value is None:
            del holder[last]
        else:
            holder[last] = value
    return manifest


# --- the manifest ---------------------------------------------------------------------------

def test_a_dumped_manifest_loads_back_equal():
    assert release.load_manifest(dump_manifest(MANIFEST)) == MANIFEST


MANIFEST_CASES = [
    ({"dependency_mode": "pypi"}, "dependency_mode must be index or wheelhouse, not 'pypi'"),
    ({"release_id": "../evil"}, "release_id '../evil' must be 1-64 characters"),
    ({"release_id": "Release 1"}, "release_id 'Release 1' must be 1-64 characters"),
    ({"format": 2}, "format must be 1, not 2"),
    ({"python_version": "3"}, "python_version must be the target interpreter's 3.N"),
    ({"signature": "x"}, "unknown field signature"),
    ({"components": {}}, "components must map each component's name"),
    ({"components__site-agent__requirements": "../site-agent.txt"},
     "component site-agent: requirements must be requirements/site-agent.txt"),
    ({"components__site-agent__units": ["/etc/systemd/system/x.service"]},
     "component site-agent: unit '/etc/systemd/system/x.service' is not units/pharos-<name>.service"),
    ({"components__site-agent__units": ["units/ssh.service"]},
     "component site-agent: unit 'units/ssh.service' is not units/pharos-<name>.service"),
    ({"components__site-agent__units": ["units/systemd-logind.service"]},
     "component site-agent: unit 'units/systemd-logind.service' is not units/pharos-<name>.service"),
    ({"components__site-agent__units": ["units/pharos-member-token@.service"]},
     "component site-agent: unit 'units/pharos-member-token@.service' is one the collection's roles install"),
    ({"components__site-agent__units": []}, "component site-agent: units must list at least one unit file"),
    ({"components__ssh-access__entry_points": ["rm -rf"]}, "component ssh-access: entry_points must list"),
    ({"components__ssh-access__units": ["units/waldur-site-agent@.service"]},
     "unit units/waldur-site-agent@.service belongs to both site-agent and ssh-access"),
    ({"components__site-agent__wheels": []}, "component site-agent: unknown field wheels"),
]


@pytest.mark.parametrize(("fields", "problem"), MANIFEST_CASES, ids=[next(iter(case[0])) for case in MANIFEST_CASES])
def test_a_manifest_error_is_named_with_its_fix(fields, problem):
    problems = release.manifest_problems(changed(**fields))
    assert len(problems) == 1 and problems[0].startswith(problem), problems


def test_a_component_name_outside_the_naming_rule_is_refused():
    manifest = changed()
    manifest["components"]["Slurm Runtime"] = manifest["components"].pop("ssh-access")
    assert release.manifest_problems(manifest) == [
        "component Slurm Runtime: the name must be lowercase letters, digits and - (like site-agent)"]


@pytest.mark.parametrize("name", ["current", "previous", "releases", "signer"])
def test_a_component_named_like_an_entry_of_the_hosts_release_tree_is_refused(name):
    manifest = changed()
    manifest["components"][name] = manifest["components"].pop("ssh-access")
    assert release.manifest_problems(manifest) == [
        "component %s: the name is one the host's release tree uses (/opt/pharos-hpc/%s); name the component "
        "otherwise (like site-agent)" % (name, name)]


def test_a_manifest_that_is_not_yaml_is_refused_with_every_problem_at_once():
    with pytest.raises(release.ReleaseError, match="it is not YAML"):
        release.load_manifest("components: [unclosed")
    with pytest.raises(release.ReleaseError) as raised:
        release.load_manifest(release.yaml.safe_dump(changed(format=3, dependency_mode=None, release_id="")))
    assert len(raised.value.problems) == 3


# --- SHA256SUMS -----------------------------------------------------------------------------

def test_a_release_written_with_its_sums_verifies_and_returns_its_manifest(root):
    assert release.verify(str(root)) == MANIFEST
    lines = (root / "SHA256SUMS").read_text().splitlines()
    assert [line.split("  ", 1)[1] for line in lines] == sorted(set(FILES))


def tamper_altered(root):
    (root / "units" / "waldur-site-agent@.service").write_text("[Service]\nUser=root\n")
    return ["units/waldur-site-agent@.service does not match its SHA-256 in SHA256SUMS: it was altered"]


def tamper_missing(root):
    (root / "wheelhouse" / "six-1.17.0-py2.py3-none-any.whl").unlink()
    return ["wheelhouse/six-1.17.0-py2.py3-none-any.whl is listed in SHA256SUMS but missing"]


def tamper_extra(root):
    (root / "wheelhouse" / "evil-1.0-py3-none-any.whl").write_text("planted")
    return ["wheelhouse/evil-1.0-py3-none-any.whl is not listed in SHA256SUMS: an extra file"]


def tamper_symlink(root):
    target = root / "site.env.example"
    os.rename(target, root / "elsewhere")
    target.symlink_to(root / "elsewhere")
    return ["site.env.example is a symlink: a release holds only regular files and directories",
            "elsewhere is not listed in SHA256SUMS: an extra file"]


def tamper_directory_symlink(root):
    (root / "units-link").symlink_to(root / "units")
    return ["units-link is a symlink: a release holds only regular files and directories"]


def tamper_escape(root):
    with open(root / "SHA256SUMS", "a") as sums:
        sums.write("%s  ../../etc/passwd\n%s  /etc/shadow\n" % ("0" * 64, "0" * 64))
    return ["SHA256SUMS line 8: ../../etc/passwd has an empty, . or .. part: paths stay inside the release",
            "SHA256SUMS line 9: /etc/shadow is not a relative path inside the release"]


def tamper_malformed(root):
    with open(root / "SHA256SUMS", "a") as sums:
        sums.write("d41d8cd98f00b204e9800998ecf8427e  site.env.example\n")
    return ["SHA256SUMS line 8 is not '<sha256>  <path>'"]


def tamper_duplicate(root):
    with open(root / "SHA256SUMS") as sums:
        first = sums.readline()
    with open(root / "SHA256SUMS", "a") as sums:
        sums.write(first)
    return ["SHA256SUMS line 8: manifest.yml is listed again"]


def tamper_sums_missing(root):
    (root / "SHA256SUMS").unlink()
    return ["SHA256SUMS is missing or not a regular file"]


TAMPERS = [tamper_altered, tamper_missing, tamper_extra, tamper_symlink, tamper_directory_symlink, tamper_escape,
           tamper_malformed, tamper_duplicate, tamper_sums_missing]


@pytest.mark.parametrize("tamper", TAMPERS, ids=[tamper.__name__[7:] for tamper in TAMPERS])
def test_a_tampered_release_is_refused_naming_each_difference(root, tamper):
    expected = tamper(root)
    assert release.sums_problems(str(root)) == expected
    with pytest.raises(release.ReleaseError):
        release.verify(str(root))


def test_sums_are_not_written_over_a_tree_holding_a_symlink(root):
    (root / "link").symlink_to("/etc/passwd")
    with pytest.raises(release.ReleaseError, match="link is a symlink"):
        write_sums(str(root))


def test_a_manifest_naming_a_file_the_release_lacks_is_refused(root):
    (root / "units" / "pharos-ssh-access-agent.service").unlink()
    write_sums(str(root))
    with pytest.raises(release.ReleaseError, match="manifest.yml names units/pharos-ssh-access-agent.service, which"):
        release.verify(str(root))


UNIT_CASES = {
    "User=root last": ("[Service]\nUser=pharos-ssh-access\nUser = root\n", "runs as User=root"),
    "ExecStart= +": ("[Service]\nUser=pharos-ssh-access\nExecStart= +/bin/sh -c id\n", "with full privileges"),
    "the munge key": ("[Service]\nUser=pharos-ssh-access\nLoadCredential=k:/etc/munge/munge.key\n",
                      "loads the credential"),
}


@pytest.mark.parametrize("case", sorted(UNIT_CASES))
def test_a_unit_that_would_run_beyond_its_account_stops_the_release(root, case):
    """Each rule (tests/unit/test_release_unit_rules.py) is asked by verify() of every unit."""
    text, problem = UNIT_CASES[case]
    (root / "units" / "pharos-ssh-access-agent.service").write_text(text)
    write_sums(str(root))
    with pytest.raises(release.ReleaseError, match="units/pharos-ssh-access-agent.service .*%s" % problem):
        release.verify(str(root))


def test_a_unit_file_no_component_declares_is_refused(root):
    (root / "units" / "ssh.service").write_text("[Service]\nUser=pharos-agent\n")
    write_sums(str(root))
    with pytest.raises(release.ReleaseError, match="units/ssh.service is not declared by any component"):
        release.verify(str(root))


# --- the fingerprint ------------------------------------------------------------------------

SITE_ENV = {"CENTRAL_OFFERING_UUID": "0123456789abcdef0123456789abcdef", "SITE_AGENT_MODES": "order_process report"}


def test_the_fingerprint_is_stable_across_key_order_and_known_for_fixed_inputs():
    reordered_manifest = dict(reversed(list(copy.deepcopy(MANIFEST).items())))
    reordered_site_env = dict(reversed(list(SITE_ENV.items())))
    first = release.fingerprint(MANIFEST, SITE_ENV)
    assert first == release.fingerprint(reordered_manifest, reordered_site_env)
    assert first.startswith("sha256:") and len(first) == 71


@pytest.mark.parametrize(("manifest", "site_env"), [
    (changed(release_id="2026.11.1"), SITE_ENV),
    (changed(dependency_mode="index"), SITE_ENV),
    (MANIFEST, dict(SITE_ENV, SITE_AGENT_MODES="report")),
    (MANIFEST, dict(SITE_ENV, ACTIVATION_COMPONENTS="site-agent")),
], ids=["release id", "dependency mode", "a site.env value", "a site.env key"])
def test_any_changed_input_changes_the_fingerprint(manifest, site_env):
    assert release.fingerprint(manifest, site_env) != release.fingerprint(MANIFEST, SITE_ENV)
