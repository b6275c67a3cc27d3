"""Writing one file whole or not at all (imported inventories, `expand --out`, the scorecard cache), and
flushing a whole tree of new files to disk with one call (the plan directory, :mod:`roce_tune.plandir`)."""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same directory and a rename, so
    a reader sees the old file or the complete new one, never a part. Permissions of an existing file are
    kept (a new file gets 0644 less the umask). A symbolic link is followed: the file it names is written
    and the link stays (a rename onto the link would replace the link and leave its file as it was).

    Raises:
        OSError: the directory is not writable, the disk is full … (the temporary file is removed).
    """
    target = Path(os.path.realpath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            mode = target.stat().st_mode & 0o777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o644 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


@lru_cache(maxsize=1)
def _syncfs() -> Callable[[int], int] | None:
    """libc's ``syncfs(2)`` (Linux), or None where the C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def can_sync_file_system() -> bool:
    """True when :func:`sync_file_system` flushes a file system in one call (Linux ``syncfs(2)``); else a
    writer must ``fsync`` every file and directory it made itself."""
    return _syncfs() is not None


def sync_file_system(path: str | Path) -> None:
    """Flush every written file, directory entry and inode of the file system holding ``path`` to disk,
    waiting until it is done: ``syncfs(2)`` (Linux; errors reported since kernel 5.8). One call instead of
    an ``fsync`` per file: a tree of thousands of new files becomes durable with one journal commit, its
    data written back in one batch. Only where :func:`can_sync_file_system` (else ``sync(2)``, which does
    not wait on every platform).

    Raises:
        OSError: ``path`` cannot be opened, or the file system reports a write-back error (EIO, ENOSPC …).
    """
    fn = _syncfs()
    if fn is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if fn(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"syncfs: {os.strerror(err)}", str(path))
    finally:
        os.close(fd)


__all__ = ["can_sync_file_system", "sync_file_system", "write_text_atomic"]
