"""roce_tune.pipeline and roce_tune.plandir: the one inventory -> plan directory path, the one reader of a
plan directory (plan, device files, checksums verified), writing only what changed, ``--timings`` and the
progress bar (drawn on a terminal only)."""

from __future__ import annotations

import errno
import io
import json
import os
import pty
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from rich.console import Console

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import (
    STAGES,
    PlanDirError,
    StageError,
    StageProgress,
    Timings,
    derive_plan,
    open_source,
    plan_inventory,
    read_plan_dir,
    reuse_plan,
)
from roce_tune.plandir import (
    CURRENT,
    MANIFEST,
    SUMS,
    Provenance,
    WriteStats,
    read_version,
    reusable,
    write_tree,
    write_tree_stats,
)
from roce_tune.render.outputs import render_outputs

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "inventories" / "lab-2node.yaml"


@pytest.fixture()
def lab(tmp_path: Path) -> Path:
    """A private copy of the two-node lab inventory (tests edit it)."""
    inv = tmp_path / "lab-2node.yaml"
    shutil.copy(LAB, inv)
    return inv


@pytest.fixture(scope="module")
def lab_files() -> dict[str, str]:
    return render_outputs(derive_plan(load_inventory(LAB)))


def _version(out: Path) -> Path:
    return out / os.readlink(out / CURRENT)


# ------------------------------------------------------------------------------------------ the pipeline


def test_plan_inventory_runs_every_stage_and_writes_what_render_outputs_gives(lab: Path,
                                                                              tmp_path: Path) -> None:
    clock = Timings()
    result = plan_inventory(lab, tmp_path / "out", scorecards=False, timings=clock)
    assert list(clock.cpu_s) == list(clock.wall_s) == list(STAGES)
    assert result.files == render_outputs(derive_plan(load_inventory(lab)))
    assert (result.written is not None and result.written.written == len(result.files)
            and result.written.published)
    assert read_plan_dir(tmp_path / "out").files == result.files
    line = clock.summary()
    assert line.startswith("timings (s, cpu/wall): load ") and all(f"{s} " in line for s in STAGES)
    assert "; total " in line


def test_each_stage_fails_with_its_name_and_nothing_is_written(lab: Path, tmp_path: Path) -> None:
    text = lab.read_text()
    lab.write_text(text.replace("name: lab-2node", "name: [lab-2node"))
    with pytest.raises(StageError) as exc:
        plan_inventory(lab, tmp_path / "out")
    assert exc.value.stage == "load" and exc.value.findings[0].location.file == str(lab)
    lab.write_text(text.replace("model: SN4700", "model: NO-SUCH-SWITCH"))
    with pytest.raises(StageError) as exc:
        plan_inventory(lab, tmp_path / "out")
    assert exc.value.stage == "lint" and any("NO-SUCH-SWITCH" in f.message for f in exc.value.findings)
    assert not (tmp_path / "out").exists()


def test_open_source_gives_apply_verify_and_audit_the_same_plan_from_inventory_or_plan_dir(
        lab: Path, tmp_path: Path) -> None:
    from_inventory = open_source(lab)
    out = write_tree(from_inventory.files or {}, tmp_path / "out")
    from_dir = open_source(out, inventory=True)
    assert from_dir.files == from_inventory.files and from_dir.plan == from_inventory.plan
    assert from_dir.plan_dir is not None and from_dir.plan_dir.layout == "versioned"
    assert from_dir.loaded is not None and from_dir.loaded.sha256 == from_inventory.plan.inventory_sha256
    lab.write_text(lab.read_text() + "\n# edited after planning\n")
    assert open_source(out, inventory=True).loaded is None  # the plan no longer comes from this file
    assert open_source(lab, files=False).files is None


# ------------------------------------------------------------------------------------------- the reader


def test_reader_refuses_a_file_edited_after_plan_naming_it(lab_files: dict[str, str], tmp_path: Path) -> None:
    out = write_tree(lab_files, tmp_path / "out")
    cfg = out / "switches" / "lab-leaf1.json"
    cfg.write_text(cfg.read_text().replace('"3"', '"4"', 1))
    with pytest.raises(PlanDirError, match=r"switches/lab-leaf1\.json in .* does not match its sha256 in "
                                           r"SHA256SUMS \(edited after `roce-tune plan`\?\)"):
        read_plan_dir(out)


def test_reader_refuses_a_file_plan_did_not_write(lab_files: dict[str, str], tmp_path: Path) -> None:
    out = write_tree(lab_files, tmp_path / "out")
    (out / "hosts" / "node3.sh").write_text("#!/bin/sh\n")
    with pytest.raises(PlanDirError, match=r"hosts/node3\.sh in .* is not listed in SHA256SUMS"):
        read_plan_dir(out)


def test_reader_refuses_a_missing_file_and_a_bad_sums_line(lab_files: dict[str, str], tmp_path: Path) -> None:
    out = write_tree(lab_files, tmp_path / "out")
    (out / "hosts" / "node2.sh").unlink()
    with pytest.raises(PlanDirError, match=r"hosts/node2\.sh listed in SHA256SUMS is missing"):
        read_plan_dir(out)
    other = write_tree(lab_files, tmp_path / "other")
    sums = _version(other) / SUMS
    sums.write_text(sums.read_text() + "not a checksum line\n")
    n = len(sums.read_text().splitlines())
    with pytest.raises(PlanDirError, match=rf"SHA256SUMS:{n}: not a `<sha256>  <file>` line"):
        read_plan_dir(other)


def test_reader_refuses_plan_json_that_is_not_a_plan(lab_files: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "legacy"
    for rel, text in {**lab_files, "plan.json": '{"schema_version": "9.9"}'}.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    with pytest.raises(PlanDirError, match=r"legacy/plan\.json: not a roce-tune plan"):
        read_plan_dir(out)


def test_reader_takes_the_old_layout_and_a_dereferenced_copy(lab_files: dict[str, str],
                                                             tmp_path: Path) -> None:
    legacy = tmp_path / "legacy"
    for rel, text in lab_files.items():
        (legacy / rel).parent.mkdir(parents=True, exist_ok=True)
        (legacy / rel).write_text(text)
    pd = read_plan_dir(legacy)
    assert pd.layout == "legacy" and pd.files == lab_files and pd.sha256 == {} and pd.root == legacy
    out = write_tree(lab_files, tmp_path / "out")
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-rL", str(out), str(copy)], check=True)  # real entries, SHA256SUMS kept
    pd = read_plan_dir(copy)
    assert pd.layout == "sums" and pd.files == lab_files and set(pd.sha256) == set(lab_files)
    (copy / "plan.md").write_text("tampered\n")
    with pytest.raises(PlanDirError, match=r"plan\.md in .* does not match"):
        read_plan_dir(copy)


def test_reader_without_device_files_reads_only_what_a_plan_json_reader_needs(
        lab_files: dict[str, str], tmp_path: Path) -> None:
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "plan.json").write_text(lab_files["plan.json"])
    with pytest.raises(PlanDirError, match=r"2 device\(s\) lack their files: node1 \(hosts/node1\.sh"):
        read_plan_dir(legacy)
    assert read_plan_dir(legacy, require_device_files=False).plan.site == "lab-2node"


# ------------------------------------------------------------------------------ writing only what changed


def test_unchanged_replan_writes_nothing(lab: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    plan_inventory(lab, out, scorecards=False)
    before = {p: p.stat().st_mtime_ns for p in _version(out).rglob("*")}
    again = plan_inventory(lab, out, scorecards=False)
    assert again.written is not None and not again.written.published and again.written.written == 0
    assert {p: p.stat().st_mtime_ns for p in _version(out).rglob("*")} == before


def test_one_cable_change_rewrites_only_the_files_it_changes(lab: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = plan_inventory(lab, out, scorecards=False)
    old_version = _version(out)
    inodes = {rel: (old_version / rel).stat().st_ino for rel in first.files}
    lab.write_text(lab.read_text().replace('switch_port: "lab-leaf1:Ethernet0", cable_length: 2m',
                                           'switch_port: "lab-leaf1:Ethernet0", cable_length: 90m'))
    second = plan_inventory(lab, out, scorecards=False)
    changed = {rel for rel in second.files if second.files[rel] != first.files.get(rel)}
    assert "switches/lab-leaf1.json" in changed and 0 < len(changed) < len(second.files)
    stats = second.written
    assert stats is not None and stats.published
    assert stats.written == len(changed) and stats.linked == len(second.files) - len(changed) > 0
    new_version = _version(out)
    assert not old_version.exists()  # the previous version is gone once the new one is in force
    for rel in second.files:
        same_inode = (new_version / rel).stat().st_ino == inodes.get(rel)
        assert same_inode == (rel not in changed), rel
    assert read_plan_dir(out).files == second.files  # and every checksum matches


@pytest.mark.parametrize("inventory,nic,leaf,host", [
    ("lab-2node.yaml", 'switch_port: "lab-leaf1:Ethernet0", cable_length: 2m', "lab-leaf1", "node1"),
    ("mixed-vendor.yaml", 'switch_port: "leaf1:Ethernet1/1", cable_length: 3m', "leaf1", "node01"),
])
def test_one_cable_change_rewrites_the_files_of_that_leaf_and_host_only(
        inventory: str, nic: str, leaf: str, host: str, tmp_path: Path) -> None:
    """Device files carry no inventory path or sha256 (issue 16): a cable edit rewrites plan.json, plan.md and
    the two devices on the cable; every other device's file is linked from the version in force."""
    inv = tmp_path / inventory
    shutil.copy(REPO / "inventories" / inventory, inv)
    out = tmp_path / "out"
    first = plan_inventory(inv, out, scorecards=False)
    assert inv.read_text().count(nic) == 1
    inv.write_text(inv.read_text().replace(nic, nic.replace("cable_length: ", "cable_length: 4")))
    second = plan_inventory(inv, out, scorecards=False)
    changed = {rel for rel in second.files if second.files[rel] != first.files.get(rel)}
    own = {rel for rel in second.files if rel.startswith((f"switches/{leaf}.", f"hosts/{host}."))}
    assert f"hosts/{host}.sh" in changed and any(rel.startswith(f"switches/{leaf}.") for rel in changed)
    assert changed <= {"plan.json", "plan.md"} | own, sorted(changed - own)
    assert second.written is not None and second.written.written == len(changed)
    assert sorted(second.written.changed) == sorted(changed) and not second.written.gone  # what to apply
    assert second.written.changes().startswith(f"changed since the plan in force: hosts/{host}.sh")
    # provenance stays checkable: the inventory and its sha256 are in plan.json, every file in SHA256SUMS
    pd = read_plan_dir(out)
    assert pd.plan.inventory_sha256 == load_inventory(inv).sha256 and set(pd.sha256) == set(second.files)


def test_devices_that_left_the_inventory_lose_their_files(lab_files: dict[str, str], tmp_path: Path) -> None:
    out = write_tree(lab_files, tmp_path / "out")
    fewer = {rel: text for rel, text in lab_files.items() if not rel.startswith("hosts/node2.")}
    assert len(lab_files) - len(fewer) >= 1
    _, stats = write_tree_stats(fewer, out)
    assert (stats.removed == len(lab_files) - len(fewer) >= 1 and stats.written == 0
            and stats.linked == len(fewer))
    assert not (out / "hosts" / "node2.sh").exists() and read_version(out).files == fewer
    gone = sorted(set(lab_files) - set(fewer))
    assert stats.gone == gone and not stats.changed and stats.changes() == "removed: " + ", ".join(gone)


def test_a_first_plan_reports_no_changes_and_a_long_list_is_cut(lab_files: dict[str, str],
                                                                 tmp_path: Path) -> None:
    _, first = write_tree_stats(lab_files, tmp_path / "out")
    assert first.written == len(lab_files) and not first.changed and first.changes() == ""
    many = WriteStats(changed=[f"hosts/h{i:02}.sh" for i in range(25)] + ["plan.json"])
    text = many.changes(most=3)
    assert text == "changed since the plan in force: hosts/h00.sh, hosts/h01.sh, hosts/h02.sh (+23 more)"


def test_a_file_edited_in_place_is_written_again_not_linked(lab_files: dict[str, str],
                                                            tmp_path: Path) -> None:
    out = write_tree(lab_files, tmp_path / "out")
    edited = out / "hosts" / "node1.sh"
    edited.write_text(edited.read_text() + "# local change\n")  # same inode, new mtime and size
    changed = {**lab_files, "plan.md": lab_files["plan.md"] + "\nagain\n"}
    _, stats = write_tree_stats(changed, out)
    assert stats.written == 2 and stats.linked == len(changed) - 2
    assert read_plan_dir(out).files == changed


def test_a_file_edited_in_place_after_the_first_change_is_written_again_not_linked(
        lab_files: dict[str, str], tmp_path: Path) -> None:
    """Files are linked as soon as one file is known to differ (hosts/ sort first): a switch file edited in
    place in the version in force, met after that, is still written from the plan, not linked."""
    out = write_tree(lab_files, tmp_path / "out")
    edited = _version(out) / "switches" / "lab-leaf1.json"
    edited.write_text(edited.read_text().replace("\n", "\n ", 1))  # same inode, new mtime and size
    changed = {**lab_files, "hosts/node1.sh": lab_files["hosts/node1.sh"] + "# changed\n"}
    _, stats = write_tree_stats(changed, out)
    assert stats.written == 2 and stats.linked == len(changed) - 2
    assert read_plan_dir(out).files == changed


def test_a_manifest_that_disagrees_with_sha256sums_is_not_trusted(lab_files: dict[str, str],
                                                                  tmp_path: Path) -> None:
    """Unchanged files take their sha256 from the manifest; a damaged manifest (a digest that is not the one
    SHA256SUMS lists) must not end up in the new SHA256SUMS: every file is written and hashed again."""
    out = write_tree(lab_files, tmp_path / "out")
    manifest = _version(out) / MANIFEST
    doc = json.loads(manifest.read_text())
    doc["files"]["switches/lab-leaf1.json"][0] = "0" * 64
    manifest.write_text(json.dumps(doc))
    changed = {**lab_files, "plan.md": lab_files["plan.md"] + "\nagain\n"}
    _, stats = write_tree_stats(changed, out)
    assert stats.written == len(changed) and stats.linked == 0
    assert read_plan_dir(out).files == changed  # every sha256 in SHA256SUMS matches
    _, stats = write_tree_stats(lab_files, out)
    assert stats.written == 1 and stats.linked == len(lab_files) - 1  # trusted again


def test_without_hard_links_every_file_is_written(lab_files: dict[str, str], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    out = write_tree(lab_files, tmp_path / "out")

    def no_link(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    changed = {**lab_files, "plan.md": "changed\n"}
    _, stats = write_tree_stats(changed, out)
    assert stats.linked == 0 and stats.written == len(changed) and read_tree_ok(out, changed)


def test_a_file_changed_to_the_same_size_is_written_and_text_of_any_script_is_hashed_right(
        lab_files: dict[str, str], tmp_path: Path) -> None:
    """A file whose size stays the same is told apart by its sha256 (never linked on size alone); text with
    non-ASCII characters (its size unknown before encoding) is written as UTF-8 and linked when unchanged."""
    files = {**lab_files, "plan.md": lab_files["plan.md"] + "\nreviewed by Jürgen\n"}
    out = write_tree(files, tmp_path / "out")
    same_size = {**files, "hosts/node1.sh": files["hosts/node1.sh"][:-2] + "#\n"}
    assert len(same_size["hosts/node1.sh"]) == len(files["hosts/node1.sh"])
    _, stats = write_tree_stats(same_size, out)
    assert stats.written == 1 and stats.linked == len(files) - 1
    assert read_plan_dir(out).files == same_size
    assert (_version(out) / "plan.md").read_bytes() == files["plan.md"].encode()
    back = {**files, "nccl.env": files["nccl.env"] + "\n"}
    _, stats = write_tree_stats(back, out)
    assert stats.written == 2 and stats.linked == len(files) - 2  # node1.sh back, nccl.env changed


def test_files_are_flushed_once_per_publish_or_one_by_one_without_syncfs(
        lab_files: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the file system can be flushed in one call (Linux syncfs) a new version is flushed once before
    the switch, no fsync per file; elsewhere every file and directory made is fsynced, as before."""
    from roce_tune import plandir

    fsynced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsynced.append(fd), real_fsync(fd))[1])
    syncs: list[Path] = []
    monkeypatch.setattr(plandir, "sync_file_system", lambda path: syncs.append(Path(path)))
    monkeypatch.setattr(plandir, "can_sync_file_system", lambda: True)
    out = write_tree(lab_files, tmp_path / "out")
    changed = {**lab_files, "plan.md": lab_files["plan.md"] + "\nagain\n"}
    write_tree(changed, out)
    assert len(syncs) == 2 and len(fsynced) <= 4  # directories only: the parent, `out` after the switch
    fsynced.clear()
    monkeypatch.setattr(plandir, "can_sync_file_system", lambda: False)
    fresh = write_tree(lab_files, tmp_path / "fresh")  # every file made here (a re-plan links unchanged ones)
    assert len(syncs) == 2 and len(fsynced) >= len(lab_files) + 2  # every file, SUMS, manifest, directories
    assert read_plan_dir(fresh).files == lab_files


def test_an_interrupted_build_is_not_reused_and_is_removed_by_the_next_write(
        lab_files: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree_stats(lab_files, out, provenance=Provenance("inputs-a", {"n": 1}))
    left = out / ".plan-new-ab12cd34"
    (left / "switches").mkdir(parents=True)
    (left / "switches" / "lab-leaf1.json").write_text("{}")
    assert reusable(out, "inputs-a") is None and read_plan_dir(out).files == lab_files
    changed = {**lab_files, "plan.md": "changed\n"}
    _, stats = write_tree_stats(changed, out)
    assert stats.published and not left.exists() and read_plan_dir(out).files == changed
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".plan")) == [_version(out).name]


def read_tree_ok(out: Path, files: dict[str, str]) -> bool:
    return read_plan_dir(out).files == files


def test_the_writer_takes_bytes_and_refuses_paths_outside(tmp_path: Path, lab_files: dict[str, str]) -> None:
    blobs: dict[str, str | bytes] = {rel: text.encode() for rel, text in lab_files.items()}
    out = write_tree(blobs, tmp_path / "out")
    assert read_plan_dir(out).files == lab_files and (_version(out) / MANIFEST).is_file()
    for bad in ("../escape", "/etc/passwd", ""):
        with pytest.raises(ValueError, match="not a relative path"):
            write_tree({**lab_files, bad: "x"}, tmp_path / "out")


# ----------------------------------------------------------------------------------- progress and timings


def test_progress_bar_only_on_a_terminal_and_only_for_a_slow_stage() -> None:
    import time

    tty = io.StringIO()
    progress = StageProgress(Console(file=tty, force_terminal=True, width=80), after_s=0.05)
    with progress.stage("render", total=None):
        time.sleep(0.4)
    with progress.stage("write", total=10) as advance:
        time.sleep(0.3)
        advance(4)
        time.sleep(0.3)
    with progress.stage("lint"):
        pass  # shorter than after_s: no bar
    drawn = tty.getvalue()
    assert "render" in drawn and "━" in drawn and "4/10" in drawn and "lint" not in drawn
    pipe = io.StringIO()
    quiet = StageProgress(Console(file=pipe, force_terminal=False), after_s=0.0)
    with quiet.stage("render") as advance:
        time.sleep(0.2)
        advance(1)
    assert pipe.getvalue() == ""


def _run_plan(args: list[str], stderr_tty: bool) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "ROCE_TUNE_PROGRESS_AFTER_S": "0", "TERM": "xterm",
           "COLUMNS": "100"}
    cmd = [sys.executable, "-m", "roce_tune.cli", "plan", *args]
    if not stderr_tty:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=slave, text=True, timeout=300, env=env,
                          check=False)
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, proc.stdout, b"".join(chunks).decode(errors="replace")


def test_plan_timings_and_the_progress_bar_on_a_terminal_only(lab: Path, tmp_path: Path) -> None:
    code, stdout, stderr = _run_plan([str(lab), "--out", str(tmp_path / "a"), "--no-scorecard", "--timings"],
                                     stderr_tty=False)
    assert code == 0, stderr
    timing_lines = [line for line in stderr.splitlines() if line.startswith("timings (s, cpu/wall): ")]
    assert len(timing_lines) == 1 and all(f" {s} " in timing_lines[0] for s in STAGES[1:])
    assert "files: " in timing_lines[0] and " written" in timing_lines[0]
    assert "━" not in stderr and "\x1b[" not in stderr and "wrote " in stdout
    code, stdout, stderr = _run_plan([str(lab), "--out", str(tmp_path / "b"), "--no-scorecard", "--timings"],
                                     stderr_tty=True)
    assert code == 0, stderr
    assert "━" in stderr and "timings (s, cpu/wall): reuse " in stderr and " load " in stderr
    code, stdout, stderr = _run_plan([str(lab), "--out", str(tmp_path / "b"), "--no-scorecard", "--timings"],
                                     stderr_tty=False)
    assert code == 0 and "files: plan unchanged, nothing written" in stderr


# ---------------------------------------------------------------------------------- unchanged re-plan


def test_unchanged_replan_reuses_the_plan_in_force_without_deriving(lab: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [str(lab), "--out", str(out), "--no-scorecard", "--timings"]
    code, first, err1 = _run_plan(args, stderr_tty=False)
    assert code == 0, err1
    before = {p: p.stat().st_mtime_ns for p in _version(out).rglob("*")}
    code, again, err2 = _run_plan(args, stderr_tty=False)
    timing = next(line for line in err2.splitlines() if line.startswith("timings "))
    # the same summary, from the manifest; only the last line says that nothing was written this time
    assert code == 0 and again.splitlines()[:-1] == first.splitlines()[:-1]
    files = len(read_plan_dir(out).files)
    assert first.splitlines()[-1].startswith(f"wrote {files} files to ")
    assert again.splitlines()[-1].startswith(f"plan in force unchanged: {files} files in "), again
    assert "reuse " in timing and " load " not in timing and "nothing derived" in timing
    assert {p: p.stat().st_mtime_ns for p in _version(out).rglob("*")} == before
    code, as_json, _ = _run_plan([*args, "--format", "json"], stderr_tty=False)
    assert code == 0 and json.loads(as_json)["files"] == sorted(read_plan_dir(out).files)
    # --force derives again; the files are the same, so none is rewritten
    code, forced, err_f = _run_plan([*args, "--force"], stderr_tty=False)
    timing = next(line for line in err_f.splitlines() if line.startswith("timings "))
    assert code == 0 and " load " in timing and "reuse " not in timing and "nothing written" in timing, timing
    assert {p: p.stat().st_mtime_ns for p in _version(out).rglob("*")} == before
    # other options are other inputs: planned again
    code, _, err3 = _run_plan([str(lab), "--out", str(out), "--timings"], stderr_tty=False)
    assert code == 0 and " load " in err3


def test_replan_is_not_reused_when_a_file_was_edited_or_the_inventory_changed(lab: Path,
                                                                              tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = plan_inventory(lab, out, scorecards=False)
    assert reuse_plan(lab, out, scorecards=False) == result.summary
    leaf = _version(out) / "switches" / "lab-leaf1.json"
    # same bytes, but written after the plan: no longer what the manifest says
    leaf.write_text(leaf.read_text())
    assert reuse_plan(lab, out, scorecards=False) is None
    lab.write_text(lab.read_text() + "\n# a comment\n")
    assert reuse_plan(lab, out, scorecards=False) is None
    (out / CURRENT).unlink()
    assert reuse_plan(lab, out, scorecards=False) is None


def test_the_version_in_force_made_again_from_other_inputs_records_them(lab_files: dict[str, str],
                                                                        tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree_stats(lab_files, out, provenance=Provenance("inputs-a", {"n": 1}))
    assert reusable(out, "inputs-a") == {"n": 1} and reusable(out, "inputs-b") is None
    _, stats = write_tree_stats(lab_files, out, provenance=Provenance("inputs-b", {"n": 2}))
    assert not stats.published and stats.written == 0
    assert reusable(out, "inputs-b") == {"n": 2} and reusable(out, "inputs-a") is None
    (out / "plan.json").unlink()  # a managed link gone: not intact
    assert reusable(out, "inputs-b") is None


def test_replan_restores_a_file_edited_in_the_version_in_force(lab_files: dict[str, str],
                                                               tmp_path: Path) -> None:
    """`roce-tune plan` again is what the reader tells an engineer to run after an edit: with an unchanged
    plan (same version) it must put the edited and removed files back, not leave the version as it
    found it."""
    out = write_tree(lab_files, tmp_path / "out")
    edited, removed = _version(out) / "hosts" / "node1.sh", _version(out) / "switches" / "lab-leaf1.json"
    edited.write_text(edited.read_text() + "ip link set ens1f0np0 down\n")
    removed.unlink()
    stray = _version(out) / "hosts" / "stray.sh"
    stray.write_text("echo not planned\n")
    with pytest.raises(PlanDirError):
        read_plan_dir(out)
    _, stats = write_tree_stats(lab_files, out)
    assert not stats.published and stats.written == 2 and stats.removed == 1
    assert stats.describe() == ("files: plan unchanged, 2 edited or missing file(s) restored, 1 file(s) not "
                                "written by plan removed")
    assert stats.unowned == ["hosts/stray.sh"]
    assert read_plan_dir(out).files == lab_files and not stray.exists()
    _, stats = write_tree_stats(lab_files, out)
    assert stats.written == 0 and stats.describe() == "files: plan unchanged, nothing written"


def test_a_damaged_manifest_summary_is_planned_again_not_printed(lab: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    plan_inventory(lab, out, scorecards=False)
    manifest = _version(out) / MANIFEST
    doc = json.loads(manifest.read_text())
    doc["extra"]["facts"]["hosts"] = "two"
    manifest.write_text(json.dumps(doc))
    assert reuse_plan(lab, out, scorecards=False) is None
    del doc["extra"]["facts"]
    manifest.write_text(json.dumps(doc))
    assert reuse_plan(lab, out, scorecards=False) is None
