"""The Plan: the contract between tuner, renderers, deploy and verify.

:mod:`roce_tune.plan.model` holds the versioned, frozen pydantic models (every derived number in a field
whose name carries its unit, every section with a ``rationale`` map); :mod:`roce_tune.plan.codec` reads
and writes ``plan.json`` (schema 1.3: shared sections written once, compact) and publishes its JSON Schema.
Both are re-exported here: ``from roce_tune.plan import Plan, plan_from_json`` is the public import.
"""

from __future__ import annotations

from roce_tune.plan.codec import plan_from_json, plan_json_schema, plan_to_json, resolve_shared
from roce_tune.plan.model import (
    PLAN_SCHEMA_VERSION,
    SHARED_KEY,
    BufferPool,
    BufferProfile,
    Buffers,
    Classification,
    Dcqcn,
    DeadlockCycle,
    DeadlockReport,
    EcnProfile,
    Explained,
    FluidCheck,
    Headroom,
    HostPlan,
    NicPlan,
    Plan,
    PlanSummary,
    PortPlan,
    QueueScheduler,
    Rationale,
    SectionInterner,
    SwitchPlan,
    Watchdog,
    construct_ordered,
    construct_trusted,
    copy_each_trusted,
)

__all__ = [
    "PLAN_SCHEMA_VERSION",
    "SHARED_KEY",
    "BufferPool",
    "BufferProfile",
    "Buffers",
    "Classification",
    "Dcqcn",
    "DeadlockCycle",
    "DeadlockReport",
    "EcnProfile",
    "Explained",
    "FluidCheck",
    "Headroom",
    "HostPlan",
    "NicPlan",
    "Plan",
    "PlanSummary",
    "PortPlan",
    "QueueScheduler",
    "Rationale",
    "SectionInterner",
    "SwitchPlan",
    "Watchdog",
    "construct_ordered",
    "construct_trusted",
    "copy_each_trusted",
    "plan_from_json",
    "plan_json_schema",
    "plan_to_json",
    "resolve_shared",
]
