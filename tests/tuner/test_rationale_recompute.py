"""Every ECN-side value ``roce-tune explain`` prints for a lossless port can be recomputed by hand from its
printed formula and printed inputs (docs/derivation.md#dynamic-threshold, #ecn-before-pfc,
#kmax-first-rtt-burst): the PFC trigger and egress queue buffer from the pool size, its buffer and reserved
bytes and alpha = 2^dynamic_th; the onset from them; Kmax and Kmin from those.

The text parsed is what the command prints (:func:`roce_tune.explain.explanation_lines`), for one port of
every lossless port class (switch x ECN profile) of every shipped inventory, full and intent form. A formula
the test does not know fails it: a new branch of the tuner must print a formula a reader can follow.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import pytest

from roce_tune.explain import Explanation, explain, explanation_lines
from roce_tune.pipeline import derive_inventory
from roce_tune.plan import BufferPool, Plan, Rationale
from roce_tune.tuner.buffers import pg_shared_limit_bytes, shared_limit_rationale

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted((REPO / "inventories").glob("*.yaml")) + sorted((REPO / "inventories" / "intent")
                                                                  .glob("*.yaml"))
PARAMS = ("queue_buffer_bytes", "pfc_trigger_bytes", "pfc_onset_bytes", "kmax_bytes", "kmin_bytes")
_INPUT_RE = re.compile(r"(\w+)=([^,]*)(?:, |$)")


class Printed:
    """One printed explanation: its value, formula and inputs as text."""

    def __init__(self, lines: list[str]) -> None:
        self.value = int(lines[0].rsplit(" = ", 1)[1])
        self.formula = next(x for x in lines if x.startswith("  formula: "))[len("  formula: "):]
        text = next(x for x in lines if x.startswith("  inputs:  "))[len("  inputs:  "):]
        self.inputs = {m.group(1): m.group(2) for m in _INPUT_RE.finditer(text)}

    def num(self, key: str) -> Fraction:
        return Fraction(self.inputs[key])


def _printed(plan: Plan, target: str, param: str) -> Printed:
    (entry,) = explain(plan, target, param)
    return Printed(explanation_lines(entry))


def _floor_1000(x: Fraction) -> int:
    return math.floor(x / 1000) * 1000


def _pool(p: Printed, pool_key: str) -> int:
    """The pool size from the printed ``<pool_key> = <pool> size = <formula>`` and buffer/reserved bytes."""
    formula = p.formula.split(f"; {pool_key} = ", 1)[1].split(" size = ", 1)[1]
    buffer = p.num("buffer_bytes")
    if formula.startswith("ceil((buffer_bytes - reserved_bytes) / 2)"):
        return math.ceil((buffer - p.num("reserved_bytes")) / 2)
    if formula.startswith("buffer_bytes - reserved_bytes"):
        return int(buffer - p.num("reserved_bytes"))
    if formula.startswith("buffer_bytes (the ASIC's mmu size)"):
        return int(buffer)
    raise AssertionError(f"pool formula not understood: {formula}")


def _share(p: Printed, pool_key: str, th_key: str, n_key: str) -> int:
    """A dynamic-threshold share from the printed formula, pool, dynamic_th, alpha and congested count."""
    pool, th, n = p.num(pool_key), int(p.inputs[th_key]), p.num(n_key)
    alpha_key = th_key.replace("dynamic_th", "alpha")
    assert _pool(p, pool_key) == pool, p.formula
    if p.formula.startswith(f"floor({pool_key} / {n_key})"):
        assert th >= 7 and p.inputs[alpha_key] == "infinity"
        return math.floor(pool / n)
    if p.formula.startswith("0:"):
        assert th <= -8 and p.inputs[alpha_key] == "0"
        return 0
    assert p.formula.startswith(f"floor({alpha_key} x {pool_key} / (1 + {n_key} x {alpha_key}))"), p.formula
    alpha = Fraction(p.inputs[alpha_key])
    assert alpha == Fraction(2) ** th
    return math.floor(alpha * pool / (1 + n * alpha))


def _kmax(p: Printed) -> int:
    onset = p.num("pfc_onset_bytes")
    timer = p.num("timer_queue_bytes")
    assert timer == int(2 * p.num("speed_gbps") * Fraction(10**9, 8) * p.num("rpg_time_reset_us") / 10**6)
    if p.formula.startswith("Kmax = pfc_onset_bytes"):
        return int(onset)
    assert p.formula.startswith(
        "Kmax = floor_1000(min(onset_fraction x pfc_onset_bytes, timer_queue_bytes))"), p.formula
    return _floor_1000(min(p.num("onset_fraction") * onset, timer))


def _kmin(p: Printed) -> int:
    kmax = p.num("kmax_bytes")
    if p.formula.startswith("Kmin = floor(kmax_bytes / 2)"):
        return math.floor(kmax / 2)
    assert p.formula.startswith("Kmin = min(max(kmin_floor_bytes, floor_1000(kmax_bytes x kmin_of_kmax)), "
                                "kmax_bytes - ramp_floor_bytes), kmin_floor_bytes = "
                                "max(ceil_1000(bdp_bytes / 7), 2 x 9216)"), p.formula
    floor = max(math.ceil(p.num("bdp_bytes") / 7 / 1000) * 1000, 2 * 9216)
    assert floor == p.num("kmin_floor_bytes")
    kmin: Fraction = min(Fraction(max(floor, _floor_1000(kmax * p.num("kmin_of_kmax")))),
                         kmax - p.num("ramp_floor_bytes"))
    return int(kmin)


def _port_classes(plan: Plan) -> list[str]:
    """``switch:port`` of the first lossless port of each (switch, ECN profile)."""
    out = []
    for sw in plan.switches:
        seen: set[str] = set()
        for port in sw.ports:
            if port.headroom is not None and port.ecn_profile and port.ecn_profile not in seen:
                seen.add(port.ecn_profile)
                out.append(f"{sw.name}:{port.name}")
    return out


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_printed_ecn_values_recompute_from_their_printed_inputs(path: Path) -> None:
    _, plan = derive_inventory(path)
    targets = _port_classes(plan)
    assert targets, "a shipped inventory without a lossless port"
    for target in targets:
        p = {param: _printed(plan, target, param) for param in PARAMS}
        trig, queue, onset = p["pfc_trigger_bytes"], p["queue_buffer_bytes"], p["pfc_onset_bytes"]
        assert _share(trig, "ingress_pool_bytes", "pg_dynamic_th", "fan_in") == trig.value, target
        assert _share(queue, "egress_pool_bytes", "egress_dynamic_th", "congested_queues") == queue.value, \
            target
        assert onset.formula.startswith("min(fan_in x pfc_trigger_bytes, queue_buffer_bytes)")
        assert onset.num("pfc_trigger_bytes") == trig.value and onset.num("queue_buffer_bytes") == queue.value
        assert min(onset.num("fan_in") * trig.value, queue.value) == onset.value, target
        for key in ("kmax_bytes", "kmin_bytes"):  # they print the same inputs, pools and alphas
            for name, value in (("pfc_trigger_bytes", trig.value), ("queue_buffer_bytes", queue.value),
                                ("pfc_onset_bytes", onset.value),
                                ("ingress_pool_bytes", trig.inputs["ingress_pool_bytes"]),
                                ("pg_alpha", trig.inputs["pg_alpha"]),
                                ("egress_pool_bytes", queue.inputs["egress_pool_bytes"]),
                                ("egress_alpha", queue.inputs["egress_alpha"])):
                assert p[key].inputs[name] == str(value), (target, key, name)
        assert _kmax(p["kmax_bytes"]) == p["kmax_bytes"].value, target
        assert p["kmin_bytes"].num("kmax_bytes") == p["kmax_bytes"].value
        assert _kmin(p["kmin_bytes"]) == p["kmin_bytes"].value, target


def test_a_finite_alpha_below_one_is_printed_and_used() -> None:
    """The formula branch for 0 < alpha < 1 (no shipped inventory has one): alpha 2^-2, 3 congested."""
    pool = BufferPool(name="egress_lossless_pool", type="egress", size_bytes=1_000_003, rationale={
        "size_bytes": Rationale(formula="buffer_bytes - reserved_bytes (test)", source="test",
                                inputs={"buffer_bytes": 1_200_000, "reserved_bytes": 199_997})})
    value = pg_shared_limit_bytes(pool.size_bytes, -2, 3)
    why = shared_limit_rationale("queue_buffer_bytes", value, pool, -2, "egress_dynamic_th",
                                 "congested_queues", 3, source="test")
    printed = Printed(explanation_lines(Explanation("x", "queue_buffer_bytes", value, why)))
    assert printed.inputs["egress_alpha"] == "0.25"
    assert _share(printed, "egress_pool_bytes", "egress_dynamic_th", "congested_queues") == value == 142857
