"""The plan directory abused between and during plans (issue 16 write stage: only changed files written,
unchanged ones byte-compared and hard-linked, one flush per version, manifest cross-checked with SHA256SUMS).

Whatever was done to the directory by hand, the next plan leaves exactly the files a fresh plan gives (or,
where it cannot, a reader refuses the directory); two plans into one directory at once leave one of them
whole; a directory that cannot be written fails with a clear error and the plan in force untouched.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from roce_tune import plandir
from roce_tune.pipeline import plan_inventory, read_plan_dir
from roce_tune.plandir import SUMS, PlanDirError, read_tree, write_tree, write_tree_stats

REPO = Path(__file__).resolve().parents[1]
LAB = REPO / "inventories" / "lab-2node.yaml"


def _lab_files(text: str, tmp: Path) -> dict[str, str]:
    inv = tmp / "lab.yaml"
    inv.write_text(text)
    return plan_inventory(inv, None, scorecards=False).files


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, str]]:
    """The lab plan's files, and those of the lab with one cable changed (node2's NIC: 2 m -> 7 m)."""
    tmp = tmp_path_factory.mktemp("plans")
    text = LAB.read_text()
    port = '"lab-leaf1:Ethernet8", cable_length: '
    edited = text.replace(port + "2m", port + "7m")
    assert edited != text
    return _lab_files(text, tmp), _lab_files(edited, tmp)


def _version(out: Path) -> Path:
    return out / os.readlink(out / ".current")


def _same_size_edit(out: Path, keep_mtime: bool) -> None:
    path = _version(out) / "hosts" / "node1.sh"
    st = path.stat()
    blob = path.read_bytes()
    i = blob.index(b"RT_HOST=")
    with open(path, "r+b") as fh:  # in place: the inode the manifest names
        fh.seek(i)
        fh.write(b"XT_HOST=")
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _delete(out: Path) -> None:
    (_version(out) / "switches" / "lab-leaf1.json").unlink()


def _extra(out: Path) -> None:
    (_version(out) / "switches" / "rogue-leaf.json").write_text("{}\n")


def _symlink_swap(out: Path, tmp: Path) -> None:
    """A file of the version replaced by a symlink to a copy of itself outside the directory."""
    path = _version(out) / "hosts" / "node2.sh"
    outside = tmp / "elsewhere.sh"
    shutil.copy2(path, outside)
    path.unlink()
    path.symlink_to(outside)


def _top_link_swap(out: Path, tmp: Path) -> None:
    """The top-level ``plan.md`` link pointed somewhere else."""
    (tmp / "other.md").write_text("not the plan\n")
    (out / "plan.md").unlink()
    (out / "plan.md").symlink_to(tmp / "other.md")


def _manifest_edit(out: Path) -> None:
    manifest = _version(out) / ".manifest.json"
    text = manifest.read_text()
    entry = text.index('"hosts/node1.sh":["') + len('"hosts/node1.sh":["')
    manifest.write_text(text[:entry] + ("0" if text[entry] != "0" else "1") + text[entry + 1:])


def _sums_edit(out: Path) -> None:
    sums = _version(out) / SUMS
    text = sums.read_text()
    sums.write_text(("0" if text[0] != "0" else "1") + text[1:])


EDITS: dict[str, Callable[[Path, Path], None]] = {
    "same-size-edit": lambda out, tmp: _same_size_edit(out, keep_mtime=False),
    "deleted": lambda out, tmp: _delete(out),
    "extra-file": lambda out, tmp: _extra(out),
    "symlink-swapped": _symlink_swap,
    "top-link-swapped": _top_link_swap,
    "manifest-edited": lambda out, tmp: _manifest_edit(out),
    "sums-edited": lambda out, tmp: _sums_edit(out),
}


@pytest.mark.parametrize("changed", [False, True], ids=["same-plan", "cable-changed"])
@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_hand_edited_plan_directory_is_replanned_to_exactly_the_fresh_files(
        edit: str, changed: bool, plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path) -> None:
    first, second = plans
    target = second if changed else first
    out = write_tree(first, tmp_path / "out")
    EDITS[edit](out, tmp_path)
    write_tree_stats(target, out)
    fresh = write_tree(target, tmp_path / "fresh")
    assert read_plan_dir(out).files == target == read_tree(out)
    assert sorted(os.listdir(out)) == sorted(os.listdir(fresh))
    assert os.readlink(out / ".current") == os.readlink(fresh / ".current")
    for name in ("plan.md", "plan.json", SUMS):
        assert os.readlink(out / name) == f".current/{name}"
    assert not (tmp_path / "elsewhere.sh").exists() or (tmp_path / "elsewhere.sh").read_text() == \
        first["hosts/node2.sh"]  # a file outside the directory is never written through a link


def test_a_same_size_edit_with_its_mtime_put_back_is_caught_by_the_reader(
        plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path) -> None:
    """By design the writer trusts size, mtime and inode of a file of the version in force (as make and rsync
    do) when the plan did not change; an edit that keeps all three is found by every reader (sha256 per file),
    and a changed plan compares bytes, so it is never linked into the next version."""
    first, second = plans
    out = write_tree(first, tmp_path / "out")
    _same_size_edit(out, keep_mtime=True)
    write_tree_stats(first, out)
    with pytest.raises(PlanDirError, match="node1.sh"):
        read_plan_dir(out)
    write_tree_stats(second, out)
    assert read_plan_dir(out).files == second


def _write_many(args: tuple[dict[str, str], str, int]) -> None:
    files, out, n = args
    for _ in range(n):
        write_tree(files, out)


def test_two_plans_into_one_directory_at_once_leave_one_whole_plan(
        plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path) -> None:
    first, second = plans
    out = tmp_path / "out"
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        pool.map(_write_many, [(first, str(out), 6), (second, str(out), 6)])
    assert read_plan_dir(out).files in (first, second)
    leftovers = [n for n in os.listdir(out) if n.startswith((".plan-new", ".current.new", ".retired"))]
    assert not leftovers and len([n for n in os.listdir(out) if n.startswith(".plan-")]) == 1
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".out.")]


def _immutable(path: Path, on: bool) -> bool:
    """Make ``path`` unwritable even for root (``chattr +i``), or writable again; False where unsupported."""
    if os.geteuid() != 0:
        path.chmod(0o555 if on else 0o755)
        return True
    done = subprocess.run(["chattr", "+i" if on else "-i", str(path)], capture_output=True, check=False)
    return done.returncode == 0


def test_a_read_only_plan_directory_fails_clearly_and_keeps_the_plan_in_force(
        plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path) -> None:
    first, second = plans
    out = write_tree(first, tmp_path / "out")
    before = sorted(os.listdir(out))
    if not shutil.which("chattr") and os.geteuid() == 0 or not _immutable(out, True):
        pytest.skip("cannot make a directory read-only here")
    try:
        inv = tmp_path / "lab.yaml"
        inv.write_text(LAB.read_text().replace("cable_length: 2m}", "cable_length: 7m}", 1))
        done = subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan", str(inv), "--out", str(out),
                               "--no-scorecard"], capture_output=True, text=True, check=False,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode != 0
        assert str(out) in done.stderr and "Traceback" not in done.stderr, done.stderr
    finally:
        _immutable(out, False)
    assert sorted(os.listdir(out)) == before
    assert read_plan_dir(out).files == first


@pytest.mark.parametrize("current", ["version-name-link", "absolute-link", "moved-under-its-name"])
def test_a_version_in_force_that_is_a_symlink_to_another_directory_is_replanned_and_never_written_through(
        current: str, plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path) -> None:
    """``.current`` swapped to a link to a copy of the plan elsewhere (moved to another disk and linked
    back): the next plan writes a version of its own, and nothing outside the directory changes."""
    first, second = plans
    out = write_tree(first, tmp_path / "out")
    outside = tmp_path / "outside"
    shutil.copytree(_version(out), outside)
    if current == "moved-under-its-name":
        shutil.rmtree(_version(out))
        os.symlink(outside, _version(out))
        (_version(out) / "hosts" / "node1.sh").write_text("edited where it was moved\n")
    elif current == "version-name-link":
        (out / ".current").unlink()
        os.symlink(".plan-0123456789abcdef", out / ".current")
        os.symlink(outside, out / ".plan-0123456789abcdef")
    else:
        (out / ".current").unlink()
        os.symlink(outside, out / ".current")

    def snapshot() -> dict[str, bytes]:
        return {p.relative_to(outside).as_posix(): p.read_bytes() for p in outside.rglob("*") if p.is_file()}

    before = snapshot()
    for files in (first, second, first):
        write_tree_stats(files, out)
        assert read_plan_dir(out).files == files
        assert snapshot() == before
    assert sorted(os.listdir(out)) == sorted(os.listdir(write_tree(first, tmp_path / "fresh")))


@pytest.mark.parametrize("changed", [False, True], ids=["same-plan", "cable-changed"])
@pytest.mark.parametrize("sub", ["hosts", "switches"])
def test_a_directory_of_the_version_swapped_for_a_symlink_is_never_written_through(
        sub: str, changed: bool, plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path) -> None:
    """``switches/`` of the version in force replaced by a link to a (tampered) copy elsewhere: the next
    plan, even of the same files, makes the directory whole again inside the plan directory."""
    first, second = plans
    out = write_tree(first, tmp_path / "out")
    outside = tmp_path / "outside"
    shutil.copytree(_version(out) / sub, outside)
    shutil.rmtree(_version(out) / sub)
    os.symlink(outside, _version(out) / sub)
    next(iter(sorted(outside.iterdir()))).write_text("tampered\n")
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    target = second if changed else first
    write_tree_stats(target, out)
    assert read_plan_dir(out).files == target
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before
    assert not (_version(out) / sub).is_symlink()


def test_progress_hears_of_every_file_written_or_linked_in_batches(tmp_path: Path) -> None:
    """A progress bar is told of every file written (a first plan) or linked (a re-plan), but not once per
    file: a terminal's bar update costs more than linking a file (issue 16)."""
    files = {f"hosts/h{n:03}.sh": f"echo {n}\n" for n in range(200)} | {"plan.json": "{}\n"}
    out = tmp_path / "out"
    for changed in (files, {**files, "plan.json": '{"v":2}\n'}):
        calls: list[int] = []
        _, stats = write_tree_stats(changed, out, calls.append)
        assert sum(calls) == stats.written + stats.linked == len(files)
        # 201 files: three full batches, then the rest when the write ends
        batch = plandir._PROGRESS_FILES
        assert calls == [batch] * (len(files) // batch) + [len(files) % batch] == [64, 64, 64, 9]
    assert (stats.written, stats.linked) == (1, 200)


def _plan_cli(inv: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan", str(inv), "--out", str(out),
                           "--no-scorecard", *extra], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.mark.parametrize("rerun", ["same-inventory", "force", "cable-changed"])
def test_a_file_dropped_into_switches_is_removed_by_the_next_plan_and_named(tmp_path: Path,
                                                                            rerun: str) -> None:
    """An engineer saves a switch's running config beside the rendered one (``switches/`` of the plan in
    force). Readers refuse the directory and tell them to plan again; that plan must remove the file and
    say so. It used to skip as 'plan in force unchanged, nothing written' (the file stayed, so apply kept
    refusing), and with --force or a changed cable it removed the file without naming it."""
    inv = tmp_path / "lab.yaml"
    inv.write_text(LAB.read_text())
    out = tmp_path / "out"
    assert _plan_cli(inv, out).returncode == 0
    mine = out / "switches" / "lab-leaf1.running.json"
    mine.write_text('{"saved": "by hand"}\n')
    with pytest.raises(PlanDirError, match="lab-leaf1.running.json"):
        read_plan_dir(out)
    if rerun == "cable-changed":
        inv.write_text(LAB.read_text().replace("cable_length: 2m}", "cable_length: 7m}", 1))
    done = _plan_cli(inv, out, *(["--force"] if rerun == "force" else []))
    assert done.returncode == 0, done.stderr
    assert "removed files not written by `roce-tune plan`: switches/lab-leaf1.running.json" in done.stdout
    assert "nothing written" not in done.stdout
    assert not mine.exists()
    assert "switches/lab-leaf1.running.json" not in read_plan_dir(out).files
    mine.write_text('{"saved": "by hand"}\n')
    doc = json.loads(_plan_cli(inv, out, "--format", "json").stdout)
    assert doc["changed"] is True and doc["removed_files"] == ["switches/lab-leaf1.running.json"]
    assert not mine.exists()


@pytest.mark.parametrize("foreign", ["plan.json-directory", "plan.json-of-another-tool"])
def test_a_directory_whose_plan_json_roce_tune_did_not_write_is_refused_and_left_as_it_was(
        tmp_path: Path, foreign: str) -> None:
    """``--out`` at a directory that has a ``plan.json`` roce-tune did not write (a directory of notes of
    that name; another tool's JSON) beside an Ansible ``hosts`` file and a ``switches/`` folder of the
    engineer's own: it is not a plan directory of an older roce-tune, so nothing in it may be moved or
    removed. It used to be 'converted': plan.json, hosts and switches deleted."""
    out = tmp_path / "ansible"
    (out / "switches").mkdir(parents=True)
    (out / "switches" / "leaf1-backup.cfg").write_text("hostname leaf1\n")
    (out / "hosts").write_text("[leaves]\nleaf1\n")
    if foreign == "plan.json-directory":
        (out / "plan.json").mkdir()
        (out / "plan.json" / "notes.txt").write_text("capacity plan\n")
    else:
        (out / "plan.json").write_text('{"terraform_version": "1.7.0", "planned_values": {}}\n')
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    done = _plan_cli(LAB, out)
    assert done.returncode == 1
    assert f"{out}" in done.stderr and "plan.json" in done.stderr and "Traceback" not in done.stderr
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    assert (out / "hosts").read_text() == "[leaves]\nleaf1\n"


def test_a_plan_directory_of_the_layout_before_current_is_still_converted(
        plans: tuple[dict[str, str], dict[str, str]], tmp_path: Path) -> None:
    """The check above must still take what older roce-tune wrote: real entries, plan.json indented with
    sorted keys (schema 1.0/1.1, ``generator`` far from the start); the engineer's notes stay."""
    first, _ = plans
    out = tmp_path / "old"
    for rel, text in first.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    indented = json.dumps(json.loads(first["plan.json"]), indent=2, sort_keys=True)
    (out / "plan.json").write_text(indented + "\n")
    assert not (out / "plan.json").read_text().startswith('{\n  "schema_version"')
    (out / "NOTES.md").write_text("change window Tuesday\n")
    done = _plan_cli(LAB, out)
    assert done.returncode == 0, done.stderr
    assert (out / ".current").is_symlink() and (out / "NOTES.md").read_text() == "change window Tuesday\n"
    assert sorted(read_plan_dir(out).files) == sorted(first)  # whole: every sha256 checked


def test_an_out_that_is_a_link_to_an_empty_directory_gets_the_plan_there(tmp_path: Path) -> None:
    """``out/site -> /scratch/plans/site`` made before the first plan (plans kept on another disk): the plan
    is written into the directory the link leads to and the link stays. It failed with '[Errno 20] Not a
    directory: .../.site.tmp-xxxx -> .../site' (a directory cannot be renamed over a symlink)."""
    target = tmp_path / "scratch" / "site"
    target.mkdir(parents=True)
    out = tmp_path / "out" / "site"
    out.parent.mkdir()
    out.symlink_to(target)
    done = _plan_cli(LAB, out)
    assert done.returncode == 0, done.stderr
    assert out.is_symlink() and os.readlink(out) == str(target)
    assert (target / ".current").is_symlink() and "plan.json" in read_plan_dir(out).files
    assert [p.name for p in tmp_path.joinpath("out").iterdir()] == ["site"]  # no temporary left beside it
    again = _plan_cli(LAB, out)
    assert again.returncode == 0 and "nothing written" in again.stdout, again.stderr


def test_plan_into_the_empty_directory_the_engineer_is_in_keeps_that_directory(tmp_path: Path) -> None:
    """``mkdir site-plan && cd site-plan && roce-tune plan ../site.yaml --out .``: the plan must land in that
    directory. A fresh directory was renamed over it, so the shell sat in a deleted directory ('ls' empty,
    'getcwd: cannot access parent directories'), and a directory made group-writable for the team lost
    its mode (so would a mount point, which cannot be renamed over at all)."""
    here = tmp_path / "site-plan"
    here.mkdir()
    here.chmod(0o2775)
    inode = here.stat().st_ino
    done = subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan", str(LAB), "--out", ".",
                           "--no-scorecard"], cwd=here, capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert here.stat().st_ino == inode and here.stat().st_mode & 0o7777 == 0o2775
    listed = subprocess.run(["ls", "-A"], cwd=here, capture_output=True, text=True, check=True).stdout.split()
    assert "plan.json" in listed and ".current" in listed
    assert "plan.json" in read_plan_dir(here).files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site-plan"]  # no temporary left beside it


def test_an_out_below_a_file_names_that_file(tmp_path: Path) -> None:
    """``--out plans/site`` where ``plans`` is a file (a saved report named like the directory): the error
    named '[Errno 17] File exists: .../plans', which reads as if the plan were refused for existing."""
    (tmp_path / "plans").write_text("report\n")
    done = _plan_cli(LAB, tmp_path / "plans" / "site")
    assert done.returncode == 1 and "Errno" not in done.stderr and "Traceback" not in done.stderr
    assert f"{tmp_path / 'plans'} is a file, not a directory" in done.stderr, done.stderr
    assert (tmp_path / "plans").read_text() == "report\n"
