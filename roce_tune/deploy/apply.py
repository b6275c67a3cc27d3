"""Glue for ``roce-tune apply``: load targets from an inventory or a plan directory, and show
progress and results with rich (per-device state as it finishes, a summary table at the end)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from roce_tune.deploy.runner import (
    ApplyOptions,
    DeviceResult,
    Target,
    confirm_window_notes,
    select,
    targets_from_files,
)

_STYLE = {"no-change": "green", "pushed": "bold green", "would-change": "yellow", "failed": "bold red",
          "blocked-disruptive": "magenta", "skipped": "dim", "not-started": "dim",
          "rolled-back": "bold yellow",
          "unknown": "bold red"}


def load_source(source: Path) -> tuple[list[Target], Path]:
    """Targets from a plan directory (the files a reviewer approved) or an inventory (planned now).

    Returns:
        (targets, default log directory).

    Raises:
        RoceTuneError: the inventory does not load, lint, derive or render cleanly, or its plan has
            error-level findings.
        PlanDirError: a plan directory that does not hold one complete plan (no plan.json, a device's
            files missing, an interrupted ``roce-tune plan``); nothing is done.
    """
    from roce_tune.pipeline import open_source

    src = open_source(source)
    assert src.files is not None  # open_source renders when files are asked for (the default)
    logs = source / "logs" if src.plan_dir is not None else Path("out") / source.stem / "logs"
    return targets_from_files(src.plan, src.files), logs


def _print_header(console: Console, targets: list[Target], chosen: int, opts: ApplyOptions) -> None:
    """What the run does, to how many devices, and the notes on it (a confirm window a platform rounds)."""
    header = "DRY RUN — nothing will be changed on any device" if opts.dry_run else "PUSH"
    console.print(Text.assemble((header, "bold"), f" ({chosen} devices, concurrency {opts.concurrency}"
                                + (f", canary {opts.canary}" if opts.canary else "") + ")"))
    for note in confirm_window_notes(targets, opts):
        console.print(Text.assemble(("note: ", "bold yellow"), note))


def print_results(targets: list[Target], opts: ApplyOptions,
                  runner: Callable[..., list[DeviceResult]], console: Console | None) -> list[DeviceResult]:
    """Run ``runner(targets, opts, on_result)`` with a progress bar and print diffs and a summary."""
    if console is None:
        return runner(targets, opts, None)
    chosen = select(targets, opts.limit)
    _print_header(console, targets, len(chosen), opts)
    # every device- or tool-derived string goes out as Text (never markup): device output such as
    # "cannot open [/dev/mst/…]" is printed as is, and can never break the report
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as progress:
        task = progress.add_task("devices", total=len(chosen))

        def done(r: DeviceResult) -> None:
            progress.advance(task)
            progress.console.print(Text.assemble((f"{r.name:<24} {r.state}", _STYLE.get(r.state, "white")),
                                                 f"  {r.error}" if r.error else ""))

        results = runner(targets, opts, done)
    for r in results:
        if r.diff:
            head = Text.assemble("\n", (f"--- {r.name} ({r.platform})", "bold"))
            if r.disruptive:
                head.append(f" DISRUPTIVE: {'; '.join(r.disruptive)}", style="magenta")
            console.print(head)
            for line in r.diff:
                style = "green" if line.lstrip().startswith(("+", "add")) else \
                    "red" if line.lstrip().startswith(("-", "remove")) else "white"
                console.print(Text(line, style=style))
    table = Table(title="apply summary" + (" (dry run)" if opts.dry_run else ""), header_style="bold")
    for col in ("device", "platform", "state", "changes", "disruptive", "seconds", "error"):
        table.add_column(col)
    for r in results:
        table.add_row(Text(r.name), Text(r.platform), Text(r.state, style=_STYLE.get(r.state, "white")),
                      str(len(r.diff)), "yes" if r.disruptive else "", f"{r.seconds:.1f}",
                      Text(r.error or ""))
    console.print(table)
    _print_checkpoints(console, results)
    return results


def _print_checkpoints(console: Console, results: list[DeviceResult]) -> None:
    """Per device: the checkpoint a push left as its rollback point, the older checkpoints of roce-tune it
    deleted, and the warnings of its housekeeping (a delete the device refused: the push still stands)."""
    for r in results:
        if r.rollback_point or r.pruned:
            console.print(Text.assemble((f"{r.name}: ", "bold"),
                                        f"rollback point: {r.rollback_point}" if r.rollback_point else "",
                                        "; " if r.rollback_point and r.pruned else "",
                                        f"pruned roce-tune's older checkpoint(s): {', '.join(r.pruned)}"
                                        if r.pruned else ""))
        for warning in r.warnings:
            console.print(Text.assemble(("warning: ", "bold yellow"), warning))
