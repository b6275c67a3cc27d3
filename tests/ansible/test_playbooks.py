"""plan.yml runs `roce-tune plan` once on the controller and writes the files the inventory names;
every playbook passes ``ansible-playbook --syntax-check`` and ``ansible-lint`` (production profile,
playbooks/.ansible-lint), so a lint failure shows in the tests before it fails .ci/run.)"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.ansible.harness import ANSIBLE_CFG, PLAYBOOKS, REPO, ansible_missing, recap

pytestmark = pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")


def _env(tmp_path: Path) -> dict[str, str]:
    import os

    (tmp_path / "ansible.cfg").write_text(ANSIBLE_CFG)
    return dict(os.environ, ANSIBLE_CONFIG=str(tmp_path / "ansible.cfg"),
                ANSIBLE_HOME=str(tmp_path / ".ansible"),
                ANSIBLE_LOCAL_TEMP=str(tmp_path / ".ansible-tmp"), ANSIBLE_NOCOLOR="1",
                ROCE_TUNE_USERNAME="netops")


@pytest.mark.parametrize("name", ["plan.yml", "push.yml", "verify.yml"])
def test_syntax(name: str, tmp_path: Path) -> None:
    res = subprocess.run(["ansible-playbook", "--syntax-check", "-i", "localhost,", str(PLAYBOOKS / name)],
                         capture_output=True, text=True, env=_env(tmp_path), check=False)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_ansible_lint_passes(tmp_path: Path) -> None:
    if shutil.which("ansible-lint") is None:
        pytest.skip("ansible-lint is not installed (the ansible extra)")
    res = subprocess.run(["ansible-lint", "--nocolor"], cwd=PLAYBOOKS, capture_output=True, text=True,
                         env=_env(tmp_path), check=False, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_plan_playbook_renders_what_the_inventory_points_at(tmp_path: Path) -> None:
    env = _env(tmp_path)
    shutil_inv = tmp_path / "lab-2node.yaml"
    shutil_inv.write_text((REPO / "inventories" / "lab-2node.yaml").read_text())
    hosts = tmp_path / "hosts.yml"
    subprocess.run(["roce-tune", "ansible-inventory", "lab-2node.yaml", "-o", str(hosts)], cwd=tmp_path,
                   env=env, check=True, capture_output=True)
    def play() -> subprocess.CompletedProcess[str]:
        res = subprocess.run(["ansible-playbook", "-i", str(hosts), str(PLAYBOOKS / "plan.yml"),
                              "-e", f"roce_tune_base_dir={tmp_path}"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, check=False, timeout=120)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
        return res

    res = play()
    counts = recap(res.stdout)
    assert len(counts) == 1 and sum(c["changed"] for c in counts.values()) == 1, counts  # run_once: one run
    assert "9 of 9 files changed" in res.stdout, res.stdout[-2000:]
    again = play()  # the same inventory: plan writes nothing, so the play reports ok, not changed
    assert sum(c["changed"] for c in recap(again.stdout).values()) == 0, again.stdout[-2000:]
    assert "0 of 9 files changed" in again.stdout and ": none" in again.stdout, again.stdout[-2000:]
    inv = YAML(typ="safe").load(hosts.read_text())
    children = inv["all"]["children"]["roce_tune"]["children"]
    paths = [v["roce_tune_config"] for g in children["switches"]["children"].values()
             for v in g["hosts"].values()]
    paths += [v["roce_tune_config"] for v in children["gpu_hosts"]["hosts"].values()]
    assert paths and all((tmp_path / p).is_file() for p in paths), paths


@pytest.fixture(scope="module")
def planned_lab_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lab-2node planned and its Ansible inventory written, by the real CLI, once per module (two CLI
    processes, the scorecard included); every path in the result is relative to its directory."""
    lab = tmp_path_factory.mktemp("planned-lab")
    env = _env(lab)
    (lab / "lab-2node.yaml").write_text((REPO / "inventories" / "lab-2node.yaml").read_text())
    for cmd in (["plan", "lab-2node.yaml"], ["ansible-inventory", "lab-2node.yaml", "-o", "hosts.yml"]):
        subprocess.run(["roce-tune", *cmd], cwd=lab, env=env, check=True, capture_output=True)
    return lab


@pytest.fixture()
def planned_lab(tmp_path: Path, planned_lab_template: Path) -> tuple[dict[str, str], Path]:
    """A copy of :func:`planned_lab_template` in ``tmp_path`` (the plan's version symlinks kept), which the
    test may edit: its Ansible environment and the hosts.yml path."""
    shutil.copytree(planned_lab_template, tmp_path, symlinks=True, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".ansible", ".ansible-tmp", "ansible.cfg"))
    return _env(tmp_path), tmp_path / "hosts.yml"


@pytest.mark.parametrize("check", [True, False])
def test_push_refuses_a_plan_edited_after_plan(tmp_path: Path, check: bool,
                                               planned_lab: tuple[dict[str, str], Path]) -> None:
    """A rendered file edited by hand after `roce-tune plan` (its sha256 no longer the one in SHA256SUMS):
    push.yml refuses before it connects to any device, naming the file, as `roce-tune apply` does."""
    env, hosts = planned_lab
    edited = tmp_path / "out" / "lab-2node" / "hosts" / "node1.sh"
    edited.write_text(edited.read_text() + "\necho tampered\n")
    res = subprocess.run(["ansible-playbook", "-i", str(hosts), str(PLAYBOOKS / "push.yml"),
                          "-e", f"roce_tune_base_dir={tmp_path}", *(["--check", "--diff"] if check else [])],
                         cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    assert "hosts/node1.sh" in out and "SHA256SUMS" in out, out[-3000:]
    assert "UNREACHABLE" not in out and "unreachable=1" not in out, out[-3000:]  # no device was contacted


@pytest.mark.parametrize("case", ["other", "edited"])
def test_push_refuses_a_plan_of_another_inventory(tmp_path: Path, case: str,
                                                  planned_lab: tuple[dict[str, str], Path]) -> None:
    """The plan directory hosts.yml points at was not planned from the inventory hosts.yml names as it is now:
    another inventory planned into it (``other``: same device names, 90 m cables, so another headroom) or the
    inventory edited after `roce-tune plan` (``edited``). Its SHA256SUMS are intact, so before, push.yml
    pushed the other inventory's configs to this inventory's devices (or the stale plan). It refuses before it
    contacts any device, naming both files and the fix; so does the dry run."""
    env, hosts = planned_lab
    inv = tmp_path / "lab-2node.yaml"
    if case == "other":
        other = tmp_path / "other.yaml"
        other.write_text(re.sub(r"cable_length: \d+m", "cable_length: 90m", inv.read_text()))
        subprocess.run(["roce-tune", "plan", "other.yaml", "--out", "out/lab-2node"], cwd=tmp_path, env=env,
                       check=True, capture_output=True)
    else:
        inv.write_text(re.sub(r"cable_length: \d+m", "cable_length: 90m", inv.read_text()))
    for mode in (["--check", "--diff"], []):
        res = subprocess.run(["ansible-playbook", "-i", str(hosts), str(PLAYBOOKS / "push.yml"),
                              "-e", f"roce_tune_base_dir={tmp_path}", *mode],
                             cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120)
        out = res.stdout + res.stderr
        assert res.returncode != 0, out[-3000:]
        assert "was not planned from lab-2node.yaml as it is now" in out, out[-3000:]
        assert ("planned from other.yaml" if case == "other" else "planned from lab-2node.yaml") in out, \
            out[-3000:]
        assert "roce-tune plan lab-2node.yaml" in out, out[-3000:]
        assert "UNREACHABLE" not in out and "unreachable=1" not in out, out[-3000:]  # no device contacted


@pytest.mark.parametrize("play", ["switches", "gpu_hosts"])
def test_push_without_the_username_variable_names_it(tmp_path: Path, play: str,
                                                     planned_lab: tuple[dict[str, str], Path]) -> None:
    """ROCE_TUNE_USERNAME not exported (the documented `export ROCE_TUNE_USERNAME=...` forgotten): the lookup
    gives "", and Ansible then logs in as the controller's own user (``root@switch: Permission denied``, or a
    login as that user where it has a key) with no word of the variable. push.yml now fails each device
    before contacting it, naming the variable, as `roce-tune apply` does (``no username (set
    $ROCE_TUNE_USERNAME ...)``)."""
    env, hosts = planned_lab
    env.pop("ROCE_TUNE_USERNAME")
    res = subprocess.run(["ansible-playbook", "-i", str(hosts), str(PLAYBOOKS / "push.yml"), "--check",
                          "--limit", play, "-e", f"roce_tune_base_dir={tmp_path}"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    assert re.search(r"no username: export ROCE_TUNE_USERNAME", out), out[-3000:]
    assert "UNREACHABLE" not in out and "unreachable=1" not in out, out[-3000:]  # no device contacted


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_push_with_junos_netconf_runs_the_netconf_tasks(tmp_path: Path,
                                                        planned_lab: tuple[dict[str, str], Path]) -> None:
    """`--junos-connection netconf` (documented) makes push.yml include tasks/push_junos_netconf.yml: the file
    must exist. No NETCONF device here, so the run fails at the connection, after the include resolved: at
    apply's refusal probe (`show system commit` over NETCONF), which comes before the load, so a device that
    cannot be probed is never loaded."""
    env, _ = planned_lab
    fabric = tmp_path / "fabric.yaml"
    fabric.write_text(re.sub(r"@PORT_\w+@", "1", (REPO / "tests" / "ansible" / "fabric.yaml.in").read_text()))
    for cmd in (["plan", "fabric.yaml"],
                ["ansible-inventory", "fabric.yaml", "--junos-connection", "netconf", "-o", "nc.yml"]):
        subprocess.run(["roce-tune", *cmd], cwd=tmp_path, env=env, check=True, capture_output=True)
    res = subprocess.run(["ansible-playbook", "-i", "nc.yml", str(PLAYBOOKS / "push.yml"), "--check",
                          "--limit", "platform_junos", "-e", f"roce_tune_base_dir={tmp_path}"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120)
    out = res.stdout + res.stderr
    assert "push_junos_netconf.yml for qfx1" in out, out[-3000:]
    assert "Refusal | run the platform's read-only probe commands over NETCONF" in out, out[-3000:]
    assert "[qfx1] (item=show system commit)" in out, out[-3000:]
    assert "Junos (NETCONF) | load the rendered set file" not in out, out[-3000:]


@pytest.mark.parametrize("minutes", ["0", "0.5", "-3", "five", "70000", "1", "65535", None])
def test_push_refuses_a_confirm_window_that_is_not_whole_minutes(
        tmp_path: Path, minutes: str | None, planned_lab: tuple[dict[str, str], Path]) -> None:
    """`-e roce_tune_confirm_min=0` (or 0.5, which `| int` made 0) turned Junos' `commit confirmed N` into a
    plain commit with no read-back and Cumulus' `--confirm 0s` into no safety net; Junos takes 1..65535
    minutes. push.yml refuses such a value before it contacts any device; a valid one or none (default
    5) goes on to the devices (unreachable here)."""
    env, hosts = planned_lab
    extra = ["-e", f"roce_tune_confirm_min={minutes}"] if minutes is not None else []
    res = subprocess.run(["ansible-playbook", "-i", str(hosts), str(PLAYBOOKS / "push.yml"),
                          "-e", f"roce_tune_base_dir={tmp_path}", *extra],
                         cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    if minutes is None or minutes in ("1", "65535"):
        assert "UNREACHABLE" in out and "commit-confirm window:" not in out, out[-3000:]
        return
    assert f"roce_tune_confirm_min={minutes}" in out and "1 to 65535" in out, out[-3000:]
    assert "UNREACHABLE" not in out, out[-3000:]


def test_plan_playbook_with_a_broken_inventory_shows_the_errors_not_a_json_error(
        tmp_path: Path, planned_lab: tuple[dict[str, str], Path]) -> None:
    """`roce-tune plan` refuses the inventory (exit 1, file:line:col errors on stderr, nothing on stdout):
    plan.yml fails with those errors and reports nothing changed, not a from_json error about empty stdout."""
    env, hosts = planned_lab
    inv = tmp_path / "lab-2node.yaml"
    inv.write_text(inv.read_text().replace("speed: 400G", "speed: 401G", 1))
    res = subprocess.run(["ansible-playbook", "-i", str(hosts), str(PLAYBOOKS / "plan.yml"),
                          "-e", f"roce_tune_base_dir={tmp_path}"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=False, timeout=120)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    assert re.search(r"lab-2node\.yaml:\d+:\d+ \S+: error RT003: '401G'", out), out[-3000:]
    assert "from_json" not in out, out[-3000:]
    assert all(c["changed"] == 0 for c in recap(res.stdout).values()), out[-3000:]


@pytest.mark.emulator
@pytest.mark.slow
def test_verify_playbook_fails_an_incomplete_verify_after_printing_it(tmp_path: Path) -> None:
    """verify.yml runs the real `roce-tune verify` on the emulated lab whose switch cannot be reached (its
    management port in the inventory is closed): nothing fails, but the switch counters and running values
    are not read. verify exits 2 (INCOMPLETE); the play prints the report and then fails saying INCOMPLETE
    (before, a non-zero verify failed the play on the command task and the report was never printed)."""
    import json

    res = _verify_playbook_with_switch_unreachable(tmp_path)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    assert "roce-tune verify INCOMPLETE (exit 2): nothing failed" in out, out[-3000:]
    assert "Print the verification report" in out and "not checked: running values of lab-leaf1" in out, \
        out[-3000:]
    rep = json.loads((tmp_path / "verify" / "verify-report.json").read_text())
    assert rep["status"] == "incomplete"


def test_every_platform_with_a_refusal_runs_it_before_any_write() -> None:
    """Each push task file of a platform whose ``PushMethod`` has a preflight or a probe (the refusals
    ``roce-tune apply`` makes before any write, dry runs included) imports tasks/refuse.yml before its first
    block (every write of a push file is in its block). EOS and NX-OS have neither; a probe added to one of
    them fails here until its push file runs it. Before, only push_sonic.yml did (Cumulus, Junos: not)."""
    from roce_tune.deploy.drivers import PUSH_METHODS

    refusing = sorted(n for n, m in PUSH_METHODS.items() if m.preflight is not None or m.probe is not None)
    assert refusing
    for name in refusing:
        files = sorted((PLAYBOOKS / "tasks").glob(f"push_{name}*.yml"))
        assert files, name
        for path in files:
            tasks = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
            refuse = [i for i, t in enumerate(tasks) if t.get("ansible.builtin.import_tasks") == "refuse.yml"]
            blocks = [i for i, t in enumerate(tasks) if "block" in t]
            assert refuse and blocks and refuse[0] < blocks[0], f"{path.name}: no refusal before its writes"


@pytest.mark.emulator
@pytest.mark.slow
def test_verify_playbook_passes_its_limit_to_verify(tmp_path: Path) -> None:
    """verify.yml ignored `--limit`: limited to the hosts, it still verified the whole inventory and read the
    switch (here unreachable: RT333, INCOMPLETE on a device the run was not meant for). Now the limit's
    devices go to `roce-tune verify --limit`: the switch is neither read nor named, the hosts are."""
    import json

    res = _verify_playbook_with_switch_unreachable(tmp_path, "--limit", "gpu_hosts")
    out = res.stdout + res.stderr
    rep = json.loads((tmp_path / "verify" / "verify-report.json").read_text())
    assert rep["switches"] == [] and rep["hosts"] == ["node1", "node2"], out[-3000:]
    assert not [f for f in rep["findings"] if f["rule"] == "RT333"], out[-3000:]
    assert "lab-leaf1" not in " ".join(rep["not_checked"]), out[-3000:]


def _verify_playbook_with_switch_unreachable(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """verify.yml (with ``extra`` ansible-playbook arguments) on the lab-2node verify lab, deployed as
    planned, whose switch's management port is then closed; its JSON report goes to ``tmp_path/verify``."""
    import json

    from roce_tune.inventory.loader import load_inventory
    from roce_tune.pipeline import derive_plan
    from tests.emulators.verify_stubs import close_switch_mgmt, start_lab

    env = dict(_env(tmp_path), ROCE_TUNE_USERNAME="gpuadmin", ROCE_TUNE_PASSWORD="verify-Pa55")
    lb = start_lab(REPO / "inventories" / "lab-2node.yaml", tmp_path / "lab", username="gpuadmin",
                   password="verify-Pa55")
    try:
        inv = lb.write_inventory(tmp_path / "lab.yaml")
        lb.deploy(derive_plan(load_inventory(inv)))
        close_switch_mgmt(inv)
        subprocess.run(["roce-tune", "ansible-inventory", "lab.yaml", "-o", "hosts.yml"], cwd=tmp_path,
                       env=env, check=True, capture_output=True)
        args = ["--insecure-skip-host-key-check", "--max-bytes", "1G", "--out", str(tmp_path / "verify")]
        return subprocess.run(["ansible-playbook", "-i", "hosts.yml", str(PLAYBOOKS / "verify.yml"), *extra,
                               "-e", f"roce_tune_base_dir={tmp_path}",
                               "-e", json.dumps({"roce_tune_verify_args": args})],
                              cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=300)
    finally:
        lb.stop()
