"""The plan directory is switched in one atomic step: kill -9 anywhere leaves the old or the new complete
plan; leftovers of older roce-tune versions' entry-by-entry swap are refused by readers and cleaned up by
the next ``plan``; apply and verify refuse a plan whose devices lack their files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import PlanDirError, derive_plan, read_plan_dir
from roce_tune.render.outputs import CURRENT, read_tree, render_outputs, write_tree
from roce_tune.verify.run import load_for_verify

REPO = Path(__file__).resolve().parents[2]
# what roce-tune <= this change
# swapped
OLD_MANAGED = ("plan.json", "plan.md", "nccl.env", "switches", "hosts")

#: runs write_tree in a child that SIGKILLs itself right before its k-th file-system mutation; plan.json is
#: handed over as render_outputs hands it (UTF-8 pieces, written with writev), the other files as text
KILLER = r"""
import builtins, json, os, signal, sys
from roce_tune.plandir import TextFiles
from roce_tune.render.outputs import write_tree
k, files, out = int(sys.argv[1]), json.load(open(sys.argv[2])), sys.argv[3]
blob = files["plan.json"].encode()
files = TextFiles({**files, "plan.json": [blob[i:i + 4093] for i in range(0, len(blob), 4093)]}.items())
count = [0]
def hook(fn):
    def wrapped(*args, **kwargs):
        count[0] += 1
        if count[0] == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return fn(*args, **kwargs)
    return wrapped
for name in ("mkdir", "symlink", "link", "rename", "replace", "unlink", "rmdir", "fsync", "chmod", "open",
             "write", "writev"):
    setattr(os, name, hook(getattr(os, name)))
builtins.open = hook(builtins.open)
write_tree(files, out)
print(count[0])
"""


@pytest.fixture(scope="module")
def plans() -> tuple[dict[str, str], dict[str, str]]:
    """Two real, different plans of the same site (old, new)."""
    plan = derive_plan(load_inventory(REPO / "inventories" / "lab-2node.yaml"))
    old = render_outputs(plan)
    new = {**old, "plan.md": old["plan.md"] + "\nreviewed again\n"}
    new["switches/lab-leaf1.json"] = old["switches/lab-leaf1.json"].replace("\n", "\n ", 1)
    return old, new


def _kill_at(k: int, files_json: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", KILLER, str(k), str(files_json), str(out)], check=False,
                          capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})


def _write_legacy(files: dict[str, str], out: Path) -> None:
    """A plan directory as roce-tune wrote it before: real files and directories, no SHA256SUMS."""
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)


def _tidy(out: Path) -> None:
    """Exactly one version, no staging link, nothing moved aside, no temporary sibling."""
    assert [p.name for p in out.iterdir() if p.name.startswith(".plan-")] == [os.readlink(out / CURRENT)]
    assert not [p for p in out.iterdir() if p.name.startswith((".retired-", ".current.new"))]
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]


@pytest.mark.slow
@pytest.mark.parametrize("start", ["new-layout", "old-layout", "absent"])
def test_kill_9_at_every_step_leaves_the_old_or_the_new_complete_plan(
        plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path, start: str) -> None:
    old, new = plans
    files_json = tmp_path / "new.json"
    files_json.write_text(json.dumps(new))
    probe = tmp_path / "probe" / "out"
    if start == "new-layout":
        write_tree(old, probe)
    elif start == "old-layout":
        _write_legacy(old, probe)
    steps = int(_kill_at(0, files_json, probe).stdout)
    assert read_tree(probe) == new and steps > 10
    outcomes = []
    for k in range(1, steps + 1):
        out = tmp_path / f"k{k}" / "out"
        if start == "new-layout":
            write_tree(old, out)
        elif start == "old-layout":
            _write_legacy(old, out)
        if start != "absent":
            (out / "logs").mkdir()
            (out / "logs" / "leaf1.log").write_text("kept\n")
        proc = _kill_at(k, files_json, out)
        assert proc.returncode == -9, (k, proc.stderr)
        if not os.path.lexists(out):
            outcomes.append("absent")
        else:
            try:
                seen = read_tree(out)
                outcomes.append("old" if seen == old else "new" if seen == new else "MIXED")
            except PlanDirError as exc:
                # only while an old-layout directory is converted, or before a new directory exists at all
                assert start != "new-layout", (k, exc)
                assert "run `roce-tune plan`" in str(exc)
                outcomes.append("refused")
        assert outcomes[-1] != "MIXED", k
        write_tree(new, out)  # the next plan run recovers and tidies up
        assert read_tree(out) == new, k
        _tidy(out)
        if start != "absent":
            assert (out / "logs" / "leaf1.log").read_text() == "kept\n"
    assert outcomes[-1] == "new"
    expected = {"new-layout": {"old", "new"}, "old-layout": {"old", "refused", "new"},
                "absent": {"absent", "new"}}
    assert set(outcomes) == expected[start], outcomes


def _old_swap(old: dict[str, str], new: dict[str, str], out: Path, k: int) -> None:
    """What an older roce-tune's write_tree left when killed after ``k`` of its ten renames."""
    _write_legacy(old, out)
    tmp, moved = out.parent / f".{out.name}.tmp-ab12cd34", out.parent / f".{out.name}.old-ef56gh78"
    _write_legacy(new, tmp)
    moved.mkdir()
    renames = [(out / n, moved / n) for n in OLD_MANAGED] + [(tmp / n, out / n) for n in OLD_MANAGED]
    for src, dst in renames[:k]:
        os.rename(src, dst)


@pytest.mark.parametrize("k", range(11))
def test_a_half_swapped_directory_of_an_older_version_is_refused_then_recovered(
        plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path, k: int) -> None:
    old, new = plans
    out = tmp_path / "out"
    _old_swap(old, new, out, k)
    (out / "logs").mkdir()
    (out / "logs" / "leaf1.2024.before.txt").write_text("restore point\n")
    for reader in (load_source, load_for_verify):
        with pytest.raises(PlanDirError) as exc:
            reader(out)
        assert "interrupted `roce-tune plan`" in str(exc.value) and ".out.tmp-ab12cd34" in str(exc.value)
        assert "run `roce-tune plan`" in str(exc.value)
    write_tree(new, out)
    assert read_tree(out) == new and read_plan_dir(out).files == new
    _tidy(out)
    assert (out / "logs" / "leaf1.2024.before.txt").read_text() == "restore point\n"


def test_apply_and_verify_refuse_a_plan_whose_devices_lack_their_files(
        plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path) -> None:
    old, _ = plans
    out = write_tree(old, tmp_path / "new-layout")
    (out / "switches" / "lab-leaf1.json").unlink()
    with pytest.raises(PlanDirError, match=r"switches/lab-leaf1\.json listed in SHA256SUMS is missing"):
        load_source(out)
    legacy = tmp_path / "old-layout"
    _write_legacy({k: v for k, v in old.items() if k != "hosts/node2.sh"}, legacy)
    for reader in (load_source, load_for_verify):
        with pytest.raises(PlanDirError) as exc:
            reader(legacy)
        assert "1 device(s) lack their files: node2 (hosts/node2.sh)" in str(exc.value)
    proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "apply", str(legacy), "--dry-run"],
                          check=False,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2 and "node2 (hosts/node2.sh" in proc.stderr and "Traceback" not in proc.stderr
    assert "PUSH" not in proc.stdout and "DRY RUN" not in proc.stdout


def test_the_plan_directory_reads_like_a_directory_and_keeps_what_plan_does_not_own(
        plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path) -> None:
    old, new = plans
    out = write_tree(old, tmp_path / "out")
    (out / "notes.txt").write_text("reviewed by A\n")
    assert (out / "switches" / "lab-leaf1.json").read_text() == old["switches/lab-leaf1.json"]
    assert os.access(out / "hosts" / "node1.sh", os.X_OK)
    sums = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], check=False, cwd=out, capture_output=True,
                          text=True)
    assert sums.returncode == 0 and sums.stdout.count(": OK") == len(old)
    version = os.readlink(out / CURRENT)
    mtime = (out / version / "plan.json").stat().st_mtime_ns
    write_tree(old, out)  # unchanged plan: nothing rewritten
    assert os.readlink(out / CURRENT) == version and (out / version / "plan.json").stat().st_mtime_ns == mtime
    write_tree(new, out)
    assert read_tree(out) == new and (out / "notes.txt").read_text() == "reviewed by A\n"
    _tidy(out)
    without_hosts = {k: v for k, v in new.items() if not k.startswith("hosts/") and k != "nccl.env"}
    write_tree(without_hosts, out)
    assert read_tree(out) == without_hosts and not os.path.lexists(out / "hosts")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "switches").mkdir()
    with pytest.raises(OSError, match="not a roce-tune plan directory"):
        write_tree(new, tmp_path / "foreign")


def test_plan_json_goes_from_the_renderer_to_the_writer_as_bytes(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # render_outputs holds plan.json as the UTF-8 pieces plan_json_pieces makes (never joined nor decoded
    # unless read as text) and write_tree writes them as they are: the same tree, byte for byte, as from the
    # texts; a rewrite compares them with the version in force and links or writes as for text
    import roce_tune.plandir as plandir
    from roce_tune.findings import Finding
    from roce_tune.plan.codec import plan_to_json, plan_to_json_bytes
    from roce_tune.plandir import TextFiles, write_tree_stats

    monkeypatch.setattr(plandir, "_BATCH_PIECES", 3)  # several writev(2) and compare batches at lab size
    plan = derive_plan(load_inventory(REPO / "inventories" / "lab-2node.yaml"))
    warnings: list[Finding] = []
    files = render_outputs(plan, findings=warnings)
    reviewed = plan.model_copy(update={"findings": [*plan.findings, *warnings]})  # (as render_outputs writes)
    pieces = files.contents()["plan.json"]
    assert isinstance(files, TextFiles) and isinstance(pieces, list) and len(pieces) > 10
    held = b"".join(pieces)
    assert held == plan_to_json_bytes(reviewed)
    assert files["plan.json"] == plan_to_json(reviewed) == held.decode() and list(files) == sorted(files)
    texts = dict(files)
    assert files == texts and texts == files and all(type(t) is str for t in texts.values())
    write_tree(files, tmp_path / "bytes")
    write_tree(texts, tmp_path / "texts")
    assert read_tree(tmp_path / "bytes") == read_tree(tmp_path / "texts") == texts
    current = tmp_path / "bytes" / os.readlink(tmp_path / "bytes" / CURRENT)
    assert (current / "plan.json").read_bytes() == held
    # the same pieces again: compared with the file in force, nothing written; one byte changed in the
    # middle (same size): written
    assert write_tree_stats(files, tmp_path / "bytes")[1].written == 0
    k = next(i for i in range(len(pieces) // 2, len(pieces)) if b":" in pieces[i])
    changed = [*pieces[:k], pieces[k].replace(b":", b";", 1), *pieces[k + 1:]]
    assert len(b"".join(changed)) == len(held) and b"".join(changed) != held
    edited = TextFiles({**files.contents(), "plan.json": changed}.items())  # (as a renderer hands it)
    assert write_tree_stats(edited, tmp_path / "bytes")[1].written == 1
    assert (tmp_path / "bytes" / "plan.json").read_bytes() == b"".join(changed)
    edited["plan.md"] += "\nreviewed\n"
    del edited["nccl.env"]
    assert "nccl.env" not in edited and edited["plan.md"].endswith("reviewed\n") and files != edited
