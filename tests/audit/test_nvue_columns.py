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
