"""Credentials for device sessions: from environment variables (named in the inventory) or a secrets
file outside the repository — never from the inventory or the plan — and a redactor for logs.

Secrets file format (YAML, mode 0600 recommended), looked up by device name then ``default``; every value
is taken as the text written (``password: 0123`` is the four characters ``0123``, not a number), and an
empty value counts as not given::

    default: {username: admin, password: "..."}
    leaf1:   {username: netops, key_file: /home/me/.ssh/id_ed25519}
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from netmiko.session_log import SessionLog
from ruamel.yaml import YAML


class CredentialError(RuntimeError):
    """No usable credentials for a device; the message names the device and the variables tried
    (never a secret value)."""


@dataclass(frozen=True)
class Credentials:
    """Resolved credentials. ``repr`` never shows the password."""

    username: str
    password: str | None = field(default=None, repr=False)
    key_file: str | None = None

    def secrets(self) -> list[str]:
        """Values that must never appear in a log."""
        return [s for s in (self.password,) if s]


def _position(exc: BaseException) -> str:
    """``:line:column`` (1-based) of a YAML syntax error, else ""; never the text (it may be a secret)."""
    mark = getattr(exc, "problem_mark", None)
    line, column = getattr(mark, "line", None), getattr(mark, "column", None)
    return f":{line + 1}:{column + 1}" if isinstance(line, int) and isinstance(column, int) else ""


def _secrets_file_entry(path: Path, device: str) -> dict[str, str]:
    try:
        # every scalar as the text written: a safe loader makes `password: 0123` 123 and `1e3` 1000.0
        data = YAML(typ="base").load(path.read_text(encoding="utf-8")) or {}
    except Exception as exc:  # noqa: BLE001 — report without content
        raise CredentialError(f"secrets file {path}{_position(exc)} cannot be read: {type(exc).__name__}"
                              + (" (YAML syntax: quote a value that holds ': ', '#', a leading quote or "
                                 "other special characters)" if _position(exc) else "")) from None
    if not isinstance(data, dict):
        raise CredentialError(f"secrets file {path}: top level must be a mapping of device -> credentials")
    entry = data.get(device) or data.get("default") or {}
    if not isinstance(entry, dict):
        raise CredentialError(f"secrets file {path}: entry for {device} must be a mapping")
    return {str(k): str(v) for k, v in entry.items() if v is not None and str(v) != ""}


def check_secrets_file(path: str | Path) -> None:
    """Read the secrets file at ``path`` once, before any device is contacted.

    Raises:
        CredentialError: it cannot be read, is not YAML (file:line:column, never the text) or is not a
            mapping of device -> credentials.
    """
    _secrets_file_entry(Path(path), "default")


def _no_credential(device: str, refs: dict[str, str | None], values: dict[str, str]) -> str:
    """Why ``device`` has no username or no password/key, and what can provide it: only the variables the
    inventory names (never ``$None``), a secrets file, an SSH agent."""
    if not values.get("username"):
        var = refs.get("username_env")
        return f"{device}: no username (set " + (f"${var} or " if var else "") + "a secrets file)"
    ways = [f"${refs[k]}" for k in ("password_env", "key_file_env") if refs.get(k)]
    if not refs.get("key_file_env"):
        ways.append("a key file variable (credentials.key_file_env in the inventory)")
    return f"{device}: no password or key (set {', '.join(ways)}, a secrets file or an SSH agent)"


def _key_file(device: str, value: str, origin: str) -> str:
    """``value`` with ``~`` expanded (as netmiko expands it); raises CredentialError naming ``device``, the
    path and ``origin`` (the variable or secrets file it came from) when it is not a readable file: netmiko's
    own error is a paragraph whose first line, all a report shows, ends before the path."""
    path = Path(value).expanduser()
    if not path.is_file() or not os.access(path, os.R_OK):
        why = "is not a readable file" if path.exists() else "does not exist"
        raise CredentialError(f"{device}: SSH key file {path} ({origin}) {why}")
    return str(path)


def resolve_credentials(device: str, refs: dict[str, str | None], env: dict[str, str] | None = None,
                        secrets_file: str | Path | None = None) -> Credentials:
    """Resolve credentials for ``device``.

    Args:
        device: device name (for messages and the secrets-file lookup).
        refs: the plan's credential references: ``username_env``, ``password_env``, ``key_file_env``.
        env: environment (default ``os.environ``).
        secrets_file: optional YAML secrets file (also ``$ROCE_TUNE_SECRETS_FILE``); its values win
            over environment variables.

    Raises:
        CredentialError: no username, or neither a password nor a key file (an SSH agent is used when
            only a username is given and ``$SSH_AUTH_SOCK`` is set), or a key file (``~`` expanded) that
            does not exist or cannot be read.
    """
    env = dict(os.environ if env is None else env)
    values: dict[str, str] = {}
    origin = {"key_file": f"${refs.get('key_file_env')}"}
    for key, ref in (("username", refs.get("username_env")), ("password", refs.get("password_env")),
                     ("key_file", refs.get("key_file_env"))):
        if ref and env.get(ref):
            values[key] = env[ref]
    sf = secrets_file or env.get("ROCE_TUNE_SECRETS_FILE")
    if sf:
        entry = _secrets_file_entry(Path(sf), device)
        values.update(entry)
        if "key_file" in entry:
            origin["key_file"] = f"secrets file {sf}"
    if values.get("key_file"):
        values["key_file"] = _key_file(device, values["key_file"], origin["key_file"])
    if not values.get("username") or (not values.get("password") and not values.get("key_file")
                                      and not env.get("SSH_AUTH_SOCK")):
        raise CredentialError(_no_credential(device, refs, values))
    return Credentials(values["username"], values.get("password"), values.get("key_file"))


class Redactor:
    """Mask secrets in text bound for a log or restore point: the session's own secret values, the
    platform's configuration forms (``SECRET_PATTERNS`` of ``roce_tune/platforms/<platform>.py``: password
    hashes, TACACS+/RADIUS keys, SNMP communities …) and any ``password|secret|passphrase [type] VALUE``."""

    _GENERIC = (re.compile(r"(?i)\b(?:password|secret|passphrase)\s*[:=]?\s*(?:(?:sha512|md5|[0-9])\s+)?"
                           r"""(?P<secret>"[^"\n]*"|'[^'\n]*'|[^\s"']\S*)"""),)

    def __init__(self, secrets: list[str], platform: str | None = None):
        from roce_tune.platforms import secret_patterns

        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        # the generic form first: it skips a type token (``secret 0 VALUE``) that a platform form may not
        self._patterns = (*self._GENERIC, *(secret_patterns(platform) if platform else ()))

    def __call__(self, text: str) -> str:
        from roce_tune.platforms.base import MASK, mask_secrets

        for s in self._secrets:
            text = text.replace(s, MASK)
        return mask_secrets(text, self._patterns)


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) and make it 0700 whatever the umask: logs and restore points hold
    device configurations."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def open_private(path: Path, append: bool = True) -> TextIO:
    """Open ``path`` for writing as a 0600 file whatever the umask (an existing file is made 0600 too)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), 0o600)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, "a" if append else "w", encoding="utf-8")


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (replacing it) as a 0600 file."""
    with open_private(path, append=False) as fh:
        fh.write(text)


class RedactingSessionLog(SessionLog):
    """A netmiko session log that passes everything through a :class:`Redactor` before it reaches the
    file (0600). Data is written a complete line at a time, and a JSON document (SONiC CONFIG_DB) only once
    its braces balance, so a secret split over channel reads or a table spread over lines is still masked;
    the rest is written when the session closes.

    A write that fails (a full disk, a file system gone read-only) never fails the session: netmiko would
    raise it from the middle of a push, leaving a switch half-configured. The log stops there instead, and
    ``on_error`` receives ``"<file>: <OS error>"`` once; what the session does afterwards is not logged."""

    _HOLD_MAX_CHARS = 4_000_000

    def __init__(self, file_name: str, redact: Redactor, on_error: Callable[[str], None] | None = None):
        super().__init__(file_name=file_name, file_mode="append")
        self._redact = redact
        self._on_error = on_error
        self.write_error: str | None = None

    def open(self) -> None:
        """Open the log file for appending as 0600."""
        assert self.file_name is not None
        self.session_log = open_private(Path(self.file_name))
        self._session_log_close = True

    def _flush_buffer(self, final: bool = False) -> None:
        if self.session_log is None:
            if self.write_error is not None:
                self._read_buffer()  # the log stopped: drop what it can no longer record
            return
        data = self._read_buffer()
        if not final and len(data) < self._HOLD_MAX_CHARS:
            cut = data.rfind("\n") + 1
            if data.count("{", 0, cut) > data.count("}", 0, cut):
                cut = 0  # inside a JSON document: wait for its end
            self.slog_buffer.write(data[cut:])
            data = data[:cut]
        if data:
            self._write(self._redact(data))

    def _write(self, data: str) -> None:
        """Write ``data`` and flush it; on an OS error stop logging and report it (see the class)."""
        try:
            super()._write(data)
        except OSError as exc:
            self._stop_logging(exc)

    def close(self) -> None:
        """Write what is held back and close the file; an OS error is reported, never raised."""
        try:
            super().close()
        except OSError as exc:
            self._stop_logging(exc)

    def _stop_logging(self, exc: OSError) -> None:
        fh, self.session_log = self.session_log, None
        if fh is not None:
            with contextlib.suppress(OSError, ValueError):
                fh.close()
        if self.write_error is None:
            self.write_error = f"{self.file_name}: {exc.strerror or exc}"
            if self._on_error is not None:
                self._on_error(self.write_error)
