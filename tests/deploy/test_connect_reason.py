"""An unreachable device is reported as ``device (host:port): reason`` (README, "Logs and secrets") with the
reason in it: netmiko wraps an SSH failure as a paragraph whose first line ends in a colon and whose cause
comes after a blank line; the report kept only that first line."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from .conftest import REPO


def _closes_before_the_banner() -> tuple[socket.socket, threading.Event]:
    """A real TCP listener on 127.0.0.1 that accepts, reads the client's banner and closes without one of its
    own (what a switch's sshd past MaxStartups, or another service on the port, does)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            # read the client's banner first: a socket closed with unread data sends an RST, which the
            # client may see as "Connection reset by peer" before it reads the missing banner (a race)
            conn.settimeout(5)
            with contextlib.suppress(OSError):
                conn.recv(4096)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv, stop


def test_dry_run_names_why_the_ssh_connection_failed(tmp_path: Path) -> None:
    srv, stop = _closes_before_the_banner()
    port = srv.getsockname()[1]
    try:
        inv = tmp_path / "lab.yaml"
        inv.write_text((REPO / "inventories" / "lab-2node.yaml").read_text()
                       .replace("port: 2201}", f"port: {port}}}"))
        env = {**os.environ, "ROCE_TUNE_USERNAME": "admin", "ROCE_TUNE_PASSWORD": "not-used"}
        proc = subprocess.run([sys.executable, "-m", "roce_tune.cli", "apply", str(inv), "--dry-run",
                               "--limit", "lab-leaf1", "--insecure-skip-host-key-check", "--format", "json"],
                              capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path, check=False)
    finally:
        stop.set()
        srv.close()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    import json

    (dev,) = json.loads(proc.stdout)["devices"]
    assert dev["state"] == "failed"
    assert dev["error"].startswith(f"connect: lab-leaf1 (127.0.0.1:{port}): "), dev["error"]
    assert "Error reading SSH protocol banner" in dev["error"], dev["error"]
    assert "not-used" not in proc.stdout + proc.stderr
