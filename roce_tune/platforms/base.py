"""Platform descriptions as data (hier_config style "quirks as data"): one frozen spec per platform.

Renderers read ``sections`` (template order), ``extension`` and ``aggregator``; deploy reads
``netmiko_device_type``, ``commit`` and ``show_commands``; the CLI diff reads ``negate_prefix`` and
``comment_prefix``. Adding a platform = one module with a :class:`PlatformSpec` + one template folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from roce_tune.plan.model import Rationale

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
        aggregator: template that includes the section templates, e.g. ``config.j2``; ``""`` for a
            platform that builds its file as data without templates (SONiC CONFIG_DB JSON).
        sections: section names in output order: the templates the aggregator includes (or the table
            builders of a platform without templates).
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


#: One entry of a platform's ``SECRET_PATTERNS``: a regex whose groups named ``secret``/``secret2``… are
#: the values to mask (everything else is kept, so a log still shows which statement it was), or a
#: function ``text -> text`` for forms a single regex cannot express (e.g. a JSON table keyed by secret).
SecretPattern = re.Pattern[str] | Callable[[str], str]


class CannotExpress(ValueError):
    """A platform cannot express a switch's plan and knows the inventory change that fixes it: reported as
    RT240 with ``fix`` as the finding's fix (:func:`roce_tune.platforms.cannot_render_finding`; a plain
    ValueError/KeyError gets a generic one).

    Args:
        message: what cannot be expressed and why (the switch is named by the finding).
        fix: the inventory or policy change that makes the plan expressible.
    """

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


class CannotExpressValue(ValueError):
    """One value of a switch's plan that the platform's syntax cannot say (e.g. a fractional Pmax where the
    platform takes an integer percent): reported as RT240, at the inventory override that pinned the value
    when its rationale says it was pinned (:func:`roce_tune.platforms.cannot_render_finding`).

    Args:
        message: what cannot be expressed and why (the switch is named by the finding).
        key: the value's field name in its plan section (``pmax_percent``).
        rationale: the value's rationale from the plan (None when it has none).
    """

    def __init__(self, message: str, key: str, rationale: Rationale | None) -> None:
        super().__init__(message)
        self.key = key
        self.rationale = rationale


#: a configuration value as devices print it: double- or single-quoted (may hold blanks) or one token
SECRET_VALUE = r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s"']\S*)"""

MASK = "********"


def secret_re(pattern: str) -> re.Pattern[str]:
    """Compile a line-oriented secret pattern (multi-line mode; ``{value}`` = :data:`SECRET_VALUE`)."""
    return re.compile(pattern.replace("{value}", SECRET_VALUE), re.MULTILINE)


def mask_secrets(text: str, patterns: Sequence[SecretPattern]) -> str:
    """Replace every ``secret*`` group of every pattern match in ``text`` with :data:`MASK` (callables
    are applied as they are). Quotes around a masked value are kept."""
    for pat in patterns:
        if callable(pat) and not isinstance(pat, re.Pattern):
            text = pat(text)
            continue

        def sub(m: re.Match[str]) -> str:
            spans = sorted(m.span(g) for g, v in m.groupdict().items() if g.startswith("secret")
                           and v is not None)
            out, pos = [], m.start()
            for start, end in spans:
                value = m.string[start:end]
                quote = value[0] if value[:1] in ("'",
                                                  '"') and value[-1:] == value[:1] and len(value) > 1 else ""
                out += [m.string[pos:start], quote + MASK + quote]
                pos = end
            return "".join(out) + m.string[pos:m.end()]
        text = pat.sub(sub, text)
    return text


#: IOS-style forms EOS and NX-OS share (their own modules add the rest): ``username … secret|password
#: [type] VALUE``, ``enable secret|password [type] VALUE``, BGP ``neighbor … password [type] VALUE``,
#: ``tacacs-server|radius-server [host H] key [type] VALUE``, ``snmp-server community NAME``, ``snmp-server
#: host H … version 1|2c COMMUNITY``, SNMPv3 ``auth ALG KEY`` / ``priv [ALG [BITS]] KEY``, NTP
#: ``authentication-key N ALG [type] KEY``, OSPF ``authentication-key`` and ``message-digest-key N
#: md5|sha1|sha256… [type] KEY`` (EOS takes the SHA algorithms), IS-IS ``[isis] authentication key [type]
#: KEY``, key-chain ``key-string``. Type tokens (0, 3, 5, 7, 8, 8a, 9, sha512, md5 …) are kept. Sources:
#: Arista EOS User Manual (username, tacacs-server key, snmp-server user, ntp authentication-key, ip ospf
#: message-digest-key, isis authentication key: https://www.arista.com/en/um-eos); Cisco Nexus 9000 NX-OS
#: Security and System Management configuration guides
#: (https://www.cisco.com/c/en/us/support/switches/nexus-9000-series-switches/).
IOS_STYLE_SECRETS: tuple[re.Pattern[str], ...] = (
    secret_re(r"\b(?:secret|password)\s+(?:(?:sha512|md5|[0-9])\s+)?(?P<secret>{value})"),
    secret_re(r"^\s*(?:tacacs-server|radius-server)\b.*?\bkey\s+(?:[0-9]\s+)?(?P<secret>{value})"),
    secret_re(r"^\s*snmp-server\s+community\s+(?P<secret>{value})"),
    secret_re(r"^\s*snmp-server\s+host\s+\S+.*?\bversion\s+(?:1|2c)\s+(?P<secret>{value})"),
    secret_re(r"^\s*snmp-server\s+user\b.*?\bauth\s+(?:md5|sha\S*)\s+(?P<secret>{value})"),
    secret_re(r"^\s*snmp-server\s+user\b.*?\bpriv\s+(?:(?:des|3des|aes\S*)\s+(?:(?:128|192|256)\s+)?)?(?P<secret>{value})"),
    secret_re(r"^\s*ntp\s+authentication-key\s+\d+\s+(?:md5|sha\S*)\s+(?:[0-9]\s+)?(?P<secret>{value})"),
    secret_re(r"\b(?:authentication-key|key-string)\s+(?!\d+\s+(?:md5|sha))(?:[0-9]\s+)?(?P<secret>{value})"),
    secret_re(r"\bmessage-digest-key\s+\d+\s+(?:md5|sha\S*)\s+(?:[0-9]\s+)?(?P<secret>{value})"),
    secret_re(r"\bauthentication\s+key\s+(?:(?:[0-9]|8a)\s+)?(?P<secret>{value})"),
)
