"""Credentials for device sessions: from environment variables (named in the inventory) or a secrets
file outside the repository — never from the inventory or the plan — and a redactor for logs.

Secrets file format (YAML, mode 0600 recommended), looked up by device name then ``default``::

    default: {username: admin, password: "..."}
    leaf1:   {username: netops, key_file: /home/me/.ssh/id_ed25519}
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

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


def _secrets_file_entry(path: Path, device: str) -> dict[str, str]:
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8")) or {}
    except Exception as exc:  # noqa: BLE001 — report without content
        raise CredentialError(f"secrets file {path} cannot be read: {type(exc).__name__}") from None
    if not isinstance(data, dict):
        raise CredentialError(f"secrets file {path}: top level must be a mapping of device -> credentials")
    entry = data.get(device) or data.get("default") or {}
    if not isinstance(entry, dict):
        raise CredentialError(f"secrets file {path}: entry for {device} must be a mapping")
    return {str(k): str(v) for k, v in entry.items() if v is not None}


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
            only a username is given and ``$SSH_AUTH_SOCK`` is set).
    """
    env = dict(os.environ if env is None else env)
    values: dict[str, str] = {}
    for key, ref in (("username", refs.get("username_env")), ("password", refs.get("password_env")),
                     ("key_file", refs.get("key_file_env"))):
        if ref and env.get(ref):
            values[key] = env[ref]
    sf = secrets_file or env.get("ROCE_TUNE_SECRETS_FILE")
    if sf:
        values.update(_secrets_file_entry(Path(sf), device))
    if not values.get("username"):
        raise CredentialError(f"{device}: no username (set ${refs.get('username_env')} or a secrets file)")
    if not values.get("password") and not values.get("key_file") and not env.get("SSH_AUTH_SOCK"):
        raise CredentialError(f"{device}: no password or key (set ${refs.get('password_env')}, "
                              f"${refs.get('key_file_env') or 'a key file variable'}, a secrets file or an SSH agent)")
    return Credentials(values["username"], values.get("password"), values.get("key_file"))


class Redactor:
    """Replace secret values (and ``password ...``/``secret ...`` arguments) with ``********``."""

    _PATTERNS = (re.compile(r"(?i)(password|secret|passphrase)(\s*[:=]?\s*)(\S+)"),)

    def __init__(self, secrets: list[str]):
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for s in self._secrets:
            text = text.replace(s, "********")
        for pat in self._PATTERNS:
            text = pat.sub(lambda m: m.group(1) + m.group(2) + "********", text)
        return text
