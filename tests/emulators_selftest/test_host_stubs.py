"""The host emulator's stub tools (tests/emulators/host_stubs.py) parse their command lines and state files as
``optparse`` and ``json.loads`` would, without importing either (each stub call is a fresh Python)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.emulators import host_stubs

STUBS = Path(host_stubs.__file__)


@pytest.mark.parametrize("text", [
    host_stubs.state_text(host_stubs.PAUSE_DEFAULT),
    host_stubs.state_text({"trust": "dscp", "pfc": [0, 0, 0, 1, 0, 0, 0, 0], "cable_len": 7,
                           "tsa": ["vendor"] * 8, "nested": {"a": None, "b": True, "c": False}}),
    '[{"index": 0, "gid": "fe80:0000", "ipv4": "", "ver": "v2", "netdev": "ens1f0np0"}]\n',
    '  {"esc": "tab\\there \\"q\\" \\u00e9 \\ud83d\\ude00", "n": -12, "f": 2.5e-3,'
    ' "big": 123456789012345678901}',
    "[]", "{}\n", '"bare string"', "7",
])
def test_state_json_reads_as_json_loads_reads_it(text: str) -> None:
    assert host_stubs._json_loads(text) == json.loads(text)


def test_json_constants_read_as_json_loads_reads_them() -> None:
    got, want = host_stubs._json_loads("[NaN, Infinity, -Infinity]"), json.loads("[NaN, Infinity, -Infinity]")
    assert math.isnan(got[0]) and got[1:] == want[1:] == [math.inf, -math.inf]


@pytest.mark.parametrize("text", ['{"rx": "on",}', '{"rx": "on"} {"tx": "off"}', "", '{"rx": "on"', "[1] x"])
def test_bad_state_json_raises_json_loads_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as got:
        host_stubs._json_loads(text)
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads(text)
    assert (got.value.msg, got.value.pos) == (want.value.msg, want.value.pos)


def _stub(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-S", str(STUBS), *argv], capture_output=True, text=True,
                          env={"ROCE_TUNE_SYSROOT": str(root)}, timeout=60, check=False)


def test_option_spellings_of_optparse(tmp_path: Path) -> None:
    """mlnx-tools mlnx_qos parses with optparse: ``--pfc=V``, ``-iIF`` and ``--pfc V`` are one option; a
    repeated option keeps its last value, ``--dscp2prio`` collects every one."""
    (tmp_path / "sys/class/net/ens1f0np0").mkdir(parents=True)
    r = _stub(tmp_path, "mlnx_qos", "-iens1f0np0", "--pfc=1,1,1,1,1,1,1,1", "--cable_len", "9",
              "--cable_len=30", "--dscp2prio", "set,26,3", "--dscp2prio=set,48,6")
    assert r.returncode == 0, r.stderr
    state = json.loads(host_stubs.state_path(tmp_path, "mlnx_qos", "ens1f0np0").read_text())
    assert state["pfc"] == [1] * 8 and state["cable_len"] == 30 and state["trust"] == "dscp"
    assert (state["dscp2prio"][26], state["dscp2prio"][48]) == (3, 6)
    assert "\tenabled     1   1   1   1   1   1   1   1   " in r.stdout.splitlines()


@pytest.mark.parametrize("argv, message", [
    (["mlnx_qos", "--pfc", "0,0,0,1,0,0,0,0"], "the following arguments are required: -i/--interface"),
    (["mlnx_qos", "-i", "ens1f0np0", "--bogus", "1"], "no such option: --bogus"),
    (["mlnx_qos", "-i", "ens1f0np0", "--trust"], "--trust option requires an argument"),
    (["mlnx_qos", "-i", "ens1f0np0", "--trust", "vlan"], "option --trust: invalid choice: 'vlan'"),
    (["mlnx_qos", "-i", "ens1f0np0", "--cable_len", "7m"], "option --cable_len: invalid integer value: '7m'"),
    (["mlnx_qos", "-i", "ens1f0np0", "stray"], "unexpected stray"),
    (["cma_roce_mode", "-d", "mlx5_0", "-m", "3"], "option -m/--mode: invalid choice: '3'"),
])
def test_a_bad_command_line_is_a_usage_error(tmp_path: Path, argv: list[str], message: str) -> None:
    (tmp_path / "sys/class/net/ens1f0np0").mkdir(parents=True)
    r = _stub(tmp_path, *argv)
    assert r.returncode == 2 and not r.stdout and f"{argv[0]}: error: {message}" in r.stderr, r
    assert not (tmp_path / "var").exists()  # nothing changed


def test_dscp2prio_report_and_checks_as_mlnx_qos(tmp_path: Path) -> None:
    """mlnx_qos prints each priority's DSCPs 8 a line, each line with its ``prio:P dscp:`` prefix, and no
    line for a priority without one (dcbnetlink.py ``printAppSelector``); a bad ``--dscp2prio`` value or one
    given with ``--trust`` is refused on stdout with exit 1, no entry sent."""
    (tmp_path / "sys/class/net/ens1f0np0").mkdir(parents=True)
    plan_map = {d: 0 for d in range(64)} | {26: 3, 48: 6}
    argv = [w for d, p in plan_map.items() for w in ("--dscp2prio", f"set,{d},{p}")]
    r = _stub(tmp_path, "mlnx_qos", "-i", "ens1f0np0", *argv)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    start = lines.index("dscp2prio mapping:") + 1
    end = lines.index("default priority:")
    rows = lines[start:end]
    assert [ln for ln in rows if not ln.startswith("\tprio:0 dscp:")] == ["\tprio:3 dscp:26,",
                                                                        "\tprio:6 dscp:48,"]
    prio0 = [ln.removeprefix("\tprio:0 dscp:") for ln in rows if ln.startswith("\tprio:0 dscp:")]
    assert [len(x) for x in prio0] == [24] * 7 + [18]  # 62 DSCPs "NN,": 7 full lines of 8, then 6
    assert sorted(int(d) for x in prio0 for d in x.split(",") if d) == sorted(set(range(64)) - {26, 48})
    for bad, message in (
            (["--dscp2prio", "set,64,0"], "Invalid dscp2prio command. Refer to the help."),
            (["--dscp2prio", "set,24,8"], "Invalid dscp2prio command. Refer to the help."),
            (["--dscp2prio", "set,24,3", "--trust", "dscp"],
             "trust and dscp2prio commands cannot be used at the same time.")):
        r = _stub(tmp_path, "mlnx_qos", "-i", "ens1f0np0", "--dscp2prio", "set,24,3", *bad)
        assert (r.returncode, r.stdout.strip()) == (1, message)
    state = json.loads(host_stubs.state_path(tmp_path, "mlnx_qos", "ens1f0np0").read_text())
    assert state["dscp2prio"][24] == 0  # none of the refused calls set an entry


def test_dscp2prio_del_as_the_mlx5_driver(tmp_path: Path) -> None:
    """``--dscp2prio del,D,P`` as mlx5e_dcbnl_ieee_delapp (en_dcbnl.c) answers it: refused unless D's entry
    holds P; the entry leaves the app table (the report no longer lists D) and the NIC maps D to priority 0
    (the stub used to put the default D >> 3 back, which hid a deleted RoCE entry: 26 >> 3 = 3); ``set``
    lists it again; deleting the last DSCP entry sets the trust to pcp."""
    root = tmp_path
    (root / "sys/class/net/ens1f0np0").mkdir(parents=True)

    def qos(*argv: str) -> subprocess.CompletedProcess[str]:
        return _stub(root, "mlnx_qos", "-i", "ens1f0np0", *argv)

    def listed(report: str) -> dict[int, int]:
        out: dict[int, int] = {}
        for ln in report.splitlines():
            if ln.startswith("\tprio:") and " dscp:" in ln:
                p, _, ds = ln.strip().removeprefix("prio:").partition(" dscp:")
                out.update({int(d): int(p) for d in ds.split(",") if d})
        return out

    def state() -> dict[str, object]:
        loaded: dict[str, object] = json.loads(
            host_stubs.state_path(root, "mlnx_qos", "ens1f0np0").read_text())
        return loaded

    assert qos("--trust", "dscp").returncode == 0
    refused = qos("--dscp2prio", "del,26,0")  # 26 is on 3
    assert refused.returncode == 1 and "Netlink error" in refused.stdout
    r = qos("--dscp2prio", "del,26,3")
    assert r.returncode == 0 and 26 not in listed(r.stdout) and len(listed(r.stdout)) == 63
    assert "Priority trust state: dscp" in r.stdout
    assert state()["dscp2prio"][26] == 0  # type: ignore[index]  # (what the NIC does with it)
    assert qos("--dscp2prio", "del,26,3").returncode == 1  # gone already
    r = qos("--dscp2prio", "set,26,3")
    assert listed(r.stdout)[26] == 3
    argv = [w for d in range(64) for w in ("--dscp2prio", f"del,{d},{d >> 3}")]
    r = qos(*argv)
    assert r.returncode == 0 and "Priority trust state: pcp" in r.stdout and not listed(r.stdout)
