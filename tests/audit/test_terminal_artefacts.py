"""Captures as terminals and loggers really write them: ``script``/PuTTY logs (``\\r\\r\\n``), colour codes,
pager prompts (``--More--`` with backspaces, Junos ``---(more)---``), a Windows BOM or UTF-16 file. Values
are read and evidence lines count ``\\n`` the way an editor and ``grep -n`` do."""

from __future__ import annotations

from pathlib import Path

from roce_tune.audit import audit_dir
from roce_tune.captures import read_capture
from tests.audit.conftest import ev, rules

MLNX_QOS_NO_PFC = ["root@gpu01:~# mlnx_qos -i ens1f0np0", "Priority trust state: dscp", "PFC configuration:",
                   "        priority    0   1   2   3   4   5   6   7",
                   "        enabled     0   0   0   0   0   0   0   0"]
PFC_TABLES = ["admin@leaf1:~$ show pfc counters",
              "     Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7",
              "-----------  ------  ------  ------  ------  ------  ------  ------  ------",
              "  Ethernet0       0       0       0       5       0       0       0       0",
              "",
              "    Port Tx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7",
              "-----------  ------  ------  ------  ------  ------  ------  ------  ------",
              "  Ethernet0       0       0       0       7       0       0       0       0"]


def _rt420_line(tmp_path: Path, raw: bytes) -> list[str]:
    (tmp_path / "gpu01.txt").write_bytes(raw)
    return ev(rules(audit_dir(tmp_path))["RT420"][0])


def test_script_log_line_endings_keep_editor_line_numbers(tmp_path: Path) -> None:
    # `script` and PuTTY session logs end lines with \r\r\n: one line each, as grep -n counts them
    raw = ("Script started on 2026-12-01 10:00:00+00:00\n" + "\r\r\n".join(MLNX_QOS_NO_PFC) + "\r\r\n")
    assert _rt420_line(tmp_path, raw.encode()) == ["gpu01.txt:6"]


def test_windows_bom_and_utf16_captures_are_read(tmp_path: Path) -> None:
    text = "\r\n".join(MLNX_QOS_NO_PFC) + "\r\n"
    assert _rt420_line(tmp_path, b"\xef\xbb\xbf" + text.encode()) == ["gpu01.txt:5"]
    # PowerShell 5 `ssh gpu01 mlnx_qos ... > gpu01.txt` writes UTF-16LE with a BOM
    assert _rt420_line(tmp_path, text.encode("utf-16")) == ["gpu01.txt:5"]


def test_colour_codes_do_not_hide_a_table(tmp_path: Path) -> None:
    lines = list(PFC_TABLES)
    lines[0] = "\x1b[01;32madmin@leaf1\x1b[00m:\x1b[01;34m~\x1b[00m$ show pfc counters"
    lines[1] = "\x1b[1m" + lines[1] + "\x1b[0m"
    lines[3] = lines[3].replace("       5", "\x1b[31m       5\x1b[0m")
    (tmp_path / "leaf1.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = audit_dir(tmp_path)
    port = r.data.switches["leaf1"].ports["Ethernet0"]
    assert port["pfc_rx_prio3"].value == 5 and str(port["pfc_rx_prio3"].ev) == "leaf1.txt:4"
    assert port["pfc_tx_prio3"].value == 7 and str(port["pfc_tx_prio3"].ev) == "leaf1.txt:8"
    assert not r.data.unparsed


def test_pager_prompts_are_not_part_of_the_output(tmp_path: Path) -> None:
    cisco_more = " --More-- " + "\b" * 10 + " " * 10 + "\b" * 10
    lines = list(PFC_TABLES)
    lines[3] = cisco_more + lines[3]  # NX-OS/EOS: the pager's prompt erased by backspaces
    lines[7] = "---(more 52%)---\r" + " " * 40 + "\r" + lines[7]  # Junos: erased by a carriage return
    (tmp_path / "leaf1.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    port = audit_dir(tmp_path).data.switches["leaf1"].ports["Ethernet0"]
    assert port["pfc_rx_prio3"].value == 5 and port["pfc_tx_prio3"].value == 7
    # a log that dropped the control characters keeps the bare prompt on the row's line
    (tmp_path / "leaf1.txt").write_text("\n".join(PFC_TABLES[:3] + [" --More-- " + PFC_TABLES[3]]
                                                  + PFC_TABLES[4:]) + "\n", encoding="utf-8")
    port = audit_dir(tmp_path).data.switches["leaf1"].ports["Ethernet0"]
    assert port["pfc_rx_prio3"].value == 5


def test_block_lines_are_clean_text(tmp_path: Path) -> None:
    f = tmp_path / "gpu01.txt"
    f.write_bytes(b"root@gpu01:~# ethtool -S ens1f0np0\r\r\n     rx_prio3_pause: 4\x1b[K\r\r\n")
    (block,) = read_capture(f, tmp_path)
    assert block.command == "ethtool -S ens1f0np0" and block.lines == [(2, "     rx_prio3_pause: 4")]


def test_junos_context_lines_and_empty_prompts_are_not_output(tmp_path: Path) -> None:
    """Junos prints ``{master:0}`` above each prompt of a Virtual Chassis / dual-RE box, and a capture ends
    at a prompt with no command: neither is output nobody understood."""
    queue = (Path(__file__).resolve().parents[1] / "verify" / "fixtures" / "switch"
             / "junos-show-interfaces-queue-et-0-0-12.txt").read_text().splitlines()[1:]
    lines = ["{master:0}", "netops@leaf3> show interfaces queue et-0/0/12 | no-more", *queue, "",
             "{master:0}", "netops@leaf3> ", "root@gpu01:~# ", "root@gpu01:~# ethtool -S ens1f0np0",
             "     tx_prio3_pause: 3", "root@gpu01:~#"]
    (tmp_path / "spine-n2.txt").write_text("spine-n2# show interface priority-flow-control\n"
                                           "Port               Mode Oper(VL bmap)  RxPPP      TxPPP\n"
                                           "Ethernet1/7        On   On  (8)       131        52904\n"
                                           "spine-n2#\n")
    (tmp_path / "leaf3.txt").write_text("\n".join(lines[:len(queue) + 5]) + "\n")
    (tmp_path / "gpu01.txt").write_text("\n".join(lines[len(queue) + 5:]) + "\n")
    r = audit_dir(tmp_path)
    assert not r.data.unparsed, r.data.unparsed
    assert r.data.switches["leaf3"].ports["et-0/0/12"]
    assert r.data.hosts["gpu01"].nics["ens1f0np0"].ethtool["tx_prio3_pause"].value == 3


def test_prompts_with_a_git_branch_split_blocks(tmp_path: Path) -> None:
    """A bash prompt showing a git branch (``__git_ps1 " (%s)"``: ``(main)``, ``(feature/y *+)``, detached
    ``((a1b2c3d...))``) is a prompt: its command starts a new block and a bare one ends a block (each merged
    into the block above, so the command's output was read as the previous command's). Output lines that
    look alike (an e-mail address with a name, a Junos-like ``>``) stay output."""
    from roce_tune.captures import prompt_host

    cap = tmp_path / "gpu01.txt"
    cap.write_text("root@gpu01:/opt/ansible (main)# mlnx_qos -i ens1f0np0\nPFC configuration:\n"
                   "user@gpu01:~/x (feature/y *+)$ ethtool -S ens1f0np0\n     rx_prio3_pause: 0\n"
                   "root@gpu01:/p ((a1b2c3d...))# cat /sys/class/net/ens1f0np0/mtu\n9000\n"
                   "owner: admin@example.com (Jane Doe) > 3 days\n"
                   "admin@example.com (Jane Doe) > 3 days\n"
                   "root@gpu01:/p (main|REBASE 1/2)#\n")
    blocks = read_capture(cap, tmp_path)
    assert [(b.command, b.prompt_line) for b in blocks] == [
        ("mlnx_qos -i ens1f0np0", 1), ("ethtool -S ens1f0np0", 3),
        ("cat /sys/class/net/ens1f0np0/mtu", 5)]
    assert [t for _, t in blocks[2].lines] == ["9000", "owner: admin@example.com (Jane Doe) > 3 days",
                                               "admin@example.com (Jane Doe) > 3 days"]
    assert prompt_host("root@gpu01.lab:/opt (main)# ls") == "gpu01"
