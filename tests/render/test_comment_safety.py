"""Header comments carry free text (site, generator, the inventory's file name): a line break or other
control character in it must never end the comment and leave the rest as a command (defence in
depth behind the inventory's name patterns; the file name is not an inventory field at all)."""

from __future__ import annotations

import pytest

from roce_tune.platforms import get_platform
from roce_tune.render.engine import comment_safe

from . import plan_builder as hb
from . import plans_sonic_cumulus as pb

HOSTILE = {"site": "lab\nreboot", "generator": "roce-tune\r\nreload in 1",
           "inventory_file": "inv\u2028request system reboot.yaml"}
BREAKS = ("\n", "\r", "\u2028", "\u2029", "\x85", "\x1b", "\x00")


def _plans():  # type: ignore[no-untyped-def]
    cumulus = pb.plan([pb.switch("leaf9", "cumulus", "spectrum-4",
                                 [pb.P("swp1", 400, 3), pb.P("swp2", 400, 3)])])
    return [(hb.build_plan(), "#!"), (cumulus, "#")]


@pytest.mark.parametrize("text", ["a\nb", "a\r\nb", "a\u2028b", "a\x85b", "a\x1b[2Jb", "a\x9bb", "a\tb"])
def test_comment_safe_keeps_one_line(text: str) -> None:
    out = comment_safe(text)
    assert out.startswith("a") and out.endswith("b") and len(out.splitlines()) == 1
    assert not any(ch in out for ch in BREAKS)


def test_switch_headers_keep_hostile_free_text_in_one_comment_line() -> None:
    seen = set()
    for plan, _ in _plans():
        plan = plan.model_copy(update=HOSTILE)
        for sw in plan.switches:
            spec = get_platform(sw.platform).SPEC
            for name, text in get_platform(sw.platform).render(plan, sw).items():
                # splitlines() also breaks at \r, \x85, \u2028: the strictest
                # reader
                lines = text.splitlines()
                for ln in lines:
                    assert not ln.lstrip().startswith(("reboot", "reload", "request")), (sw.platform, name,
                                                                                         ln)
                header = [ln for ln in lines if "lab?reboot" in ln]
                assert header and all(ln.lstrip().startswith(spec.comment_prefix) for ln in header), (name,
                                                                                                      header)
                seen.add(sw.platform)
    assert seen == {"eos", "nxos", "junos", "cumulus"}
