"""README stays true: the two set-up commands, the CI hook-up, and every lint rule documented."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from roce_tune.inventory.lint import rules_markdown

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
MAIN_CMD = "python3 -m pip install . && roce-tune plan inventories/site.yaml"
PYTEST_CMD = "python3 -m pytest -q -n auto --dist loadgroup"
TEST_CMD = f"python3 -m pip install -e '.[test]' && {PYTEST_CMD}"


def test_two_commands_present_and_ci_runs_the_test_command() -> None:
    assert MAIN_CMD in README
    assert TEST_CMD in README
    ci = (REPO / ".ci" / "run").read_text()
    assert "python3 -m pip install -q -e '.[test]'" in ci
    # README's command (addopts leave out slow and netbox), then each excluded set as its own step
    assert [ln.strip() for ln in ci.splitlines() if "-m pytest" in ln] == [
        PYTEST_CMD, f"{PYTEST_CMD} -m slow", "python3 -m pytest -q -m netbox tests/netbox"]
    assert "-m 'not netbox and not slow'" in (REPO / "pyproject.toml").read_text()


def test_the_inventory_format_example_lints_and_plans_as_its_comments_say(tmp_path: Path) -> None:
    """README's illustration of the format "lints and plans as shown": run both on it and check what its
    comments promise (TOS 106, host/RoCE MTU, the range's two ports, the pinned Kmax)."""
    import subprocess
    import sys

    section = README.split("\n## The inventory\n", 1)[1].split("\n## ", 1)[0]
    example = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    inv = tmp_path / "lab.yaml"
    inv.write_text(example)
    cli = [sys.executable, "-m", "roce_tune.cli"]
    lint = subprocess.run([*cli, "lint", str(inv), "--format", "json"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert not [f for f in json.loads(lint.stdout) if f["severity"] != "info"], lint.stdout
    out = tmp_path / "out"
    plan = subprocess.run([*cli, "plan", str(inv), "--out", str(out), "--no-scorecard"], capture_output=True,
                          text=True, timeout=300, check=False)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "NCCL_IB_TC=106\n" in (out / "nccl.env").read_text()
    from roce_tune.plan import plan_from_json

    p = plan_from_json((out / "plan.json").read_text())
    (sw,) = p.switches
    assert [port.name for port in sw.ports] == ["Ethernet0", "Ethernet8"]
    (nic,) = p.hosts[0].nics
    assert (nic.mtu, nic.roce_mtu, nic.roce_tos) == (9000, 4096, 106)
    (ecn,) = sw.ecn_profiles
    assert ecn.kmax_bytes == 400_000 and ecn.rationale["kmax_bytes"].pinned_by_user
    assert p.policy["headroom_model"] == "ieee"


def test_plan_json_has_the_change_fields_readme_names(tmp_path: Path) -> None:
    """README: "`--format json`: `changed` ..., `changed_files` ... and `removed_files`" are fields of the
    summary `plan --format json` prints (what playbooks/plan.yml reads)."""
    import subprocess
    import sys

    clause = " ".join(README.split()).split("`--format json`:", 1)[1].split("`playbooks/plan.yml`", 1)[0]
    named = re.findall(r"`([a-z_]+)`", clause)
    assert {"changed", "changed_files", "removed_files"} <= set(named), clause
    lab = str(REPO / "inventories" / "lab-2node.yaml")
    proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan", lab,
                           "--out", str(tmp_path / "out"), "--no-scorecard", "--format", "json"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert set(named) <= set(summary), f"README names {set(named) - set(summary)}, not in plan --format json"
    # what README says each field is (it called restored_files a list; it is a count)
    listed = re.search(r"the lists ((?:`[a-z_]+`[^`]*?)+?), and `restored_files`, the number", clause)
    assert listed, clause
    assert all(isinstance(summary[f], list) for f in re.findall(r"`([a-z_]+)`", listed.group(1)))
    assert isinstance(summary["changed"], bool) and type(summary["restored_files"]) is int
    assert summary["changed"] is True and "plan.json" in summary["changed_files"]


def _command_lines(text: str) -> list[str]:
    """Every ``roce-tune ...`` command of a Markdown text: inline code spans (also the table's ``calc ...``,
    ``simulate ...`` and ``import ...`` continuations) and lines of code blocks, comments cut off; split at
    ``&&``, ``;`` and a shell pipe (not at a synopsis's ``(--from DIR | --live)``)."""
    spans = re.findall(r"`((?:roce-tune|calc|simulate|import) [^`]*)`", text)
    spans += re.findall(r"^\s*(roce-tune .*)$", text, re.M)
    parts = (part.split()
             for span in spans for part in re.split(r"&&|\s\|\s(?!-)|;", span.split(" #")[0]))
    return [" ".join(w if w[0] == "roce-tune" else ["roce-tune", *w]) for w in parts if w]


def test_every_flag_the_docs_give_a_command_exists() -> None:
    """README and docs/*.md name only options the command they are written after has (as --help lists)."""
    import typer

    from roce_tune.cli import app

    root = typer.main.get_command(app)
    wrong = set()
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    lines = [(doc.name, line) for doc in docs for line in _command_lines(doc.read_text(encoding="utf-8"))]
    assert len(lines) > 80
    for doc, line in lines:
        words = line.split()[1:]
        cmd = root
        while words and words[0] in getattr(cmd, "commands", {}):
            cmd = cmd.commands[words.pop(0)]  # type: ignore[attr-defined]
        known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
        if cmd is root:
            known |= {"--install-completion", "--show-completion"}
        for w in words:
            flag = re.match(r"[\[(]*(--[a-z][a-z-]*)", w)
            if flag and flag.group(1) not in known:
                wrong.add(f"{doc}: {flag.group(1)} in {line!r}")
    assert not wrong, "\n".join(sorted(wrong))


def test_a_marker_expression_readme_gives_keeps_slow_and_netbox_out(tmp_path: Path) -> None:
    """A ``-m`` on the command line replaces pyproject's ``addopts`` one, so an expression README offers for
    leaving tests out (``not emulator``) must itself keep out what ``addopts`` did (slow, netbox)."""
    import subprocess
    import sys

    quick = " ".join(README.split("## Quick start", 1)[1].split("\n## ", 1)[0].split())
    exprs = [e for e in re.findall(r'-m "([^"]+)"', quick) if e.startswith("not ")]
    assert exprs, "README no longer offers a -m expression that leaves tests out"
    for expr in exprs:
        proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                               "no:cacheprovider", "-m", expr, "tests/netbox", "tests/test_readme.py"],
                              cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode in (0, 5), proc.stdout + proc.stderr
        ids = [ln for ln in proc.stdout.splitlines() if "::" in ln]
        assert ids and not [i for i in ids if i.startswith("tests/netbox") or "loopback_emulator_recipe" in i
                            or "python_311" in i], f"-m {expr!r} collects slow or netbox tests: {ids}"


def _lldp_evidence_not_shown(doc: str) -> list[str]:
    """Capture files an LLDP rule example's report cites that the example neither shows nor names."""
    missing = []
    for rid, body in _sections(doc, "###").items():
        if "LLDP capture" not in body:
            continue
        report = body.split("Reports", 1)[1].split("Fixed:", 1)[0]
        named = set(re.findall(r"`([\w.-]+\.txt)`", body.split("```text", 1)[0] + report.split("```", 1)[0]))
        named |= set(re.findall(r"LLDP capture `([\w.-]+\.txt)`", body))
        missing += [f"{rid}: {f}" for f in re.findall(r"lldp/([\w.-]+\.txt)", report) if f not in named]
    return missing


def test_lldp_rule_examples_name_every_capture_their_report_cites() -> None:
    """A reader who runs ``lint --lldp`` on an LLDP rule's example gets its report only with every capture
    it cites: the example shows each such file or says it is there too."""
    assert not _lldp_evidence_not_shown((REPO / "docs" / "lint-rules.md").read_text(encoding="utf-8"))


def _bracketed_options_in_shell_blocks(text: str) -> list[str]:
    """Lines of ``sh``/``bash`` code blocks with a synopsis's ``[--option]`` (copied, the shell passes the
    brackets on and the command fails)."""
    return [ln for body in re.findall(r"```(?:sh|bash)\n(.*?)```", text, re.S) for ln in body.splitlines()
            if "[--" in ln.split(" #")[0]]


def test_shell_blocks_run_as_copied() -> None:
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    bad = [f"{d.name}: {ln}" for d in docs for ln in _bracketed_options_in_shell_blocks(d.read_text())]
    assert not bad, "\n".join(bad)


def test_the_plan_directory_is_named_as_readme_says(tmp_path: Path) -> None:
    """README: the plan directory is ``out/<inventory name>/`` (the file's name, not the site's)."""
    import os
    import subprocess
    import sys

    assert "**The plan directory** (`out/<inventory name>/`" in README
    # site lab-2node, file fabric.yaml
    (tmp_path / "fabric.yaml").write_text((REPO / "inventories" / "lab-2node.yaml").read_text())
    proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "plan", "fabric.yaml", "--no-scorecard"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "fabric" / "plan.json").is_file()


def test_derivation_lists_the_headroom_models_an_inventory_accepts() -> None:
    """docs/derivation.md's "`policy.headroom_model` chooses one of:" list is exactly the schema's values."""
    doc = (REPO / "docs" / "derivation.md").read_text(encoding="utf-8")
    listed = doc.split("`policy.headroom_model` chooses one of:", 1)[1].split("\n\n", 2)[1]
    names = re.findall(r"^- \*\*`([a-z-]+)`\*\*", listed, re.M)
    schema = json.loads((REPO / "schema" / "inventory.schema.json").read_text())
    assert names and set(names) == set(schema["$defs"]["HeadroomModel"]["enum"])


def test_ansible_and_ci_doc_is_readmes_section() -> None:
    """docs/ansible-and-ci.md is README's "Ansible, CI and packaging" section one heading level up (it had
    drifted: an old extras list, a host push the tests no longer leave out)."""
    start = README.index("## Ansible, CI and packaging")
    section = README[start:README.index("\n## Lint rules", start) + 1]
    promoted = re.sub(r"^#(#+) ", r"\1 ", section, flags=re.M)
    assert (REPO / "docs" / "ansible-and-ci.md").read_text(encoding="utf-8") == promoted.rstrip("\n") + "\n"


def test_packaging_lists_every_extra_and_its_packages() -> None:
    """README's "Packaging" bullet names each extra of pyproject.toml and every package in it."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    line = next(ln for ln in README.splitlines() if ln.startswith("- The extras are "))
    for extra, reqs in extras.items():
        said = re.search(rf"`{extra}` \(([^)]*(?:\([^)]*\)[^)]*)*)\)", line)
        assert said, f"README's Packaging does not name the {extra!r} extra"
        for req in reqs:
            name = re.split(r"[<>=!~\[;]", req, maxsplit=1)[0].strip()
            assert name in said.group(1), f"README's {extra!r} extra does not list {name}"


def test_the_test_command_installs_what_the_test_extra_builds_with() -> None:
    """libyang==2.8.0 (test extra) is a CFFI extension with no wheel on PyPI: pip compiles it against
    libyang2-dev, which needs a C compiler and the Python headers ("You need ... Python development
    headers, GCC", https://pypi.org/project/libyang/). A fresh Debian has neither. README's apt line and
    .ci/run's install the same packages."""
    readme_apt = set(re.search(r"apt-get install -y ([^&]+)&&", README).group(1).split())
    ci = (REPO / ".ci" / "run").read_text()
    ci_apt = set(re.search(r"apt-get install -y -qq ([^>]+)>", ci).group(1).split())
    assert {"libyang2-dev", "gcc", "python3-dev"} <= readme_apt
    assert readme_apt == ci_apt


def _sections(text: str, level: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in re.finditer(
        rf"^{level} (RT\d{{3}})\n(.*?)(?=^#{{2,4}} |\Z)", text, re.M | re.S)}


def test_every_rule_documented_with_bad_and_fixed_examples() -> None:
    generated = _sections(rules_markdown(), "###")
    in_readme = _sections(README, "####")
    assert len(generated) >= 25
    assert set(in_readme) == set(generated)
    for rid, body in generated.items():
        assert in_readme[rid] == body, f"README's section for {rid} is out of date (regenerate)"
        if rid.startswith("RT1"):
            assert "Bad:" in body and "Fixed:" in body, f"{rid} lacks a bad or a fixed example"


def test_readme_rules_match_the_generated_docs() -> None:
    generated = rules_markdown()
    for block in re.findall(r"```yaml\n(.*?)```", generated, re.S):
        assert block in README, ("README's lint rule examples are out of date: regenerate from "
                                 "rules_markdown()")


@pytest.mark.slow
def test_the_test_command_collects_without_the_python_311_stdlib(tmp_path: Path) -> None:
    """README's Quick start says Python >= 3.10 (pyproject: requires-python >= 3.10): every test module must
    import there, so none may need ``tomllib`` (3.11+) at import time. Python 3.10 is simulated by hiding
    ``tomllib`` once pytest itself has read its configuration."""
    import os
    import subprocess
    import sys

    (tmp_path / "hide_tomllib.py").write_text(
        "import sys\n\n\ndef pytest_configure(config):\n    sys.modules['tomllib'] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "hide_tomllib",
                           "-p", "no:cacheprovider", "tests"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


@pytest.mark.slow
def test_the_loopback_emulator_recipe_runs_as_written(tmp_path: Path) -> None:
    """Run README's "Try it on loopback emulators" commands: dry run shows changes, push, verify passes."""
    import os
    import shlex
    import shutil
    import signal
    import subprocess
    import sys

    section = README.split("## Try it on loopback emulators", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in re.search(r"```bash\n(.*?)```", section, re.S).group(1).splitlines() if ln.strip()]
    assert lines[0].endswith("&") and lines[-1] == "kill %1"
    (tmp_path / "inventories").symlink_to(REPO / "inventories")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for word in shlex.split(lines[1])[1:]:
        key, _, value = word.partition("=")
        env[key] = value
    cli = [sys.executable, "-m", "roce_tune.cli"] if shutil.which("roce-tune") is None else ["roce-tune"]
    lab = subprocess.Popen([sys.executable if w == "python" else w for w in shlex.split(lines[0][:-1])],
                           cwd=tmp_path, env={**env, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                           text=True,
                           start_new_session=True)
    try:
        assert lab.stdout is not None
        for _ in range(3):  # one "listening" line per device, then the inventory and the hint
            assert lab.stdout.readline().startswith("listening 127.0.0.1:")
        results = []
        for line in lines[2:-1]:
            argv = shlex.split(line)
            assert argv[0] == "roce-tune"
            results.append(subprocess.run([*cli, *argv[1:]], cwd=tmp_path, env=env, capture_output=True,
                                          text=True,
                                          timeout=600, check=False))
        plan, dry, push, verify = results
        assert plan.returncode == 0, plan.stderr
        assert dry.returncode == 0 and "would-change" in dry.stdout, dry.stdout + dry.stderr
        assert push.returncode == 0 and "pushed" in push.stdout, push.stdout + push.stderr
        assert verify.returncode == 0 and "PASS" in verify.stdout.upper(), verify.stdout + verify.stderr
        assert (tmp_path / "out" / "lab-2node" / "verify").is_dir()
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        lab.wait(timeout=30)


def _ansible_section() -> str:
    start = README.index("## Ansible, CI and packaging")
    return README[start:README.index("\n## Lint rules", start)]


def test_every_ansible_variable_the_playbooks_default_is_documented() -> None:
    """A variable a playbook reads with ``| default(...)`` is a knob the operator sets with ``-e``: README's
    Ansible section names each one (``roce_tune_host_serial`` and the play groups were not named)."""
    read = set()
    for yml in sorted((REPO / "playbooks").rglob("*.yml")):
        read |= set(re.findall(r"\b(roce_tune_\w+) *\| *default\(", yml.read_text(encoding="utf-8")))
    assert {"roce_tune_serial", "roce_tune_confirm_min"} <= read  # the scan still finds them
    section = _ansible_section()
    missing = sorted(v for v in read if f"`{v}`" not in section)
    assert not missing, f"README's Ansible section does not name {missing}"


def _push_serials(extra_vars: dict[str, object]) -> dict[str, object]:
    """Each play of playbooks/push.yml -> its ``serial`` as Ansible gets it with these extra vars (the play's
    own Jinja2 expression rendered, then read as the literal list Ansible makes of it)."""
    import ast

    import jinja2
    from ruamel.yaml import YAML

    plays = YAML(typ="safe").load((REPO / "playbooks" / "push.yml").read_text(encoding="utf-8"))
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    return {play["name"]: ast.literal_eval(env.from_string(str(play["serial"])).render(**extra_vars))
            for play in plays if "serial" in play}


#: push.yml's play of the switches whose change is disruptive (-e roce_tune_allow_disruptive=true)
ONE_AT_A_TIME_PLAY = "Push switch configs with a disruptive change, one switch at a time"


def test_roce_tune_serial_stages_every_push_play() -> None:
    """README: ``-e '{"roce_tune_serial": [1, 5, "50%"]}'`` sets the staged rollout. The host play read only
    ``roce_tune_host_serial``, so GPU hosts were still pushed one, then 25 % at a time."""
    defaults = _push_serials({})
    assert defaults.pop(ONE_AT_A_TIME_PLAY) == 1  # one switch at a time, whatever the staging
    assert len(defaults) == 2 and set(map(str, defaults.values())) == {"[1, '25%']"}
    staged = _push_serials({"roce_tune_serial": [1, 5, "50%"]})
    assert staged.pop(ONE_AT_A_TIME_PLAY) == 1
    assert set(map(str, staged.values())) == {"[1, 5, '50%']"}
    both = _push_serials({"roce_tune_serial": [1, 5, "50%"], "roce_tune_host_serial": [2]})
    assert both == {"Push switch configs": [1, 5, "50%"], ONE_AT_A_TIME_PLAY: 1,
                    "Push host (NIC) scripts": [2]}


def test_the_intent_example_is_rail_500s_fabric() -> None:
    """README: ``inventories/intent/`` holds "the 500-host example above": the example is that file's
    ``fabric:`` section, value for value (the example had lost the uplinks' ``media: optic``)."""
    from ruamel.yaml import YAML

    section = README.split("### A whole fabric in a few lines", 1)[1].split("\n### ", 1)[0]
    assert "the 500-host example above" in " ".join(section.split())
    example = YAML(typ="safe").load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))
    shipped = YAML(typ="safe").load((REPO / "inventories" / "intent" / "rail-500.yaml").read_text())
    assert example == {"fabric": shipped["fabric"]}


def test_the_plan_files_the_docs_name_are_written(tmp_path: Path) -> None:
    """Every ``out/site/<file>`` README and docs/ name as an example is a file ``plan`` writes for site.yaml
    (README named ``out/site/switches/leaf1.cfg``; site.yaml's leaf1 is SONiC, ``leaf1.json``)."""
    import subprocess
    import sys

    docs = [README, *(d.read_text(encoding="utf-8") for d in sorted((REPO / "docs").glob("*.md")))]
    named = {m for d in docs for m in re.findall(r"`out/site/([\w./-]+\.\w+)`", d)}
    assert "switches/leaf1.json" in named
    out = tmp_path / "site"
    site = str(REPO / "inventories" / "site.yaml")
    cmd = [sys.executable, "-m", "roce_tune.cli", "plan", site, "--out", str(out), "--no-scorecard"]
    proc = subprocess.run(cmd,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert not sorted(f for f in named if not (out / f).is_file())


def test_every_explain_example_runs_as_written(tmp_path: Path) -> None:
    """Each ``roce-tune explain ...`` README and docs/ give runs: its first argument is an inventory (the
    derivation page's ``roce-tune explain DEVICE:PORT pfc_trigger_bytes`` gave the port as the inventory,
    exit 2). Placeholders are filled with lab-2node.yaml's lab-leaf1:Ethernet0."""
    import subprocess
    import sys

    docs = [README, *(d.read_text(encoding="utf-8") for d in sorted((REPO / "docs").glob("*.md")))]
    spans = {s for d in docs for s in re.findall(r"`roce-tune explain ([^`\[]+)`", d)}
    assert len(spans) >= 3, spans
    fill = {"INVENTORY": str(REPO / "inventories" / "lab-2node.yaml"), "DEVICE:PORT": "lab-leaf1:Ethernet0"}
    for span in sorted(spans):
        words = [fill.get(w, w) for w in span.split()]
        if not Path(words[0]).is_absolute():
            words[0] = str(REPO / words[0])
        proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "explain", *words, "--no-scorecard"],
                              capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
        assert proc.returncode == 0, f"roce-tune explain {span}: {proc.stdout}{proc.stderr}"
        assert f"{words[-1]} = " in proc.stdout, proc.stdout


def _rule_ids_named(text: str) -> set[str]:
    """Rule ids a text names, one by one or as a range (``RT230–RT239``, ``RT130-RT135``)."""
    named = set(re.findall(r"\bRT\d{3}\b", text))
    for lo, hi in re.findall(r"\bRT(\d{3})\s*[–-]\s*RT(\d{3})\b", text):
        named |= {f"RT{n:03d}" for n in range(int(lo), int(hi) + 1)}
    return named


def test_every_rule_roce_tune_reports_is_documented() -> None:
    """A finding's rule id is what an engineer searches the docs for: every id the package can report is
    named in README or docs/ (RT220-RT222, RT252 and the verify diagnoses RT300-RT331 were named nowhere)."""
    emitted: set[str] = set()
    for path in (REPO / "roce_tune").rglob("*.py"):
        emitted |= set(re.findall(r"""["'](RT\d{3})["']""", path.read_text(encoding="utf-8")))
    assert {"RT001", "RT101", "RT222", "RT310", "RT423"} <= emitted  # the scan reaches every family
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    named = set().union(*(_rule_ids_named(d.read_text(encoding="utf-8")) for d in docs))
    assert not sorted(emitted - named)


def test_readmes_command_table_names_every_command() -> None:
    """README's command table is where a new user meets the CLI: every command and sub-command has a row
    (``import netbox`` had none)."""
    import typer

    from roce_tune.cli import app

    def walk(cmd: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        subs = getattr(cmd, "commands", {})
        return [p for name, sub in subs.items() for p in [(*prefix, name), *walk(sub, (*prefix, name))]]

    table = README.split("| command | what |", 1)[1].split("\n\n", 1)[0]
    rows = table.splitlines()  # a row may name sub-commands in its text too (`calc ecn ...`)
    missing = []
    for path in walk(typer.main.get_command(app)):
        *group, name = path
        pattern = r"`(?:roce-tune )?" + "".join(rf"{g} " for g in group) + rf"(?:[\w-]+\\\|)*{name}\b"
        if not any(re.search(pattern, row) for row in rows):
            missing.append(" ".join(path))
    assert not missing, f"README's command table has no row for {missing}"


def test_every_docs_link_and_cited_section_resolves() -> None:
    """Links between README and docs/ (``[x](docs/intent.md)``, ``(#simulating-roce-tune-simulate)``,
    ``(lint-rules.md#lldp-cabling-rules)``) and every ``docs/<page>.md#<section>`` a message, rationale or
    docstring under roce_tune/ cites lead to a file and a heading that exist (GitHub's anchors)."""
    from tests.tuner.test_citations import _anchors

    broken = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        prose = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S)
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]+))?\)", prose):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            page = (doc.parent / target) if target else doc
            if not page.exists() or (anchor and anchor not in _anchors(page)):
                broken.append(f"{doc.name}: ({target}#{anchor})")
    cited = 0
    for path in sorted((REPO / "roce_tune").rglob("*.py")):
        for page, anchor in re.findall(r"\b(docs/[\w.-]+\.md)#([\w-]+)", path.read_text(encoding="utf-8")):
            cited += 1
            if not (REPO / page).is_file() or anchor not in _anchors(REPO / page):
                broken.append(f"{path.relative_to(REPO)}: {page}#{anchor}")
    assert cited > 20  # the scan still finds the citations
    assert not broken, "\n".join(sorted(set(broken)))
