"""``nv show qos roce``: a value in the ``operational`` column is the switch's actual state (NVUE reference,
Common Options: ``--operational`` "the actual system state"; ``applied`` is what ``nv config apply`` asked
for); an audit of the running fabric reads operational, and applied only where operational is empty."""

from __future__ import annotations

from tests.audit.conftest import ev, rules

HEAD = ("user@leaf9:mgmt:~$ nv show qos roce\n"
        "                    operational            applied\n"
        "------------------  ---------------------  ---------------------\n"
        "enable                                     on\n")


def test_operational_wins_over_applied(captures) -> None:  # type: ignore[no-untyped-def]
    text = HEAD + ("pfc\n"
                   "  pfc-priority      4                      3\n"
                   "congestion-control\n"
                   "  congestion-mode   ECN                    ECN\n")
    r = captures({"leaf9.txt": text})
    sw = r.data.switches["leaf9"]
    assert sw.roce["pfc-priority"].value == "4" and sw.roce["enable"].value == "on"
    found = rules(r)["RT420"]
    assert len(found) == 1 and "priority 4" in found[0].message and ev(found[0]) == ["leaf9.txt:6"]


def test_a_pending_column_is_not_the_value(captures) -> None:  # type: ignore[no-untyped-def]
    text = ("user@leaf9:mgmt:~$ nv show qos roce\n"
            "                    operational  applied  pending\n"
            "------------------  -----------  -------  -------\n"
            "enable                           on       off\n"
            "  pfc-priority                   3        4\n")
    sw = captures({"leaf9.txt": text}).data.switches["leaf9"]
    assert sw.roce["enable"].value == "on" and sw.roce["pfc-priority"].value == "3"


def test_per_interface_roce_status_yes_is_enabled(captures) -> None:  # type: ignore[no-untyped-def]
    """``nv show interface <swp> qos roce status`` reports PFC ``rx-enabled``/``tx-enabled`` as ``yes``
    (CL 5.14 and 5.16 RoCE pages, "Verify RoCE Configuration"; the global ``nv show qos roce`` says
    ``enabled``): a port with PFC on both ways is not an RT420, one with ``no`` is."""
    text = ("user@leaf9:mgmt:~$ nv show interface swp16 qos roce status\n"
            "                    operational    applied  description\n"
            "------------------  -------------  -------  ----------------------------------------\n"
            "pfc\n"
            "  pfc-priority      3                       switch-prio on which PFC is enabled\n"
            "  rx-enabled        yes                     PFC Rx Enabled status\n"
            "  tx-enabled        {tx}                      PFC Tx Enabled status\n"
            "mode                lossless                Roce Mode\n")
    ok = captures({"leaf9.txt": text.format(tx="yes")})
    assert ok.data.switches["leaf9"].roce["swp16:rx-enabled"].value == "yes"
    assert "RT420" not in rules(ok)
    bad = rules(captures({"leaf9.txt": text.format(tx="no ")}))["RT420"]
    assert len(bad) == 1 and "tx-enabled is no" in bad[0].message and ev(bad[0]) == ["leaf9.txt:7"]


def test_a_description_column_is_not_the_value() -> None:
    """NVUE views with a ``description`` column (``operational  applied  description``, e.g. ``nv show
    interface <swp> qos roce status`` in the CL 5.14 RoCE page): a value only in ``applied`` is that word,
    not the word plus the description text."""
    from roce_tune.platforms.cumulus import parse_roce_status

    text = ("                    operational    applied  description\n"
            "------------------  -------------  -------  --------------------\n"
            "  rx-enabled                       yes      PFC Rx Enabled status\n"
            "  tx-enabled        no             yes      PFC Tx Enabled status\n")
    got = parse_roce_status(list(enumerate(text.splitlines(), 1)))["roce"]
    assert got == {"rx-enabled": (3, "yes"), "tx-enabled": (4, "no")}
