"""``show system commit`` parsing and the rollback index after a (possibly confirmed) roce-tune commit."""

from __future__ import annotations

from roce_tune.platforms.junos import parse_commit_history, rollback_index

TAG = "roce_tune_20261201_101000"

#: as Junos prints it: newest first, comments on the next indented line, a pending confirm noted inline
PENDING = f"""0   2026-12-01 10:10:05 UTC by netops via cli commit confirmed, rollback in 10mins
    {TAG}
1   2026-12-01 09:00:00 UTC by alice via cli
    change CHG-1234 mtu
2   2026-11-30 18:00:00 UTC by root via other
rescue  2026-11-01 08:00:00 UTC by root via cli
"""

CONFIRMED = f"""0   2026-12-01 10:11:00 UTC by netops via cli
    confirmed
1   2026-12-01 10:10:05 UTC by netops via cli
    {TAG}
2   2026-12-01 09:00:00 UTC by alice via cli
    change CHG-1234 mtu
"""


def test_parse_keeps_index_entry_and_comment() -> None:
    history = parse_commit_history(PENDING)
    assert [(i, c) for i, _, c in history] == [(0, TAG), (1, "change CHG-1234 mtu"), (2, "")]
    assert history[0][1].endswith("commit confirmed, rollback in 10mins")


def test_pending_confirm_rolls_back_one() -> None:
    assert rollback_index(parse_commit_history(PENDING), TAG) == (1, "")


def test_landed_confirm_rolls_back_past_it() -> None:
    # the confirm's reply was lost: rollback 1 would be roce-tune's own change
    assert rollback_index(parse_commit_history(CONFIRMED), TAG) == (2, "")


def test_foreign_commit_after_ours_is_not_discarded() -> None:
    text = "0   2026-12-01 10:12:00 UTC by bob via cli\n    urgent fix\n" + "\n".join(
        f"{int(line[0]) + 1}{line[1:]}" if line[:1].isdigit() else line for line in CONFIRMED.splitlines())
    index, why = rollback_index(parse_commit_history(text), TAG)
    assert index is None and "by bob" in why and "urgent fix" in why and "rollback 3" in why


def test_missing_tag_is_refused() -> None:
    index, why = rollback_index(parse_commit_history(CONFIRMED), "roce_tune_other")
    assert index is None and "roce_tune_other" in why
