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
  A device that refuses ``commit confirmed`` in private mode (``error: commit confirmed not supported for
  private configuration``, roce_tune.platforms.junos.PRIVATE_CONFIRM_REFUSED) committed nothing: the
  private candidate is discarded (``rollback 0``), ``show system commit`` must list no commit with our
  comment, and the same steps run again in ``configure exclusive`` (refused while another session holds the
  lock or the shared candidate is modified: the failure names the holder, nothing changed). Returns
  ``config_mode`` (``private`` / ``exclusive``), which the confirm and the rollback must use.
* ``state: confirmed`` configure <config_mode>; commit comment "confirmed" and-quit (confirms a pending
  commit confirmed).
* ``state: rolled_back`` configure <config_mode>; rollback N; commit and-quit (undo our commit now), N from
  ``show system commit``: the entry with our comment + 1, as ``roce-tune apply`` finds it
  (roce_tune.platforms.junos.rollback_index: refused when someone else committed after us).
Needs ``roce-tune`` importable by the controller's Python (network_cli runs modules on the controller, and
the playbooks' filters need it there anyway).
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
  config_mode:
    description: configuration mode of state confirmed / rolled_back (the config_mode state loaded returned).
    type: str
    choices: [private, exclusive]
    default: private
  host:
    description: the device's inventory name, for the warning that names it.
    type: str
    default: ""
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
  description: rollback N (N found by the commit comment) and its commit went through.
  returned: success, state rolled_back
  type: bool
config_mode:
  description: the mode the change was committed from, private or exclusive (the device refused commit
    confirmed in private mode).
  returned: state loaded
  type: str
"""

import ast
import re

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.connection import Connection, ConnectionError

EXIT_PROMPT = r"Exit with uncommitted changes"
#: what `exit configuration-mode` asks in exclusive mode over an uncommitted change
DISCARD_PROMPT = r"Discard uncommitted changes"
#: what Junos answers a `configure exclusive` it refuses (the holder follows on the next lines)
EXCLUSIVE_REFUSED = r"(?m)^\s*error:\s*(configuration database (?:locked|modified).*)$"
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


def _exit(conn):
    """Leave configuration mode; answers the uncommitted-changes question (private or exclusive mode)."""
    conn.get(command="exit configuration-mode", prompt=[EXIT_PROMPT, DISCARD_PROMPT], answer=["yes", "yes"])


def _discard(conn):
    """Discard the candidate (``rollback 0``) and leave configuration mode, errors ignored."""
    for step in (lambda: conn.get(command="rollback 0"), lambda: _exit(conn)):
        try:
            step()
        except ConnectionError:
            pass


def _configure(conn, mode):
    """``configure <mode>``; ConnectionError naming the refusal (for exclusive mode: who holds the lock)."""
    try:
        out = conn.get(command="configure " + mode) or ""
    except ConnectionError as exc:
        out = _text(exc)
    m = re.search(EXCLUSIVE_REFUSED, out)
    if m or re.search(r"(?m)^\s*error:", out):
        holder = [ln.strip() for ln in out[m.end():].splitlines() if ln.strip()] if m else []
        raise ConnectionError("device refused `configure {}` ({}{}): the shared candidate is locked by "
                              "another session or holds someone's uncommitted change".format(
                                  mode, m.group(1).strip() if m else out.strip(),
                                  " " + " ".join(holder[:3]) if holder else ""))


def _our_commits(conn, comment):
    from roce_tune.platforms.junos import parse_commit_history

    history = parse_commit_history(conn.get(command="show system commit") or "")
    return history, [entry for entry in history if entry[2] == comment]


def _load_and_commit(module, conn, result, mode):
    """Load, compare, commit check, commit confirmed in ``configure <mode>``. False when the device refused
    commit confirmed in private mode (still in configuration mode, nothing committed)."""
    from roce_tune.platforms.junos import PRIVATE_CONFIRM_REFUSED

    p = module.params
    _configure(conn, mode)
    answer = "\r".join(list(p["lines"]) + [""]) + "\x04"
    out = conn.get(command="load set terminal", prompt=LOAD_PROMPT, answer=answer, newline=False)
    if re.search(r"\(\d+ errors?\)|syntax error|unknown command", out or ""):
        raise ConnectionError("load set terminal reported errors:\n" + out)
    compare = (conn.get(command="show | compare") or "").strip()
    lines = [ln for ln in compare.splitlines() if ln.strip() and ln.strip() != "[edit]"]
    result["compare"] = compare
    if not lines:
        _discard(conn)
        return True
    conn.get(command="commit check")
    result["changed"] = True
    if module._diff:
        result["diff"] = {"prepared": compare}
    if module.check_mode:
        _discard(conn)
        return True
    cmd = "commit"
    if p["confirm_minutes"] > 0:
        cmd += " confirmed {}".format(int(p["confirm_minutes"]))
        result["pending_confirm"] = True
    cmd += " comment " + _quote(p["comment"])
    result["commit_sent"] = True  # from here on a failure may leave the commit active: the caller checks
    try:
        result["commit_output"] = conn.get(command=cmd)
    except ConnectionError as exc:
        if mode != "private" or not PRIVATE_CONFIRM_REFUSED.search(_text(exc)):
            raise
        result["pending_confirm"] = False
        return False
    _exit(conn)
    return True


def _load(module, conn, result):
    p = module.params
    result["compare"] = ""
    result["config_mode"] = "private"
    if not p["lines"] or _load_and_commit(module, conn, result, "private"):
        return result
    # refused in private mode: nothing was committed; prove it before trying again
    conn.get(command="rollback 0")
    _exit(conn)
    comment = _quote(p["comment"]).strip('"')
    if _our_commits(conn, comment)[1]:
        raise ConnectionError("the device refused `commit confirmed` in `configure private`, yet `show "
                              f"system commit` lists a commit with comment {comment}: not retried in "
                              "`configure exclusive`")
    result["commit_sent"] = False
    result["config_mode"] = "exclusive"
    module.warn("{}: `commit confirmed` was refused in `configure private` (error: commit confirmed not "
                "supported for private configuration); pushing from `configure exclusive` instead, which "
                "locks the shared candidate for the push".format(module.params["host"] or "the device"))
    _load_and_commit(module, conn, result, "exclusive")
    return result


def _rolled_back(conn, comment, mode):
    """``rollback N`` + commit in ``configure <mode>``, N found by our commit comment."""
    from roce_tune.platforms.junos import rollback_index

    index, why = rollback_index(_our_commits(conn, comment)[0], comment)
    if index is None:
        raise ConnectionError("not rolled back: " + why)
    _configure(conn, mode)
    conn.get(command=f"rollback {index}")
    return index


def main():
    module = AnsibleModule(
        argument_spec={
            "lines": {"type": "list", "elements": "str", "default": []},
            "state": {"type": "str", "choices": ["loaded", "confirmed", "rolled_back"], "default": "loaded"},
            "confirm_minutes": {"type": "int", "default": 5},
            "comment": {"type": "str", "default": "roce-tune"},
            "config_mode": {"type": "str", "choices": ["private", "exclusive"], "default": "private"},
            "host": {"type": "str", "default": ""},
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
            from roce_tune.platforms.junos import CONFIRM_COMMENT

            result = {"changed": not module.check_mode, "pending_confirm": False}
            if not module.check_mode:
                mode, comment = module.params["config_mode"], _quote(module.params["comment"]).strip('"')
                if state == "rolled_back":
                    result["rollback_index"] = _rolled_back(conn, comment, mode)
                    note = comment + "-rollback"
                else:
                    _configure(conn, mode)
                    note = CONFIRM_COMMENT
                result["commit_sent"] = True
                conn.get(command=f"commit comment {_quote(note)} and-quit")
                result[state] = True
    except ConnectionError as exc:
        _discard(conn)
        sent = result["commit_sent"]
        mode = result.get("config_mode", module.params["config_mode"])
        module.fail_json(msg="Junos {} failed{}: {}".format(
            state, " after the commit was sent" if sent else f"; nothing was committed ({mode} candidate "
            "discarded)", _text(exc)), commit_sent=sent, config_mode=mode)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
