"""Host script and NCCL environment: the real script run by bash against a fake sysfs tree and stub tools.

The stubs (written per test into a temp ``bin/`` first on PATH) emulate the tools as their sources
behave (Mellanox/mlnx-tools ``mlnx_qos``: ``--pfc`` alone zeroes the cable length and ``--cable_len``
alone zeroes the PFC vector, ``--trust`` with ``--dscp2prio`` is refused, a ``--trust`` change replaces the
DSCP map (``dscp``: the 64 default entries, ``pcp``: none; ``dcbnetlink.py`` ``setDefaultAppEntry`` /
``delAppEntry``), the report format of
``pretty_print``; ``cma_roce_tos``/``cma_roce_mode`` print the current value; ``ip -o link show``), and
keep their state in files. ``STUB_IGNORE=<what>`` makes a stub accept a write silently without doing it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from roce_tune.platforms import get_platform, host

from ..emulators import host_stubs
from ..emulators.host import seed_pause
from . import cli_structure as cs
from .plan_builder import build_plan

STUB_MLNX_QOS = r'''
import os, sys
args = sys.argv[1:]
state = os.environ["STUB_STATE"]
ignore = os.environ.get("STUB_IGNORE", "")
opts, dscp = {}, []
i = 0
while i < len(args):
    a = args[i]
    if a in ("-i", "--trust", "--pfc", "-f", "--cable_len"):
        opts[a] = args[i + 1]; i += 2
    elif a == "--dscp2prio":
        dscp.append(args[i + 1]); i += 2
    else:
        print("Bad arguments"); sys.exit(1)
dev = opts.get("-i")
if dev is None:
    print("Interface name is required"); sys.exit(1)
d = os.path.join(state, "qos", dev)
if not os.path.isdir(os.path.join(state, "netdev", dev)):
    print(f"Cannot find device \"{dev}\""); sys.exit(1)
os.makedirs(d, exist_ok=True)
def rd(name, default):
    p = os.path.join(d, name)
    return open(p).read() if os.path.exists(p) else default
def wr(name, value):
    open(os.path.join(d, name), "w").write(value)
if dscp and "--trust" in opts:
    print("trust and dscp2prio commands cannot be used at the same time."); sys.exit(1)
pfc = opts.get("--pfc", opts.get("-f"))
if pfc is not None or "--cable_len" in opts:
    # one DCB set_ieee_pfc(pfc_en, delay): the option left out is sent as 0 (mlnx_qos source)
    if "pfc" not in ignore:
        wr("pfc", pfc if pfc is not None else "0,0,0,0,0,0,0,0")
    wr("cable", opts.get("--cable_len", "0"))
for entry in dscp:
    action, dv, pv = entry.split(",")
    m = dict(line.split() for line in rd("dscp2prio", "").splitlines())
    if action == "set" and "dscp2prio" not in ignore:
        if "trust" not in ignore:  # (dcbnl: the first DSCP app entry makes the trust dscp)
            wr("trust", "dscp")
        m[dv] = pv
        wr("dscp2prio", "".join(f"{k} {v}\n" for k, v in sorted(m.items(), key=lambda kv: int(kv[0]))))
    elif action == "del":
        # mlx5e_dcbnl_ieee_delapp: only an entry that holds PV; the DSCP leaves the app table ("-": the report
        # no longer lists it, the NIC maps it to priority 0); the last one deleted sets the trust to pcp
        if rd("trust", "pcp") != "dscp" or m.get(dv, str(int(dv) >> 3)) != pv:
            print("Netlink error: Bad value. see dmesg."); sys.exit(1)  # (dcbnetlink.py check_err)
        m[dv] = "-"
        if all(m.get(str(x)) == "-" for x in range(64)):
            wr("trust", "pcp"); m = {}
        wr("dscp2prio", "".join(f"{k} {v}\n" for k, v in sorted(m.items(), key=lambda kv: int(kv[0]))))
if "--trust" in opts and "trust" not in ignore and opts["--trust"] != rd("trust", "pcp"):
    # mlnx_qos (dcbnl): trust dscp = set all 64 DSCP app entries to the default dscp >> 3, trust pcp = delete
    # every DSCP entry; either way no entry set before survives the change
    wr("trust", opts["--trust"])
    wr("dscp2prio", "")
trust = rd("trust", "pcp")
print("DCBX mode: OS controlled")
print("Priority trust state: " + trust)
if trust == "dscp":
    print("dscp2prio mapping:")
    m = {str(x): str(x >> 3) for x in range(64)}
    m.update(dict(line.split() for line in rd("dscp2prio", "").splitlines()))
    per = {p: "" for p in range(8)}
    for x in range(63, -1, -1):
        if m[str(x)] != "-":  # (a deleted entry: not listed)
            per[int(m[str(x)])] += "%02d," % x
    for p in range(8):
        s = per[p]
        while len(s) > 24:
            print("\tprio:%d dscp:%s" % (p, s[:24])); s = s[24:]
        if s:
            print("\tprio:%d dscp:%s" % (p, s))
print("default priority:")
print("Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=1048576")
print("Cable len: %d" % int(rd("cable", "7")))
print("PFC configuration:")
print("\tpriority    0   1   2   3   4   5   6   7")
print("\tenabled     " + "".join("%s   " % v for v in rd("pfc", "0,0,0,0,0,0,0,0").split(",")))
print("\tbuffer      0   0   0   1   0   0   0   0   ")
print("tc: 0 ratelimit: unlimited, tsa: vendor")
print("\t priority:  0")
'''

STUB_CMA = r'''
import os, sys
kind = os.path.basename(sys.argv[0])  # cma_roce_tos or cma_roce_mode
args, opts = sys.argv[1:], {"-d": "mlx5_0", "-p": "1"}
for k, v in zip(args[::2], args[1::2]):
    opts[k] = v
state = os.environ["STUB_STATE"]
ignore = os.environ.get("STUB_IGNORE", "")
d = os.path.join(state, "cm", opts["-d"], opts["-p"])
if not os.path.isdir(os.path.join(state, "rdma", opts["-d"])):
    print(f"Device {opts['-d']} port {opts['-p']} does not exist"); sys.exit(1)
os.makedirs(d, exist_ok=True)
path = os.path.join(d, "tos" if kind == "cma_roce_tos" else "mode")
cur = open(path).read() if os.path.exists(path) else ("0" if kind == "cma_roce_tos" else "IB/RoCE v1")
if kind == "cma_roce_tos" and "-t" in opts and "tos" not in ignore:
    cur = opts["-t"]
if kind == "cma_roce_mode" and "-m" in opts and "mode" not in ignore:
    cur = {"1": "IB/RoCE v1", "2": "RoCE v2"}[opts["-m"]]
open(path, "w").write(cur)
print(cur)
'''

STUB_IP = r'''
import os, sys
args = sys.argv[1:]
state = os.environ["STUB_STATE"]
ignore = os.environ.get("STUB_IGNORE", "")
def mtu_path(dev):
    d = os.path.join(state, "netdev", dev)
    if not os.path.isdir(d):
        print(f'Device "{dev}" does not exist.', file=sys.stderr); sys.exit(1)
    return os.path.join(d, "mtu")
if args[:4] == ["link", "set", "dev", args[3] if len(args) > 3 else ""] and args[4:5] == ["mtu"]:
    p = mtu_path(args[3])
    if "mtu" not in ignore:
        open(p, "w").write(args[5])
elif args[:5] == ["-o", "link", "show", "dev", args[4] if len(args) > 4 else ""]:
    p = mtu_path(args[4])
    mtu = open(p).read() if os.path.exists(p) else "1500"
    print(f"4: {args[4]}: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu {mtu} qdisc mq state UP mode DEFAULT "
          "group default qlen 1000\\    link/ether 0c:42:a1:00:00:01 brd ff:ff:ff:ff:ff:ff")
else:
    print("stub ip: unsupported " + " ".join(args), file=sys.stderr); sys.exit(1)
'''


def _write_stub(bindir: Path, name: str, body: str) -> None:
    path = bindir / name
    path.write_text(f"#!{sys.executable} -S\n{body}", encoding="utf-8")  # -S: stdlib only, half the start-up
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class Box:
    """A temp machine: fake /sys under ``root``, stub tools in ``bin``, tool state in ``state``."""

    def __init__(self, tmp: Path, plan_host) -> None:  # type: ignore[no-untyped-def]
        self.root, self.bin, self.state = tmp / "root", tmp / "bin", tmp / "state"
        for d in (self.root, self.bin, self.state):
            d.mkdir()
        _write_stub(self.bin, "mlnx_qos", STUB_MLNX_QOS)
        _write_stub(self.bin, "cma_roce_tos", STUB_CMA)
        _write_stub(self.bin, "cma_roce_mode", STUB_CMA)
        _write_stub(self.bin, "ip", STUB_IP)
        for tool in ("systemctl", "udevadm", "ethtool"):  # the emulator's stubs, on files under ``root``
            (self.bin / tool).write_text(host_stubs.launcher(tool))
            (self.bin / tool).chmod(0o755)
        for nic in plan_host.nics:
            seed_pause(self.root, nic.netdev)  # global pause on: the NIC's default
            (self.state / "netdev" / nic.netdev).mkdir(parents=True)
            (self.state / "rdma" / nic.rdma_device).mkdir(parents=True, exist_ok=True)
            ecn = self.root / "sys/class/net" / nic.netdev / "ecn"
            for side in ("roce_np", "roce_rp"):
                (ecn / side / "enable").mkdir(parents=True)
                for p in range(8):
                    (ecn / side / "enable" / str(p)).write_text("0\n")
            for knob in host.DCQCN_KNOBS.values():
                (ecn / knob.side / knob.sysfs).write_text("0\n")
            for knob in (host.CNP_DSCP_KNOB, host.CNP_PRIO_KNOB):
                (ecn / knob.side / knob.sysfs).write_text("0\n")
            tc = self.root / "sys/class/infiniband" / nic.rdma_device / "tc" / str(nic.rdma_port)
            tc.mkdir(parents=True, exist_ok=True)
            (tc / "traffic_class").write_text("")

    def run(self, script: str, **env: str) -> subprocess.CompletedProcess[str]:
        path = self.root.parent / "apply.sh"
        path.write_text(script, encoding="utf-8")
        full = {"PATH": f"{self.bin}:{os.environ['PATH']}", "STUB_STATE": str(self.state),
                "ROCE_TUNE_SYSROOT": str(self.root), **env}
        return subprocess.run(["bash", str(path)], env=full, capture_output=True, text=True, timeout=60,
                              check=False)

    def snapshot(self) -> dict[str, str]:
        out = {}
        for base in (self.root, self.state):
            for p in sorted(base.rglob("*")):
                if p.is_file() and not p.is_symlink():
                    out[str(p.relative_to(base.parent))] = p.read_text()
        return out


def _script(**kw: object) -> tuple[object, str]:
    plan = build_plan(**kw)  # type: ignore[arg-type]
    h = plan.hosts[0]
    files = host.render_host(plan, h)
    assert list(files) == [f"{h.name}.sh"]
    return plan, files[f"{h.name}.sh"]


@pytest.fixture()
def box(tmp_path: Path) -> Box:
    plan = build_plan()
    return Box(tmp_path, plan.hosts[0])


def test_script_applies_and_reads_back(box: Box) -> None:
    plan, script = _script()
    res = box.run(script)
    assert res.returncode == 0, res.stderr
    assert "all values set and read back" in res.stdout
    h = plan.hosts[0]  # type: ignore[attr-defined]
    for nic in h.nics:
        q = box.state / "qos" / nic.netdev
        assert (q / "trust").read_text() == "dscp"
        assert (q / "pfc").read_text() == "0,0,0,1,0,0,0,0"
        assert (q / "cable").read_text() == "2"  # 2.0 m -> 2
        assert (box.state / "netdev" / nic.netdev / "mtu").read_text() == "9000"
        assert (box.state / "cm" / nic.rdma_device / "1" / "tos").read_text() == "106"
        assert (box.state / "cm" / nic.rdma_device / "1" / "mode").read_text() == "RoCE v2"
        ecn = box.root / "sys/class/net" / nic.netdev / "ecn"
        assert (ecn / "roce_np/enable/3").read_text() == "1\n"
        assert (ecn / "roce_rp/enable/3").read_text() == "1\n"
        assert (ecn / "roce_np/enable/4").read_text() == "0\n"  # untouched
        assert (ecn / "roce_rp/rpg_ai_rate").read_text() == "80\n"  # plan key rpg_ai_rate_mbps
        assert (ecn / "roce_rp/rpg_hai_rate").read_text() == "800\n"
        assert (ecn / "roce_np/min_time_between_cnps").read_text() == "4\n"
        assert (ecn / "roce_np/cnp_dscp").read_text() == "48\n"
        assert (ecn / "roce_np/cnp_802p_prio").read_text() == "6\n"
        tc = box.root / "sys/class/infiniband" / nic.rdma_device / "tc/1/traffic_class"
        assert tc.read_text() == "106\n"


def test_script_is_idempotent(box: Box) -> None:
    _, script = _script()
    assert box.run(script).returncode == 0
    first = box.snapshot()
    res = box.run(script)
    assert res.returncode == 0, res.stderr
    assert box.snapshot() == first


@pytest.mark.parametrize("ignored, named", [
    ("pfc", "ens1f0np0 pfc: expected '0,0,0,1,0,0,0,0', read '0,0,0,0,0,0,0,0'"),
    ("trust", "ens1f0np0 trust: expected 'dscp', read 'pcp'"),
    ("mtu", "ens1f0np0 mtu: expected '9000', read '1500'"),
    ("tos", "mlx5_0 roce_tos: expected '106', read '0'"),
    ("mode", "mlx5_0 roce_mode: expected 'RoCE v2', read 'IB/RoCE v1'"),
    ("pause", "ens1f0np0 global_pause: expected 'rx off tx off', read 'rx on tx on'"),
])
def test_readback_names_a_silently_ignored_write(box: Box, ignored: str, named: str) -> None:
    _, script = _script()
    res = box.run(script, STUB_IGNORE=ignored)
    assert res.returncode == 1
    assert named in res.stderr
    assert "did not read back as set" in res.stderr


def test_readback_names_a_sysfs_file_that_drops_writes(box: Box) -> None:
    _, script = _script()
    target = box.root / "sys/class/net/ens1f1np1/ecn/roce_rp/rpg_ai_rate"
    target.unlink()
    target.symlink_to(os.devnull)  # accepts the write, reads back empty: a knob the driver ignores
    res = box.run(script)
    assert res.returncode == 1
    assert "ens1f1np1 ecn/roce_rp/rpg_ai_rate: expected '80', read ''" in res.stderr
    assert res.stderr.count("expected") == 1  # only that one


def test_missing_sysfs_knob_stops_before_more_changes(box: Box) -> None:
    _, script = _script()
    shutil.rmtree(box.root / "sys/class/net/ens1f0np0/ecn")
    res = box.run(script)
    assert res.returncode == 2
    assert "ens1f0np0/ecn does not exist" in res.stderr  # (checked before any change)


def test_an_rdma_device_the_host_lacks_stops_before_any_change_and_is_named(tmp_path: Path) -> None:
    # An inventory naming the wrong RDMA device (the host has no mlx5_1): cma_roce_tos says so on stdout
    # and exits 1 (mlnx-tools sbin/cma_roce_tos). The script used to set trust/PFC/MTU, then die silently
    # (exit 1, nothing on stderr) with a restore point holding "-t Device mlx5_1 port 1 does not exist"
    # as the ToS to put back, so the restore itself failed.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    gone = h.nics[1].rdma_device
    shutil.rmtree(box.state / "rdma" / gone)
    shutil.rmtree(box.root / "sys/class/infiniband" / gone)
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    before = _device_view(box, h, env)
    res = _run_file(path, "--save", str(restore), env=env)
    assert res.returncode == 2, res.stderr
    assert f"cma_roce_tos -d {gone} -p 1: RDMA device {gone} missing (no /sys/class/infiniband/{gone})" in \
        res.stderr, res.stderr
    assert _device_view(box, h, env) == before  # nothing changed on any NIC
    assert not restore.exists() or "rt_do" not in restore.read_text()


@pytest.mark.parametrize("now", ["", "mlx5_9"])
def test_an_rdma_device_gone_while_its_netdev_is_there_is_one_line_naming_the_cause(tmp_path: Path,
                                                                                   now: str) -> None:
    # mlx5_ib unloaded, or the function unbound from RDMA (or the RDMA device renamed: `rdma dev set mlx5_0
    # name mlx5_9`): /sys/class/infiniband/mlx5_0 is gone, the netdev is there. --check printed three lines
    # (roce_tos and roce_mode "read 'Device mlx5_0 port 1 does not exist'", traffic_class "read '<missing>'")
    # and the apply only the cma_roce_tos failure; neither said why or what to do.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    assert _run_file(path, env=env).returncode == 0
    nic = h.nics[0]
    shutil.rmtree(box.state / "rdma" / nic.rdma_device)
    shutil.rmtree(box.root / "sys/class/infiniband" / nic.rdma_device)
    cause = (f"RDMA device {nic.rdma_device} missing (no /sys/class/infiniband/{nic.rdma_device}) while "
             f"netdev {nic.netdev} is present")
    if now:  # the netdev's PCI function has another RDMA device
        (box.root / "sys/class/net" / nic.netdev / "device/infiniband" / now).mkdir(parents=True)
        cause += (f"; the PCI function of {nic.netdev} has RDMA device {now}: renamed? set its rdma_device "
                  "in the inventory and render again")
    else:
        cause += (": no RDMA driver bound to it (mlx5_ib not loaded?): load it (modprobe mlx5_ib) and run "
                  "again")
    check = _run_file(path, "--check", env=env)
    assert check.returncode == 1, check.stdout + check.stderr
    named = [ln.strip() for ln in check.stderr.splitlines() if ln.strip().startswith("MISMATCH")]
    assert named == [f"MISMATCH {nic.netdev} NIC ({nic.rdma_device} port 1): expected 'present', read "
                     f"'{cause}; its RoCE values not read back'"]
    before = _device_view(box, h, env)
    res = _run_file(path, env=env)
    assert res.returncode == 2
    assert res.stderr == f"roce-tune: {h.name}: cma_roce_tos -d {nic.rdma_device} -p 1: {cause}\n"
    assert _device_view(box, h, env) == before


def test_a_renamed_netdev_is_named_with_its_new_name_before_any_change(tmp_path: Path) -> None:
    # A netdev renamed (a new udev naming policy, a firmware update: ens1f1np1 -> eth9) while its RDMA
    # device stays mlx5_1: the apply said only `mlnx_qos -i ens1f1np1 failed (exit 1): Cannot find device
    # "ens1f1np1"`, --check "netdev missing". Both now also name the netdev the RDMA device has now
    # (/sys/class/infiniband/<dev>/device/net/) and what to do.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    nic = h.nics[1]
    (box.state / "netdev" / nic.netdev).rename(box.state / "netdev" / "eth9")
    (box.root / "sys/class/net" / nic.netdev).rename(box.root / "sys/class/net/eth9")
    (box.root / "sys/class/infiniband" / nic.rdma_device / "device/net/eth9").mkdir(parents=True)
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    cause = (f"netdev {nic.netdev} missing (no /sys/class/net/{nic.netdev}); RDMA device {nic.rdma_device} "
             "has netdev eth9: renamed? set its netdev in the inventory and render again")
    before = _device_view(box, h, env)
    res = _run_file(path, env=env)
    assert res.returncode == 2, res.stderr
    assert res.stderr == (f"roce-tune: {h.name}: mlnx_qos -i {nic.netdev} failed (exit 1): Cannot find "
                          f"device \"{nic.netdev}\"; {cause}\n")
    assert _device_view(box, h, env) == before
    check = _run_file(path, "--check", env=env)
    assert f"MISMATCH {nic.netdev} NIC ({nic.rdma_device} port 1): expected 'present', read '{cause}; " \
           f"mlnx_qos -i {nic.netdev} failed (exit 1): " in check.stderr, check.stderr


def test_every_missing_tool_is_named_with_its_package_before_anything_is_read(tmp_path: Path) -> None:
    # A GPU node without mlnx-tools lacks mlnx_qos, cma_roce_tos and cma_roce_mode: the script named only the
    # first ("required command 'mlnx_qos' not found"), not the host, not the package to install; after
    # installing only what it named the next run failed on the next tool.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    for tool in ("mlnx_qos", "cma_roce_tos", "cma_roce_mode", "ethtool"):
        (box.bin / tool).unlink()
    sysbin = tmp_path / "sysbin"  # the system tools the script needs, without any NIC tool the host may have
    sysbin.mkdir()
    for tool in ("bash", "awk", "sed", "tail", "flock", "sha256sum", "dirname", "mkdir"):
        found = shutil.which(tool)
        if found and not (box.bin / tool).exists():
            (sysbin / tool).symlink_to(found)
    env = {**_box_env(box), "PATH": f"{box.bin}:{sysbin}"}
    before = box.snapshot()
    res = _run_file(_written(box, script), env=env)
    assert res.returncode == 2
    mlnx = "package mlnx-tools: MLNX_OFED or DOCA-Host"
    assert res.stderr.splitlines() == [
        f"roce-tune: {h.name}: required command 'mlnx_qos' not found ({mlnx})",
        f"roce-tune: {h.name}: required command 'cma_roce_tos' not found ({mlnx})",
        f"roce-tune: {h.name}: required command 'cma_roce_mode' not found ({mlnx})",
        f"roce-tune: {h.name}: required command 'ethtool' not found (package ethtool)",
        f"roce-tune: {h.name}: install them and run again; nothing was read or changed"], res.stderr
    assert box.snapshot() == before


@pytest.mark.parametrize("args", [(), ("--check",), ("--boot",)])
def test_a_run_that_is_not_root_stops_before_anything_saying_so(tmp_path: Path,
                                                                 args: tuple[str, ...]) -> None:
    # `bash node1.sh` without sudo on a GPU node: mlnx_qos, cma_roce_tos (configfs mkdir) and the sysfs writes
    # need root, and /usr/sbin (mlnx_qos, ethtool) is not on a user's PATH: the script said "required command
    # 'mlnx_qos' not found" (or a tool's "Permission denied"), never that it must run as root. Run here on
    # the real / (no ROCE_TUNE_SYSROOT) as an unprivileged user: it stops before it reads anything.
    _, script = _script()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    argv = ["bash", "-s", "--", *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv (util-linux) to drop to an unprivileged user")
        argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    res = subprocess.run(argv, input=script, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr == ("roce-tune: node1: run it as root (sudo): mlnx_qos, cma_roce_tos, cma_roce_mode "
                          "and the sysfs writes need it; nothing was read or changed\n"), res.stderr


def test_a_nic_tool_that_fails_is_named_with_its_message(box: Box) -> None:
    # mlnx_qos prints its errors on stdout; the script sent that to /dev/null and stopped with the tool's
    # exit status and an empty stderr, indistinguishable from "read-back mismatch" (exit 1).
    _, script = _script()
    (box.bin / "mlnx_qos").rename(box.bin / "mlnx_qos.real")
    (box.bin / "mlnx_qos").write_text(
        "#!/bin/bash\nfor a in \"$@\"; do [[ $a == --cable_len ]] && { echo 'Error: cable length is not "
        "supported'; exit 1; }; done\nexec \"$(dirname \"$0\")/mlnx_qos.real\" \"$@\"\n")
    (box.bin / "mlnx_qos").chmod(0o755)
    res = box.run(script)
    assert res.returncode == 2, res.stderr
    assert "mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0 --cable_len" in res.stderr, res.stderr
    assert "Error: cable length is not supported" in res.stderr


def test_non_default_dscp_map_is_written_and_read_back(tmp_path: Path) -> None:
    # CNP on DSCP 40 -> priority 6 differs from the ConnectX default 40 >> 3 = 5 (DOMAIN.md §3).
    plan, script = _script(cnp_dscp=40)
    # all 64 DSCPs are listed (and read back): 40 -> 6, 26 -> 3, every other one -> 0
    nic_map = plan.hosts[0].nics[0].dscp_to_priority  # type: ignore[attr-defined]
    assert (nic_map[40], nic_map[26], nic_map[24]) == (6, 3, 0)
    assert cs.host_array(script, "RT_DSCP2PRIO") == [["1", str(d), str(p)]
                                                     for d, p in sorted(nic_map.items())]
    assert 'rt_set+=(--dscp2prio "set,$dscp,$prio")' in script
    (tmp_path / "ok").mkdir()
    b = Box(tmp_path / "ok", plan.hosts[0])  # type: ignore[attr-defined]
    assert b.run(script).returncode == 0
    # set: each entry that differs from the default dscp >> 3 the trust change brought (26 -> 3 does not)
    assert (b.state / "qos/ens1f0np0/dscp2prio").read_text() == "".join(
        f"{d} {p}\n" for d, p in sorted(nic_map.items()) if p != d >> 3)
    (tmp_path / "lying").mkdir()
    liar = Box(tmp_path / "lying", plan.hosts[0])  # type: ignore[attr-defined]
    res = liar.run(script, STUB_IGNORE="dscp2prio")
    assert res.returncode == 1
    assert "ens1f0np0 dscp2prio/40: expected '6', read '5'" in res.stderr


def _qos(env: dict[str, str], netdev: str, *args: str) -> None:
    subprocess.run(["mlnx_qos", "-i", netdev, *args], env=env, check=True, capture_output=True, timeout=30)


def test_a_roce_dscp_someone_moved_to_a_lossy_priority_is_reported_set_back_and_restorable(
        tmp_path: Path) -> None:
    # DSCP trust, and someone ran `mlnx_qos --dscp2prio set,26,0`: RoCE DSCP 26 rides lossy priority 0
    # although the plan's 26 -> 3 is the ConnectX default. --check names it; apply sets it back (and only
    # it: 48 -> 6 is right already); the restore point puts 26 -> 0 back exactly and needs nothing for 48.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    assert _run_file(path, env=env).returncode == 0
    for nic in h.nics:
        _qos(env, nic.netdev, "--dscp2prio", "set,26,0")
    check = _run_file(path, "--check", env=env)
    assert check.returncode == 1, check.stdout
    for nic in h.nics:
        assert f"{nic.netdev} dscp2prio/26: expected '3', read '0'" in check.stderr
    assert "dscp2prio/48" not in check.stderr
    before = _device_view(box, h, env)
    restore = tmp_path / "restore.sh"
    res = _run_file(path, "--save", str(restore), env=env)
    assert res.returncode == 0, res.stderr
    for nic in h.nics:
        assert "\n26 3\n" in (box.state / "qos" / nic.netdev / "dscp2prio").read_text()
    assert _run_file(path, "--check", env=env).returncode == 0
    text = restore.read_text()
    assert [ln for ln in text.splitlines() if ln.startswith("rt_do mlnx_qos") and "--dscp2prio" in ln] == [
        f"rt_do mlnx_qos -i {nic.netdev} --dscp2prio set\\,26\\,0 " for nic in h.nics]
    back = _run_file(restore, env=env)
    assert back.returncode == 0, back.stderr
    assert _device_view(box, h, env) == before


@pytest.mark.parametrize("where", ["box", "emulator"])
def test_a_dscp_entry_deleted_by_hand_is_named_with_planned_and_running_priority(tmp_path: Path,
                                                                                where: str) -> None:
    # After a push someone runs `mlnx_qos --dscp2prio del,26,3` (the RoCE DSCP) on one NIC and
    # `del,48,6` (the CNP DSCP) on the other. mlx5e_dcbnl_ieee_delapp (en_dcbnl.c) takes the entry out of the
    # app table mlnx_qos reports and maps the DSCP to priority 0: RoCE rides a lossy priority. --check said
    # "read ''" (no running priority) and, on the emulator (whose del put the default back), nothing at all.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    if where == "emulator":  # the emulator's own mlnx_qos (tests/emulators/host_stubs.py)
        (box.bin / "mlnx_qos").write_text(host_stubs.launcher("mlnx_qos"))
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    assert _run_file(path, env=env).returncode == 0
    first, second = h.nics
    _qos(env, first.netdev, "--dscp2prio", "del,26,3")
    _qos(env, second.netdev, "--dscp2prio", "del,48,6")
    report = subprocess.run(["mlnx_qos", "-i", first.netdev], env=env, capture_output=True, text=True,
                            check=True).stdout
    assert 26 not in _nic_map(report) and "Priority trust state: dscp" in report  # (as the driver shows it)
    check = _run_file(path, "--check", env=env)
    assert check.returncode == 1, check.stdout + check.stderr
    named = [ln.strip() for ln in check.stderr.splitlines() if ln.strip().startswith("MISMATCH")]
    assert named == [f"MISMATCH {first.netdev} dscp2prio/26: expected '3', read '0 (no dscp2prio entry)'",
                     f"MISMATCH {second.netdev} dscp2prio/48: expected '6', read '0 (no dscp2prio entry)'"]
    assert [(m.device, m.what, m.planned, m.running) for m in host.check_mismatches(check.stderr)] == [
        (first.netdev, "dscp2prio/26", "3", "0 (no dscp2prio entry)"),
        (second.netdev, "dscp2prio/48", "6", "0 (no dscp2prio entry)")]
    res = _run_file(path, env=env)  # the apply puts both entries back
    assert res.returncode == 0, res.stderr
    assert _run_file(path, "--check", env=env).returncode == 0


def test_every_dscp_entry_deleted_by_hand_is_named_per_priority_with_its_dscps(tmp_path: Path) -> None:
    # After a push someone deletes all 64 DSCP entries of a NIC (`mlnx_qos --dscp2prio del,D,P` each): the
    # last delete puts the NIC on PCP trust and the report lists no map (mlx5e_dcbnl_ieee_delapp). --check
    # said one line, "dscp2prio: expected '64 entries', read 'no DSCP map listed'", where one deleted entry is
    # named with its DSCP and planned priority: it now names each planned priority with its DSCPs.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    assert _run_file(path, env=env).returncode == 0
    first = h.nics[0]
    for d, p in sorted(first.dscp_to_priority.items()):
        _qos(env, first.netdev, "--dscp2prio", f"del,{d},{p}")
    check = _run_file(path, "--check", env=env)
    assert check.returncode == 1, check.stdout + check.stderr
    named = [ln.strip() for ln in check.stderr.splitlines() if ln.strip().startswith("MISMATCH")]
    running = "none (the NIC lists no DSCP map: its dscp2prio entries were deleted or trust is pcp)"
    assert named == [f"MISMATCH {first.netdev} trust: expected 'dscp', read 'pcp'",
                     f"MISMATCH {first.netdev} dscp2prio/0-25,27-47,49-63: expected '0', read '{running}'",
                     f"MISMATCH {first.netdev} dscp2prio/26: expected '3', read '{running}'",
                     f"MISMATCH {first.netdev} dscp2prio/48: expected '6', read '{running}'"]
    assert [(m.what, m.planned) for m in host.check_mismatches(check.stderr)][1:] == [
        ("dscp2prio/0-25,27-47,49-63", "0"), ("dscp2prio/26", "3"), ("dscp2prio/48", "6")]
    assert _run_file(path, env=env).returncode == 0  # the apply puts the map back
    assert _run_file(path, "--check", env=env).returncode == 0


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_a_dscp_entry_deleted_before_the_push_is_deleted_again_by_the_restore_point(tmp_path: Path) -> None:
    # Before the push someone ran `mlnx_qos --dscp2prio del,26,3`: no entry for 26, which the NIC maps to
    # priority 0 (mlx5e_dcbnl_ieee_delapp). The push sets 26 -> 3. The restore point wrote it off as "not
    # restorable" (exit 3: a value that could not be read) though it was read: deleting the entry the push
    # set (`del,26,3`, accepted since the entry holds 3) puts the NIC back exactly.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    assert _run_file(path, env=env).returncode == 0
    first = h.nics[0]
    _qos(env, first.netdev, "--dscp2prio", "del,26,3")
    before = _device_view(box, h, env)
    restore = tmp_path / "restore.sh"
    res = _run_file(path, "--save", str(restore), env=env)
    assert res.returncode == 0, res.stderr
    assert _device_view(box, h, env) != before  # 26 -> 3 again
    assert not [ln for ln in restore.read_text().splitlines() if ln.startswith("rt_lost ")]
    back = _run_file(restore, env=env)
    assert back.returncode == 0, back.stderr
    assert _device_view(box, h, env) == before
    # run again when the push stopped before it set the map: the entry is not there, nothing to delete
    (tmp_path / "again").mkdir()
    box2 = Box(tmp_path / "again", h)
    env2 = _box_env(box2)
    assert _run_file(path, env=env2).returncode == 0
    _qos(env2, first.netdev, "--dscp2prio", "del,26,3")
    before2 = _device_view(box2, h, env2)
    restore2 = tmp_path / "restore2.sh"
    (box2.bin / "mlnx_qos").rename(box2.bin / "mlnx_qos.real")
    (box2.bin / "mlnx_qos").write_text(  # every NIC write fails: the push stops before it sets the map
        '#!/bin/bash\n[[ $# -gt 2 && -z "$RT_RESTORING" ]] && { echo "Error: busy"; exit 1; }\n'
        'exec "$(dirname "$0")/mlnx_qos.real" "$@"\n')
    (box2.bin / "mlnx_qos").chmod(0o755)
    assert _run_file(path, "--save", str(restore2), env=env2).returncode == 2
    back2 = _run_file(restore2, env={**env2, "RT_RESTORING": "1"})
    assert back2.returncode == 0, back2.stderr
    assert _device_view(box2, h, env2) == before2


def test_default_dscp_map_is_read_back_but_not_written(box: Box) -> None:
    _, script = _script(nic_map={d: d >> 3 for d in range(64)})  # a site that keeps the ConnectX default
    assert cs.host_array(script, "RT_DSCP2PRIO") == [["1", str(d), str(d >> 3)] for d in range(64)]
    assert ("DSCP->priority 8-15->1, 16-23->2, 24-31->3, 32-39->4, 40-47->5, 48-55->6, 56-63->7, "
            "the other 8 DSCPs->0 (64 entries: set where the NIC differs, all read back)") in script
    res = box.run(script)
    assert res.returncode == 0, res.stderr
    # the trust change brought the default map, which holds the plan's entries: no --dscp2prio was sent
    assert (box.state / "qos/ens1f0np0/dscp2prio").read_text() == ""


def test_pfc_and_cable_length_go_in_one_call() -> None:
    # mlnx_qos sends both in one set_ieee_pfc(pfc_en, delay); separate calls would zero each other.
    _, script = _script()
    lines = [ln for ln in script.splitlines()
             if ln.strip().removeprefix("rt_run ").startswith("mlnx_qos")
             and ("--pfc" in ln or "--cable_len" in ln)]
    assert lines and all("--pfc" in ln and "--cable_len" in ln for ln in lines)
    assert not any("--trust" in ln and "--dscp2prio" in ln for ln in script.splitlines())


def test_dcqcn_disabled_turns_rp_and_np_off(tmp_path: Path) -> None:
    plan, script = _script(dcqcn=False)
    assert "DCQCN off on priorities [3]; relies on: PFC only" in script
    b = Box(tmp_path, plan.hosts[0])  # type: ignore[attr-defined]
    (b.root / "sys/class/net/ens1f0np0/ecn/roce_rp/enable/3").write_text("1\n")
    assert b.run(script).returncode == 0
    assert (b.root / "sys/class/net/ens1f0np0/ecn/roce_rp/enable/3").read_text() == "0\n"
    assert "ROCE_CC_PRIO_MASK_P1=0" in script


def test_alternatives_name_debugfs_and_mlxconfig_keys() -> None:
    _, script = _script()
    block = script.split("# ===== alternatives =====")[1].split("# ===== readback =====")[0]
    assert all(ln.startswith("#") for ln in block.strip().splitlines())  # nothing executed
    assert "/sys/kernel/debug/mlx5/<pci>/cc_params/" in block
    table = {ln.split()[1]: ln.split()[2:] for ln in block.splitlines() if ln.startswith("# roce_")}
    for sysfs, name in (("roce_rp/rpg_ai_rate", "rp_ai_rate"), ("roce_rp/rpg_hai_rate", "rp_hai_rate"),
                        ("roce_rp/rpg_time_reset", "rp_time_reset"),
                        ("roce_rp/rpg_byte_reset", "rp_byte_reset"),
                        ("roce_rp/rpg_gd", "rp_gd"), ("roce_rp/rpg_min_dec_fac", "rp_min_dec_fac"),
                        ("roce_np/min_time_between_cnps", "np_min_time_between_cnps"),
                        ("roce_np/cnp_dscp", "np_cnp_dscp"), ("roce_np/cnp_802p_prio", "np_cnp_prio")):
        assert table[sysfs][0] == name
    nic = script.split("RT_NICS=(")[1].split("\n    '")[0]  # the first NIC's comment lines
    assert "PCI 0000:3b:00.0" in nic and all(ln.strip().startswith("#") for ln in nic.strip().splitlines())
    for key in ("ROCE_CC_PRIO_MASK_P1=8", "CNP_DSCP_P1=48", "CNP_802P_PRIO_P1=6", "RPG_AI_RATE_P1=80",
                "RPG_HAI_RATE_P1=800", "MIN_TIME_BETWEEN_CNPS_P1=4", "DCE_TCP_G_P1=1019"):
        assert key in nic


@pytest.mark.parametrize("text, want", [
    ("Global tclass=106\n", "106"),
    ("Global tclass=106\ndst_ip=192.0.2.0/24,tclass=160\n", "106"),
    # unset global, one per-address rule: the rule is not the global value
    ("dst_ip=192.0.2.0/24,tclass=160\n", ""),
    ("src_ip6=2001:db8::1,dst_ip6=2001:db8::2,tclass=160\n", ""),
    ("", ""),
    ("-1\n", ""),  # the driver's own unset value (tcd->val < 0), as a plain file holds it after the write
])
def test_traffic_class_readback_parses_the_driver_format(tmp_path: Path, text: str, want: str) -> None:
    """MLNX_OFED mlx5_ib ``traffic_class_show``: ``Global tclass=<n>`` only while the global value is set
    (``tcd->val >= 0``), then one line per address rule (``dst_ip=A/len,tclass=<n>``, ``src_ip6=...``).
    Run the script's own helper on that text: only the global line is the value the script sets."""
    _, script = _script()
    helpers = re.search(r"^rt_read\(\) \{.*?^\}\n", script, re.DOTALL | re.MULTILINE)
    tclass = re.search(r"^rt_tclass\(\) \{.*?^\}\n", script, re.DOTALL | re.MULTILINE)
    assert helpers and tclass
    f = tmp_path / "traffic_class"
    f.write_text(text)
    out = subprocess.run(["bash", "-c",
                          f"{helpers.group(0)}\n{tclass.group(0)}\nrt_tclass {shlex.quote(str(f))}"],
                         capture_output=True, text=True, check=True).stdout
    assert out == want


def test_restore_point_unsets_a_global_traffic_class_that_only_rules_preceded(tmp_path: Path) -> None:
    """A host with an mlx5 per-address traffic-class rule and no global value: the driver prints only the
    rule line (MLNX_OFED mlx5_ib ``traffic_class_show``). The restore point used to take that rule text for
    the old global value and write it back (re-adding the rule) instead of unsetting the global class the
    script set, so the host kept ToS 106 for every QP after the restore."""
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    rule = "dst_ip=192.0.2.0/24,tclass=160"
    for nic in h.nics:
        tc = box.root / "sys/class/infiniband" / nic.rdma_device / "tc/1/traffic_class"
        tc.write_text(rule + "\n")
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    res = _run_file(path, "--save", str(restore), env=_box_env(box))
    assert res.returncode == 0, res.stderr
    puts = [ln.split() for ln in restore.read_text().splitlines() if "traffic_class" in ln]
    assert puts and all(p[0] == "rt_put" and p[2] == str(host.TCLASS_UNSET) for p in puts), puts


def test_every_rendered_script_passes_bash_n_and_shellcheck(tmp_path: Path) -> None:
    scripts = [_script()[1], _script(cnp_dscp=40)[1], _script(dcqcn=False)[1]]
    for i, s in enumerate(scripts):
        p = tmp_path / f"s{i}.sh"
        p.write_text(s)
        assert subprocess.run(["bash", "-n", str(p)], capture_output=True, check=False).returncode == 0
        if shutil.which("shellcheck"):
            res = subprocess.run(["shellcheck", "-s", "bash", str(p)], capture_output=True, text=True,
                                 check=False)
            assert res.returncode == 0, res.stdout
    if not shutil.which("shellcheck"):
        pytest.skip("shellcheck not installed; bash -n passed")


def test_host_tos_matches_every_switch_dscp_map() -> None:
    # TOS = RoCE DSCP << 2 | ECT(0), with the DSCP read back out of each rendered switch config.
    plan, script = _script()
    tos = cs.host_tos(script)
    for sw in plan.switches:  # type: ignore[attr-defined]
        text = next(iter(get_platform(sw.platform).render(plan, sw).values()))
        view = cs.PARSERS[sw.platform](text)
        dscps = cs.lossless_dscps(view,
                                  set(plan.classification.lossless_queues))  # type: ignore[attr-defined]
        for t in tos:
            assert t & 0b11 == 0b10, f"TOS {t} is not ECT(0)"
            assert t >> 2 in dscps, (f"{sw.name}: host DSCP {t >> 2} not lossless on the switch "
                                     f"({sorted(dscps)})")


def test_nccl_env_sorted_and_quoted() -> None:
    plan = build_plan()
    h = plan.hosts[0].model_copy(update={"nccl_env": {"NCCL_IB_HCA": "^mlx5_4", "NCCL_IB_TC": "106",
                                                      "NCCL_DEBUG": "INFO", "NCCL_X": "a b'c"}})
    text = host.render_nccl_env(plan, h)
    lines = text.splitlines()
    assert [ln.split("=", 1)[0] for ln in lines] == sorted(h.nccl_env)
    assert "NCCL_IB_TC=106" in lines  # plain values stay plain
    assert "NCCL_IB_HCA='^mlx5_4'" in lines
    parsed = dict(ln.split("=", 1) for ln in lines)
    assert {k: shlex.split(v)[0] for k, v in parsed.items()} == h.nccl_env  # the shell reads the same values
    bad = h.model_copy(update={"nccl_env": {"NCCL_IB_TC; reboot": "1"}})
    with pytest.raises(ValueError, match="not a valid variable name"):
        host.render_nccl_env(plan, bad)


HOSTILE = ["eth0; rm -rf /", "$(reboot)", "eth0\nreboot", "eth0\n", "mlx5_0\n", "eth0\r", "et'h0", 'eth"0',
           "eth0`id`", "eth0 && id"]


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("fieldname", ["netdev", "rdma_device"])
def test_renderer_refuses_hostile_nic_names(value: str, fieldname: str) -> None:
    # Defence in depth: a plan built without the inventory loader still cannot inject commands.
    plan = build_plan()
    h = plan.hosts[0]
    bad = h.model_copy(update={"nics": [h.nics[0].model_copy(update={fieldname: value})]})
    with pytest.raises(ValueError, match="refusing to render"):
        host.render_host(plan, bad)


def test_newline_in_free_text_cannot_leave_a_comment(tmp_path: Path) -> None:
    plan = build_plan().model_copy(update={"site": "lab\ntouch /tmp/pwned-roce-tune", "generator": "x\r\nid"})
    script = host.render_host(plan, plan.hosts[0])["node1.sh"]
    assert not any(ln.startswith(("touch", "id")) for ln in script.splitlines())
    assert "lab?touch /tmp/pwned-roce-tune" in script


def _inventory(**names: str) -> str:
    n = {"switch": "leaf1", "port": "Ethernet0", "host": "node1", "netdev": "ens1f0np0", "rdma": "mlx5_0",
         **names}
    return textwrap.dedent(f"""\
        site: {{name: lab}}
        switches:
          - name: {json_str(n["switch"])}
            platform: sonic
            model: SN4700
            role: leaf
            ports: [{{name: {json_str(n["port"])}, speed: 400G}}]
        hosts:
          - name: {json_str(n["host"])}
            nics:
              - {{model: connectx-7, netdev: {json_str(n["netdev"])}, rdma_device: {json_str(n["rdma"])}, \
speed: 400G}}
        """)


def json_str(s: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax is valid YAML), so the hostile text arrives intact."""
    import json

    return json.dumps(s)


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("fieldname", ["switch", "port", "host", "netdev", "rdma"])
def test_inventory_loader_rejects_hostile_names(value: str, fieldname: str) -> None:
    loader = pytest.importorskip("roce_tune.inventory.loader", reason="inventory loader not written yet")
    assert loader.load_inventory_text(_inventory()) is not None  # the clean inventory loads
    with pytest.raises(Exception) as exc:
        loader.load_inventory_text(_inventory(**{fieldname: value}))
    assert value.splitlines()[0] in str(exc.value) or "not a valid" in str(exc.value)


def test_platform_registry_and_spec() -> None:
    mod = get_platform("host")
    assert mod is host
    assert host.SPEC.extension == "sh" and host.SPEC.commit == "host-script"
    assert host.SPEC.sections[-1] == "readback"


def _host_files(plan, only: slice = slice(None)) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The hosts/ files of an output tree: the shared host script, a data file and NCCL env per host."""
    files = host.render_hosts(plan, plan.hosts[only])
    for h in plan.hosts[only]:
        files[f"{h.name}.nccl.env"] = host.render_nccl_env(plan, h)
    return files


def test_golden_hand_built() -> None:
    cs.assert_golden("host", "hand-built", _host_files(build_plan(cnp_dscp=40)))


@pytest.mark.parametrize("inventory, only", [
    ("lab-2node", slice(None)),
    ("site", slice(None, None, 7)),  # gpu01 and gpu08 of 8 alike nodes keep the golden files reviewable
])
def test_golden_inventories(inventory: str, only: slice, tmp_path: Path) -> None:
    plan = cs.pipeline_plan(inventory)
    files = _host_files(plan, only)
    assert any(name.endswith(".sh") for name in files), f"{inventory}.yaml has hosts"
    for name, text in files.items():
        if name.endswith(".sh"):
            p = tmp_path / name
            p.write_text(text)
            assert subprocess.run(["bash", "-n", str(p)], check=False).returncode == 0, name
    cs.assert_golden("host", inventory, files)


def test_host_tos_matches_cli_switches_of_mixed_vendor_inventory() -> None:
    plan = cs.pipeline_plan("mixed-vendor")
    lossless = set(plan.classification.lossless_queues)
    views = {sw.name: cs.PARSERS[sw.platform](next(iter(get_platform(sw.platform).render(plan, sw).values())))
             for sw in plan.switches if sw.platform in cs.PARSERS}
    assert {"leaf1", "leaf3", "spine1"} <= set(views)
    for h in plan.hosts:
        for t in cs.host_tos(host.render_host(plan, h)[f"{h.name}.sh"]):
            assert t & 0b11 == 0b10, f"{h.name}: TOS {t} is not ECT(0)"
            for name, view in views.items():
                assert t >> 2 in cs.lossless_dscps(view, lossless), (f"{h.name} DSCP {t >> 2} not lossless "
                                                                     f"on {name}")


# --- restore point (--save FILE): what apply runs when a host push fails ------------------------
def _device_view(box: Box, plan_host, env: dict[str, str]) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """What the tools and sysfs report for every NIC (the values the script sets), as the driver shows
    them: an unset mlx5 global traffic class (-1) reads back empty."""
    def run(*argv: str) -> str:
        return subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=30,
                              check=False).stdout

    out: dict[str, str] = {}
    for nic in plan_host.nics:
        out[f"{nic.netdev} mlnx_qos"] = run("mlnx_qos", "-i", nic.netdev)
        out[f"{nic.netdev} ip"] = run("ip", "-o", "link", "show", "dev", nic.netdev)
        out[f"{nic.rdma_device} tos"] = run("cma_roce_tos", "-d", nic.rdma_device, "-p", "1")
        out[f"{nic.rdma_device} mode"] = run("cma_roce_mode", "-d", nic.rdma_device, "-p", "1")
        out[f"{nic.netdev} pause"] = run("ethtool", "-a", nic.netdev)
    lock = box.root / host.LOCK_PATH.lstrip("/")  # (the run's lock file, empty: no NIC value)
    for p in sorted(box.root.rglob("*")):
        if p.is_file() and p != lock:
            text = p.read_text()
            out[str(p.relative_to(box.root))] = ("" if p.name == "traffic_class" and text.strip() == "-1"
                                                 else text)
    return out


def _box_env(box: Box, **extra: str) -> dict[str, str]:
    return {"PATH": f"{box.bin}:{os.environ['PATH']}", "STUB_STATE": str(box.state),
            "ROCE_TUNE_SYSROOT": str(box.root), **extra}


def _run_file(path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(path), *args], env=env, capture_output=True, text=True, timeout=60,
                          check=False)


@pytest.mark.parametrize("fault", ["none", "ignored-pfc", "missing-knob"])
@pytest.mark.parametrize("start", ["fresh", "dscp-trust-custom-map"])
def test_save_writes_a_restore_point_that_puts_every_value_back(tmp_path: Path, fault: str,
                                                                start: str) -> None:
    # CNP DSCP 40 makes the script write a non-default --dscp2prio entry, which the restore must undo too.
    plan, script = _script(cnp_dscp=40)
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    if start == "dscp-trust-custom-map":  # a host someone tuned before: DSCP trust, DSCP 40 -> priority 2
        for nic in h.nics:
            subprocess.run(["mlnx_qos", "-i", nic.netdev, "--trust", "dscp"], env=env, check=True,
                           capture_output=True)
            subprocess.run(["mlnx_qos", "-i", nic.netdev, "--dscp2prio", "set,40,2"], env=env, check=True,
                           capture_output=True)
    env["STUB_IGNORE"] = "pfc" if fault == "ignored-pfc" else ""
    if fault == "missing-knob":  # the script stops (exit 2) half-way through the second NIC
        (box.root / "sys/class/net/ens1f1np1/ecn/roce_rp/rpg_ai_rate").unlink()
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    before = _device_view(box, h, env)
    restore = tmp_path / "restore.sh"
    res = _run_file(path, "--save", str(restore), env=env)
    assert res.returncode == {"none": 0, "ignored-pfc": 1, "missing-knob": 2}[fault], res.stderr
    assert _device_view(box, h, env) != before  # the run changed the NICs
    text = restore.read_text().replace("\\,", ",")
    assert subprocess.run(["bash", "-n", str(restore)], capture_output=True, check=False).returncode == 0
    back = _run_file(restore, env=env)
    if start == "fresh":
        # PCP trust before the run: no DSCP map was in use (mlnx_qos keeps none then). Putting pcp trust back
        # deletes every DSCP entry the run's DSCP trust brought, so no entry needs saving and none is lost.
        lost = [ln for ln in text.splitlines() if ln.startswith("rt_lost ")]
        saved_map = [ln for ln in text.splitlines() if ln.startswith("rt_") and "--dscp2prio" in ln]
        assert not lost and not saved_map
        assert "trust pcp before the change" in text
        assert back.returncode == 0, back.stderr
        for nic in h.nics:
            assert (box.state / "qos" / nic.netdev / "dscp2prio").read_text() == ""
    else:
        lost = [ln for ln in text.splitlines() if ln.startswith("rt_lost ")]
        assert "--dscp2prio set,40,2" in text and not [ln for ln in lost if "dscp2prio" in ln]
        # a knob that did not exist before the run was never written: nothing to put back
        assert back.returncode == 0, back.stderr
        assert not lost
    assert _device_view(box, h, env) == before


@pytest.mark.parametrize("cut", ["line", "mid-line", "edited"])
def test_a_restore_point_cut_short_or_changed_puts_nothing_back(tmp_path: Path, cut: str) -> None:
    # A restore point copied half-way (a full disk, an interrupted scp) or edited by hand: bash runs a script
    # line by line as it reads it, so the half that was there put back part of the values and then stopped
    # on "line 9: $2: unbound variable" (exit 1), leaving the NICs half put back with no word of why.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    assert _run_file(path, "--save", str(restore), env=env).returncode == 0
    text = restore.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    if cut == "line":
        restore.write_text("".join(lines[: len(lines) * 2 // 3]), encoding="utf-8")
    elif cut == "mid-line":
        restore.write_text(text[: len(text) // 2], encoding="utf-8")
    else:
        restore.write_text(text.replace("--trust pcp", "--trust dscp"), encoding="utf-8")
    before = _device_view(box, h, env)
    back = _run_file(restore, env=env)
    assert back.returncode == 2, back.stderr
    assert back.stderr == (f"roce-tune restore: {restore} is not the whole restore point roce-tune wrote "
                           "(cut short or changed: its sha256 differs); nothing was put back\n")
    assert _device_view(box, h, env) == before
    restore.write_text(text, encoding="utf-8")  # the whole file runs
    assert _run_file(restore, env=env).returncode == 0


def test_a_restore_point_cut_short_read_from_stdin_runs_nothing(tmp_path: Path) -> None:
    # `bash < restore.sh` (no file to check its sha256 against): a cut file still runs nothing
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    assert _run_file(path, "--save", str(restore), env=env).returncode == 0
    text = restore.read_text(encoding="utf-8")
    before = _device_view(box, h, env)
    back = subprocess.run(["bash"], input=text[: len(text) * 2 // 3], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert back.returncode != 0
    assert _device_view(box, h, env) == before


@pytest.mark.parametrize("differs", ["machine-id", "mac"])
def test_a_restore_point_run_on_another_machine_puts_nothing_back(tmp_path: Path, differs: str) -> None:
    # gpu01's restore point copied to gpu02 (same NIC names) and run there: it wrote gpu01's values, found
    # before gpu01's push, onto gpu02's NICs. It now checks the machine (/etc/machine-id) and each NIC
    # (its MAC address) it was taken on and stops, exit 2, naming what differs.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    boxes = []
    for name in ("gpu01", "gpu02"):
        (tmp_path / name).mkdir()
        box = Box(tmp_path / name, h)
        etc = box.root / "etc"
        etc.mkdir()
        (etc / "machine-id").write_text(("1" if name == "gpu01" or differs == "mac" else "2") * 32 + "\n")
        for i, nic in enumerate(h.nics):
            mac = f"b8:ce:f6:00:0{1 if name == 'gpu01' or differs == 'machine-id' else 2}:0{i}"
            (box.root / "sys/class/net" / nic.netdev / "address").write_text(mac + "\n")
        boxes.append(box)
    one, two = boxes
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    assert _run_file(path, "--save", str(restore), env=_box_env(one)).returncode == 0
    # as copied to gpu02: the same paths there (here: under gpu02's root; its sha256 line then made anew)
    other = tmp_path / "restore-on-gpu02.sh"
    head = restore.read_text(encoding="utf-8").replace(str(one.root), str(two.root)).split("\n", 3)
    head[2] = "# sha256 of line 4 to the end: " + hashlib.sha256(head[3].encode()).hexdigest()
    other.write_text("\n".join(head), encoding="utf-8")
    env2 = _box_env(two)
    before = _device_view(two, h, env2)
    back = _run_file(other, env=env2)
    assert back.returncode == 2, back.stderr
    # machine-id(5): the id is confidential, never shown or stored as is; the restore point keeps a hash of it
    assert "1" * 32 not in restore.read_text(encoding="utf-8") and "1" * 32 not in back.stderr
    assert "2" * 32 not in back.stderr
    if differs == "machine-id":
        def ident(mid: str) -> str:
            return "sha256:" + hashlib.sha256(f"roce-tune restore point {mid}".encode()).hexdigest()[:16]
        named = f"{two.root}/etc/machine-id was '{ident('1' * 32)}', is '{ident('2' * 32)}'"
    else:
        named = (f"{two.root}/sys/class/net/{h.nics[0].netdev}/address was 'b8:ce:f6:00:01:00', "
                 "is 'b8:ce:f6:00:02:00'")
    assert named in back.stderr, back.stderr
    assert "taken on another machine or NIC" in back.stderr and "nothing was put back" in back.stderr
    assert _device_view(two, h, env2) == before


def test_restore_point_rebuilds_a_custom_dscp_map_that_the_plans_pcp_trust_drops(tmp_path: Path) -> None:
    # A NIC found on DSCP trust with its own map (40 -> 2), a plan that wants PCP trust: mlnx_qos --trust pcp
    # deletes every DSCP entry, and --trust dscp alone would bring back only the default map. The restore
    # point must put the found map back as it was.
    plan = build_plan()
    h = plan.hosts[0]
    h = h.model_copy(update={"nics": [n.model_copy(update={"trust": "pcp"}) for n in h.nics]})
    plan = plan.model_copy(update={"hosts": [h]})
    script = host.render_host(plan, h)[f"{h.name}.sh"]
    assert cs.host_array(script, "RT_DSCP2PRIO") == []
    box = Box(tmp_path, h)
    env = _box_env(box)
    for nic in h.nics:
        _qos(env, nic.netdev, "--trust", "dscp")
        _qos(env, nic.netdev, "--dscp2prio", "set,40,2")
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    before = _device_view(box, h, env)
    res = _run_file(path, "--save", str(restore), env=env)
    assert res.returncode == 0, res.stderr
    assert "dscp2prio mapping" not in _device_view(box, h, env)["ens1f0np0 mlnx_qos"]
    back = _run_file(restore, env=env)
    assert back.returncode == 0, back.stderr
    assert _device_view(box, h, env) == before


def test_restore_point_names_values_it_could_not_read(tmp_path: Path) -> None:
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    absent = box.root / "sys/class/net/ens1f0np0/ecn/roce_np/min_time_between_cnps"
    absent.unlink()  # the script's own write then stops it (exit 2): never written, nothing to put back
    unreadable = box.root / "sys/class/net/ens1f1np1/ecn/roce_rp/rpg_gd"
    unreadable.write_text("")  # reads empty: its old value is unknown
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    env = _box_env(box)
    assert _run_file(path, "--save", str(restore), env=env).returncode == 2
    lines = restore.read_text().splitlines()
    gone = "ens1f0np0/ecn/roce_np/min_time_between_cnps"
    assert any(ln.startswith("# absent before the change") and gone in ln for ln in lines)
    assert not any(ln.startswith(("rt_put", "rt_lost")) and gone in ln for ln in lines)
    assert any(ln.startswith("rt_lost") and "ens1f1np1/ecn/roce_rp/rpg_gd" in ln for ln in lines)
    back = _run_file(restore, env=env)
    assert back.returncode == 3 and "rpg_gd" in back.stderr and gone not in back.stderr
    assert not absent.exists()  # nothing invented for a value that was never there


def test_restore_point_accepts_a_roce_mode_with_a_suffix(tmp_path: Path) -> None:
    # configfs may print more than the bare mode name (e.g. a "(default)" marker): still restorable.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    for nic in h.nics:
        mode = box.state / "cm" / nic.rdma_device / "1" / "mode"
        mode.parent.mkdir(parents=True, exist_ok=True)
        mode.write_text("IB/RoCE v1 (default)")
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    env = _box_env(box)
    assert _run_file(path, "--save", str(restore), env=env).returncode == 0
    assert "cma_roce_mode -d mlx5_0 -p 1 -m 1" in restore.read_text()


def test_check_mode_writes_no_restore_point_and_bad_arguments_are_refused(box: Box, tmp_path: Path) -> None:
    _, script = _script()
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    env = _box_env(box)
    before = box.snapshot()
    for args in (["--frobnicate"], ["--save"], ["--save", "--check"], ["--check", "--save", "x"],
                 ["--save", "y", "junk"], ["--save", ""]):
        bad = _run_file(path, *args, env=env)
        assert bad.returncode == 2 and "usage" in bad.stderr, args
    assert box.snapshot() == before and not (tmp_path / "--check").exists()
    assert _run_file(path, "--check", env=env).returncode == 1  # values not set yet
    assert not list(tmp_path.glob("*restore*"))
    before = box.snapshot()  # (the stub tools create their state files on the first read)
    old = tmp_path / "earlier.restore.sh"
    old.write_text("# an earlier restore point\n")
    again = _run_file(path, "--save", str(old), env=env)
    assert again.returncode == 2 and "already holds a restore point" in again.stderr
    assert box.snapshot() == before
    into_dir = _run_file(path, "--save", str(tmp_path), env=env)  # said it "already holds a restore point"
    assert into_dir.returncode == 2 and into_dir.stderr == (
        f"roce-tune: {tmp_path} is a directory: give --save the name of a new file\n"), into_dir.stderr
    assert box.snapshot() == before


@pytest.mark.parametrize("value", ["leaf1:Ethernet0\nreboot", "leaf1:Ethernet0\n", "leaf1:Ethernet0; id",
                                   "leaf1", "$(reboot):Ethernet0"])
def test_render_hosts_refuses_a_hostile_switch_port_or_host_name_and_names_it(value: str) -> None:
    # render_hosts matches a host's switch ports all at once: the one that fails is still the one named
    import re

    plan = build_plan()
    h = plan.hosts[0]
    assert h.nics[-1].switch_port
    good = h.model_copy(update={"name": "other"})
    bad = h.model_copy(update={"nics": [*h.nics[:-1], h.nics[-1].model_copy(update={"switch_port": value})]})
    with pytest.raises(ValueError, match=f"switch port {re.escape(repr(value))} does not match"):
        host.render_hosts(plan, [good, bad])
    if value != "leaf1":  # (a valid host name)
        with pytest.raises(ValueError, match=f"host name {re.escape(repr(value))} does not match"):
            host.render_hosts(plan, [good, h.model_copy(update={"name": value})])


@pytest.mark.parametrize("cable_m, want", [(0.5, 1), (2.0, 2), (998.2, 999), (999.0, 999), (999.5, None),
                                           (1000.0, None), (0.0, None), (65535.0, None)])
def test_cable_len_is_only_what_the_mlx5_driver_keeps(cable_m: float, want: int | None) -> None:
    """mlx5 ``mlx5e_dcbnl_ieee_setpfc`` (drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c) stores the PFC
    delay as the cable length only when ``delay && delay < MLX5E_MAX_CABLE_LENGTH`` (1000 m); mlnx_qos takes
    0..65535 and the driver drops the rest without an error, so such a length must not be rendered."""
    if want is None:
        with pytest.raises(ValueError, match="cable length"):
            host.cable_len_m(cable_m)
    else:
        assert host.cable_len_m(cable_m) == want


def test_shared_script_says_when_the_cable_length_sizes_the_nic_buffer() -> None:
    """mlx5 ``mlx5e_dcbnl_ieee_setpfc`` (en_dcbnl.c) reconfigures the receive buffers from the cable length
    only ``if (priv->dcbx.manual_buffer)``, which only ``mlx5e_dcbnl_setbuffer`` (a buffer_size/prio2buffer
    change) sets; a PFC vector change calls ``mlx5_toggle_port_link``. The script used to say the driver
    always derives the xoff from the cable length."""
    shared = host.render_shared_script("roce-tune test")
    assert "The driver derives the receive-buffer xoff from the cable length." not in shared
    assert ("# The mlx5 driver sizes the receive-buffer xoff from the cable length only in manual buffer "
            "mode (after a\n# --buffer_size/--prio2buffer change)") in shared
    assert "toggles the port link" in shared


def test_a_sysfs_write_the_driver_refuses_stops_with_exit_2_naming_file_and_value(box: Box) -> None:
    """A sysfs store that returns an error (the mlx5 ECN/tc attributes return -EINVAL for a value they do
    not take) makes the shell's write fail. The script used to die there through ``set -e`` with exit 1
    (the read-back mismatch code) and only bash's "printf: write error" on stderr, naming neither the file
    nor the value. /dev/full stands in for such a file: every write to it fails."""
    _, script = _script()
    target = box.root / "sys/class/net/ens1f0np0/ecn/roce_rp/rpg_ai_rate"
    target.unlink()
    target.symlink_to("/dev/full")
    res = box.run(script)
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert f"writing 80 to {target} failed" in res.stderr, res.stderr


@pytest.mark.parametrize("gone", ["sys/class/net/ens1f1np1/ecn", "sys/class/infiniband/mlx5_1/tc"])
def test_a_driver_without_the_sysfs_knobs_stops_before_any_change(tmp_path: Path, gone: str) -> None:
    """The inbox (upstream) mlx5 driver has neither ``/sys/class/net/<if>/ecn/`` (MLNX_OFED ECN sysfs) nor
    ``/sys/class/infiniband/<dev>/tc/<port>/traffic_class`` (MLNX_OFED mlx5_ib tc sysfs). The script used
    to set trust, PFC, MTU and the RDMA-CM ToS on every NIC and only then stop at the first missing file,
    leaving the host half-configured (and, without --save, with nothing to undo it)."""
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    shutil.rmtree(box.root / gone)
    before = _device_view(box, h, env)
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    for args in ((), ("--save", str(restore))):
        res = _run_file(path, *args, env=env)
        assert res.returncode == 2, res.stderr
        assert str(box.root / gone) in res.stderr and "does not exist" in res.stderr, res.stderr
        assert _device_view(box, h, env) == before  # nothing changed on any NIC
    assert not restore.exists() or "rt_do" not in restore.read_text()


# --- global (IEEE 802.3x) pause: off on every port with PFC ---------------------------------------------
def _ethtool(box: Box, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ethtool", *args], env=_box_env(box), capture_output=True, text=True, timeout=30,
                          check=False)


def _wrap_ethtool(box: Box, body: str) -> None:
    """Put a bash wrapper in front of the stub ethtool: ``body`` runs first, then the stub."""
    (box.bin / "ethtool").rename(box.bin / "ethtool.real")
    (box.bin / "ethtool").write_text(f'#!/bin/bash\n{body}\nexec "$(dirname "$0")/ethtool.real" "$@"\n')
    (box.bin / "ethtool").chmod(0o755)


def test_global_pause_is_turned_off_on_every_pfc_port_and_read_back(box: Box) -> None:
    # ConnectX ports start with 802.3x pause on in both directions (NVIDIA "Flow Control", ConnectX-4 and
    # above); with PFC on priority 3 a global pause frame would stop every priority, lossy ones included.
    plan, script = _script()
    res = box.run(script)
    assert res.returncode == 0, res.stderr
    for nic in plan.hosts[0].nics:  # type: ignore[attr-defined]
        shown = _ethtool(box, "-a", nic.netdev).stdout
        assert "RX:\t\toff" in shown and "TX:\t\toff" in shown, shown
    again = box.run(script)  # ethtool -A of values already set exits 78: the script must not ask again
    assert again.returncode == 0, again.stderr


def test_check_reports_global_pause_turned_back_on(box: Box, tmp_path: Path) -> None:
    _, script = _script()
    assert box.run(script).returncode == 0
    assert _ethtool(box, "-A", "ens1f1np1", "rx", "on").returncode == 0  # e.g. a NetworkManager profile
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    res = _run_file(path, "--check", env=_box_env(box))
    assert res.returncode == 1, res.stderr
    assert "MISMATCH ens1f1np1 global_pause: expected 'rx off tx off', read 'rx on tx off'" in res.stderr
    assert res.stderr.count("MISMATCH") == 1


def test_global_pause_that_cannot_be_read_is_a_mismatch_not_ok(box: Box, tmp_path: Path) -> None:
    _, script = _script()
    assert box.run(script).returncode == 0
    _wrap_ethtool(box, '[[ $1 == -a ]] && { echo "Cannot get device pause settings: Operation not supported"'
                       ' >&2; exit 76; }')
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    res = _run_file(path, "--check", env=_box_env(box))
    assert res.returncode == 1, res.stderr
    assert "ens1f0np0 global_pause: expected 'rx off tx off', read '<ethtool -a failed>'" in res.stderr


def test_a_port_whose_pause_cannot_be_read_stops_the_apply_before_any_change(tmp_path: Path) -> None:
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    _wrap_ethtool(box, '[[ $1 == -a && $2 == ens1f1np1 ]] && { echo "Cannot get device pause settings: '
                       'No such device" >&2; exit 76; }')
    before = _device_view(box, h, env)
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    res = _run_file(path, env=env)
    assert res.returncode == 2, res.stderr
    assert "ethtool -a ens1f1np1 failed" in res.stderr and "No such device" in res.stderr, res.stderr
    assert _device_view(box, h, env) == before


def test_a_refused_pause_change_is_named_and_the_restore_point_puts_every_port_back(tmp_path: Path) -> None:
    # mlx5 refuses ethtool -A where the function does not manage the port (a VF: -EOPNOTSUPP). The first
    # port was already changed; the restore puts it back and leaves the refused one alone (asking ethtool
    # for a change that changes nothing fails: exit 78).
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    env = _box_env(box)
    _wrap_ethtool(box, '[[ $1 == -A && $2 == ens1f1np1 ]] && { echo "Cannot set device pause parameters: '
                       'Operation not supported" >&2; exit 79; }')
    before = _device_view(box, h, env)
    path, restore = tmp_path / "apply.sh", tmp_path / "restore.sh"
    path.write_text(script, encoding="utf-8")
    res = _run_file(path, "--save", str(restore), env=env)
    assert res.returncode == 2, res.stderr
    assert "ethtool -A ens1f1np1 rx off tx off failed" in res.stderr
    assert "Operation not supported" in res.stderr
    assert "RX:\t\toff" in _ethtool(box, "-a", "ens1f0np0").stdout
    back = _run_file(restore, env=env)
    assert back.returncode == 0, back.stderr
    assert _device_view(box, h, env) == before


def test_global_pause_is_left_alone_on_a_port_without_pfc(tmp_path: Path) -> None:
    # a lossy RoCE port (PFC vector all 0, ECN only) keeps whatever link-level flow control it has
    plan = build_plan()
    h = plan.hosts[0]
    h.nics[1] = h.nics[1].model_copy(update={"pfc_vector": [0] * 8})
    script = host.render_host(plan, h)[f"{h.name}.sh"]
    box = Box(tmp_path, h)
    res = box.run(script)
    assert res.returncode == 0, res.stderr
    assert "RX:\t\toff" in _ethtool(box, "-a", "ens1f0np0").stdout
    assert "RX:\t\ton" in _ethtool(box, "-a", "ens1f1np1").stdout


def _nic_map(report: str) -> dict[int, int]:
    """The DSCP -> priority map of an ``mlnx_qos -i IF`` report (its ``prio:P dscp:D,D,`` lines)."""
    out: dict[int, int] = {}
    for m in re.finditer(r"prio:([0-7]) dscp:([0-9,]*)", report):
        out.update({int(d): int(m[1]) for d in m[2].split(",") if d})
    return out


def _log_qos_calls(box: Box, log: Path) -> None:
    """Put a shim in front of the box's ``mlnx_qos`` stub that appends each command line to ``log``."""
    (box.bin / "mlnx_qos").rename(box.bin / "mlnx_qos.real")
    (box.bin / "mlnx_qos").write_text(f'#!/bin/bash\nprintf "%s\\n" "$*" >> {shlex.quote(str(log))}\n'
                                      'exec "$(dirname "$0")/mlnx_qos.real" "$@"\n')
    (box.bin / "mlnx_qos").chmod(0o755)


def test_the_nic_gets_the_plans_whole_dscp_map_in_one_call_and_reads_it_back(tmp_path: Path) -> None:
    # plan.json maps all 64 DSCPs (every non-RoCE, non-CNP one to lossy priority 0). The mlx5 default map is
    # dscp >> 3, so a script that writes only 26 and 48 leaves CS3/AF3x (24-31) on lossless priority 3.
    plan, script = _script()
    h = plan.hosts[0]  # type: ignore[attr-defined]
    box = Box(tmp_path, h)
    log = tmp_path / "qos.log"
    _log_qos_calls(box, log)
    env = _box_env(box)
    path = tmp_path / "apply.sh"
    path.write_text(script, encoding="utf-8")
    res = _run_file(path, env=env)
    assert res.returncode == 0, res.stderr
    for nic in h.nics:
        assert len(nic.dscp_to_priority) == 64
        report = subprocess.run(["mlnx_qos", "-i", nic.netdev], env=env, capture_output=True, text=True,
                                check=True).stdout
        assert _nic_map(report) == nic.dscp_to_priority
        assert _nic_map(report)[24] == 0
        # one mlnx_qos call sets every entry that differed from the default the trust change brought
        sets = [ln for ln in log.read_text().splitlines() if ln.startswith(f"-i {nic.netdev} --dscp2prio")]
        assert len(sets) == 1, sets
        changed = {d for d, p in nic.dscp_to_priority.items() if p != d >> 3}
        assert {int(s.split(",")[1]) for s in sets[0].split("--dscp2prio ")[1:]} == changed
    # a second run reads the map and changes nothing
    log.write_text("")
    assert _run_file(path, env=env).returncode == 0
    assert "--dscp2prio" not in log.read_text()
    # someone moves CS3 back onto the lossless priority: --check names it
    _qos(env, h.nics[0].netdev, "--dscp2prio", "set,24,3")
    check = _run_file(path, "--check", env=env)
    assert check.returncode == 1
    assert f"{h.nics[0].netdev} dscp2prio/24: expected '0', read '3'" in check.stderr


def test_a_second_run_while_one_holds_the_lock_stops_with_exit_2_and_changes_nothing(box: Box) -> None:
    # a manual apply while the boot unit (or another apply) runs the script: two runs would interleave their
    # mlnx_qos/sysfs writes and each other's restore points; the second must stop before it reads anything
    import fcntl

    _, script = _script()
    lock = box.root / host.LOCK_PATH.lstrip("/")
    lock.parent.mkdir(parents=True, exist_ok=True)
    before = box.snapshot()
    with open(lock, "a", encoding="utf-8") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        for args in ((), ("--check",)):
            res = box.run(script) if not args else _run_file(_written(box, script), *args, env=_box_env(box))
            assert res.returncode == 2, res.stdout + res.stderr
            assert f"another run of the roce-tune host script holds {lock}" in res.stderr
        assert {k: v for k, v in box.snapshot().items() if not k.endswith(".lock")} == before
    res = box.run(script)
    assert res.returncode == 0, res.stderr


def _written(box: Box, script: str) -> Path:
    path = box.root.parent / "apply.sh"
    path.write_text(script, encoding="utf-8")
    return path
