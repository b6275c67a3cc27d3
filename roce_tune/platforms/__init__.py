"""Platform registry: ``get_platform("eos")`` returns the module with ``SPEC`` and ``render()``.

Each platform module provides:

* ``SPEC: PlatformSpec`` — data (extension, sections, netmiko type, commit method, show commands);
* ``render(plan: Plan, switch: SwitchPlan) -> dict[str, str]`` — file name -> text for that switch
  (e.g. ``{"leaf1.json": ...}``; Cumulus also ``{"leaf1.nvue.yaml": ...}``);
* optionally ``render_findings(plan, switch) -> list[Finding]`` — warnings about what the platform's
  syntax changes in the plan (e.g. Junos whole-percent ECN fill levels, RT241).

The host module (``host``) provides ``render_host(plan, host) -> dict[str, str]`` and
``render_nccl_env(plan, host) -> str`` instead.
"""

from __future__ import annotations

import importlib
from types import ModuleType

SWITCH_PLATFORMS = ("sonic", "cumulus", "eos", "nxos", "junos")


def get_platform(name: str) -> ModuleType:
    """Return the platform module ``roce_tune.platforms.<name>``.

    Raises:
        KeyError: unknown platform (lists the known ones).
    """
    if name not in SWITCH_PLATFORMS and name != "host":
        raise KeyError(f"unknown platform {name!r}; known: {', '.join(SWITCH_PLATFORMS)}, host")
    return importlib.import_module(f"roce_tune.platforms.{name}")
