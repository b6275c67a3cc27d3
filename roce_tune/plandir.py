"""The on-disk plan directory: written in one atomic step, rewriting only what changed; read back verified.

Layout of an output directory ``out/<site>/``::

    plan.json, plan.md, nccl.env, switches/, hosts/, SHA256SUMS   fixed links NAME -> .current/NAME
    .current                                                      link to the version in force
    .plan-<16 hex>/                                               one complete version (its files,
                                                                  SHA256SUMS and .manifest.json)
    logs/, verify/, notes …                                       not ours; never touched

The files themselves are whatever the renderer produced (a mapping of relative path -> text or bytes);
this module knows nothing of switches or hosts.

**Publishing.** A new plan is a new version directory, built under a temporary name (``.plan-new-*``),
renamed to its own and made durable, then made the one in force by a single ``rename(2)`` of ``.current``;
a reader (or a crash at any step) sees the old complete plan or the new complete plan, never a mix. The
version name is a hash of ``SHA256SUMS``, so an unchanged plan maps to the version in force and nothing is
written. Durable: before the switch the file system is flushed once (Linux ``syncfs(2)``: every new file's
data, its directory entries and links in one journal commit, not one ``fsync`` per file); where that call
does not exist every file and directory is flushed (``fsync``) as it is made. The directory of ``.current``
is flushed after the switch, before the previous version is removed.

**Writing only what changed.** Each version holds a digest manifest (``.manifest.json``: relative path ->
sha256, size, mtime, inode). A file the version in force has with the same size, unedited since its
manifest entry was made (size, mtime and inode still match), is read and compared byte for byte with the
new content; when equal it is hard-linked from the version in force into the new one (one ``link(2)``, no
data written, its sha256 taken from the manifest) instead of being written again. Every other file is
written, and hashed from the bytes written: no text is encoded or hashed twice. Versions are never
modified after they are written, so sharing an inode between two of them is safe; the old version
directory is removed once the new one is in force, which also removes the files of devices that left the
inventory. A file system without hard links gets every file written. Links are directory entries of the
new (unpublished) version, made durable by the same flush as written files, before the switch.

**Skipping an unchanged re-plan.** A writer may record, with a version, the digest of everything its files
were made from (``inputs``: for ``roce-tune plan`` the inventory's bytes, the roce-tune code and the options)
and a small JSON object of its own (``extra``: the summary it prints). :func:`reusable` gives that object
back when the version in force was made from the same ``inputs`` and is intact (every file as its manifest
says: size, mtime and inode, the same test that lets the writer link a file; ``SHA256SUMS`` present; no
leftovers of an interrupted write), so the caller need not make the files again. Readers (apply, verify)
still check every sha256.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from roce_tune.atomic import can_sync_file_system, sync_file_system

__all__ = ["CURRENT", "MANAGED", "MANIFEST", "SUMS", "OutputDirError", "PlanDirError", "PlanFiles",
           "Provenance", "TextFiles", "WriteStats", "read_tree", "read_version", "reusable", "write_tree",
           "write_tree_stats"]

#: checksum list written with every plan version (``sha256sum -c SHA256SUMS`` format); a reader uses it to
#: tell a complete, unedited version from one with files missing or changed
SUMS = "SHA256SUMS"

#: digest manifest of a version (``files``: relative path -> [sha256, size_bytes, mtime_ns, inode]; optional
#: ``inputs`` digest and ``extra`` object of the writer); lets the next write link unchanged files instead of
#: writing them again, and an unchanged re-plan skip making them (:func:`reusable`)
MANIFEST = ".manifest.json"

#: top-level entries of an output tree that ``plan`` owns: symlinks ``NAME -> .current/NAME``. Anything
#: else (``logs/`` of apply runs, ``verify/``, a reviewer's notes) is left where it is.
MANAGED = ("plan.json", "plan.md", "nccl.env", "switches", "hosts", SUMS)

#: symlink to the version directory in force; replacing it is the one step that publishes a plan
CURRENT = ".current"

#: what :func:`write_tree` creates inside an output directory besides :data:`MANAGED`: version directories
#: (named by a hash of their content), the next ``.current`` link, and real (pre-symlink layout) entries
#: moved aside while the directory is converted; ``.plan-new-*``: a version being built
_OURS_INSIDE = re.compile(r"\.plan-[0-9a-f]{16}|\.plan-new-[a-z0-9_]{8}|\.current\.new"
                          r"|\.retired-[a-z0-9_]{8}")

#: errors of ``link(2)`` that mean "this file system cannot hard-link here": the file is written instead
_NO_LINK = frozenset({"EPERM", "EXDEV", "EMLINK", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"})


class OutputDirError(OSError):
    """The output path cannot take a plan (a file, or a non-empty directory that is not a plan)."""


class PlanDirError(ValueError):
    """A plan directory does not hold one complete plan; the message names what is missing and what to do."""


@dataclass
class WriteStats:
    """What :func:`write_tree` did: files written, files hard-linked from the version in force, files of
    the previous version not carried over (devices that left, renamed files), and whether a new version
    was published (False: the plan in force was already this one); ``restored``: files of the version in force
    that had been edited or removed since and were written again (counted in ``written`` too)."""

    written: int = 0
    linked: int = 0
    removed: int = 0
    published: bool = False
    restored: int = 0
    #: relative paths new or different from the version in force, and those it had that are gone (both empty
    #: when there was no version in force: a first plan changes everything)
    changed: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    #: files under ``switches/`` or ``hosts/`` of the plan in force that ``plan`` did not write (added by
    #: hand; every reader refuses them), removed by this write
    unowned: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """``files: 12 written, 9975 unchanged (linked), 3 removed``, ``files: plan unchanged, nothing
        written`` or ``files: plan unchanged, 2 edited or missing file(s) restored``."""
        if not self.published and (self.restored or self.unowned):
            return f"files: plan unchanged, {self._put_back()}"
        if not self.published:
            return "files: plan unchanged, nothing written"
        return f"files: {self.written} written, {self.linked} unchanged (linked), {self.removed} removed"

    def changes(self, most: int = 20) -> str:
        """What a re-plan changed against the version in force, device files first, for the engineer who
        edited one cable and wants to know which devices to review and apply: ``changed since the plan in
        force: switches/leaf1.json, hosts/gpu01.sh, plan.json, plan.md; removed: hosts/gpu09.sh``; at most
        ``most`` names per list (then ``+N more``). "" when nothing changed or there was no plan in force."""
        def names(rels: list[str]) -> str:
            ordered = sorted(rels, key=lambda r: (not r.startswith(("switches/", "hosts/")), r))
            shown = ", ".join(ordered[:most])
            return shown + (f" (+{len(ordered) - most} more)" if len(ordered) > most else "")

        parts = ([f"changed since the plan in force: {names(self.changed)}"] if self.changed else []) + (
            [f"removed: {names(self.gone)}"] if self.gone else []) + (
            [f"removed files not written by `roce-tune plan`: {names(self.unowned)}"] if self.unowned else [])
        return "; ".join(parts)

    def _put_back(self) -> str:
        """``2 edited or missing file(s) restored, 1 file(s) not written by plan removed`` (either part)."""
        parts = ([f"{self.restored} edited or missing file(s) restored"] if self.restored else []) + (
            [f"{len(self.unowned)} file(s) not written by plan removed"] if self.unowned else [])
        return ", ".join(parts)

    @property
    def wrote(self) -> bool:
        """Anything was written into the directory: a new version, or files of the plan in force restored."""
        return self.published or self.restored > 0 or bool(self.unowned)

    def headline(self, total: int, where: str) -> str:
        """The line ``plan`` prints under its table: ``wrote 9987 files to DIR`` (a first plan), ``wrote 4 of
        9987 files to DIR (the others unchanged, linked)``, ``plan in force unchanged: restored 2 edited or
        missing file(s) in DIR`` (then also ``and removed 1 file(s) not written by plan``) or ``plan in force
        unchanged: 9987 files in DIR, nothing written``."""
        if self.published:
            if self.written == total:
                return f"wrote {total} files to {where}"
            return f"wrote {self.written} of {total} files to {where} (the others unchanged, linked)"
        if self.restored or self.unowned:
            done = ([f"restored {self.restored} edited or missing file(s)"] if self.restored else []) + (
                [f"removed {len(self.unowned)} file(s) not written by plan"] if self.unowned else [])
            return f"plan in force unchanged: {' and '.join(done)} in {where}"
        return f"plan in force unchanged: {total} files in {where}, nothing written"

    def as_json(self, files: Iterable[str]) -> dict[str, object]:
        """What the write did, for a program driving ``plan --format json`` (e.g. Ansible's ``changed``):
        ``changed`` (bool: anything written into the directory: a new version, or files of the plan in force
        restored), ``changed_files`` (relative paths new or different from the plan in force; every file of
        ``files``, the plan's relative paths, when there was no plan in force), ``removed_files`` (paths the
        plan in force had that are gone, with the files not written by ``plan`` it removed)
        and ``restored_files`` (how many edited or missing files of the plan
        in force were written again)."""
        first = self.published and not self.changed and not self.gone
        return {"changed": self.wrote,
                "changed_files": sorted(files if first else self.changed),
                "removed_files": sorted(self.gone + self.unowned), "restored_files": self.restored}


@dataclass
class PlanFiles:
    """One version of a plan directory as read by :func:`read_version`.

    Attributes:
        root: the directory the files were read from (the version in force, or the output directory
            itself for the layout of roce-tune versions before ``.current``).
        layout: ``versioned`` (``.current`` link and ``SHA256SUMS``), ``sums`` (real entries with
            ``SHA256SUMS``) or ``legacy`` (real entries, no checksums).
        files: relative path -> text of ``plan.json``, ``plan.md``, ``nccl.env``, ``switches/…``,
            ``hosts/…`` (not ``SHA256SUMS``).
        sha256: relative path -> sha256 hex as listed in ``SHA256SUMS`` and verified (empty for ``legacy``).
    """

    root: Path
    layout: str
    files: dict[str, str]
    sha256: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Provenance:
    """What a version was made from, recorded in its manifest (module docstring: skipping an unchanged
    re-plan).

    Attributes:
        inputs: a digest of every input of the files (opaque to this module); None records nothing.
        extra: a JSON-serialisable object the writer wants back with :func:`reusable` (e.g. its summary).
    """

    inputs: str | None = None
    extra: Mapping[str, object] = field(default_factory=dict)

    def manifest_fields(self) -> dict[str, object]:
        """The manifest's ``inputs``/``extra`` members ({} when there are no inputs)."""
        return {} if self.inputs is None else {"inputs": self.inputs, "extra": dict(self.extra)}


# ----------------------------------------------------------------------------------------------- writing


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``directory`` (concurrent ``plan`` runs into the same parent wait,
    instead of cleaning up each other's unfinished work)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _sibling_leftovers(out: Path) -> list[Path]:
    """``.<name>.tmp-*`` / ``.<name>.old-*`` siblings of ``out`` left by an interrupted write: this
    version's first write of a new directory, or an older roce-tune's entry-by-entry swap."""
    pattern = re.compile(rf"\.{re.escape(out.name)}\.(tmp|old)-[a-z0-9_]{{8}}")
    if not out.parent.is_dir():
        return []
    return sorted(p for p in out.parent.iterdir() if pattern.fullmatch(p.name))


def _inside_leftovers(out: Path, keep: str | None = None) -> list[Path]:
    """Entries :func:`write_tree` made inside ``out`` that are not the version ``keep``."""
    if not out.is_dir():
        return []
    return sorted(p for p in out.iterdir() if _OURS_INSIDE.fullmatch(p.name) and p.name != keep)


#: text is encoded (UTF-8) for hashing and writing this many characters at a time
_CHUNK_CHARS = 1 << 20


#: what :class:`TextFiles` holds for a file: its text, its UTF-8 bytes, or those bytes in pieces (in order)
Content = str | bytes | list[bytes]


class TextFiles(MutableMapping[str, str]):
    """Relative path -> text, where a text may be held as its UTF-8 bytes, whole or in pieces: decoded each
    time it is read as text, written as it is by :func:`write_tree` (:meth:`contents`). ``roce-tune plan``
    renders plan.json (80 MB at 4,096 hosts) as pieces of bytes; handed on this way it is never joined nor
    decoded, nor encoded again to be hashed and written (issue 16). Equal to any mapping of the same texts;
    kept in insertion order.
    """

    def __init__(self, contents: Iterable[tuple[str, Content]] = ()) -> None:
        self._contents: dict[str, Content] = dict(contents)

    def contents(self) -> Mapping[str, Content]:
        """Relative path -> text or its UTF-8 bytes (whole or in pieces), as held (nothing decoded)."""
        return self._contents

    def __getitem__(self, rel: str) -> str:
        blob = self._contents[rel]
        if isinstance(blob, list):
            blob = b"".join(blob)
        return blob.decode("utf-8") if isinstance(blob, bytes) else blob

    def __setitem__(self, rel: str, text: str) -> None:
        self._contents[rel] = text

    def __delitem__(self, rel: str) -> None:
        del self._contents[rel]

    def __contains__(self, rel: object) -> bool:
        return rel in self._contents

    def __iter__(self) -> Iterator[str]:
        return iter(self._contents)

    def __len__(self) -> int:
        return len(self._contents)

    def __repr__(self) -> str:
        return f"TextFiles({sorted(self._contents)!r})"


def _alone(blob: str | bytes) -> list[bytes]:
    """A batch of one piece: ``blob``'s bytes (a text encoded as UTF-8)."""
    return [blob if isinstance(blob, bytes) else blob.encode("utf-8")]


class _Encoded(Mapping[str, bytes]):
    """``files`` as bytes, sorted by path, each text encoded (UTF-8) when asked for and not kept: a plan's
    files are not held twice (text and bytes: 230 MB more at 4,096 hosts), and a linked file is never encoded.
    :meth:`chunks` gives a file in pieces of at most :data:`_CHUNK_CHARS` characters (plan.json, 80 MB at
    4,096 hosts, is never one more 80 MB object)."""

    def __init__(self, files: Mapping[str, str | bytes]) -> None:
        self._files: Mapping[str, Content] = files.contents() if isinstance(files, TextFiles) else files
        self._order = sorted(files)

    def __getitem__(self, rel: str) -> bytes:
        blob = self._files[rel]
        if isinstance(blob, list):
            return b"".join(blob)
        return blob if isinstance(blob, bytes) else blob.encode("utf-8")

    def chunks(self, rel: str) -> Iterator[bytes]:
        """The bytes of ``rel`` in pieces (the same bytes as ``self[rel]``: a piece never splits a
        character)."""
        blob = self._files[rel]
        if isinstance(blob, list):
            yield from blob
        elif isinstance(blob, bytes):
            yield blob
        else:
            for start in range(0, len(blob), _CHUNK_CHARS):
                yield blob[start:start + _CHUNK_CHARS].encode("utf-8")

    def batches(self, rel: str) -> Iterator[list[bytes]]:
        """:meth:`chunks` of ``rel`` in the groups :func:`_batches` makes (one group per chunk of a text or
        bytes, made when asked for: no grouping cost for the thousands of small files of a plan)."""
        blob = self._files[rel]
        if isinstance(blob, list):
            return _batches(blob)
        if isinstance(blob, bytes) or len(blob) <= _CHUNK_CHARS:
            return map(_alone, (blob,))
        return map(_alone, self.chunks(rel))

    def whole(self, rel: str) -> bytes | None:
        """The bytes of ``rel`` when it is one piece (bytes, or a text of at most :data:`_CHUNK_CHARS`
        characters, encoded now), else None (:meth:`batches` gives its pieces): each of the thousands of
        device files of a plan compared or written from one object, encoded once."""
        blob = self._files[rel]
        if isinstance(blob, str):
            return blob.encode("utf-8") if len(blob) <= _CHUNK_CHARS else None
        return blob if isinstance(blob, bytes) else None

    def size(self, rel: str) -> int | None:
        """The size of ``rel`` in bytes when known without encoding it (bytes, ASCII text), else None."""
        blob = self._files[rel]
        if isinstance(blob, list):
            return sum(map(len, blob))
        return len(blob) if isinstance(blob, bytes) or blob.isascii() else None

    def sha256(self, rel: str) -> str:
        """The sha256 hex of ``rel``'s bytes."""
        h = hashlib.sha256()
        for piece in self.chunks(rel):
            h.update(piece)
        return h.hexdigest()

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


def _sums_text(digests: Mapping[str, str]) -> bytes:
    return "".join(f"{digest}  {rel}\n" for rel, digest in sorted(digests.items())).encode()


def _read_manifest_doc(version: Path) -> dict[str, Any]:
    """The whole manifest of an existing version ({} when it has none or it cannot be read)."""
    try:
        data = orjson.loads((version / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == 1 else {}


def _read_manifest(version: Path) -> dict[str, list[int | str]]:
    """The ``files`` of an existing version's manifest ({} when it has none or it cannot be read: nothing is
    linked); entries not of the form ``[sha256, size, mtime_ns, inode]`` left out (those files are
    written)."""
    files = _read_manifest_doc(version).get("files")
    if not isinstance(files, dict):
        return {}
    return {rel: entry for rel, entry in files.items()
            if isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str)
            and all(type(n) is int for n in entry[1:])}


def _trusted_manifest(version: Path) -> dict[str, list[int | str]]:
    """:func:`_read_manifest` of a version whose ``SHA256SUMS`` lists exactly the sha256s its manifest does
    ({} otherwise): a file's sha256 is taken from the manifest without hashing the file, so a manifest
    that does not agree with the checksums written with it (damaged, edited) is not used and every file is
    written again."""
    files = _read_manifest(version)
    try:
        sums = (version / SUMS).read_bytes()
    except OSError:
        return {}
    return files if files and _sums_text({rel: str(e[0]) for rel, e in files.items()}) == sums else {}


def _write_manifest(version: Path, files: dict[str, list[int | str]], provenance: Provenance) -> None:
    """Write ``version``'s manifest, atomically (temp file, flush, rename): it is rewritten when an unchanged
    version is published again from other inputs."""
    doc = {"format": 1, "files": files, **provenance.manifest_fields()}
    _replace_file(version / MANIFEST, orjson.dumps(doc))


def _unchanged_since(path: Path, entry: list[int | str]) -> bool:
    """``path`` is still the file ``entry`` describes (size, mtime and inode as written): not edited."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return [st.st_size, st.st_mtime_ns, st.st_ino] == list(entry[1:4])


def _read_exactly(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd`` (fewer only at the end of the file)."""
    blob = os.read(fd, size)
    while len(blob) < size:
        more = os.read(fd, size - len(blob))
        if not more:
            break
        blob += more
    return blob


def _write_all(fd: int, piece: bytes | memoryview) -> None:
    view = memoryview(piece)
    while view:
        view = view[os.write(fd, view):]


#: files written or linked between two calls of a writer's ``on_file`` (a progress bar)
_PROGRESS_FILES = 64

#: pieces of a file written with one ``writev(2)`` (Linux IOV_MAX is 1024), or read and compared, at a time;
#: a text's encoded chunks (:data:`_CHUNK_CHARS`, at least this many bytes) each go alone
_BATCH_PIECES = 1024
_BATCH_BYTES = 1 << 20


def _batches(pieces: Iterable[bytes]) -> Iterator[list[bytes]]:
    """``pieces`` in consecutive groups of at most :data:`_BATCH_PIECES`, cut once one holds
    :data:`_BATCH_BYTES` (the ~8,000 pieces of a 4,096-host plan.json: a few system calls, no joined copy)."""
    batch: list[bytes] = []
    size = 0
    for piece in pieces:
        batch.append(piece)
        size += len(piece)
        if len(batch) >= _BATCH_PIECES or size >= _BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _write_batch(fd: int, batch: list[bytes]) -> None:
    """Write ``batch`` in order: one ``write(2)`` per lone piece, else ``writev(2)``, what a short write
    left piece by piece."""
    if len(batch) == 1:
        _write_all(fd, batch[0])
        return
    done = os.writev(fd, batch)
    for piece in batch:
        if done >= len(piece):
            done -= len(piece)
            continue
        _write_all(fd, memoryview(piece)[done:])
        done = 0


def _write_file(path: Path, blob: bytes | Iterable[bytes], mode: int) -> list[int | str]:
    """Write ``blob`` (or its pieces) to the new file ``path`` and flush it (``fsync``: it is renamed over a
    file in force next); returns its manifest entry tail (size, mtime, inode)."""
    with open(path, "wb") as fh:
        if isinstance(blob, bytes):
            fh.write(blob)
        else:
            fh.writelines(blob)
        fh.flush()
        os.fsync(fh.fileno())
        os.chmod(path, mode)
        st = os.fstat(fh.fileno())
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _umask() -> int:
    """The process umask, read without changing it (``/proc/self/status``); 0o777 when unknown (every new
    file and directory then gets its mode set explicitly)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o777


_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_O_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class _Tree:
    """Open descriptors of the directories of one version tree, by relative directory (``""`` = the root),
    so that each file operation resolves one name (``openat``/``linkat``/``fstatat``) instead of the whole
    path. ``create``: the tree being built (directories made 0755 on demand, new files written here);
    else an existing version read from (a directory it lacks gives None). ``fsync_each``: flush every
    file and directory made (where the file system cannot be flushed in one call,
    :func:`roce_tune.atomic.can_sync_file_system`)."""

    def __init__(self, root: Path, create: bool, fsync_each: bool = False) -> None:
        self._fds: dict[str, int | None] = {"": os.open(root, _O_DIR)}
        self._create = create
        self._fsync_each = fsync_each
        self._umask = _umask() if create else 0
        self._can_link = True

    def dir_fd(self, reldir: str) -> int | None:
        """The descriptor of ``reldir`` (made when building; None when an existing tree lacks it)."""
        if reldir in self._fds:
            return self._fds[reldir]
        parent, _, name = reldir.rpartition("/")
        pfd = self.dir_fd(parent)
        fd: int | None = None
        if pfd is not None:
            if self._create:
                os.mkdir(name, 0o755, dir_fd=pfd)
                if self._umask & 0o755:
                    os.chmod(name, 0o755, dir_fd=pfd, follow_symlinks=False)
            with contextlib.suppress(OSError):
                fd = os.open(name, _O_DIR, dir_fd=pfd)
            if fd is None and self._create:
                raise OSError(errno.ENOENT, "directory just made is gone", reldir)
        self._fds[reldir] = fd
        return fd

    def locate(self, rel: str) -> tuple[int | None, str]:
        """(descriptor of ``rel``'s directory, its file name)."""
        reldir, _, name = rel.rpartition("/")
        return self.dir_fd(reldir), name

    def write(self, rel: str, batches: Iterable[list[bytes]]) -> list[int | str]:
        """Write the new file ``rel`` from its pieces in ``batches`` (:meth:`_Encoded.batches`), hashing the
        same bytes (one ``open``, a write per batch, ``fstat``, ``close``; ``*.sh`` 0755, other files 0644);
        returns its manifest entry
        ``[sha256, size_bytes, mtime_ns, inode]``."""
        dfd, name = self.locate(rel)
        mode = 0o755 if rel.endswith(".sh") else 0o644
        fd = os.open(name, _O_NEW, mode, dir_fd=dfd)
        h = hashlib.sha256()
        try:
            for batch in batches:
                for piece in batch:
                    h.update(piece)
                _write_batch(fd, batch)
            if self._umask & mode:
                os.fchmod(fd, mode)
            if self._fsync_each:
                os.fsync(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        return [h.hexdigest(), st.st_size, st.st_mtime_ns, st.st_ino]

    def unchanged(self, rel: str, entry: list[int | str]) -> bool:
        """``rel`` of this (existing) tree is still the file ``entry`` describes (size, mtime, inode)."""
        dfd, name = self.locate(rel)
        if dfd is None:
            return False
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError:
            return False
        return [st.st_size, st.st_mtime_ns, st.st_ino] == list(entry[1:4])

    def holds(self, rel: str, entry: list[int | str], batches: Iterable[list[bytes]]) -> bool:
        """``rel`` of this (existing) tree is still the file ``entry`` describes (size, mtime, inode) and its
        bytes are the pieces in ``batches``: read and compared a batch at a time, so its sha256 is ``entry``'s
        without hashing anything (one ``open``, ``fstat``, the reads, ``close``)."""
        fd = self._open_as(rel, entry)
        if fd is None:
            return False
        try:
            size = 0
            for batch in batches:
                n = sum(map(len, batch))
                size += n
                if size > int(entry[1]) or _read_exactly(fd, n) != (batch[0] if len(batch) == 1
                                                                   else b"".join(batch)):
                    return False
            return size == entry[1]
        finally:
            os.close(fd)

    def holds_blob(self, rel: str, entry: list[int | str], blob: bytes) -> bool:
        """:meth:`holds` of a file in one piece, ``blob`` (one ``open``, ``fstat``, ``read``, ``close``)."""
        fd = self._open_as(rel, entry) if entry[1] == len(blob) else None
        if fd is None:
            return False
        try:
            return _read_exactly(fd, len(blob)) == blob
        finally:
            os.close(fd)

    def _open_as(self, rel: str, entry: list[int | str]) -> int | None:
        """A read-only descriptor of ``rel`` when it is still the file ``entry`` describes (size, mtime,
        inode; symlinks not followed), else None (missing, unreadable or changed). The caller closes it."""
        dfd, name = self.locate(rel)
        if dfd is None:
            return None
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
        except OSError:
            st = None
        if st is None or [st.st_size, st.st_mtime_ns, st.st_ino] != list(entry[1:4]):
            os.close(fd)
            return None
        return fd

    def link_from(self, old: _Tree, rel: str) -> bool:
        """Hard-link ``rel`` of ``old`` into this tree; False where the file system cannot (write it instead).

        Raises:
            OSError: any other error of ``link(2)``.
        """
        src_fd, name = old.locate(rel)
        dst_fd, _ = self.locate(rel)
        if not self._can_link:
            return False
        try:
            os.link(name, name, src_dir_fd=src_fd, dst_dir_fd=dst_fd, follow_symlinks=False)
        except OSError as exc:
            if errno.errorcode.get(exc.errno or 0, "") in _NO_LINK:
                self._can_link = False  # the next file would fail the same way
                return False
            raise
        return True

    def close(self) -> None:
        """Flush the directories made (``fsync_each``) and close every descriptor."""
        for fd in sorted((fd for fd in self._fds.values() if fd is not None), reverse=True):
            if self._fsync_each and self._create:
                os.fsync(fd)
            os.close(fd)
        self._fds.clear()


class _VersionBuilder:
    """Builds one plan version in the new empty directory ``stage`` (module docstring: writing only what
    changed), each file's bytes made once and either written or compared, never hashed twice.

    :meth:`hash_and_write` writes every file the version ``previous`` lacks or has with another size,
    hashing the bytes as they are written. A file ``previous`` has with the same size, unedited there since
    its manifest entry was made (size, mtime, inode), is read and compared byte for byte instead: when equal
    it is kept for :meth:`finish` with the sha256 that entry lists (nothing hashed), else written. It
    returns the new version's name, so the caller can stop there when it is the version in force.
    :meth:`finish` hard-links each kept file from ``previous`` (checked unedited once more right before;
    written if not), then writes ``SHA256SUMS`` and the manifest. Nothing is flushed (the caller flushes the
    file system once before publishing) except where the file system cannot be flushed in one call: there
    each file and directory is flushed (``fsync``). Host scripts ``*.sh`` are 0755, other files 0644,
    directories 0755.
    """

    def __init__(self, stage: Path, data: _Encoded, previous: Path | None, provenance: Provenance,
                 stats: WriteStats, on_file: Callable[[int], None] | None) -> None:
        self._data, self._provenance, self._stats, self._on_file = data, provenance, stats, on_file
        self._prev = _trusted_manifest(previous) if previous is not None else {}
        self._new = _Tree(stage, create=True, fsync_each=not can_sync_file_system())
        self._old = _Tree(previous, create=False) if previous is not None and self._prev else None
        self._manifest: dict[str, list[int | str]] = {}
        self._same: list[str] = []
        self._ticks = 0

    def __enter__(self) -> _VersionBuilder:
        return self

    def __exit__(self, *exc: object) -> None:
        self._new.close()
        if self._old is not None:
            self._old.close()

    def _write(self, rel: str, blob: bytes | None = None) -> None:
        """Write ``rel`` (from ``blob``, its bytes, when given)."""
        self._manifest[rel] = self._new.write(rel, self._data.batches(rel) if blob is None else [[blob]])
        self._stats.written += 1
        self._tick()

    def _tick(self) -> None:
        """Count a file written or linked; ``on_file`` hears of them :data:`_PROGRESS_FILES` at a time (an
        update of a terminal's progress bar costs more than linking a file)."""
        self._ticks += 1
        if self._ticks >= _PROGRESS_FILES:
            self._report()

    def _report(self) -> None:
        """Tell ``on_file`` how many files were written or linked since it last heard."""
        if self._ticks and self._on_file is not None:
            self._on_file(self._ticks)
        self._ticks = 0

    def _equal(self, rel: str, entry: list[int | str], blob: bytes | None) -> bool:
        """``rel`` is in the previous version as ``entry`` says (unedited) and holds its bytes (``blob`` when
        given, else the pieces of ``rel``)."""
        if self._old is None:
            return False
        if blob is not None:
            return self._old.holds_blob(rel, entry, blob)
        return (self._data.size(rel) in (None, entry[1])
                and self._old.holds(rel, entry, self._data.batches(rel)))

    def hash_and_write(self) -> str:
        """Write what changed, compare what may not have; the version's name (``.plan-<16 hex>``).

        Until a file is known to differ from the version in force (another sha256, or another set of
        files) the files found equal are only noted: the new version may be the one in force, and then
        nothing is linked. From then on each is linked as soon as it is found equal."""
        digests: dict[str, str] = {}
        differs = self._data.keys() != self._prev.keys()
        for rel in self._data:
            entry = self._prev.get(rel)
            blob = self._data.whole(rel)
            if entry is not None and self._equal(rel, entry, blob):
                digests[rel] = str(entry[0])
                if differs:
                    self._carry(rel, entry, checked=True)
                else:
                    self._same.append(rel)
                continue
            self._write(rel, blob)
            digests[rel] = str(self._manifest[rel][0])
            if self._prev and (entry is None or digests[rel] != entry[0]):
                self._stats.changed.append(rel)
            if not differs and (entry is None or digests[rel] != entry[0]):
                differs = True
                self._carry_noted()
        self._report()
        self.digests = digests
        self._sums = _sums_text(digests)
        return ".plan-" + hashlib.sha256(self._sums).hexdigest()[:16]

    def _carry(self, rel: str, entry: list[int | str], checked: bool) -> None:
        """Hard-link ``rel`` (equal to ``entry``'s file of the previous version) from there; write it when
        that file was edited since (``checked``: just compared) or the file system cannot link."""
        old = self._old
        if old is not None and (checked or old.unchanged(rel, entry)) and self._new.link_from(old, rel):
            self._manifest[rel] = list(entry)
            self._stats.linked += 1
            self._tick()
        else:
            self._write(rel)

    def _carry_noted(self) -> None:
        for rel in self._same:
            self._carry(rel, self._prev[rel], checked=False)
        self._same.clear()

    def finish(self) -> None:
        """Link (or write) the files :meth:`hash_and_write` noted; write ``SHA256SUMS`` and the manifest."""
        self._carry_noted()
        self._report()
        self._new.write(SUMS, [[self._sums]])
        doc = {"format": 1, "files": dict(sorted(self._manifest.items())),
               **self._provenance.manifest_fields()}
        self._new.write(MANIFEST, [[orjson.dumps(doc)]])
        self._stats.gone = sorted(self._prev.keys() - self._manifest.keys())
        self._stats.removed = len(self._stats.gone)


def _replace_file(path: Path, blob: bytes | Iterable[bytes]) -> list[int | str]:
    """Write ``path`` anew (temporary sibling, flushed, renamed over it: a new inode, so no other version
    sharing the old one by a hard link is touched); returns its manifest entry tail."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.restore")
    entry = _write_file(tmp, blob, 0o755 if path.name.endswith(".sh") else 0o644)
    os.replace(tmp, path)
    return entry


def _strays(version: Path, data: Collection[str]) -> list[Path]:
    """Files under ``switches/`` and ``hosts/`` of ``version`` that ``data`` does not have (a reader refuses
    them)."""
    return [p for sub in ("switches", "hosts") for p in sorted((version / sub).rglob("*"))
            if p.is_file() and p.relative_to(version).as_posix() not in data]


def _unowned(out: Path, name: str) -> list[str]:
    """Files under ``switches/`` and ``hosts/`` of the version ``name`` in ``out`` that ``plan`` did not
    write ([] when it is not a version directory, or lists nothing it wrote)."""
    version = out / name
    if not _OURS_INSIDE.fullmatch(name) or version.is_symlink() or not version.is_dir():
        return []
    listed = _written_by_plan(version)
    return _unlisted(version, listed) if listed else []


def _written_by_plan(version: Path) -> set[str]:
    """The files ``plan`` wrote into ``version``: those its manifest or its ``SHA256SUMS`` lists."""
    listed = set(_read_manifest(version))
    with contextlib.suppress(OSError, UnicodeDecodeError):
        listed.update(line.partition("  ")[2] for line in (version / SUMS).read_text().splitlines())
    return listed


def _restored_entry(path: Path, blob: Iterable[bytes], digest: str, entry: list[int | str] | None,
                    stats: WriteStats) -> list[int | str]:
    """The manifest entry of ``path`` in the version in force after making it hold ``blob`` (its pieces;
    sha256 ``digest``):
    kept when unchanged since written; re-read when touched (same sha256: only the entry is new); written
    again when edited or missing (``stats.restored``)."""
    if entry is not None and entry[0] == digest and _unchanged_since(path, entry):
        return entry
    if path.is_file() and not path.is_symlink() and hashlib.sha256(path.read_bytes()).hexdigest() == digest:
        st = path.stat()
        return [digest, st.st_size, st.st_mtime_ns, st.st_ino]
    stats.written += 1
    stats.restored += 1
    return [digest, *_replace_file(path, blob)]


def _restore_version(version: Path, data: _Encoded, digests: dict[str, str], stats: WriteStats,
                     provenance: Provenance) -> None:
    """Make the version in force, which ``data`` maps to, hold exactly ``data`` again (:func:`_restored_entry`
    per file; files it should not have removed, counted in ``stats.removed``; ``SHA256SUMS`` rewritten if
    changed) and update its manifest (with ``provenance`` when it records inputs). Each file is replaced by
    one ``rename(2)``: a reader sees the old or the right file, never part of one."""
    doc = _read_manifest_doc(version)
    old = doc.get("files")
    old = old if isinstance(old, dict) else {}
    manifest = {rel: _restored_entry(version / rel, data.chunks(rel), digests[rel], old.get(rel), stats)
                for rel in data}
    for stray in _strays(version, data):
        stray.unlink()
        stats.removed += 1
        stats.unowned.append(stray.relative_to(version).as_posix())
    sums = _sums_text(digests)
    if not (version / SUMS).is_file() or (version / SUMS).read_bytes() != sums:
        _replace_file(version / SUMS, sums)
        stats.restored += 1
    if provenance.inputs is None:  # keep what the version recorded
        provenance = Provenance(doc.get("inputs"), doc.get("extra") or {})
    if (manifest != old
            or (doc.get("inputs"), doc.get("extra") or {}) != (provenance.inputs, dict(provenance.extra))):
        for d in {version, *((version / rel).parent for rel in data)}:
            _fsync_dir(d)
        _write_manifest(version, manifest, provenance)


def _is_link_to_current(path: Path, name: str) -> bool:
    return path.is_symlink() and os.readlink(path) == f"{CURRENT}/{name}"


#: how a plan.json of schema 1.2 (compact, in model order) begins
_OUR_PLAN_JSON = re.compile(rb'\{\s*"schema_version"\s*:\s*"[0-9.]+"\s*,\s*"generator"\s*:\s*"roce-tune ')


def _plan_json_of_ours(path: Path) -> bool:
    """Whether ``path`` is a ``plan.json`` that ``roce-tune plan`` wrote: a link into ``.current``, or a JSON
    object with a ``schema_version`` whose ``generator`` is roce-tune (schema 1.2 says so in its first bytes;
    the indented, key-sorted 1.0/1.1 files of the layout before ``.current`` are read whole, once, when that
    layout is converted)."""
    if _is_link_to_current(path, "plan.json"):
        return True
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(1024)
            if _OUR_PLAN_JSON.match(head):
                return True
            doc = orjson.loads(head + fh.read())
    except (OSError, ValueError):
        return False
    return (isinstance(doc, dict) and "schema_version" in doc
            and str(doc.get("generator", "")).startswith("roce-tune "))


def _check_ours(out: Path, siblings: list[Path]) -> None:
    """Refuse a non-empty directory that shows no sign of being a plan directory (it is never emptied): its
    ``plan.json``, when that is the only sign, must be one roce-tune wrote, since converting the layout of
    older versions moves ``plan.json``, ``switches``, ``hosts`` … aside and removes them."""
    if os.path.lexists(out / CURRENT) or siblings or _inside_leftovers(out):
        return
    if not os.path.lexists(out / "plan.json"):
        raise OutputDirError(f"{out} is not empty and is not a roce-tune plan directory (no plan.json); "
                             "choose an empty or new --out")
    if not _plan_json_of_ours(out / "plan.json"):
        raise OutputDirError(f"{out} is not a roce-tune plan directory: its plan.json was not written by "
                             "`roce-tune plan` (plan would replace plan.json, plan.md, nccl.env, switches, "
                             "hosts and SHA256SUMS in it); choose an empty or new --out")


def _flush(directory: Path) -> None:
    """Make everything written so far durable before the step that publishes it: the file system holding
    ``directory`` flushed in one call (:func:`roce_tune.atomic.sync_file_system`: new files' data, their
    directories, links); where that is not available the files and directories were flushed (``fsync``) as
    they were made, and ``directory`` itself is."""
    if can_sync_file_system():
        sync_file_system(directory)
    else:
        _fsync_dir(directory)


def _write_fresh(out: Path, data: _Encoded, stats: WriteStats, on_file: Callable[[int], None] | None,
                 provenance: Provenance) -> None:
    """Build the whole directory as a temporary sibling and rename it onto ``out`` (absent)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        tmp.chmod(0o755)
        version, _ = _stage_version(tmp, data, None, stats, on_file, provenance)
        os.symlink(version, tmp / CURRENT)
        _link_names(tmp, version, add=True)
        _flush(tmp)
        os.rename(tmp, out)
        stats.published = True
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _retire_real_entries(out: Path) -> None:
    """Move aside real entries of the pre-symlink layout (``plan.json`` first, so until the switch a
    reader finds no plan rather than part of one)."""
    retired: Path | None = None
    for name in MANAGED:
        entry = out / name
        if os.path.lexists(entry) and not _is_link_to_current(entry, name):
            retired = retired or Path(tempfile.mkdtemp(prefix=".retired-", dir=out))
            os.rename(entry, retired / name)


def _switch_current(out: Path, version: str) -> None:
    """Make ``version`` the one in force: one ``rename(2)`` of a staged ``.current`` link, after everything
    it leads to is on disk (:func:`_flush`), and itself made durable before the previous version goes."""
    staged = out / ".current.new"
    _remove(staged)
    os.symlink(version, staged)
    _flush(out)
    os.replace(staged, out / CURRENT)  # the switch
    _fsync_dir(out)


def _linked_dirs(version: Path, data: Mapping[str, bytes]) -> bool:
    """Whether a directory holding files of ``data`` in ``version`` is a symlink (edited by hand): the version
    is then built again, not restored in place through the link (which could lead outside ``out``)."""
    parents = {rel.rpartition("/")[0] for rel in data} - {""}  # a handful: switches, hosts
    dirs = {d for p in parents for d in (PurePosixPath(p), *PurePosixPath(p).parents) if d.parts}
    return any(os.path.islink(version / d) for d in dirs)


def _stage_version(out: Path, data: _Encoded, in_force: str | None, stats: WriteStats,
                   on_file: Callable[[int], None] | None, provenance: Provenance) -> tuple[str, bool]:
    """Build the version ``data`` maps to in ``out`` (unchanged files linked from the version in force),
    unless it is the version in force: then make that one whole again (:func:`_restore_version`).
    Returns (its name, whether a version directory was built)."""
    previous = out / in_force if in_force and _OURS_INSIDE.fullmatch(in_force) else None
    if previous is not None and previous.is_symlink():
        previous = None  # a link to a directory elsewhere (moved, or edited by hand): never written through
    stage = Path(tempfile.mkdtemp(prefix=".plan-new-", dir=out))
    built = WriteStats()
    try:
        stage.chmod(0o755)
        with _VersionBuilder(stage, data, previous if previous and previous.is_dir() else None, provenance,
                             built, on_file) as builder:
            version = builder.hash_and_write()
            if (version == in_force and previous is not None and previous.is_dir()
                    and not _linked_dirs(previous, data)):
                shutil.rmtree(stage)
                _restore_version(out / version, data, builder.digests, stats, provenance)
                return version, False
            builder.finish()
        if os.path.lexists(out / version):
            _remove(out / version)  # an unpublished version an interrupted write left
        os.rename(stage, out / version)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    stats.written, stats.linked, stats.removed = built.written, built.linked, built.removed
    stats.changed, stats.gone = built.changed, built.gone
    return version, True


def _publish(out: Path, data: _Encoded, stats: WriteStats, on_file: Callable[[int], None] | None,
             provenance: Provenance) -> None:
    """Make ``data`` the plan in force in the existing plan directory ``out`` (module docstring).

    Steps, each safe to be killed after: build the version directory (unchanged files linked from the
    version in force) under a temporary name and rename it to its own; move aside real entries of the
    pre-symlink layout; add links for names the new version has (a link to a name the version in force
    lacks reads as absent); flush; switch ``.current`` with one ``rename(2)``; then tidy up (the previous
    version, links to names the new one lacks). The version in force made again from other inputs keeps
    its files and gets its manifest's provenance updated.
    """
    in_force = os.readlink(out / CURRENT) if (out / CURRENT).is_symlink() else None
    version, built = _stage_version(out, data, in_force, stats, on_file, provenance)
    if in_force is not None and in_force != version:
        stats.unowned = _unowned(out, in_force)  # they go with the version they were added to
    _retire_real_entries(out)
    relinked = _link_names(out, version, add=True)
    if in_force == version:
        stats.restored += relinked  # a top-level link of the plan in force removed by hand: put back
    if in_force != version:
        _switch_current(out, version)
        stats.published = True
    elif built:
        _flush(out)  # the version in force had gone: rebuilt under its name
    _link_names(out, version, add=False)
    for leftover in _inside_leftovers(out, keep=version):
        _remove(leftover)


def _link_names(out: Path, version: str, add: bool) -> int:
    """``add``: create the links ``NAME -> .current/NAME`` for names ``version`` has; else remove the
    links for names it lacks. Returns how many links were created."""
    created = 0
    for name in MANAGED:
        has = os.path.lexists(out / version / name)
        if add and has and not os.path.lexists(out / name):
            os.symlink(f"{CURRENT}/{name}", out / name)
            created += 1
        elif not add and not has and _is_link_to_current(out / name, name):
            (out / name).unlink()
    return created


def _make_parents(out: Path) -> None:
    """Create the directories above ``out``; OutputDirError naming the one that is a file."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        above = next((p for p in reversed(out.parents) if os.path.lexists(p) and not p.is_dir()), out.parent)
        raise OutputDirError(f"{above} is a file, not a directory: it cannot hold {out}; choose another "
                             "--out") from None


def _write_into(out: Path, data: _Encoded, stats: WriteStats, on_file: Callable[[int], None] | None,
                provenance: Provenance, siblings: list[Path]) -> None:
    """Build a new ``out`` as a whole (:func:`_write_fresh`); publish a version into an existing directory: a
    plan directory, or an empty one, which is kept (it may be a mount point, a link's target, the shell's
    working directory, or have its own owner and mode: a directory renamed over it would lose all that)."""
    if not out.is_dir():
        _write_fresh(out, data, stats, on_file, provenance)
        return
    if any(out.iterdir()):
        _check_ours(out, siblings)
    _publish(out, data, stats, on_file, provenance)


def write_tree(files: Mapping[str, str | bytes], out_dir: str | Path,
               on_file: Callable[[int], None] | None = None, provenance: Provenance | None = None) -> Path:
    """Write ``files`` (relative path -> text or bytes) as the plan in force in ``out_dir``, atomically,
    writing only files that changed (module docstring). See :func:`write_tree_stats` for what it did.

    Raises:
        OutputDirError: ``out_dir`` is a file, or a non-empty directory that is not a plan directory.
        OSError: the directory cannot be written (the plan in force stays as it was).
    """
    return write_tree_stats(files, out_dir, on_file, provenance)[0]


def write_tree_stats(files: Mapping[str, str | bytes], out_dir: str | Path,
                     on_file: Callable[[int], None] | None = None,
                     provenance: Provenance | None = None) -> tuple[Path, WriteStats]:
    """Write ``files`` as the plan in force in ``out_dir`` in one atomic step (module docstring).

    A new ``out_dir`` is built as a temporary sibling and renamed into place; an existing empty one is
    written in place, as a plan directory is (it stays the same directory). An existing plan
    directory gets a new version directory (unchanged files hard-linked from the version in force) and
    its ``.current`` link is replaced by ``rename(2)``; a directory in the layout of older roce-tune
    versions (real ``plan.json``, ``switches/`` …) is converted. Either way a crash at any point leaves
    the old complete plan or the new complete plan (while an old-layout directory is converted: no plan,
    which every reader refuses). Leftovers of earlier interrupted writes are removed once the new plan is
    in force. Entries ``plan`` does not own (``logs/``, ``verify/``, notes) are never touched. Rewriting
    an unchanged plan changes nothing on disk.

    Args:
        files: relative path (``/``-separated, no ``..``) -> content; text is written as UTF-8.
        out_dir: the output directory.
        on_file: called with the number of files written or linked since its last call, every
            :data:`_PROGRESS_FILES` files and when done (a progress bar).
        provenance: what the files were made from, kept in the manifest for :func:`reusable`.

    Returns:
        (the absolute output directory, what was written).

    Raises:
        OutputDirError: ``out_dir`` is a file, or a non-empty directory that is not a plan directory
            (it is never emptied to make room).
        OSError: the directory cannot be written (the plan in force stays as it was).
        ValueError: a relative path that is absolute, empty, or climbs out with ``..``.
    """
    bad = [rel for rel in files if not rel or rel.startswith("/") or ".." in rel.split("/")]
    if bad:
        raise ValueError(f"not a relative path inside the plan directory: {', '.join(map(repr, bad[:5]))}")
    out = Path(out_dir).absolute()
    if os.path.lexists(out) and not out.is_dir():
        raise OutputDirError(f"{out} exists and is not a directory; choose another --out")
    data = _Encoded(files)
    stats = WriteStats()
    _make_parents(out)
    with _locked(out.parent):
        siblings = _sibling_leftovers(out)
        _write_into(out, data, stats, on_file, provenance or Provenance(), siblings)
        for leftover in siblings:
            _remove(leftover)
        _fsync_dir(out.parent)
    return out, stats


def reusable(out_dir: str | Path, inputs: str) -> dict[str, Any] | None:
    """The ``extra`` object recorded with the version in force in ``out_dir`` when that version was made from
    ``inputs`` and is intact, else None (module docstring: skipping an unchanged re-plan).

    Intact: ``.current`` names a version directory with ``SHA256SUMS``, every managed link is in place, no
    leftovers of an interrupted write, and every file the manifest lists has the size, mtime and inode it
    was written with (a file edited, replaced or removed since makes it None: the caller makes the plan again
    and the writer rewrites that file). Costs one ``stat`` per file; no file is read or hashed.
    """
    out = Path(out_dir)
    current = out / CURRENT
    if not current.is_symlink() or _sibling_leftovers(out):
        return None
    name = os.readlink(current)
    version = out / name
    if (not _OURS_INSIDE.fullmatch(name) or _inside_leftovers(out, keep=name)
            or not (version / SUMS).is_file()):
        return None
    doc = _read_manifest_doc(version)
    files, extra = doc.get("files"), doc.get("extra")
    if doc.get("inputs") != inputs or not isinstance(files, dict) or not isinstance(extra, dict):
        return None
    if not all(_is_link_to_current(out / n, n) for n in MANAGED if os.path.lexists(version / n)):
        return None
    if _unlisted(version, files):  # a file added by hand: readers refuse it, the writer removes it
        return None
    return extra if _files_intact(version, files) else None


def _unlisted(version: Path, files: Collection[str]) -> list[str]:
    """The entries of ``switches/`` and ``hosts/`` of ``version`` that ``files`` does not list, as relative
    paths (names only, no ``stat``: about 1 ms for the ~6,000 files of a 4,096-host plan, where a walk with
    ``rglob`` and ``is_file`` costs 0.1 s; the reuse check's and every re-plan's budget, issue 16)."""
    out: list[str] = []
    for sub in ("switches", "hosts"):
        with contextlib.suppress(OSError):
            names = (f"{sub}/{name}" for name in os.listdir(version / sub))
            out += sorted(n for n in names if n not in files)
    return out


def _files_intact(version: Path, files: dict[str, Any]) -> bool:
    """Every file a manifest's ``files`` lists is in ``version`` with its size, mtime and inode (one
    ``fstatat`` each, by name in its directory)."""
    tree = _Tree(version, create=False)
    try:
        return all(isinstance(entry, list) and len(entry) == 4 and tree.unchanged(rel, entry)
                   for rel, entry in files.items())
    finally:
        tree.close()


# ----------------------------------------------------------------------------------------------- reading


def _few(items: list[str], limit: int = 8) -> str:
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _interrupted(out: Path) -> str:
    """A sentence naming the leftovers of an interrupted write next to or inside ``out`` ('' if none)."""
    in_force = os.readlink(out / CURRENT) if (out / CURRENT).is_symlink() else None
    left = [p.name for p in _sibling_leftovers(out) + _inside_leftovers(out, keep=in_force)]
    if not left:
        return ""
    return (f"; an interrupted `roce-tune plan` left {_few(left)}, so this directory may hold part of one "
            "plan and part of another: run `roce-tune plan` again")


def _read_blobs(root: Path) -> dict[str, bytes]:
    blobs = {name: (root / name).read_bytes() for name in ("plan.json", "plan.md", "nccl.env")
             if (root / name).is_file()}
    for sub in ("switches", "hosts"):
        blobs.update({p.relative_to(root).as_posix(): p.read_bytes()
                      for p in sorted((root / sub).rglob("*")) if p.is_file()})
    return blobs


def _parse_sums(path: Path) -> dict[str, str]:
    """``SHA256SUMS`` as relative path -> sha256.

    Raises:
        PlanDirError: a line that is not ``<64 hex>  <path>`` (named with its line number).
    """
    listed: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        digest, sep, rel = line.partition("  ")
        if not sep or not re.fullmatch(r"[0-9a-f]{64}", digest) or not rel:
            raise PlanDirError(f"{path}:{n}: not a `<sha256>  <file>` line: {line[:80]!r}; "
                               "run `roce-tune plan` again")
        listed[rel] = digest
    return listed


def _verify_sums(out: Path, sums_path: Path, blobs: dict[str, bytes]) -> dict[str, str]:
    """Check every file against ``SHA256SUMS``: none missing, none changed, none added.

    Raises:
        PlanDirError: naming the files missing, not matching their sha256, or not listed.
    """
    listed = _parse_sums(sums_path)
    missing = [rel for rel in listed if rel not in blobs]
    if missing:
        raise PlanDirError(f"incomplete plan: {_few(missing)} listed in {SUMS} "
                           f"{'is' if len(missing) == 1 else 'are'} missing{_interrupted(out)}; "
                           "run `roce-tune plan` again")
    changed = [rel for rel, digest in listed.items() if hashlib.sha256(blobs[rel]).hexdigest() != digest]
    if changed:
        raise PlanDirError(f"{_few(changed)} in {out} {'does' if len(changed) == 1 else 'do'} not match "
                           f"{'its' if len(changed) == 1 else 'their'} sha256 in {SUMS} (edited after "
                           "`roce-tune plan`?); nothing was done: run `roce-tune plan` again to review and "
                           "write the change")
    extra = [rel for rel in blobs if rel not in listed]
    if extra:
        raise PlanDirError(f"{_few(extra)} in {out} {'is' if len(extra) == 1 else 'are'} not listed in "
                           f"{SUMS} (not written by `roce-tune plan`); remove it or run `roce-tune plan` "
                           "again")
    return listed


def read_version(out_dir: str | Path) -> PlanFiles:
    """Read the plan in force in ``out_dir`` as one consistent snapshot, verified against ``SHA256SUMS``.

    Raises:
        PlanDirError: no ``plan.json``; a file listed in ``SHA256SUMS`` is missing, changed or a file is
            not listed there; a malformed ``SHA256SUMS``; or a directory without ``SHA256SUMS`` (written by
            an older roce-tune) has the leftovers of an interrupted write next to it (it may be
            half-swapped). The message names the directory or file, what is wrong and the fix.
        OSError: a file cannot be read.
    """
    out = Path(out_dir)
    versioned = (out / CURRENT).is_symlink()
    root = out / os.readlink(out / CURRENT) if versioned else out
    if not (root / "plan.json").is_file():
        raise PlanDirError(f"no plan.json in {out}"
                           f"{_interrupted(out) or '; run `roce-tune plan` to write one'}")
    blobs = _read_blobs(root)
    sha256: dict[str, str] = {}
    if (root / SUMS).is_file():
        sha256 = _verify_sums(out, root / SUMS, blobs)
    elif _sibling_leftovers(out):
        raise PlanDirError(f"written by an older roce-tune{_interrupted(out)}")
    try:
        files = {rel: blob.decode("utf-8") for rel, blob in blobs.items()}
    except UnicodeDecodeError as exc:
        bad = next(rel for rel, blob in blobs.items() if not _is_utf8(blob))
        raise PlanDirError(f"{root / bad}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    layout = "versioned" if versioned else "sums" if sha256 else "legacy"
    return PlanFiles(root=root, layout=layout, files=files, sha256=sha256)


def _is_utf8(blob: bytes) -> bool:
    try:
        blob.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_tree(out_dir: str | Path) -> dict[str, str]:
    """The files of the plan in force in ``out_dir`` (relative path -> text), verified: see
    :func:`read_version`, which this returns the ``files`` of.

    Raises:
        PlanDirError: see :func:`read_version`.
        OSError: a file cannot be read.
    """
    return read_version(out_dir).files
