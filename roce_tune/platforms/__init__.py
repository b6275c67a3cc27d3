"""Platform registry: ``get_platform("eos")`` returns the module with ``SPEC`` and ``render()``.

Each platform module provides:

* ``SPEC: PlatformSpec`` — data (extension, sections, netmiko type, commit method, show commands);
* ``render(plan: Plan, switch: SwitchPlan) -> dict[str, str]`` — file name -> text for that switch
  (e.g. ``{"leaf1.json": ...}``; Cumulus also ``{"leaf1.nvue.yaml": ...}``);
* ``SECRET_PATTERNS`` — the platform's forms of passwords, hashes, keys and communities in its running
  configuration, masked in every log and restore point (see :func:`secret_patterns`);
* optionally ``render_findings(plan, switch) -> list[Finding]`` — warnings about what the platform's
  syntax changes in the plan (e.g. Junos whole-percent ECN fill levels, RT241).

The host module (``host``) provides ``render_host(plan, host) -> dict[str, str]`` and
``render_nccl_env(plan, host) -> str`` instead.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from roce_tune.platforms.base import SecretPattern

SWITCH_PLATFORMS = ("sonic", "cumulus", "eos", "nxos", "junos")


def get_platform(name: str) -> ModuleType:
    """Return the platform module ``roce_tune.platforms.<name>``.

    Raises:
        KeyError: unknown platform (lists the known ones).
    """
    if name not in SWITCH_PLATFORMS and name != "host":
        raise KeyError(f"unknown platform {name!r}; known: {', '.join(SWITCH_PLATFORMS)}, host")
    return importlib.import_module(f"roce_tune.platforms.{name}")


def secret_patterns(name: str) -> tuple[SecretPattern, ...]:
    """The platform's secret patterns (``SECRET_PATTERNS`` of its module; none for ``host``, whose
    restore points hold only sysfs/driver values).

    Raises:
        KeyError: unknown platform.
    """
    return tuple(getattr(get_platform(name), "SECRET_PATTERNS", ()))
