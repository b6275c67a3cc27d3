"""verify --adjust pushes the same switch once per iteration: each push needs its own checkpoint name.

``_apply_fn`` gave every device ``<run tag>_<device>`` for the whole run, so the second iteration's push to
a switch reused the first one's checkpoint name (NX-OS refuses a checkpoint name it has, "Checkpoint names
must be unique"; SONiC's ``config checkpoint`` saves over it, losing the first rollback point), and the
name was neither one of roce-tune's own (retention never pruned it) nor within NX-OS's 32 characters for a
device name longer than six.
"""

from __future__ import annotations

import pytest

from roce_tune.deploy.runner import ApplyOptions, DeviceResult, Target
from roce_tune.platforms.checkpoints import OWN_CHECKPOINT_RE
from roce_tune.verify import run as verify_run
from tests.render.golden import pipeline_plan


def test_each_push_of_the_loop_gets_its_own_own_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = pipeline_plan("lab-2node")
    sw = plan.switches[0]
    plan0 = plan.model_copy(update={"switches": [sw.model_copy(update={"watchdog": sw.watchdog.model_copy(
        update={"detection_ms": sw.watchdog.detection_ms + 100})})] + list(plan.switches[1:])})
    tags: list[tuple[str, str]] = []

    def fake_apply(targets: list[Target], opts: ApplyOptions) -> list[DeviceResult]:
        tags.extend((t.name, opts.push.tag) for t in targets)
        return [DeviceResult(name=t.name, platform=t.platform, state="failed") for t in targets]

    monkeypatch.setattr(verify_run, "apply_targets", fake_apply)
    apply = verify_run._apply_fn(verify_run.VerifyOptions(), plan0)
    apply(plan)
    apply(plan)  # the next iteration pushes the same switch again
    names = [n for n, _ in tags]
    assert names.count(sw.name) == 2, tags
    assert len({tag for _, tag in tags}) == len(tags), tags
    for _, tag in tags:
        assert OWN_CHECKPOINT_RE.match(tag) and len(tag) <= 32, tag
