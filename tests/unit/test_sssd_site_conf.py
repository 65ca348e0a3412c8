"""Adopt mode's check of a Site's SSSD and NSS: what it finds, read as SSSD reads the files, and
that nothing of the Site's sssd.conf (its bind password) leaves the host."""

import base64
import json

import pytest
from module_runner import run_module
from test_files_in_place import play

from ansible_collections.pharos.hpc.plugins.modules import sssd_site_conf

PASSWORD = "Site-bind-secret-7f3a9c2e41"
SITE_CONF = f"""[sssd]
domains = site
services = nss, pam
config_file_version = 2

[nss]
memcache_timeout = 60

[domain/site]
id_provider = ldap
ldap_default_bind_dn = cn=sssd,dc=site
ldap_default_authtok = {PASSWORD}
"""
NSSWITCH = "passwd:         files sss\ngroup:          files sss\nshadow:         files\n"


@pytest.fixture
def site(tmp_path):
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "sssd.conf").write_text(SITE_CONF)
    (tmp_path / "nsswitch.conf").write_text(NSSWITCH)
    return tmp_path


def check(site, cache_seconds=90):
    return run_module(sssd_site_conf, dict(path=str(site / "sssd.conf"), snippet=str(site / "conf.d" / "50-pharos.conf"),
                                           nsswitch=str(site / "nsswitch.conf"), cache_seconds=cache_seconds,
                                           host="login1"), check_mode=True)


def encoded_forms(secret):
    """The secret as a result could carry it: plain, and in base64 at each of the three offsets it
    can have inside a longer base64 text, less the edge characters that depend on its neighbours."""
    forms = [secret]
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret.encode()).decode()
        forms.append(encoded[(offset * 4 + 2) // 3 + 1:-3])
    return forms


def test_a_missing_responder_is_named_with_its_line_and_the_line_to_write(site):
    result = check(site)
    assert result["unmet"] == [
        f"{site}/sssd.conf on login1 line 3: the [sssd] services line lists nss, pam; members need nss (names), "
        "pam (the access check) and ssh (their keys). Change the line to 'services = nss, pam, ssh'."]
    assert result["conflicts"] == []


def test_a_site_snippet_read_after_sssd_conf_decides_the_responders_and_the_cache(site):
    (site / "conf.d" / "10-site.conf").write_text("[sssd]\nservices = nss, pam, ssh\n\n[nss]\nmemcache_timeout = 600\n")
    result = check(site)
    assert len(result["unmet"]) == 1
    assert result["unmet"][0].startswith(f"{site}/conf.d/10-site.conf on login1: SSSD's fast cache keeps an entry 600 s "
                                         "([nss] memcache_timeout)")
    assert f"Set 'memcache_timeout = 90' in the [nss] section of {site}/conf.d/10-site.conf." in result["unmet"][0]


def test_sssds_default_cache_lifetime_counts_when_no_file_sets_one(site):
    (site / "sssd.conf").write_text(SITE_CONF.replace("services = nss, pam", "services = nss, pam, ssh")
                                    .replace("[nss]\nmemcache_timeout = 60\n", ""))
    result = check(site, cache_seconds=60)
    assert result["unmet"] == [
        f"{site}/sssd.conf on login1: SSSD's fast cache keeps an entry 300 s ([nss] memcache_timeout, by default), so "
        "a member's changed key or membership would wait that long; Pharos's key window needs at most 60 s "
        f"(pharos_cache_seconds). Set 'memcache_timeout = 60' in the [nss] section of {site}/sssd.conf."]


def test_files_sssd_skips_and_pharos_own_snippet_are_not_the_sites(site):
    (site / "sssd.conf").write_text(SITE_CONF.replace("services = nss, pam", "services = nss, pam, ssh"))
    (site / "conf.d" / ".hidden.conf").write_text("[sssd]\nservices = nss\n")
    (site / "conf.d" / "99-site.conf.bak").write_text("[sssd]\nservices = nss\n")
    (site / "conf.d" / "50-pharos.conf").write_text("[domain/pharos]\nid_provider = ldap\n[nss]\nmemcache_timeout = 900\n")
    result = check(site)
    assert (result["unmet"], result["conflicts"]) == ([], [])


def test_a_site_domain_named_pharos_is_a_conflict_in_any_file_but_pharos_own(site):
    (site / "sssd.conf").write_text(SITE_CONF + "\n[domain/pharos]\nid_provider = files\n")
    (site / "conf.d" / "20-site.conf").write_text("  [domain/pharos]  \nid_provider = files\n")
    (site / "conf.d" / "50-pharos.conf").write_text("[domain/pharos]\nid_provider = ldap\n")
    conflicts = check(site)["conflicts"]
    assert [conflict.split(" has ")[0] for conflict in conflicts] == [f"{site}/sssd.conf", f"{site}/conf.d/20-site.conf"]
    assert conflicts[0].endswith(f"the name of the domain Pharos adds in {site}/conf.d/50-pharos.conf: rename the "
                                 "Site's domain (its section and the domains line).")


def test_a_host_without_sssd_conf_or_nss_asking_sssd_is_refused(site):
    (site / "sssd.conf").unlink()
    (site / "nsswitch.conf").write_text("passwd: files systemd\ngroup: files sss\n")
    assert check(site)["unmet"] == [
        f"{site}/sssd.conf on login1 does not exist; adopt mode joins an SSSD that runs already. Configure SSSD "
        "for the Site's own users first.",
        "/etc/nsswitch.conf on login1: the passwd and group lines must list sss, or members have no names on this "
        "host. Add sss to both lines, after files."]


def test_the_sites_bind_password_is_in_no_form_in_the_result(site):
    (site / "conf.d" / "10-site.conf").write_text(f"[domain/site]\nldap_default_authtok = {PASSWORD}\n")
    result = json.dumps(check(site))
    assert "services line lists nss, pam" in result
    assert not [form for form in encoded_forms(PASSWORD) if form in result]


def test_the_checks_whole_result_as_the_json_callback_keeps_it_holds_no_form_of_the_password(project, site):
    step = {"name": "check", "register": "checked", "pharos.hpc.sssd_site_conf": {
        "path": str(site / "sssd.conf"), "snippet": str(site / "conf.d" / "50-pharos.conf"),
        "nsswitch": str(site / "nsswitch.conf"), "cache_seconds": 90, "host": "login1"}}
    results = play(project, site, [step])
    assert results["check"]["unmet"], results
    printed = json.dumps(results)
    assert not [form for form in encoded_forms(PASSWORD) if form in printed]
