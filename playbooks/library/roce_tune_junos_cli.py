#!/usr/bin/python
"""Ansible module: Junos private-candidate load + commit confirmed over network_cli (one CLI session).

Why a module: ``junipernetworks.junos.junos_config`` needs NETCONF (it calls the load-configuration and
lock RPCs, which the Junos cliconf plugin lacks), and ``cli_command`` cannot hold a private candidate
across tasks (network_cli returns the CLI to operational mode before every task). This module sends
the whole sequence inside one task, through the same persistent network_cli connection
(``Connection(socket).get``), so it works wherever ``ansible_network_os=junipernetworks.junos.junos``
does (VENDORS.md §5c):

* ``state: loaded``    configure private; load set terminal (lines, ^D); show | compare; commit check;
  then ``commit confirmed N comment "…"`` (or, in check mode, discard). Returns the compare as the diff.
* ``state: confirmed`` configure private; commit and-quit (confirms a pending commit confirmed).
* ``state: rolled_back`` configure private; rollback 1; commit and-quit (undo the last commit now).
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: roce_tune_junos_cli
short_description: Load set lines into a Junos private candidate and commit confirmed (network_cli)
description:
  - Sends configure private, load set terminal, show | compare, commit check and commit confirmed N
    in one network_cli session. Check mode discards the candidate after the compare.
options:
  lines:
    description: set/delete lines to load (state loaded).
    type: list
    elements: str
    default: []
  state:
    description: loaded, confirmed or rolled_back.
    type: str
    choices: [loaded, confirmed, rolled_back]
    default: loaded
  confirm_minutes:
    description: commit confirmed timeout in minutes; 0 commits without confirmation.
    type: int
    default: 5
  comment:
    description: commit comment.
    type: str
    default: roce-tune
author: roce-tune
"""

EXAMPLES = r"""
- name: Load and commit confirmed
  roce_tune_junos_cli:
    lines: ["set class-of-service forwarding-classes class RT_Q3 queue-num 3"]
    confirm_minutes: 5
"""

RETURN = r"""
compare:
  description: the show | compare output of the candidate.
  returned: state loaded
  type: str
pending_confirm:
  description: a commit confirmed is waiting for confirmation.
  returned: always
  type: bool
confirmed:
  description: the confirming commit went through (state confirmed; not proof that the change is still
    active, the device may have reverted it before the confirm came).
  returned: success, state confirmed
  type: bool
commit_sent:
  description: the commit (confirmed) command was sent; on failure, false means nothing was committed.
  returned: always
  type: bool
rolled_back:
  description: rollback 1 and its commit went through.
  returned: success, state rolled_back
  type: bool
"""

import ast
import re

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.connection import Connection, ConnectionError

EXIT_PROMPT = r"Exit with uncommitted changes"
LOAD_PROMPT = r"Type \^D at a new line to end input"


def _quote(text):
    return '"' + re.sub(r'["\\\r\n]', " ", text) + '"'


def _text(exc):
    """The device output in a connection error as text (network_cli puts the raw bytes' repr in it)."""
    msg = str(exc)
    m = re.fullmatch(r"b(['\"])(.*)\1", msg, re.DOTALL)
    if not m:
        return msg
    try:
        return ast.literal_eval(msg).decode("utf-8", "replace").replace("\r\n", "\n").strip()
    except (ValueError, SyntaxError):
        return msg


def _discard(conn):
    for cmd in ("rollback 0", "exit configuration-mode"):
        try:
            conn.get(command=cmd, prompt=EXIT_PROMPT, answer="yes") if "exit" in cmd else conn.get(command=cmd)
        except ConnectionError:
            pass


def _load(module, conn, result):
    p = module.params
    result["compare"] = ""
    if not p["lines"]:
        return result
    conn.get(command="configure private")
    answer = "\r".join(list(p["lines"]) + [""]) + "\x04"
    out = conn.get(command="load set terminal", prompt=LOAD_PROMPT, answer=answer, newline=False)
    if re.search(r"\(\d+ errors?\)|syntax error|unknown command", out or ""):
        raise ConnectionError("load set terminal reported errors:\n" + out)
    compare = (conn.get(command="show | compare") or "").strip()
    lines = [ln for ln in compare.splitlines() if ln.strip() and ln.strip() != "[edit]"]
    result["compare"] = compare
    if not lines:
        _discard(conn)
        return result
    conn.get(command="commit check")
    result["changed"] = True
    if module._diff:
        result["diff"] = {"prepared": compare}
    if module.check_mode:
        _discard(conn)
        return result
    cmd = "commit"
    if p["confirm_minutes"] > 0:
        cmd += " confirmed {}".format(int(p["confirm_minutes"]))
        result["pending_confirm"] = True
    cmd += " comment " + _quote(p["comment"])
    result["commit_sent"] = True  # from here on a failure may leave the commit active: the caller checks
    result["commit_output"] = conn.get(command=cmd)
    conn.get(command="exit configuration-mode", prompt=EXIT_PROMPT, answer="yes")
    return result


def main():
    module = AnsibleModule(
        argument_spec={
            "lines": {"type": "list", "elements": "str", "default": []},
            "state": {"type": "str", "choices": ["loaded", "confirmed", "rolled_back"], "default": "loaded"},
            "confirm_minutes": {"type": "int", "default": 5},
            "comment": {"type": "str", "default": "roce-tune"},
        },
        supports_check_mode=True,
    )
    conn = Connection(module._socket_path)
    state = module.params["state"]
    result = {"changed": False, "pending_confirm": False, "commit_sent": False}
    try:
        if state == "loaded":
            result = _load(module, conn, result)
        else:
            result = {"changed": not module.check_mode, "pending_confirm": False}
            if not module.check_mode:
                conn.get(command="configure private")
                if state == "rolled_back":
                    conn.get(command="rollback 1")
                result["commit_sent"] = True
                conn.get(command="commit comment {} and-quit".format(_quote(module.params["comment"] + " " + state)))
                result[state] = True
    except ConnectionError as exc:
        _discard(conn)
        sent = result["commit_sent"]
        module.fail_json(msg="Junos {} failed{}: {}".format(
            state, " after the commit was sent" if sent else "; nothing was committed (private candidate "
            "discarded)", _text(exc)), commit_sent=sent)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
