"""Every rationale in a shipped inventory's plan cites something a reader can open: a public URL, a
standard, a paper, a repository path, or a section of a document that ships in ``docs/`` — never a file
that does not ship with roce-tune (the developers' research notes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.plan import plan_to_json
from roce_tune.render.review import render_review

REPO = Path(__file__).resolve().parents[2]
INVENTORIES = sorted((REPO / "inventories").glob("*.yaml"))

#: Names of files that exist only beside the developers' checkout, never in the package or the repo.
_NOT_SHIPPED = re.compile(r"DOMAIN(\.md)?\b|VENDORS\.md|DCQCN-MODEL|SIMULATION-REFERENCE|Oracle "
                          r"[A-E]\b|\.\./shared")
_DOC_LINK = re.compile(r"(docs/[\w./-]+\.md)(?:#([\w-]+))?")


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    return {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", doc.read_text(), re.M)}


def _sources(obj: object) -> list[str]:
    """Every ``source`` and ``note`` string of every rationale in a plan.json document."""
    out: list[str] = []
    if isinstance(obj, dict):
        if "formula" in obj and "source" in obj:
            out += [str(obj["source"]), str(obj.get("note", ""))]
        for v in obj.values():
            out += _sources(v)
    elif isinstance(obj, list):
        for v in obj:
            out += _sources(v)
    return out


@pytest.fixture(scope="module", params=INVENTORIES, ids=lambda p: p.stem)
def plan(request):  # type: ignore[no-untyped-def]
    return derive_plan(load_inventory(request.param))


def test_no_rationale_cites_a_file_that_does_not_ship(plan) -> None:  # type: ignore[no-untyped-def]
    import json

    doc = json.loads(plan_to_json(plan))
    sources = _sources(doc)
    assert len(sources) > 50  # the walk really reached the rationales
    bad = sorted({s for s in sources if _NOT_SHIPPED.search(s)})
    assert not bad, bad[:10]
    review = render_review(plan)
    assert not _NOT_SHIPPED.search(review), _NOT_SHIPPED.search(review)


def test_every_docs_link_in_a_rationale_names_an_existing_section(plan) -> None:  # type: ignore[no-untyped-def]
    import json

    links = {m.groups() for s in _sources(json.loads(plan_to_json(plan))) for m in _DOC_LINK.finditer(s)}
    assert links, "no rationale points at docs/ at all"
    for path, anchor in links:
        doc = REPO / path
        assert doc.is_file(), path
        if anchor:
            assert anchor in _anchors(doc), f"{path}#{anchor} is not a heading of {path}"


def test_package_sources_cite_no_unshipped_file() -> None:
    """Docstrings and comments too: a contributor must be able to follow every reference."""
    offenders = []
    for path in sorted((REPO / "roce_tune").rglob("*")):
        if path.suffix in {".py", ".yaml"}:
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if _NOT_SHIPPED.search(line):
                    offenders.append(f"{path.relative_to(REPO)}:{n}: {line.strip()[:100]}")
    assert not offenders, "\n".join(offenders[:20])
