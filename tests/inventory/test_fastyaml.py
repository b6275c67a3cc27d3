"""The fast block-subset reader must agree exactly with ruamel.yaml, or decline (return None).

Oracle: :func:`roce_tune.inventory.yamlpos.compose_ruamel` (ruamel.yaml's composer). For every text
the fast reader accepts, data, positions and duplicate-key issues must be identical.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roce_tune.inventory.fastyaml import fast_parse
from roce_tune.inventory.yamlpos import compose_ruamel


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def assert_agrees(text: str, must_accept: bool = False) -> bool:
    fast = fast_parse(text)
    if fast is None:
        assert not must_accept, "the fast reader declined a text in its subset"
        return False
    ref = compose_ruamel(text)  # raises if ruamel rejects what the fast reader accepted
    assert _same(fast.data, ref.data), (fast.data, ref.data)
    assert fast.pos == ref.pos
    assert (fast.root_line, fast.root_col) == (ref.root_line, ref.root_col)
    def key(i):
        return (i.line, i.col, i.rule, i.message, i.path)
    assert sorted(map(key, fast.issues)) == sorted(map(key, ref.issues))
    assert fast.bad_paths == ref.bad_paths
    return True


ACCEPTED = [
    "a: 1\n",
    "---\na: 1\n",
    "# c\na:   x y   # comment\nb: 'it''s'\nc: \"q # not a comment\"\nd:\ne: ~\n",
    "a:\n  b:\n    c: [1, 2.5, -3, 0x1F, 0o17, .inf, -.inf, true, False, null, ~]\n",
    "s:\n- a\n- b: 1\n  c: 2\n- - x\n  - y\n-\n  k: v\nt: 1\n",
    "s:\n  - {a: leaf1:Ethernet0, b: 'x, y', c: \"z\", d: [p, {q: r}], e: {}, f: []}\n",
    "a: b#c\nd: 1:30\ne: 2.21.5\nf: yes\ng: 400G\nh: -5\ni: +7\nj: 1_000\nk: 1e3\n",
    "dup: 1\ndup: 2\nm:\n  x: 1\n  x:\n    y: 2\n  z: [1]\n",
    "a: {k: 1, k: 2}\n",
    "a: " + "9" * 150 + "\nb: [" + "1" * 120 + "]\n",
    "a: 1\r\nb:\r\n  - x\r\n",
    "key_with.dots-and_9: value\n0: zero\n",
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_fast_reader_accepts_and_agrees(text: str) -> None:
    assert_agrees(text, must_accept=True)


DECLINED = [
    "a: &x 1\nb: *x\n",                 # anchors / aliases
    "a: !!str 1\n",                     # tags
    "a: |\n  text\n",                   # block scalars
    "a: this\n  continues\n",           # multi-line plain scalar
    "a: \"x\\ny\"\n",                   # escapes
    "a:\n\tb: 1\n",                     # tabs
    "? [a]\n: 1\n",                     # complex key
    "a: 1\n---\nb: 2\n",                # second document
    "'quoted key': 1\n",
    "a: [1,\n  2]\n",                   # multi-line flow
    "- a\n",                            # top-level list
    "",                                 # empty
    "a: b: c\n",                        # syntax error: ruamel reports it
    "a:\n  - x\n  b: 1\n",              # bad indentation
    "a: [1, 2,]\n",                     # trailing comma
    "s:\n-\n- x\n",                     # empty sequence item
    "a: x\u2028y\n",
    "k" * 1100 + ": 1\n",              # implicit key longer than YAML allows
]


@pytest.mark.parametrize("text", DECLINED)
def test_fast_reader_declines(text: str) -> None:
    assert fast_parse(text) is None


# --- generated documents ---------------------------------------------------------------------------
_KEYS = ["a", "b", "name", "speed", "ports", "x_1", "k.v", "k-v", "0", "on"]
_TEXTS = [
    "lab", "400G", "leaf1:Ethernet0", "Ethernet[0-124/4]", "9216", "-3", "1.5", "1e400", "0x1F", "true",
    "null", "~", "", "a b", "a #b", "a# b", "x: y", "x:", "-", "- x", "[a]", "{a}", "it's", 'say "hi"',
    "é ✓ 机", "*x", "&x", "!x", "%x", "@x", "`x", "?", "? x", ": x", ",", "#", "a,b", "1:30", " pad ",
    "9" * 120, ".nan", ".inf", "0o8",
]
Choose = Callable[[Sequence[Any]], Any]


def _scalar(choose: Choose) -> str:
    text = choose(_TEXTS)
    style = choose(["plain", "plain", "plain", "single", "double"])
    if style == "single":
        return "'" + text.replace("'", "''") + "'"
    if style == "double":
        return '"' + text + '"'
    return str(text)


def _tree(choose: Choose, depth: int) -> Any:
    kind = choose(["scalar", "scalar", "list", "dict"] if depth < 3 else ["scalar"])
    if kind == "list":
        return [_tree(choose, depth + 1) for _ in range(choose([0, 1, 2, 3]))]
    if kind == "dict":
        return {choose(_KEYS): _tree(choose, depth + 1) for _ in range(choose([0, 1, 2, 3]))}
    return _scalar(choose)


def _flow(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_flow(x) for x in v) + "]"
    return str(v)


def emit_document(choose: Choose) -> str:
    """A block-style YAML document built from ``choose`` (hypothesis draws or a seeded RNG)."""
    lines: list[str] = []

    def block(v: Any, indent: int, prefix: str) -> None:
        pad = " " * indent
        if isinstance(v, dict):
            for n, (k, x) in enumerate(v.items()):
                lead = prefix if n == 0 else pad
                if isinstance(x, (dict, list)) and x and choose([True, False]):
                    lines.append(f"{lead}{k}:" + choose(["", "  # c", " "]))
                    step = 0 if isinstance(x, list) and choose([True, False]) else choose([2, 4])
                    block(x, indent + step, " " * (indent + step))
                else:
                    lines.append(f"{lead}{k}: {_flow(x)}" + choose(["", " # c", "  "]))
                if choose(range(10)) == 0:
                    lines.append(choose(["", "# note", "   # indented note"]))
        elif isinstance(v, list):
            for n, x in enumerate(v):
                lead = prefix if n == 0 else pad
                if isinstance(x, (dict, list)) and x and choose([True, False]):
                    block(x, indent + 2, f"{lead}- ")
                else:
                    lines.append(f"{lead}- {_flow(x)}")
        else:
            lines.append(f"{prefix}{v}")

    root = {choose(_KEYS): _tree(choose, 0) for _ in range(choose([1, 2, 3, 4, 5]))}
    block(root, 0, "")
    return "\n".join(lines) + choose(["\n", "", "\n\n"])


@st.composite
def _document(draw: st.DrawFn) -> str:
    return emit_document(lambda options: draw(st.sampled_from(list(options))))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_document())
def test_generated_documents_agree(text: str) -> None:
    assert_agrees(text)


def test_seeded_documents_agree_and_mostly_take_the_fast_path() -> None:
    """Same check on 400 seeded documents, and the fast reader must take most of them (else the
    differential test would compare little)."""
    rng = random.Random(20240601)
    accepted = sum(assert_agrees(emit_document(lambda options: rng.choice(list(options))))
                   for _ in range(400))
    assert accepted >= 120, accepted
