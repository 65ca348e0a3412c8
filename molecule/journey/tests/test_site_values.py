"""One value per Site value: site.yml reads the inventory, release.yml site.env, and each
refuses a site.env that disagrees with the inventory before any host changes, naming both."""

from journey import EPHEMERAL, run_site_playbook

testinfra_hosts = ["ansible://pharos-journey-login"]


def test_site_yml_refuses_a_site_env_that_disagrees_with_the_inventory_before_any_change(host, tmp_path):
    site_env = tmp_path / "site.env"
    site_env.write_text((EPHEMERAL / "site.env").read_text().replace("PROJECT_GID_MIN=5550000", "PROJECT_GID_MIN=5550100"))
    before = host.check_output("stat -c %Y /etc/sssd/sssd.conf /etc/slurm/slurm.conf")
    rc, output = run_site_playbook("site.yml", extra_vars={"pharos_site_env_file": str(site_env)})
    assert rc != 0
    assert ("site.env (%s) has PROJECT_GID_MIN=5550100, but the inventory has pharos_project_gid_min: 5550000"
            % site_env) in output
    # Refused in validate.yml, before the first play that touches a host.
    assert "TASK [Keep the Site agent's group]" not in output
    assert host.check_output("stat -c %Y /etc/sssd/sssd.conf /etc/slurm/slurm.conf") == before
