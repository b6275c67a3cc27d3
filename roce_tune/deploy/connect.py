"""Say why a device could not be reached, in one line: ``device (host:port): reason``.

netmiko turns every SSH-level failure during connect into a multi-line ``NetmikoTimeoutException``
(a refused TCP connection, an unknown or changed host key, a closed banner alike); the cause is kept
as the exception's context. :func:`describe_connect_error` reads that cause and names it: for host
keys, which known_hosts files were consulted and whether the key was unknown or did not match.
"""

from __future__ import annotations

import os
import socket

#: the user's known_hosts file that netmiko's ``system_host_keys=True`` loads (paramiko's default path)
USER_KNOWN_HOSTS = "~/.ssh/known_hosts"


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes/contexts, outermost first (cycles cut)."""
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def _fingerprint(key: object) -> str:
    name = getattr(key, "get_name", lambda: "key")()
    return f"{name} {getattr(key, 'fingerprint', '?')}"


def _ssh_reason(e: BaseException, files: str, host: str | None, port: int) -> str | None:
    """The reason when ``e`` is a host-key (mismatch, unknown) or authentication failure, else None."""
    import paramiko

    if isinstance(e, paramiko.BadHostKeyException):
        return (f"HOST KEY MISMATCH: the device offered {_fingerprint(e.key)}, but {files} "
                f"records {_fingerprint(e.expected_key)} for it. Not connecting: the device was re-imaged "
                "or the connection is intercepted; check the new key out of band, then update the file")
    if isinstance(e, paramiko.SSHException) and "not found in known_hosts" in str(e):
        return (f"host key unknown: no entry for it in {files}. Check the device's key out of "
                f"band and add it (e.g. ssh-keyscan -p {port} {host}), or name a file with --known-hosts")
    if isinstance(e, paramiko.AuthenticationException):
        # netmiko's message is a paragraph of advice: keep its first line (the docstring promises one line)
        first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
        return f"authentication failed ({first}); check the credentials the inventory names"
    return None


def _os_reason(e: OSError) -> str:
    """``strerror`` of the error number, else the text or the exception's type."""
    return os.strerror(e.errno) if e.errno else (str(e) or type(e).__name__)


def _network_reason(e: BaseException, outer: BaseException) -> str | None:
    """The reason when ``e`` (a cause of ``outer``, or ``outer`` itself) is a TCP or name-resolution
    failure, else None."""
    import paramiko

    if isinstance(e, paramiko.ssh_exception.NoValidConnectionsError):  # one per address tried
        causes = {os.strerror(c.errno) if getattr(c, "errno", None) else str(c) for c in e.errors.values()}
        return f"TCP connection failed: {'; '.join(sorted(causes)) or e}"
    if isinstance(e, socket.gaierror):
        return f"the name does not resolve ({e.strerror or e})"
    if isinstance(e, (ConnectionRefusedError, TimeoutError, socket.timeout, OSError)) and e is not outer:
        return f"TCP connection failed: {_os_reason(e)}"
    return None


def describe_connect_error(name: str, host: str | None, port: int, exc: BaseException,
                           known_hosts: str | None) -> str:
    """One line for a failed connect: ``name (host:port): reason``.

    Args:
        name: device name (inventory).
        host, port: where roce-tune connected.
        exc: what netmiko/paramiko raised.
        known_hosts: the ``--known-hosts`` file, if any (the user's ``~/.ssh/known_hosts`` is always read).

    Returns:
        The message; never raises. Host-key failures say whether the key was unknown or did not match
        and which known_hosts files were consulted.
    """
    where = f"{name} ({host}:{port})"
    files = " and ".join(f for f in (known_hosts, USER_KNOWN_HOSTS) if f)
    for e in _chain(exc):
        reason = _ssh_reason(e, files, host, port)
        if reason is None:
            reason = _network_reason(e, exc)
        if reason is not None:
            return f"{where}: {reason}"
    text = str(exc).strip()
    if "DNS failure" in text:
        return f"{where}: the name does not resolve"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = lines[0] if lines else type(exc).__name__
    if first.endswith(":") and len(lines) > 1:  # netmiko: "A paramiko SSHException occurred ...:\n\n<why>"
        first = f"{first} {lines[1]}"
    return f"{where}: {type(exc).__name__}: {first}"
