"""A workspace of files as data: the ``files`` table of a state, written to a folder
and read back.

A file record is ``{"path": "src/calc.py", "content": "..."}`` (UTF-8 text), with
``"executable": true`` for executable files, ``"content_base64"`` instead of
``content`` for binary files, ``"symlink": TARGET`` for symbolic links, and
``"omitted": REASON`` (with ``size`` and ``sha256``) for files too large to keep.
Paths are relative, with ``/`` separators, never ``..``.

Reading a folder never follows a symbolic link and only opens regular files (a FIFO
or a device left by sandboxed code cannot block or leak host data); writing a folder
only creates what the records say, below the folder.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

#: The table of a state that holds the workspace, and its key.
FILES_TABLE = "files"
FILE_KEY = "path"
#: Files larger than this are recorded by size and hash only.
MAX_FILE_BYTES = 512 * 1024
#: At most this many files are recorded (the rest are counted in the scan's report).
MAX_FILES = 5000
#: Folders that are caches, never part of a workspace's state.
SKIPPED_DIRS = frozenset(
    {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"}
)

Record = dict[str, Any]


def clean_path(path: str) -> str:
    """``path`` normalised (``a/./b`` -> ``a/b``); ValueError if absolute, empty or
    escaping the workspace with ``..``."""
    text = str(path).replace("\\", "/").strip()
    pure = PurePosixPath(text)
    if not text or pure.is_absolute() or text.startswith("~"):
        raise ValueError(f"{path!r} must be a relative path inside the workspace")
    parts = [p for p in pure.parts if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(f"{path!r} must be a relative path inside the workspace (no '..')")
    return "/".join(parts)


def new_workspace(prefix: str = "assay-ws-") -> Path:
    """A fresh, empty, private folder."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def remove_workspace(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)


def materialize(records: Iterable[Mapping[str, Any]], root: Path) -> int:
    """Write file records below ``root`` (which should be new and empty); returns how
    many files were written. Records that only describe a file (``omitted``) are
    skipped."""
    written = 0
    links: list[tuple[Path, str]] = []
    for record in records:
        rel = clean_path(str(record[FILE_KEY]))
        target = root / rel
        if "omitted" in record:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        _no_links_between(root, target.parent)
        if "symlink" in record:
            links.append((target, str(record["symlink"])))
            continue
        if "content_base64" in record:
            data = base64.b64decode(str(record["content_base64"]))
        else:
            data = str(record.get("content", "")).encode("utf-8")
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if record.get("executable"):
            os.chmod(target, 0o755)
        written += 1
    for target, link in links:  # last, so no file is ever written through one
        if not os.path.lexists(target):
            os.symlink(link, target)
    return written


def _no_links_between(root: Path, folder: Path) -> None:
    here = folder
    while here != root:
        if here.is_symlink():
            raise ValueError(f"{here.relative_to(root)} is a symbolic link; files cannot be written below it")
        here = here.parent


def scan(root: Path) -> dict[str, Record]:
    """Every file below ``root`` as a record, by path (caches skipped)."""
    found: dict[str, Record] = {}
    stack = [root]
    while stack and len(found) < MAX_FILES:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            rel = Path(entry.path).relative_to(root).as_posix()
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = {FILE_KEY: rel, "symlink": os.readlink(entry.path)}
            elif stat.S_ISDIR(info.st_mode):
                if entry.name not in SKIPPED_DIRS:
                    stack.append(Path(entry.path))
            elif stat.S_ISREG(info.st_mode) and not entry.name.endswith(".pyc"):
                record = _file_record(entry.path, rel, info)
                if record is not None:
                    found[rel] = record
            if len(found) >= MAX_FILES:
                break
    return found


def _file_record(path: str, rel: str, info: os.stat_result) -> Record | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            digest = hashlib.sha256(data)
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
            return {
                FILE_KEY: rel,
                "size": info.st_size,
                "sha256": digest.hexdigest(),
                "omitted": f"larger than {MAX_FILE_BYTES // 1024} KB",
            }
    record: Record = {FILE_KEY: rel}
    try:
        record["content"] = data.decode("utf-8")
    except UnicodeDecodeError:
        record["content_base64"] = base64.b64encode(data).decode("ascii")
    if info.st_mode & 0o111:
        record["executable"] = True
    return record


def read_regular(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes | None:
    """The first ``max_bytes`` of ``path`` if it is a regular file (never through a
    symbolic link, never blocking on a FIFO); None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read(max_bytes)


def file_rows(state: Any) -> list[Record]:
    """The file records of a state (a State, a snapshot dict, or None: no files)."""
    if state is None:
        return []
    table = state.get(FILES_TABLE) if hasattr(state, "get") else None
    return [dict(r) for r in table.values()] if table else []
