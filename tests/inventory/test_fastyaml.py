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
from roce_tune.inventory.yamlpos import SplitPos, compose_ruamel, resolve_pos


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


def resolved(pos: Any) -> Any:
    """A position tree with every lazy subtree (:class:`LazyPos`, :class:`SplitPos`) built, to compare
    with ruamel's."""
    pos = resolve_pos(pos)
    if isinstance(pos, dict):
        return {k: (*v[:4], resolved(v[4])) for k, v in pos.items()}
    if isinstance(pos, list):
        return [(*v[:2], resolved(v[2])) for v in pos]
    return pos


def assert_agrees(text: str, must_accept: bool = False) -> bool:
    fast = fast_parse(text)
    if fast is None:
        assert not must_accept, "the fast reader declined a text in its subset"
        return False
    ref = compose_ruamel(text)  # raises if ruamel rejects what the fast reader accepted
    assert _same(fast.data, ref.data), (fast.data, ref.data)
    assert resolved(fast.pos) == ref.pos
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
    # one-line flow mappings of the split_pairs shape: as items, first items of a block, mapping values
    "m:\n  a: {k: 1}\n  a: {k: 2}\n  b:  {k: \"x\", j: 'y'}\n",
    "s:\n- {a: 1}\n- {a: 1, a: 2}\n-  {a: 3}\nj: {b: \"x:y\"}\nt:\n  - {c: ~}\n  - {c: .inf}\n",
    "h:\n  - name: g\n    mgmt: {host: \"10.0.0.1\"}\n    nics:\n      - {netdev: e1, port: \"l:E[0-3]\"}\n"
    "      - {netdev: e2, port: \"l:E4\"} # c\n  - name: h\n    nics:\n    - {netdev: e3}\n",
    # one-line flow mappings the pair-by-pair reader takes (spaces inside values; positions worked
    # out lazily)
    "p:\n  - {name: 'a b', speed: 400G}\n  - {x: \"q r\", y: 3m, zz: two words}\nq: {k: v w, kk: 'x'}\n",
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


# --- generated flow mappings (the one-line "- {k: v, ...}" shape of NICs and links) ----------------
_FLOW_KEYS = ["a", "name", "switch_port", "cable_length", "k.v", "k-v", "0", "a b", "'q'", '"q"', "k:", "{x}",
              "&a", "*a", "", "k,v", "a#b", "?", "-"]
_FLOW_VALUES = [
    "400G", "3m", "connectx-7", "leaf1:Ethernet0", "Ethernet[0-124/4]", "9216", "-3", "+7", "1.5", ".5", ".",
    "0x1F", "0o17", "1e3", ".inf", ".nan", "true", "False", "null", "~", "", "1:30", "a:", "a: b", "9" * 120,
    '"su0-leaf0:Ethernet0"', '"Ethernet[0-124/4]"', '""', "''", "'it''s'", "'a b'", '"a b"', '"x, y"',
    '"x: y"', '"a\\"b"', '"tab\\tx"', "'back\\slash'", '"}"', "'{'", '"a#b"', '"a # b"', "a #b", "a#b",
    "&anc x", "*anc", "!!str 1", "!x y", "[p, q]", "{r: s}", "{}", "[]", "x,y", "x , y", "é", '"é ✓"',
    "@x", "`x", "%x", "|", ">", "? x", "- x",
]
#: the values of the usual shape (plain names, numbers, quoted endpoints)
_USUAL_FLOW_VALUES = [v for v in _FLOW_VALUES[:12] + _FLOW_VALUES[25:28] if v != "Ethernet[0-124/4]"]
_SEPARATORS = [", ", ", ", ", ", ",", " , ", ",  "]
_TAILS = ["", "", "", " # comment", "#c", "  ", " x", ","]


def emit_flow_document(choose: Choose) -> str:
    """A document of ``- {k: v, ...}`` items and ``key: {k: v, ...}`` values, mostly in the plain shape
    the fast path takes, with quotes, escapes, commas, braces, comments, anchors and tags mixed in."""

    rate = choose([0, 0, 1, 4, 20])  # in 40: how often a pair, separator or end is not the plain shape

    def odd() -> bool:
        return bool(choose(range(40)) < rate)

    def flow_map() -> str:
        pairs = []
        for _ in range(choose([1, 2, 3, 5, 7])):
            key = choose(_FLOW_KEYS if odd() else _FLOW_KEYS[:7])
            value = choose(_FLOW_VALUES if odd() else _USUAL_FLOW_VALUES)
            colon = choose([":  ", " : ", ":"]) if odd() else ": "
            pairs.append(f"{key}{colon}{value}")
        sep = choose(_SEPARATORS) if odd() else ", "
        ends = ("{ ", " }", choose(_TAILS)) if odd() else ("{", "}", "")
        return ends[0] + sep.join(pairs) + ends[1] + ends[2]

    lines = ["links:"]
    indent = choose(["", "  "])
    lines += [f"{indent}- {flow_map()}" for _ in range(choose([1, 2, 3]))]
    lines.append("hosts:")
    lines.append("  - name: gpu01")
    lines.append(f"    mgmt: {flow_map()}")
    lines.append("    nics:")
    lines += [f"      - {flow_map()}" for _ in range(choose([1, 2, 4]))]
    return "\n".join(lines) + "\n"


@st.composite
def _flow_document(draw: st.DrawFn) -> str:
    return emit_flow_document(lambda options: draw(st.sampled_from(list(options))))


@pytest.mark.slow  # ~15 s of CPU; the default run has the seeded test below (same generator, 1,000 documents)
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(_flow_document())
def test_generated_flow_mappings_agree(text: str) -> None:
    assert_agrees(text)


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_seeded_flow_mappings_agree_and_often_take_the_fast_path() -> None:
    """1,000 seeded flow-map documents agree with ruamel.yaml, and enough are read (else the check
    above compares little)."""
    rng = random.Random(20261201)
    accepted = sum(assert_agrees(emit_flow_document(lambda options: rng.choice(list(options))))
                   for _ in range(1000))
    assert accepted >= 400, accepted


def test_plain_flow_items_take_the_split_path_with_exact_lazy_positions() -> None:
    """The NIC/link line shape is read by split_pairs (positions worked out on demand), agrees with
    ruamel.yaml and its positions point at each key and value."""
    text = ("hosts:\n  - name: gpu01\n    nics:\n"
            '      - {model: connectx-7, netdev: ens1f0np0, speed: 400G, rail: 0, '
            'switch_port: "su0-leaf0:Ethernet0", cable_length: 40m}\n'
            "      - {model: connectx-7, netdev: ens2f0np0, speed: 400G, rail: 1, "
            "switch_port: 'su0-leaf1:Ethernet0', cable_length: 3m, mtu: 9000}\n")
    assert assert_agrees(text, must_accept=True)
    fast = fast_parse(text)
    assert fast is not None
    nics_pos = fast.pos["hosts"][4][0][2]["nics"][4]
    assert isinstance(nics_pos[1][2], SplitPos)
    speed = resolve_pos(nics_pos[1][2])["speed"]
    line5 = text.splitlines()[4]
    assert speed == (5, line5.index("speed: ") + 1, 5, line5.index("400G") + 1, None)
    assert fast.data["hosts"][0]["nics"][1] == {
        "model": "connectx-7", "netdev": "ens2f0np0", "speed": "400G", "rail": 1,
        "switch_port": "su0-leaf1:Ethernet0", "cable_length": "3m", "mtu": 9000}


@pytest.mark.parametrize("code", [*range(0x00, 0x20), 0x7F, 0x85, 0xA0, 0x2028, 0xFEFF, 0xE9])
def test_control_characters_decline_in_ascii_and_other_text(code: int) -> None:
    """A C0/C1 control, tab, BOM or YAML 1.1 line break sends the text to ruamel.yaml, in an ASCII text
    (checked by bytes.translate) as in any other (the regex); printable characters do not."""
    for tail in ("", " é"):
        text = f"a: x{chr(code)}y{tail}\n"
        declined = code not in (0xA0, 0xE9)
        if code in (0x0A, 0x0D):
            continue  # a line break: not a character inside a line
        assert (fast_parse(text) is None) == declined, (hex(code), tail)


@pytest.mark.parametrize("second", [
    '"l1:E4"', '"l1 E4"', '"l1,E4"', "\"l1'E4\"", '"l1\\\\E4"', '"l1\\"E4"', '""', '"l1:E4#x"', '"{l1}"',
    '"9999"', '"l1:E4", c: "x"'])
def test_items_differing_only_in_quoted_values_agree(second: str) -> None:
    """Items whose text outside the double quotes repeats an item read before (a NIC or link line with
    another endpoint) agree with ruamel.yaml whatever the new quoted text holds: a space, comma,
    single quote, backslash or escaped quote inside it is not taken from the first line's template."""
    text = ('links:\n  - {a: "l0:E0", b: "s0:E0", cable_length: 30m}\n'
            f'  - {{a: {second}, b: "s0:E1", cable_length: 30m}}\n'
            '  - {a: "l0:E8", b: "s0:E2", cable_length: 30m}\n'
            'hosts:\n  - name: g\n    nics:\n      - {rail: 0, switch_port: "l0:E0", cable_length: 3m}\n'
            '      - {rail: 0, switch_port: "l0:E1", cable_length: 3m}\n'
            '  - name: h\n    nics:\n      - {rail: 0, switch_port: "l0:E2", cable_length: 3m}\n'
            f'      - {{rail: 0, switch_port: {second}, cable_length: 3m}}\n'
            '      - {rail: 0, switch_port: "l0:E3", cable_length: 3m}\n')
    assert_agrees(text)
    fast = fast_parse(text)
    if fast is not None and second == '"l1:E4"':
        assert [n["switch_port"] for h in fast.data["hosts"] for n in h["nics"]] == [
            "l0:E0", "l0:E1", "l0:E2", "l1:E4", "l0:E3"]
        assert [link["a"] for link in fast.data["links"]] == ["l0:E0", "l1:E4", "l0:E8"]
        line3 = text.splitlines()[2]
        assert resolve_pos(fast.pos["links"][4][1][2])["cable_length"] == (
            3, line3.index("cable_length") + 1, 3, line3.index("30m") + 1, None)


@pytest.mark.parametrize("second", [
    '"10.0.0.2"', '"10.0.0.2 x"', '"10,2"', "\"a'b\"", '"a\\\\b"', '""', '"a", port: "22"', '"9"'])
def test_entries_and_first_items_differing_only_in_quoted_values_agree(second: str) -> None:
    """``key: {...}`` entries (``mgmt: {host: "..."}``) and the first item of a block sequence, read by
    the template of an earlier line with other quoted texts, agree with ruamel.yaml."""
    text = ('hosts:\n  - name: g\n    mgmt: {host: "10.0.0.1"}\n    nics:\n'
            '      - {rail: 0, switch_port: "l0:E0"}\n'
            f'  - name: h\n    mgmt: {{host: {second}}}\n    nics:\n'
            f'      - {{rail: 0, switch_port: {second}}}\n'
            '  - name: i\n    mgmt: {host: "10.0.0.3"}\n    mgmt: {host: "10.0.0.4"}\n    nics:\n'
            '    - {rail: 0, switch_port: "l0:E2"}\n')
    assert_agrees(text, must_accept=second in ('"10.0.0.2"', '""', '"9"'))
    fast = fast_parse(text)
    if fast is not None and second == '"10.0.0.2"':
        assert [h["mgmt"]["host"] for h in fast.data["hosts"]] == ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
        assert [n["switch_port"] for h in fast.data["hosts"] for n in h["nics"]] == [
            "l0:E0", "10.0.0.2", "l0:E2"]
        assert [i.rule for i in fast.issues] == ["RT002"]
        assert resolve_pos(fast.pos["hosts"][4][1][2]["mgmt"][4])["host"] == (7, 12, 7, 18, None)


# --- runs of template lines (many NIC / link lines read at once) -----------------------------------
#: one odd line in a run of same-template lines: other quoted texts (space, comma, quote, backslash,
#: escape, comment sign, empty), a comment, a blank, another shape, indentation or key order, a
#: duplicate key, a number too long to read, a trailing comment
_RUN_BREAKERS = [
    '{i}- {{rail: {r}, switch_port: "l0 E{n}", cable_length: 3m}}',
    '{i}- {{rail: {r}, switch_port: "l0,E{n}", cable_length: 3m}}',
    "{i}- {{rail: {r}, switch_port: \"l0'E{n}\", cable_length: 3m}}",
    '{i}- {{rail: {r}, switch_port: "l0\\\\E{n}", cable_length: 3m}}',
    '{i}- {{rail: {r}, switch_port: "l0\\"E{n}", cable_length: 3m}}',
    '{i}- {{rail: {r}, switch_port: "l0:E{n} #x", cable_length: 3m}}',
    '{i}- {{rail: {r}, switch_port: "", cable_length: 3m}}',
    '{i}- {{rail: {r}, switch_port: "l0:E{n}", cable_length: 3m}} # moved',
    "{i}# a comment between items",
    "",
    '{i}- {{switch_port: "l0:E{n}", rail: {r}, cable_length: 3m}}',
    '{i}- {{rail: {r}, switch_port: "l0:E{n}", cable_length: 3m, mtu: 9000}}',
    '{i}  - {{rail: {r}, switch_port: "l0:E{n}", cable_length: 3m}}',
    '{i}- {{rail: {r}, rail: {r}, switch_port: "l0:E{n}"}}',
    '{i}- {{rail: ' + "9" * 120 + ', switch_port: "l0:E{n}", cable_length: 3m}}',
    "{i}- {{rail: {r}, switch_port: 'l0:E{n}', cable_length: 3m}}",
    '{i}- {{rail: {r}, switch_port: l0:E{n}, cable_length: 3m}}',
    '{i}- {{rail: {r},  switch_port: "l0:E{n}", cable_length: 3m}}',
]


def emit_run_document(rng: random.Random) -> str:
    """Hosts with NIC lines and a links list, all from a few templates that differ only inside double
    quotes (the long runs :class:`_FlowLines` reads at once), with odd lines dropped in at random."""
    odd_rate = rng.choice([0.0, 0.02, 0.1, 0.3])
    nics = rng.choice([1, 2, 4, 8])

    def nic_lines(indent: str, host: int) -> list[str]:
        out = []
        for r in range(nics):
            n = host * nics + r
            if rng.random() < odd_rate:
                out.append(rng.choice(_RUN_BREAKERS).format(i=indent, r=r, n=n))
            else:
                out.append(f'{indent}- {{rail: {r}, switch_port: "l{r}:E{n}", cable_length: 3m}}')
        return out

    lines = ["hosts:"]
    for host in range(rng.choice([1, 3, 6])):
        lines += [f"  - name: g{host}", f'    mgmt: {{host: "10.0.0.{host}"}}', "    nics:"]
        lines += nic_lines(rng.choice(["      ", "      ", "    "]), host)
    lines.append("links:")
    for n in range(rng.choice([2, 9, 30])):
        if rng.random() < odd_rate:
            lines.append(rng.choice(_RUN_BREAKERS).format(i="  ", r=n, n=n))
        else:
            lines.append(f'  - {{a: "l0:E{n}", b: "s{n % 3}:E{n}", cable_length: 30m, media: optic}}')
    return "\n".join(lines) + rng.choice(["\n", ""])


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_seeded_runs_of_template_lines_agree() -> None:
    """300 seeded documents of NIC and link runs, each run possibly broken by odd lines, agree with
    ruamel.yaml (data, positions, issues), also with CRLF line ends; most are read by the fast path."""
    rng = random.Random(20261202)
    accepted = 0
    for _ in range(300):
        text = emit_run_document(rng)
        accepted += assert_agrees(text)
        assert_agrees(text.replace("\n", "\r\n"))
    assert accepted >= 150, accepted


def test_a_run_broken_by_one_odd_line_reads_the_lines_after_it() -> None:
    """A link run with a quoted space in its 3rd line: lines 1-2 and 4-6 are read as a run, the odd
    line one by one (a space is not a template value), and the positions after it are exact."""
    links = [f'  - {{a: "l0:E{n}", b: "s0:E{n}", cable_length: 30m}}' for n in range(6)]
    links[2] = '  - {a: "l0 E2", b: "s0:E2", cable_length: 30m}'
    text = "links:\n" + "\n".join(links) + "\n"
    assert assert_agrees(text, must_accept=True)
    fast = fast_parse(text)
    assert fast is not None
    assert [link["a"] for link in fast.data["links"]] == ["l0:E0", "l0:E1", "l0 E2", "l0:E3", "l0:E4",
                                                         "l0:E5"]
    line7 = text.splitlines()[6]
    assert resolve_pos(fast.pos["links"][4][5][2])["b"] == (7, line7.index("b: ") + 1, 7,
                                                            line7.index('"s0:E5"') + 1, None)


def test_runs_are_read_at_once_and_each_line_at_most_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of template lines go through _FlowLines.run, many lines per call; a long run with every
    other line odd is cut once (all its odd lines found in one pass), not read again from each odd line
    on (quadratic)."""
    from roce_tune.inventory import fastyaml

    taken: list[int] = []
    cuts: list[int] = []
    real_run, real_cut = fastyaml._FlowLines.run, fastyaml._FlowLines._cut_run

    def spy(self: Any, *args: Any) -> int:
        taken.append(real_run(self, *args))
        return taken[-1]

    def spy_cut(self: Any, *args: Any) -> int:
        cuts.append(args[2])
        return real_cut(self, *args)

    monkeypatch.setattr(fastyaml._FlowLines, "run", spy)
    monkeypatch.setattr(fastyaml._FlowLines, "_cut_run", spy_cut)
    links = [f'  - {{a: "l0:E{n}", b: "{"s0 E" if n % 2 else "s0:E"}{n}", cable_length: 30m}}'
             for n in range(400)]
    text = "links:\n" + "\n".join(links) + "\n"
    assert assert_agrees(text, must_accept=True)
    assert cuts == [399]  # lines 2-400 read once as a run, then each good line once more in a run of 1
    plain = "links:\n" + "\n".join(f'  - {{a: "l0:E{n}", b: "s0:E{n}"}}' for n in range(400)) + "\n"
    taken.clear()
    assert assert_agrees(plain, must_accept=True)
    assert max(taken) == 399  # the first line teaches the template, the other 399 go in one run
