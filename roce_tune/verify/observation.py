"""Shapes of the verify diagnosis: what a check reads (:class:`Observation`) and what it returns
(:class:`CheckResult` with :class:`Diagnosis` objects and, where the closed loop can act, a
:class:`Proposal`). Thresholds used by the checks live here too (see :mod:`roce_tune.verify.diagnose`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from roce_tune.findings import Finding, Location, Severity
from roce_tune.plan import Plan
from roce_tune.verify.counters import CounterSnapshot
from roce_tune.verify.hostfacts import NicFacts
from roce_tune.verify.nccl import NcclRun, busbw_fraction_of_line_rate
from roce_tune.verify.signals import FabricSignals, HostSignals, fabric_signals, host_signals

if TYPE_CHECKING:  # as_found builds on these shapes; the checks only read it
    from roce_tune.verify.as_found import AsFound

MIN_PACKETS = 10_000
LOSSY_SHARE_MAX = 0.10
PAUSE_SHARE_MAX = 0.01
#: When a NIC gives PFC frame counts but no pause duration: one XOFF refresh per this many µs of pause
#: (a switch re-sends XOFF at about half the 65535-quanta pause time; 83.9 µs at 400G,
#: docs/derivation.md#pause-quanta).
PAUSE_US_PER_FRAME = 40.0
CNP_PER_PKT_MIN = 1e-4
LOSS_PER_MILLION_MAX = 1.0

#: the ECN values of a queue the read-back states, as :class:`roce_tune.qos.QueueEcn` names them
ECN_FIELDS = ("kmin_bytes", "kmax_bytes", "pmax_percent")
#: the DCQCN values of a NIC a diagnosis reasons from, as the plan's ``Dcqcn.params`` names them
DCQCN_FIELDS = ("rpg_ai_rate_mbps", "rpg_hai_rate_mbps")
#: how a value a diagnosis quotes is known (:class:`Seen`): read back and equal to the plan's; read back and
#: different (the device runs it); not read back (the plan's value, unconfirmed)
AS_PLANNED, RUNNING, UNCONFIRMED = "as planned", "running", "planned, not read back"


def ecn_member(port: str, queue: int) -> str:
    """The member name of one lossless queue's ECN values on a switch port (``Ethernet0 queue 3``): how
    :mod:`roce_tune.verify.as_found` keeps them and :meth:`Observation.seen` asks for them, so two lossless
    queues running different ramps are each known."""
    return f"{port} queue {queue}"


def ecn_key(switch: str, port: str, queue: int, queues: list[int]) -> str:
    """The report key of one port's ramp when a profile's ports run different values: ``switch/port`` with
    one lossless queue (``queues``), ``switch/port queue Q`` with more."""
    return f"{switch}/{port}" if len(queues) <= 1 else f"{switch}/{ecn_member(port, queue)}"


@dataclass(frozen=True)
class Seen:
    """One device value as a diagnosis may reason from it.

    ``value``: what the read-back before the run found the device running (:mod:`roce_tune.verify.as_found`),
    or the plan's value where it was not read; ``planned``: the plan's value; ``how``: :data:`AS_PLANNED`
    (read back, equal to the plan's), :data:`RUNNING` (read back, differs: ``value`` is the running one) or
    :data:`UNCONFIRMED` (not read back: ``value`` is the plan's, unconfirmed).
    """

    value: object
    planned: object
    how: str

    def words(self, unit: str = "") -> str:
        """``value`` with how it is known, e.g. ``60000 B running (planned 7529000 B)``, ``1.0 % as planned
        (read back)``, ``5 Mb/s (planned, not read back)``."""
        u = f" {unit}" if unit else ""
        if self.how == RUNNING:
            return f"{self.value}{u} running (planned {self.planned}{u})"
        if self.how == AS_PLANNED:
            return f"{self.value}{u} as planned (read back)"
        return f"{self.value}{u} ({UNCONFIRMED})"

__all__ = [
    "AS_PLANNED",
    "CNP_PER_PKT_MIN",
    "DCQCN_FIELDS",
    "ECN_FIELDS",
    "LOSSY_SHARE_MAX",
    "LOSS_PER_MILLION_MAX",
    "MIN_PACKETS",
    "PAUSE_SHARE_MAX",
    "PAUSE_US_PER_FRAME",
    "RUNNING",
    "UNCONFIRMED",
    "CheckResult",
    "ecn_member",
    "ecn_key",
    "Diagnosis",
    "Observation",
    "Proposal",
    "Seen",
    "fail",
    "not_read",
    "ok",
    "skip",
]


class Proposal(BaseModel):
    """What the closed loop may change for a diagnosis: ``knob`` in a ``direction``.

    ``ecn``: Kmin/Kmax of every lossless queue (``down`` = mark earlier); ``dcqcn_recovery``:
    ``rpg_ai_rate_mbps``/``rpg_hai_rate_mbps`` of every host (``up`` = recover faster).
    """

    model_config = ConfigDict(frozen=True)

    knob: Literal["ecn", "dcqcn_recovery"]
    direction: Literal["up", "down"]


class Diagnosis(BaseModel):
    """One named finding with the evidence that raised it."""

    model_config = ConfigDict(frozen=True)

    rule: str
    name: str
    severity: Severity
    message: str
    fix: str
    evidence: dict[str, object] = Field(default_factory=dict)
    location: Location = Location()
    proposal: Proposal | None = None
    stops_loop: bool = False

    def finding(self) -> Finding:
        """As a project-wide :class:`~roce_tune.findings.Finding`."""
        return Finding(rule=self.rule, severity=self.severity, message=f"{self.name}: {self.message}",
                       fix=self.fix, location=self.location)


class CheckResult(BaseModel):
    """Outcome of one check: ``pass``, ``fail`` (with diagnoses) or ``skip`` (``note`` says why)."""

    model_config = ConfigDict(frozen=True)

    check: str
    status: Literal["pass", "fail", "skip"]
    diagnoses: list[Diagnosis] = Field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class Observation:
    """Everything one measurement saw.

    Attributes:
        plan: the plan in force during the run.
        hosts: hosts that took part.
        run: the parsed nccl-tests run (None = no parsable output).
        delta: counter deltas over the run.
        facts: NIC facts (MTU, GIDs) per host NIC.
        traffic_time_s: time the collective moved data (Σ row time × iterations), s.
        line_rate_gbps: NIC line rate (Gb/s) busbw is compared with; target_ratio: e.g. 0.9.
        pair_fractions: pairwise busbw as a fraction of line rate, ``{(a, b): f}`` (None = not run).
        fabric_run: False for the ``ssh`` launcher (each host ran alone: no fabric figure).
        launcher_output: what the launch printed, host → text (stdout and stderr: the launch runs on a
            terminal); RT311 quotes its tail when no usable run came out of it.
        as_found: what the devices were read back running before the run (before the baseline, and after
            each ``--adjust`` push for the devices it changed; None: not read); the ECN and DCQCN checks
            reason from it (:meth:`seen`).
    """

    plan: Plan
    hosts: list[str]
    run: NcclRun | None
    delta: CounterSnapshot | None
    facts: list[NicFacts] = field(default_factory=list)
    traffic_time_s: float | None = None
    line_rate_gbps: float = 400.0
    target_ratio: float = 0.9
    pair_fractions: dict[tuple[str, str], float] | None = None
    fabric_run: bool = True
    launcher_output: dict[str, str] = field(default_factory=dict)
    as_found: AsFound | None = None

    def seen(self, device: str, member: str, name: str, planned: object) -> Seen:
        """Value ``name`` of ``device`` (a switch port, or a host's netdev: ``member``) as it was found
        running (:meth:`roce_tune.verify.as_found.AsFound.seen`); the plan's ``planned``,
        :data:`UNCONFIRMED`, when nothing was read back."""
        if self.as_found is None:
            return Seen(planned, planned, UNCONFIRMED)
        return self.as_found.seen(device, member, name, planned)

    def buffer_words(self) -> str:
        """The plan's switches' lossless headroom and PFC priorities as found, for a loss diagnosis
        (:meth:`roce_tune.verify.as_found.AsFound.buffer_words`); the plan's, :data:`UNCONFIRMED`, when
        nothing was read back."""
        switches = [s.name for s in self.plan.switches]
        if self.as_found is None:
            return f"on {', '.join(switches)} the plan's values ({UNCONFIRMED})" if switches else ""
        return self.as_found.buffer_words(switches)

    @property
    def lossless(self) -> list[int]:
        """The plan's lossless priorities."""
        return list(self.plan.classification.lossless_priorities)

    def host_sigs(self) -> list[HostSignals]:
        """Per-NIC signals of the hosts in the run."""
        if self.delta is None:
            return []
        return [host_signals(c, self.lossless) for c in self.delta.hosts if c.host in self.hosts]

    def fabric_sigs(self) -> FabricSignals:
        """Switch-side sums on the lossless priorities/queues."""
        if self.delta is None:
            return FabricSignals()
        cls = self.plan.classification
        return fabric_signals(self.delta, list(cls.lossless_priorities), list(cls.lossless_queues))

    def busbw_fraction(self) -> float | None:
        """Largest-message busbw / line rate (None without a usable run: none, failed, or incomplete — a run
        killed before its summary never counts as reaching the target, whatever its last rows show)."""
        if self.run is None or self.run.status in ("failed", "incomplete"):
            return None
        return busbw_fraction_of_line_rate(self.run, self.line_rate_gbps).largest_message


def not_read(what: str, where: list[str]) -> str:
    """A check's note for inputs that were not read: ``not checked: WHAT not read on A, B, … (+N more)``."""
    shown = ", ".join(where[:6]) + (f" (+{len(where) - 6} more)" if len(where) > 6 else "")
    return f"not checked: {what} not read on {shown}"


def fail(check: str, *diags: Diagnosis) -> CheckResult:
    """A failed check with its diagnoses."""
    return CheckResult(check=check, status="fail", diagnoses=list(diags))


def ok(check: str, note: str = "") -> CheckResult:
    """A passed check."""
    return CheckResult(check=check, status="pass", note=note)


def skip(check: str, note: str) -> CheckResult:
    """A check that could not run (``note`` says why)."""
    return CheckResult(check=check, status="skip", note=note)
