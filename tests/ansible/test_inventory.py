"""``roce-tune ansible-inventory``: groups, connection vars, credential lookups, config paths.

Oracles: the rendered output tree of the same plan (every ``roce_tune_config`` must be a file that
``roce-tune plan`` writes), the inventory's own platform/role fields, and Ansible's own
``ansible-inventory --list`` parser (when Ansible is installed).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from roce_tune.ansible_inventory import DESIRED_FILE, build_ansible_inventory, dump_ansible_inventory
from roce_tune.cli import app
from roce_tune.deploy.runner import DESIRED_FILE as DEPLOY_DESIRED_FILE
from roce_tune.inventory.loader import load_inventory, load_inventory_text
from roce_tune.pipeline import derive_plan
from roce_tune.render.outputs import render_outputs

REPO = Path(__file__).resolve().parents[2]
MIXED = REPO / "inventories" / "mixed-vendor.yaml"


def _groups(data: dict) -> dict:  # type: ignore[type-arg]
    return data["all"]["children"]["roce_tune"]["children"]


def _hostvars(data: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    out: dict[str, dict] = {}  # type: ignore[type-arg]
    for group in _groups(data)["switches"]["children"].values():
        out.update(group["hosts"])
    out.update(_groups(data).get("gpu_hosts", {}).get("hosts", {}))
    return out


@pytest.fixture(scope="module")
def mixed():  # type: ignore[no-untyped-def]
    loaded = load_inventory(MIXED)
    return loaded, build_ansible_inventory(loaded.inventory, "inventories/mixed-vendor.yaml",
                                           "out/mixed-vendor")


def test_groups_follow_platform_and_role(mixed) -> None:  # type: ignore[no-untyped-def]
    loaded, data = mixed
    inv = loaded.inventory
    plats = _groups(data)["switches"]["children"]
    for sw in inv.switches:
        assert sw.name in plats[f"platform_{sw.platform.value}"]["hosts"]
        assert sw.name in _groups(data)[f"role_{sw.role.value}"]["hosts"]
    assert set(_groups(data)["gpu_hosts"]["hosts"]) == {h.name for h in inv.hosts}
    assert plats["platform_eos"]["vars"]["ansible_network_os"] == "arista.eos.eos"
    assert plats["platform_nxos"]["vars"]["ansible_network_os"] == "cisco.nxos.nxos"
    assert plats["platform_junos"]["vars"]["ansible_network_os"] == "junipernetworks.junos.junos"
    for p in ("eos", "nxos", "junos"):
        assert plats[f"platform_{p}"]["vars"]["ansible_connection"] == "ansible.netcommon.network_cli"
    for p in ("cumulus", "sonic"):
        assert plats[f"platform_{p}"]["vars"]["ansible_connection"] == "ansible.builtin.ssh"


def test_config_paths_are_the_files_plan_writes(mixed) -> None:  # type: ignore[no-untyped-def]
    loaded, data = mixed
    files = render_outputs(derive_plan(loaded))
    hv = _hostvars(data)
    assert len(hv) == len(loaded.inventory.switches) + len(loaded.inventory.hosts)
    for name, v in hv.items():
        rel = v["roce_tune_config"].removeprefix("out/mixed-vendor/")
        assert rel in files, f"{name}: {rel} is not rendered by roce-tune plan"
        if "roce_tune_config_yaml" in v:
            assert v["roce_tune_config_yaml"].removeprefix("out/mixed-vendor/") in files
    sw = loaded.inventory.switches[0]
    assert hv[sw.name]["ansible_host"] == sw.mgmt.host
    assert DESIRED_FILE == DEPLOY_DESIRED_FILE  # the file Ansible pushes is the one `roce-tune apply` pushes


def test_credentials_are_lookups_by_name_only() -> None:
    text = (REPO / "inventories" / "lab-2node.yaml").read_text()
    text = text.replace("    mgmt: {host: 127.0.0.1, port: 2201}",
                        "    mgmt: {host: 127.0.0.1, port: 2201}\n"
                        "    credentials: {username_env: SW_USER, password_env: null, key_file_env: SW_KEY}")
    inv = load_inventory_text(text, "lab.yaml").inventory
    data = build_ansible_inventory(inv, "lab.yaml", "out/lab")
    top = data["all"]["children"]["roce_tune"]["vars"]
    assert top["ansible_user"] == "{{ lookup('env', 'ROCE_TUNE_USERNAME') }}"
    assert top["ansible_password"] == "{{ lookup('env', 'ROCE_TUNE_PASSWORD') }}"
    leaf = _hostvars(data)["lab-leaf1"]
    assert leaf["ansible_user"] == "{{ lookup('env', 'SW_USER') }}"
    assert leaf["ansible_ssh_private_key_file"] == "{{ lookup('env', 'SW_KEY') }}"
    assert leaf["ansible_password"] == ""  # blanks the group lookup (test_a_key_only_device_gets_no_password)
    assert leaf["ansible_port"] == 2201
    assert "ansible_user" not in _hostvars(data)["node1"]  # default credentials come from the group


def test_group_name_clash_is_refused() -> None:
    text = (REPO / "inventories" / "lab-2node.yaml").read_text().replace("name: node1", "name: switches")
    text = text.replace("node1", "switches")
    inv = load_inventory_text(text, "lab.yaml").inventory
    with pytest.raises(ValueError, match="switches"):
        build_ansible_inventory(inv, "lab.yaml", "out/lab")


def test_yaml_and_json_say_the_same(mixed) -> None:  # type: ignore[no-untyped-def]
    _, data = mixed
    from_yaml = YAML(typ="safe").load(dump_ansible_inventory(data, "yaml"))
    assert from_yaml == json.loads(dump_ansible_inventory(data, "json")) == data
    assert "{{ lookup('env', 'ROCE_TUNE_USERNAME') }}" in dump_ansible_inventory(data, "yaml")


def test_cli_default_out_dir_matches_plan(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["ansible-inventory", str(MIXED), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["all"]["children"]["roce_tune"]["vars"]["roce_tune_out_dir"] == "out/mixed-vendor"
    assert _hostvars(data)["leaf3"]["roce_tune_config"] == "out/mixed-vendor/switches/leaf3.set"
    res = CliRunner().invoke(app, ["ansible-inventory", str(MIXED), "--junos-connection", "netconf",
                                   "-o", str(tmp_path / "h.yml")])
    assert res.exit_code == 0
    junos = YAML(typ="safe").load((tmp_path / "h.yml").read_text())
    assert _groups(junos)["switches"]["children"]["platform_junos"]["vars"]["ansible_connection"] == \
        "ansible.netcommon.netconf"
    assert CliRunner().invoke(app, ["ansible-inventory", str(MIXED), "--format", "xml"]).exit_code == 2


@pytest.mark.skipif(shutil.which("ansible-inventory") is None, reason="Ansible not installed")
def test_ansible_parses_it(mixed, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, data = mixed
    path = tmp_path / "hosts.yml"
    path.write_text(dump_ansible_inventory(data))
    out = subprocess.run(["ansible-inventory", "-i", str(path), "--list"], capture_output=True, text=True,
                         check=True, env={"PATH": "/usr/bin:/bin:"
                                          + str(Path(shutil.which("ansible-inventory")).parent),
                                          "ANSIBLE_HOME": str(tmp_path / ".ansible"), "HOME": str(tmp_path)})
    listed = json.loads(out.stdout)
    hv = listed["_meta"]["hostvars"]
    assert hv["leaf1"]["ansible_network_os"] == "arista.eos.eos"
    assert hv["leaf3"]["roce_tune_platform"] == "junos"
    assert hv["spine1"]["roce_tune_config"] == "out/mixed-vendor/switches/spine1.cfg"
    assert set(listed["role_spine"]["hosts"]) == {"spine1", "spine2"}


def test_cli_output_to_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    """`-o nodir/hosts.yml`: an error naming the file, exit 1, no traceback; an existing hosts.yml is
    replaced whole (temporary file, then rename), never left half-written."""
    res = CliRunner().invoke(app, ["ansible-inventory", str(MIXED), "-o", str(tmp_path / "nodir" / "h.yml")])
    assert res.exit_code == 1, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert f"cannot write {tmp_path / 'nodir' / 'h.yml'}" in res.output and "nothing written" in res.output
    hosts = tmp_path / "hosts.yml"
    hosts.write_text("old\n")
    res = CliRunner().invoke(app, ["ansible-inventory", str(MIXED), "-o", str(hosts)])
    assert res.exit_code == 0, res.output
    assert YAML(typ="safe").load(hosts.read_text())["all"]["children"]["roce_tune"]
    assert [p.name for p in tmp_path.iterdir()] == ["hosts.yml"]  # no temporary file left


@pytest.mark.skipif(shutil.which("ansible") is None, reason="Ansible not installed")
def test_a_key_only_device_gets_no_password(tmp_path: Path) -> None:
    """A GPU host whose credentials name a key and no password (``password_env: null``) must not inherit
    the site's password lookup: with ROCE_TUNE_PASSWORD set for the switches, Ansible would offer that
    password to the host (login and sudo). Checked with Ansible's own variable resolution."""
    text = (REPO / "inventories" / "lab-2node.yaml").read_text().replace(
        "    socket_ifname: eno1\n",
        "    socket_ifname: eno1\n    credentials: {password_env: null, key_file_env: GPU_KEY}\n", 1)
    (tmp_path / "lab.yaml").write_text(text)
    hosts = tmp_path / "hosts.yml"
    res = CliRunner().invoke(app, ["ansible-inventory", str(tmp_path / "lab.yaml"), "-o", str(hosts)])
    assert res.exit_code == 0, res.output
    env = {"PATH": "/usr/bin:/bin:" + str(Path(shutil.which("ansible") or "").parent),
           "ANSIBLE_HOME": str(tmp_path / ".ansible"), "HOME": str(tmp_path), "ANSIBLE_NOCOLOR": "1",
           "ROCE_TUNE_USERNAME": "netops", "ROCE_TUNE_PASSWORD": "switch-secret-77", "GPU_KEY": "/k/id"}
    def value(host: str, var: str) -> object:
        out = subprocess.run(["ansible", "-i", str(hosts), host, "-m", "ansible.builtin.debug", "-a",
                              f"var={var}", "-o"], capture_output=True, text=True, env=env, check=False,
                             timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        return json.loads(out.stdout.split("=>", 1)[1])[var]

    assert not value("node1", "ansible_password") and not value("node1", "ansible_become_password")
    assert value("node1", "ansible_ssh_private_key_file") == "/k/id"
    assert value("node1", "ansible_user") == "netops"
    assert value("lab-leaf1", "ansible_password") == "switch-secret-77"  # the switches keep theirs
