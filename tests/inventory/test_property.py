"""Property: whatever is done to a valid inventory, loading either succeeds or raises RoceTuneError
whose findings all carry a line and a column; never any other exception."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roce_tune.findings import RoceTuneError
from roce_tune.inventory.lint import lint
from roce_tune.inventory.loader import load_inventory_text

BASE = """\
# yaml-language-server: $schema=../schema/inventory.schema.json
site:
  name: lab
  rail_optimised: true
policy: {lossless_priorities: [3], roce_dscp: [26], cnp_dscp: 48, cnp_priority: 6, mtu: 9216}
defaults:
  cable_length: 3m
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
    rail: 0
    ports:
      - {name: 'Ethernet[0-124/4]', speed: 400G}
      - name: Ethernet128
        speed: 100G
        mtu: 9216
  - {name: spine1, platform: sonic, model: SN4700, role: spine, ports: [{name: Ethernet0, speed: 400G}]}
links:
  - {a: 'leaf1:Ethernet120', b: 'spine1:Ethernet0', cable_length: 40m}
hosts:
  - name: gpu01
    mtu: 9000
    nics:
      - model: connectx-7
        netdev: ens1f0np0
        rdma_device: mlx5_0
        speed: 400G
        rail: 0
        switch_port: leaf1:Ethernet0
        cable_length: "3m"
      - {model: connectx-7, netdev: ens2f0np0, rdma_device: mlx5_1, speed: 400G, \
switch_port: 'leaf1:Ethernet4'}
"""
LINES = BASE.split("\n")
JUNK = st.one_of(
    st.text(max_size=10),  # any unicode
    st.sampled_from(["- ", ": ", "{", "}", "[", "]", "&a ", "*a", "<<: *a",
                     "!!python/object:os.system ", "!x ",
                     '"', "'", "#", "\t", "  ", "\n", "---", "|", ">", "? ", "%YAML 1.2", "\r", "\x00",
                     "\ufeff",
                     "9" * 5000, "1e999", ".inf", "-.nan", "0x" + "f" * 300, "~", "null", "yes",
                     "eth0; reboot",
                     "$(reboot)", "\u2028", "é✓机"]),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
)


@st.composite
def line_mutations(draw: st.DrawFn, base_lines: list[str], junk: st.SearchStrategy[str]) -> str:
    """1-4 edits of a YAML text's lines (drop, insert junk, truncate, duplicate, replace a value, change a
    scalar into a list/mapping or back): the structure mutations every loader fuzz test uses."""
    lines = list(base_lines)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["drop", "insert", "truncate", "duplicate", "replace_value", "retype"]))
        if op == "drop":
            del lines[i]
        elif op == "insert":
            j = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:j] + draw(junk) + lines[i][j:]
        elif op == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif op == "duplicate":
            lines.insert(i, lines[draw(st.integers(0, len(lines) - 1))])
        elif op == "replace_value" and ": " in lines[i]:
            lines[i] = f"{lines[i].split(': ', 1)[0]}: {draw(junk)}"
        else:  # a scalar where a list or mapping was, or the reverse
            lines[i] = lines[i].replace(": ", draw(st.sampled_from([": [", ": {", ": 7 ", ":", ": - "])), 1)
    return "\n".join(lines)


def mutated() -> st.SearchStrategy[str]:
    """:func:`line_mutations` of this module's base inventory."""
    return line_mutations(LINES, JUNK)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_load_succeeds_or_reports_positioned_findings(text: str) -> None:
    try:
        loaded = load_inventory_text(text, "fuzz.yaml")
    except RoceTuneError as exc:
        assert exc.findings
        for f in exc.findings:
            assert f.location.line is not None and f.location.line >= 1, f
            assert f.location.col is not None and f.location.col >= 1, f
            assert f.rule.startswith("RT0") and f.message
        return
    for f in lint(loaded):  # a loadable inventory also lints without an exception, positioned
        assert f.location.line is not None and f.location.col is not None, f
