"""Platform descriptions as data (hier_config style "quirks as data"): one frozen spec per platform.

Renderers read ``sections`` (template order), ``extension`` and ``aggregator``; deploy reads
``netmiko_device_type``, ``commit`` and ``show_commands``; the CLI diff reads ``negate_prefix`` and
``comment_prefix``. Adding a platform = one module with a :class:`PlatformSpec` + one template folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Longest Linux interface name: IFNAMSIZ (16) less the terminating NUL (torvalds/linux
#: include/uapi/linux/if.h). Ports that are kernel netdevs (SONiC's EthernetN via the SAI host
#: interface, Cumulus swpN) cannot be longer.
LINUX_IFNAME_MAX = 15


@dataclass(frozen=True)
class PlatformSpec:
    """Static knowledge about one switch or host platform.

    Attributes:
        name: platform id as in the inventory (``sonic``, ``eos`` …, ``host``).
        extension: file extension of the rendered config (``json``, ``cfg``, ``sh`` …).
        aggregator: template that includes the section templates, e.g. ``config.j2``.
        sections: section template names in the order the aggregator includes them.
        extra_outputs: extra files rendered per device: (template, suffix), e.g. NVUE YAML.
        netmiko_device_type: netmiko driver name (docs/derivation.md#platform-syntax).
        commit: safe-commit method id (``eos-session-timer``, ``junos-commit-confirmed``,
            ``nvue-confirm``, ``nxos-checkpoint``, ``sonic-checkpoint-patch``, ``host-script``).
        negate_prefix: how a CLI line is removed (``no `` / ``delete `` / ``nv unset``), None for JSON.
        comment_prefix: line comment marker in rendered output.
        indent: hierarchical indent unit for section-aware diffs (0 for flat ``set`` syntax).
        show_commands: named show commands (running config, PFC, ECN, watchdog counters).
        source: vendor documentation the syntax was checked against.
        max_port_name_chars: longest front-panel port name the platform can carry (None: no published
            limit below the inventory's 64 characters).
        ecn_drop_thresholds: the syntax has WRED drop thresholds for non-ECT packets separate from the
            ECN marking ramp on the same queue (EOS ``random-detect drop``); where False the tuner gives
            the plan no separate drop thresholds (non-ECT packets are dropped on the ECN ramp), so plan
            and rendered file say the same.
    """

    name: str
    extension: str
    aggregator: str
    sections: tuple[str, ...]
    netmiko_device_type: str
    commit: str
    negate_prefix: str | None
    comment_prefix: str
    indent: int
    source: str
    extra_outputs: tuple[tuple[str, str], ...] = ()
    show_commands: dict[str, str] = field(default_factory=dict)
    max_port_name_chars: int | None = None
    ecn_drop_thresholds: bool = False
