"""What the devices run before verify measures: read back the way ``roce-tune apply --dry-run`` reads them.

verify measures the fabric as it runs, not as planned. Before the first run every switch and host of the
plan with a management address is read back through the apply engine's own code, on verify's sessions
(:class:`~roce_tune.verify.collect.DevicePool`):

* a switch: its running configuration (:meth:`~roce_tune.deploy.drivers.Driver.read_running`), diffed with
  its rendered configuration by :func:`~roce_tune.deploy.drivers.compute_change` (the dry run's diff: empty
  = as planned), and read into values by its platform's ``read_back``
  (:attr:`roce_tune.platforms.contract.Platform.read_back`): ECN Kmin/Kmax/Pmax on each lossless queue;
* a host: its script's read-back (``--check``, :meth:`~roce_tune.deploy.drivers.Driver.run_host_script`;
  exit 0 = as planned, 1 = the values listed as ``MISMATCH`` lines, read by the host platform's
  ``check_mismatches``), which include DCQCN rpg_ai_rate/rpg_hai_rate.

Each difference is a finding naming device, value, planned and running (RT332); a device that could not be
read is "not read" (RT333), never "as planned". The baseline iteration is labelled with the running values
(:meth:`AsFound.settings`), and ``--adjust`` refuses to start unless every device runs the plan
(:meth:`AsFound.refusal`): its rollback to iteration 0 pushes the plan, which must be what was measured.
After each ``--adjust`` push the devices it changed are read again the same way (:meth:`AsFound.merged`):
a value that differs then is a push that did not take (``diagnoses(after_push=...)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from roce_tune.deploy.drivers import Driver, compute_change
from roce_tune.deploy.runner import Target, targets_from_files
from roce_tune.findings import Location, Severity
from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms import HOST_PLATFORM, get_platform, planned_qos, platform
from roce_tune.qos import SwitchQos, differences
from roce_tune.verify.collect import DevicePool
from roce_tune.verify.observation import (
    AS_PLANNED,
    DCQCN_FIELDS,
    ECN_FIELDS,
    RUNNING,
    UNCONFIRMED,
    CheckResult,
    Diagnosis,
    Seen,
    ecn_key,
    ecn_member,
)
from roce_tune.verify.sim_step import host_nic_keys, key_name

__all__ = ["AsFound", "Difference", "read_as_found"]

#: diff lines quoted in a finding whose difference no value names (the rest are counted)
_DIFF_LINES = 5
#: the values of a lossless port that decide whether it drops (paths of :class:`roce_tune.qos.PortQos`)
BUFFER_VALUES = (".headroom.", ".pfc_priorities")
#: the most such differences a loss diagnosis names (the rest are counted; RT332 lists them all)
BUFFER_NAMED = 3


@dataclass(frozen=True)
class Difference:
    """One value a device runs that is not the plan's: ``device``, ``value`` (e.g. ``Ethernet0 queue 3
    kmax_bytes``, ``ens1f0np0 ecn/roce_rp/rpg_ai_rate``), ``planned`` and ``running`` as text."""

    device: str
    value: str
    planned: str
    running: str


@dataclass
class _Device:
    """One device as read: running values (switch: ``ecn_member(port, queue) -> {field: value}``, e.g.
    ``Ethernet0 queue 3``; host: ``netdev -> {key:
    value}`` of the DCQCN values that differ), its differences, or why it was not read."""

    name: str
    values: dict[str, dict[str, object]] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    error: str | None = None
    #: a switch: its read-back stated the headroom and PFC priorities of every lossless port (or it runs the
    #: rendered configuration), so what it does not list as a difference runs as planned
    buffer_stated: bool = True


@dataclass
class AsFound:
    """Every device read before the baseline: ``devices`` by name, in plan order (module docstring)."""

    devices: dict[str, _Device]

    @property
    def differences(self) -> list[Difference]:
        """Every difference of every device read, in plan order."""
        return [d for dev in self.devices.values() for d in dev.differences]

    @property
    def not_read(self) -> dict[str, str]:
        """Device -> why its running values could not be read."""
        return {n: d.error for n, d in self.devices.items() if d.error is not None}

    @property
    def as_planned(self) -> bool:
        """True when every device was read and runs the plan."""
        return not self.differences and not self.not_read

    def seen(self, device: str, member: str, name: str, planned: object) -> Seen:
        """Value ``name`` (an :data:`ECN_FIELDS` of switch queue ``member``, ``ecn_member(port, queue)``, or a
        :data:`DCQCN_FIELDS` of host
        NIC ``member``) as read: the plan's ``planned`` :data:`UNCONFIRMED` when ``device`` was not read (no
        management address, not selected, an error) or its read-back cannot state the value; ``planned``
        :data:`AS_PLANNED` when it runs the plan (empty dry-run diff, clean ``--check``) or states the planned
        value; else the value it runs, :data:`RUNNING`. A host's ``--check`` names only the values that
        differ: one it does not name runs as planned."""
        dev = self.devices.get(device)
        if dev is None or dev.error is not None:
            return Seen(planned, planned, UNCONFIRMED)
        if not dev.differences:
            return Seen(planned, planned, AS_PLANNED)
        row = dev.values.get(member, {})
        if name in DCQCN_FIELDS and name not in row:
            return Seen(planned, planned, AS_PLANNED)
        got = row.get(name)
        if got is None:
            return Seen(planned, planned, UNCONFIRMED)
        return Seen(got, planned, AS_PLANNED if got == planned else RUNNING)

    def buffer_words(self, switches: list[str]) -> str:
        """The lossless headroom and PFC priorities of ``switches`` as read, for a loss diagnosis: each value
        that differs (``lab-leaf1 ports[Ethernet0].headroom.xoff_bytes: planned 34816, running 4096``, at most
        :data:`BUFFER_NAMED` of them), then the switches read back as planned, then those whose values were
        not read back (the plan's, unconfirmed). '' without switches."""
        diffs = self._buffer_differences(switches)
        read = self._buffer_read(switches)
        said = _named_differences(diffs)
        differing = {d.device for d in diffs}
        if confirmed := [s for s in read if s not in differing]:
            said.append(f"as planned on {', '.join(confirmed)} (read back)")
        if unread := [s for s in switches if s not in read]:
            said.append(f"on {', '.join(unread)} the plan's values ({UNCONFIRMED})")
        return "; ".join(said)

    def _buffer_differences(self, switches: list[str]) -> list[Difference]:
        """The differences of ``switches`` (device names; one not read here has none) in a value that decides
        whether a lossless port drops (a path containing one of :data:`BUFFER_VALUES`), in switch order."""
        return [d for s in switches if (dev := self.devices.get(s)) is not None
                for d in dev.differences if any(k in d.value for k in BUFFER_VALUES)]

    def _buffer_read(self, switches: list[str]) -> list[str]:
        """Those of ``switches`` (device names, order kept) that were read without error and whose read-back
        states the headroom and PFC priorities of every lossless port (:attr:`_Device.buffer_stated`)."""
        return [s for s in switches if (dev := self.devices.get(s)) is not None and dev.error is None
                and dev.buffer_stated]

    def merged(self, later: AsFound) -> AsFound:
        """This read with each device of ``later`` (read again, e.g. after an ``--adjust`` push) in place of
        its earlier read; the other devices keep theirs (what they were pushed last is unchanged)."""
        return AsFound({**self.devices, **later.devices})

    def diagnoses(self, after_push: str | None = None) -> list[Diagnosis]:
        """RT332 per difference, RT333 per device not read (warnings: they explain a measurement, they are not
        one). ``after_push``: this is the read-back of the devices an ``--adjust`` step just pushed (e.g.
        ``"after the push before run 2"``): a value that differs is a push that did not take."""
        when = f"{after_push}: " if after_push else ""
        took = "; the push did not take (apply had read it back as pushed)" if after_push else ""
        fix = ("the device went back on the change after apply read it back (something else manages it, or "
               "a commit-confirm rolled back): see its session log, push with `roce-tune apply` and verify "
               "again" if after_push else
               "run `roce-tune apply` to put the plan on the device, then verify again")
        tag: dict[str, object] = {"after_push": after_push} if after_push else {}
        out = [Diagnosis(rule="RT332", name="device does not run the plan", severity=Severity.warning,
                         location=Location(device=d.device),
                         message=f"{when}{d.device} {d.value}: planned {d.planned}, running {d.running}"
                                 f"{took}; the measurement is of the running value",
                         fix=fix,
                         evidence={"device": d.device, "value": d.value, "planned": d.planned,
                                   "running": d.running, **tag})
               for d in self.differences]
        out += [Diagnosis(rule="RT333", name="device not read", severity=Severity.warning,
                          location=Location(device=name),
                          message=f"{when}the running values of {name} could not be read ({why}): what it "
                                  "runs is not known, so it is not taken as planned",
                          fix=f"make {name} reachable (management address, credentials, host key) and verify "
                              "again", evidence={"device": name, "error": why, **tag})
                for name, why in self.not_read.items()]
        return out

    def caveat(self, checks: list[CheckResult]) -> list[CheckResult]:
        """``checks`` with every proposing diagnosis's fix prefixed by "apply the plan first" when a device
        does not run it: a step "toward the tuner's values" is a step to what the plan already holds."""
        if not self.differences:
            return checks
        devices = ", ".join(dict.fromkeys(d.device for d in self.differences))
        first = (f"the plan's values are not on {devices} (RT332): `roce-tune apply` puts them there; verify "
                 "again before changing the plan. Otherwise: ")
        return [c.model_copy(update={"diagnoses": [
            d.model_copy(update={"fix": first + d.fix}) if d.proposal is not None else d
            for d in c.diagnoses]}) for c in checks]

    def refusal(self) -> str | None:
        """Why ``--adjust`` must not start (it would measure one thing and roll back to another), or None."""
        if self.as_planned:
            return None
        lines = [f"{d.device} {d.value}: planned {d.planned}, running {d.running}" for d in self.differences]
        lines += [f"{name}: not read ({why})" for name, why in self.not_read.items()]
        return ("--adjust needs every device to run the plan (the loop steps from the plan's values and "
                "rolls back to them), but:\n  " + "\n  ".join(lines)
                + "\nrun `roce-tune apply` first (or verify without --adjust to measure what runs now)")

    def settings(self, plan: Plan, planned: dict[str, dict[str, dict[str, object]]]
                 ) -> dict[str, dict[str, dict[str, object]]]:
        """The baseline's settings as running (``planned`` = :func:`~roce_tune.verify.adjust.plan_settings`
        of ``plan``, same keys): a device read takes its running values (a profile whose ports run different
        values is split into ``switch/port`` entries; a host's NICs likewise into ``host:netdev``); a device
        not read has ``None`` values and ``"running": "not read"``."""
        ecn: dict[str, dict[str, object]] = {}
        for sw in plan.switches:
            dev = self.devices.get(sw.name)
            queues = plan.classification.lossless_queues
            for prof in sw.ecn_profiles:
                key = f"{sw.name}/{prof.name}"
                ports = [p.name for p, pr in sw.lossless_ecn_ports() if pr.name == prof.name]
                ecn.update(_running_entries(key, planned["ecn"][key], ECN_FIELDS, dev,
                                            [(ecn_key(sw.name, p, q, queues), ecn_member(p, q))
                                             for p in ports for q in queues]))
        dcqcn: dict[str, dict[str, object]] = {}
        for h in plan.hosts:
            dev = self.devices.get(h.name)
            for k, nic in host_nic_keys(h):
                members = [n.netdev for n in h.nics] if k[1] is None else [nic.netdev]
                dcqcn.update(_running_entries(key_name(k), planned["dcqcn"][key_name(k)], DCQCN_FIELDS, dev,
                                              [(f"{h.name}:{m}", m) for m in members], planned_default=True))
        return {"ecn": ecn, "dcqcn": dcqcn}


def _named_differences(diffs: list[Difference]) -> list[str]:
    """The first :data:`BUFFER_NAMED` of ``diffs`` as ``<device> <value>: planned P, running R`` phrases,
    then ``+N more (RT332)`` when there are more; [] without differences."""
    said = [f"{d.device} {d.value}: planned {d.planned}, running {d.running}" for d in diffs[:BUFFER_NAMED]]
    said += [f"+{len(diffs) - BUFFER_NAMED} more (RT332)"] if len(diffs) > BUFFER_NAMED else []
    return said


def _running_entries(key: str, planned: dict[str, object], fields: tuple[str, ...], dev: _Device | None,
                     members: list[tuple[str, str]], planned_default: bool = False
                     ) -> dict[str, dict[str, object]]:
    """The settings entries of one planned entry ``key``: its members' running values (``members``: (own
    key, name in ``dev.values``)); one entry when they agree, one per member when not. Not read: the fields
    None. ``planned_default``: a member ``dev.values`` lacks runs the planned values (a host lists only what
    differs); else it was not read (None)."""
    if dev is None or dev.error is not None:
        return {key: {**{f: None for f in fields}, "running": "not read"}}
    if not dev.differences:  # it runs the plan (an empty dry-run diff, a clean --check): the planned values
        return {key: {f: planned.get(f) for f in fields} | {"running": "as planned"}}
    rows = []
    for own, name in members:
        got = dev.values.get(name, {})
        rows.append((own, {f: got.get(f, planned.get(f) if planned_default else None) for f in fields}))
    if all(r == rows[0][1] for _, r in rows):
        return {key: {**rows[0][1], "running": _label(rows[0][1], planned, fields)}}
    return {own: {**r, "running": _label(r, planned, fields)} for own, r in rows}


def _label(row: dict[str, object], planned: dict[str, object], fields: tuple[str, ...]) -> str:
    """"differs from the plan" when a value read differs, else "as planned" when every value was read,
    else "not read back" (the read-back could not state a value: its None is no difference)."""
    known = [f for f in fields if row[f] is not None]
    if any(row[f] != planned.get(f) for f in known):
        return "differs from the plan"
    return "as planned" if len(known) == len(fields) else "not read back"


def _ecn_values(dev: _Device, sw: SwitchPlan, qos: SwitchQos, queues: list[int]) -> set[str]:
    """Each lossless port's running ECN values, per lossless queue (``dev.values[ecn_member(port, queue)]``:
    two lossless queues may run different ramps), into ``dev.values``, and every
    value the read-back states that differs from the port's planned profile into ``dev.differences``.
    Returns the :func:`roce_tune.qos.differences` paths of the values judged (``ports[P].ecn[Q].kmin_bytes``
    …), which the comparison of the other values leaves out."""
    judged: set[str] = set()
    for port, prof in sw.lossless_ecn_ports():
        ecn = (qos.ports[port.name].ecn or {}) if port.name in qos.ports else {}
        for q in queues:
            got = ecn.get(q)
            row = {f: getattr(got, f) if got is not None else None for f in ECN_FIELDS}
            dev.values[ecn_member(port.name, q)] = row
            dev.differences += [Difference(dev.name, f"{port.name} queue {q} {f}", str(getattr(prof, f)),
                                           str(row[f]))
                                for f in ECN_FIELDS if row[f] is not None and row[f] != getattr(prof, f)]
            judged |= {f"ports[{port.name}].ecn[{q}].{f}" for f in ECN_FIELDS}
    return judged


def _qos_differences(name: str, want: SwitchQos, seen: SwitchQos, judged: frozenset[str] = frozenset()
                     ) -> list[Difference]:
    """:func:`roce_tune.qos.differences` of the plan's ports (as audit compares them), one
    :class:`Difference` per value: ``path``, planned, running; paths in ``judged`` (already compared, e.g.
    the lossless queues' ECN values) left out."""
    seen = seen.model_copy(update={"ports": {n: p for n, p in seen.ports.items() if n in want.ports}})
    out = []
    for d in differences(want, seen):
        path, _, rest = d.partition(": ")
        if path in judged:
            continue
        planned, sep, running = rest.partition(" != ")
        out.append(Difference(name, path, planned if sep else rest, running if sep else "?"))
    return out


def _read_switch(pool: DevicePool, plan: Plan, t: Target) -> _Device:
    """Running configuration -> the dry run's diff (empty: as planned) and, when it differs, the ECN values of
    every lossless queue as the platform's read-back states them (a value it cannot state stays unknown) and
    every other value it states that differs from the plan (PFC, DSCP map, MTU, headroom)."""
    sw = next(s for s in plan.switches if s.name == t.name)
    dev = _Device(t.name)
    running = pool.with_driver(t.name, "read the running configuration (as apply --dry-run)",
                               Driver.read_running)
    change = compute_change(t.platform, running, t.desired, t.managed_ports)
    if change.empty:  # the dry run would change nothing: it runs the rendered configuration
        return dev
    try:
        qos = platform(t.platform).read_back(running)
    except (ValueError, NotImplementedError):  # values unknown ("?"); the diff below still says it differs
        qos = SwitchQos()
    judged = _ecn_values(dev, sw, qos, plan.classification.lossless_queues)
    # every other value both sides state (PFC, DSCP map, MTU, headroom): a switch running another ramp may run
    # other headroom too, and a loss diagnosis names it
    want = planned_qos(plan, sw)
    dev.differences += _qos_differences(t.name, want, qos, frozenset(judged))
    dev.buffer_stated = all((seen := qos.ports.get(n)) is not None
                            and (w.headroom is None or seen.headroom is not None)
                            and seen.pfc_priorities is not None
                            for n, w in want.ports.items() if w.pfc_priorities)
    if not dev.differences:
        lines = change.diff or change.commands
        dev.differences.append(Difference(
            t.name, "running configuration", "the rendered configuration",
            f"{len(lines)} diff line(s) as apply --dry-run shows them: " + "; ".join(lines[:_DIFF_LINES])
            + (" …" if len(lines) > _DIFF_LINES else "")))
    return dev


def _read_host(pool: DevicePool, t: Target) -> _Device:
    """The host script's read-back (``--check``): exit 0 as planned, 1 the MISMATCH lines, else not read."""
    rc, out = pool.with_driver(t.name, "run the host script with --check (as apply --dry-run)",
                               lambda drv: drv.run_host_script(t.desired, check_only=True))
    dev = _Device(t.name)
    if rc not in (0, 1):
        tail = [ln.strip() for ln in out.splitlines() if ln.strip() and "ROCE_TUNE_RC=" not in ln][-3:]
        dev.error = f"host script --check exited {rc}: " + " | ".join(tail)
        return dev
    found = get_platform(HOST_PLATFORM).check_mismatches(out)
    for m in found:
        # a host-wide value (the boot script, a unit) names the host once; "as planned" is what the script
        # expects of it, the rendered one (RT332: "planned the rendered one", not "planned as planned")
        value = m.what if m.device == t.name else f"{m.device} {m.what}"
        planned = "the rendered one" if m.planned == "as planned" else m.planned
        dev.differences.append(Difference(t.name, value, planned, m.running))
        if m.dcqcn_key in DCQCN_FIELDS:
            dev.values.setdefault(m.device, {})[m.dcqcn_key] = int(m.running) if m.running.isdigit() \
                else m.running
    if rc == 1 and not found:
        dev.error = "host script --check exited 1 without naming a value"
    return dev


def _one(pool: DevicePool, plan: Plan, t: Target) -> _Device:
    try:
        return _read_host(pool, t) if t.kind == "host" else _read_switch(pool, plan, t)
    except Exception as exc:  # noqa: BLE001 — a device not read is reported as such, the others go on
        first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
        return _Device(t.name, error=f"{type(exc).__name__}: {first}".rstrip(": "))


def read_as_found(pool: DevicePool, plan: Plan, switches: list[str], hosts: list[str],
                  render: Callable[[Plan], Mapping[str, str]], workers: int = 8) -> AsFound:
    """Read every selected switch and host (concurrently, ``workers`` at once) as the module docstring says.

    ``render``: plan -> its rendered files (``switches/…``, ``hosts/…``), the desired text of each device.
    Never raises for one device: its error is kept as "not read".
    """
    chosen = set(switches) | set(hosts)
    targets = [t for t in targets_from_files(plan, render(plan)) if t.name in chosen and t.host]
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(targets) or 1))) as ex:
        devices = list(ex.map(lambda t: _one(pool, plan, t), targets))
    return AsFound({d.name: d for d in devices})
