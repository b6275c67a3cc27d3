"""Read counters and NIC facts from hosts and switches over netmiko sessions.

Device I/O goes through the apply engine's connection code (:func:`roce_tune.deploy.runner.connect`,
credentials from the environment or a secrets file, :class:`~roce_tune.deploy.drivers.Driver` ``cmd``).
Commands per device kind (one round trip per host NIC; sections split by ``@@ROCE_TUNE`` marker lines):

* host NIC counters: ``ethtool -S IF`` and ``grep -H '' …/hw_counters/*`` (docs/derivation.md#counters);
* host NIC facts: netdev ``mtu`` (sysfs), ``ibv_devinfo -d DEV``, ``show_gids DEV``;
* switches: the commands and parsers of the switch's platform
  (:attr:`roce_tune.platforms.contract.Platform.counters`); a platform without a counter reader is listed
  as ``unsupported`` in the snapshot.

Host paths are prefixed with ``${ROCE_TUNE_SYSROOT:-}`` (empty on a real host; the test emulators
set it), like the rendered host scripts.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from roce_tune.deploy.credentials import private_dir
from roce_tune.deploy.drivers import Driver, PushOptions
from roce_tune.deploy.runner import ApplyOptions, Target, connect
from roce_tune.plan import HostPlan, NicPlan, Plan, SwitchPlan
from roce_tune.platforms import platform
from roce_tune.platforms.contract import CounterReader
from roce_tune.verify import counters as c
from roce_tune.verify.hostfacts import NicFacts, parse_ibv_devinfo, parse_show_gids

MARK = "@@ROCE_TUNE"
SYS = "${ROCE_TUNE_SYSROOT:-}"
_T = TypeVar("_T")

__all__ = [
    "DevicePool",
    "collect_facts",
    "facts_command",
    "host_counter_command",
    "parse_facts",
    "parse_host_counters",
    "parse_switch_counters",
    "snapshot",
    "split_sections",
    "switch_commands",
]


class DevicePool:
    """One netmiko session per plan device, opened on first use and reused; thread-safe per device.

    ``log`` records every command sent (device, command) in order — the report saves it.

    Raises (from :meth:`run`):
        KeyError: the device is not in the plan or has no management address.
        Exception: what netmiko raises when the device cannot be reached (after one reconnect).
    """

    def __init__(self, plan: Plan, opts: ApplyOptions, read_timeout_s: float = 120.0,
                 log_dir: Path | None = None):
        self.opts, self.read_timeout_s, self.log_dir = opts, read_timeout_s, log_dir
        self.targets: dict[str, Target] = {}
        for sw in plan.switches:
            self.targets[sw.name] = Target.of_switch(sw)
        for h in plan.hosts:
            self.targets[h.name] = Target.of_host(h)
        self._drivers: dict[str, Driver] = {}
        self._conns: dict[str, object] = {}
        self._locks = {name: threading.Lock() for name in self.targets}
        self.log: list[tuple[str, str]] = []
        self._log_lock = threading.Lock()

    def _open(self, name: str, timeout_s: float) -> Driver:
        t = self.targets[name]
        if not t.host:
            raise KeyError(f"{name} has no management address in the plan")
        log_path = self.log_dir / f"{name}.log" if self.log_dir else None
        if log_path:
            private_dir(log_path.parent)  # 0700; the session log itself is 0600 and masked
        conn, _redact = connect(t, self.opts, log_path)
        self._conns[name] = conn
        drv = Driver(t.platform, conn, PushOptions(read_timeout_s=timeout_s, save=False), lambda s: None)
        self._drivers[name] = drv
        return drv

    def run(self, name: str, command: str, timeout_s: float | None = None, retry: bool = True) -> str:
        """Send ``command`` to device ``name`` and return its output; on a failure the session is closed
        and, with ``retry``, the command sent once more on a new one (``retry=False`` for a command that
        must not run twice, such as an nccl-tests launch)."""
        timeout = timeout_s or self.read_timeout_s
        with self._locks[name]:
            with self._log_lock:
                self.log.append((name, command))
            for attempt in (1, 2) if retry else (2,):
                drv = self._drivers.get(name) or self._open(name, timeout)
                drv.opts.read_timeout_s = timeout
                try:
                    return drv.cmd(command)
                except Exception:
                    self._close_one(name)
                    if attempt == 2:
                        raise
        raise AssertionError("unreachable")

    def with_driver(self, name: str, what: str, fn: Callable[[Driver], _T],
                    timeout_s: float | None = None) -> _T:
        """Run ``fn`` with device ``name``'s :class:`~roce_tune.deploy.drivers.Driver` (a read such as
        ``read_running`` or a host script's ``--check``), once; ``what`` goes to :attr:`log`. On a failure the
        session is closed and the exception raised (KeyError: not in the plan or no management address)."""
        timeout = timeout_s or self.read_timeout_s
        with self._locks[name]:
            with self._log_lock:
                self.log.append((name, what))
            drv = self._drivers.get(name) or self._open(name, timeout)
            drv.opts.read_timeout_s = timeout
            try:
                return fn(drv)
            except Exception:
                self._close_one(name)
                raise

    def _close_one(self, name: str) -> None:
        conn = self._conns.pop(name, None)
        self._drivers.pop(name, None)
        if conn is not None:
            try:
                conn.disconnect()  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001, S110 — the session is gone either way
                pass

    def close(self) -> None:
        """Disconnect every session."""
        for name in list(self._conns):
            self._close_one(name)


def split_sections(text: str) -> dict[str, str]:
    """Output of a marker-separated command → ``{section: text}``."""
    out: dict[str, list[str]] = {}
    cur = None
    for line in text.splitlines():
        if line.strip().startswith(MARK + " "):
            cur = line.strip()[len(MARK) + 1:].strip()
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def host_counter_command(nic: NicPlan) -> str:
    """One shell line reading ``ethtool -S`` and the RDMA hw_counters of ``nic``."""
    return (f"echo '{MARK} ethtool'; ethtool -S {nic.netdev} 2>&1; echo '{MARK} hw'; "
            f"grep -H '' {SYS}/sys/class/infiniband/{nic.rdma_device}/ports/{nic.rdma_port}/hw_counters/* "
            "2>&1")


def parse_host_counters(host: str, nic: NicPlan, text: str) -> c.HostNicCounters:
    """Output of :func:`host_counter_command` → :class:`~roce_tune.verify.counters.HostNicCounters`."""
    sec = split_sections(text)
    eth, hw = c.parse_ethtool_stats(sec.get("ethtool", "")), c.parse_hw_counters(sec.get("hw", ""))
    errors = []
    if not eth:
        errors.append(f"ethtool -S {nic.netdev}: no statistics ({sec.get('ethtool', '').strip()[:120]!r})")
    if not hw:
        errors.append(f"{nic.rdma_device} hw_counters: none read")
    return c.HostNicCounters(host=host, netdev=nic.netdev, rdma_device=nic.rdma_device, ethtool=eth, hw=hw,
                             errors=errors)


def facts_command(nic: NicPlan) -> str:
    """One shell line reading the netdev MTU, ``ibv_devinfo`` and ``show_gids`` of ``nic``."""
    return (f"echo '{MARK} mtu'; cat {SYS}/sys/class/net/{nic.netdev}/mtu 2>&1; echo '{MARK} ibv'; "
            f"ibv_devinfo -d {nic.rdma_device} 2>&1; echo '{MARK} gids'; show_gids {nic.rdma_device} 2>&1")


def parse_facts(host: str, nic: NicPlan, text: str) -> NicFacts:
    """Output of :func:`facts_command` → :class:`~roce_tune.verify.hostfacts.NicFacts`."""
    sec = split_sections(text)
    mtu_txt = sec.get("mtu", "").strip()
    port = parse_ibv_devinfo(sec.get("ibv", "")).get(nic.rdma_port, {})
    errors = []
    if not mtu_txt.isdigit():
        errors.append(f"netdev MTU of {nic.netdev} not read")
    if not port:
        errors.append(f"ibv_devinfo -d {nic.rdma_device}: port {nic.rdma_port} not found")
    gids = [g for g in parse_show_gids(sec.get("gids", "")) if g.device == nic.rdma_device
            and g.port == nic.rdma_port]
    return NicFacts(host=host, netdev=nic.netdev, rdma_device=nic.rdma_device,
                    netdev_mtu=int(mtu_txt) if mtu_txt.isdigit() else None,
                    active_mtu=port.get("active_mtu"), max_mtu=port.get("max_mtu"),  # type: ignore[arg-type]
                    port_state=port.get("state"), link_layer=port.get("link_layer"),  # type: ignore[arg-type]
                    gids=gids, errors=errors,
                    gid_table_read=bool(gids) or bool(re.search(r"^\s*DEV\s+PORT\s+INDEX\s+GID",
                                                                sec.get("gids", ""),
                                                               re.M)))


def _reader(sw: SwitchPlan) -> CounterReader | None:
    try:
        return platform(sw.platform).counters
    except KeyError:
        return None


def switch_commands(sw: SwitchPlan) -> list[str]:
    """Counter commands for ``sw``'s platform (empty = not supported yet)."""
    reader = _reader(sw)
    return reader.commands(sw) if reader else []


def parse_switch_counters(sw: SwitchPlan, outputs: dict[str, str]) -> c.SwitchCounters:
    """Outputs of :func:`switch_commands` → :class:`~roce_tune.verify.counters.SwitchCounters`."""
    reader = _reader(sw)
    if reader is None:
        return c.SwitchCounters(switch=sw.name, platform=sw.platform,
                                unsupported=[f"all counters: {sw.platform} is not read by roce-tune verify "
                                             "yet"])
    got = reader.parse(sw, outputs)
    return c.SwitchCounters(switch=sw.name, platform=sw.platform, ports=got.ports,
                            unsupported=list(got.unsupported),
                            errors=list(got.errors))


def _each(jobs: dict[str, Callable[[], Any]], workers: int) -> dict[str, Any]:
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs) or 1))) as pool:
        futs = {name: pool.submit(fn) for name, fn in jobs.items()}
        return {name: f.result() for name, f in futs.items()}


def _host_job(pool: DevicePool, h: HostPlan) -> Callable[[], list[c.HostNicCounters]]:
    def job() -> list[c.HostNicCounters]:
        out = []
        for nic in h.nics:
            try:
                out.append(parse_host_counters(h.name, nic, pool.run(h.name, host_counter_command(nic))))
            except Exception as exc:  # noqa: BLE001 — one device's failure is reported, not fatal
                out.append(c.HostNicCounters(host=h.name, netdev=nic.netdev, rdma_device=nic.rdma_device,
                                             errors=[f"{type(exc).__name__}: {exc}".strip()]))
        return out
    return job


def _switch_job(pool: DevicePool, sw: SwitchPlan) -> Callable[[], c.SwitchCounters]:
    def job() -> c.SwitchCounters:
        outputs: dict[str, str] = {}
        reader = _reader(sw)
        cmds = reader.commands(sw) if reader else []
        try:
            # one round trip: bash runs the commands in
            # sequence
            if reader is not None and reader.one_shell_line and cmds:
                line = "; ".join(f"echo '{MARK} {cmd}'; {cmd}" for cmd in cmds)
                outputs = split_sections(pool.run(sw.name, line))
            else:
                for cmd in cmds:
                    outputs[cmd] = pool.run(sw.name, cmd)
        except Exception as exc:  # noqa: BLE001
            return c.SwitchCounters(switch=sw.name, platform=sw.platform, errors=[f"{type(exc).__name__}: "
                                                                                  f"{exc}"])
        return parse_switch_counters(sw, outputs)
    return job


def snapshot(pool: DevicePool, plan: Plan, hosts: list[str], switches: list[str],
             workers: int = 8) -> c.CounterSnapshot:
    """Read every selected host's and switch's counters concurrently (one thread per device)."""
    jobs: dict[str, Callable[[], Any]] = {}
    for h in plan.hosts:
        if h.name in hosts:
            jobs[h.name] = _host_job(pool, h)
    for sw in plan.switches:
        if sw.name in switches and sw.mgmt_host:
            jobs[sw.name] = _switch_job(pool, sw)
    taken = time.time()
    res = _each(jobs, workers)
    host_c = [x for h in plan.hosts if h.name in res for x in res[h.name]]
    sw_c = [res[s.name] for s in plan.switches if s.name in res]
    return c.CounterSnapshot(taken_at=taken, hosts=host_c, switches=sw_c)


def collect_facts(pool: DevicePool, plan: Plan, hosts: list[str], workers: int = 8) -> list[NicFacts]:
    """MTU / active MTU / GID facts of every NIC of the selected hosts."""
    def job(h: HostPlan) -> Callable[[], list[NicFacts]]:
        def run() -> list[NicFacts]:
            out = []
            for nic in h.nics:
                try:
                    out.append(parse_facts(h.name, nic, pool.run(h.name, facts_command(nic))))
                except Exception as exc:  # noqa: BLE001
                    out.append(NicFacts(host=h.name, netdev=nic.netdev, rdma_device=nic.rdma_device,
                                        errors=[f"{type(exc).__name__}: {exc}"]))
            return out
        return run
    res = _each({h.name: job(h) for h in plan.hosts if h.name in hosts}, workers)
    return [f for h in plan.hosts if h.name in res for f in res[h.name]]
