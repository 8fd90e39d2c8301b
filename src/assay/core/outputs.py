"""Output files (reports, exports, summaries): written whole or not at all, and never
over the store the run is read from.

:func:`atomic_output` writes to a temporary file in the output's folder and renames it
into place only once everything is written: a full disk or an error midway leaves an
earlier file as it was and no temporary file behind. :func:`refuse_store_path` refuses
an output path that is the store (or one of its ``-wal``/``-shm``/``-journal`` files)
before anything is written.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any, Literal

from ..errors import AssayError

__all__ = ["AtomicOutput", "atomic_output", "refuse_store_path"]

STORE_FILE_SUFFIXES = ("", "-wal", "-shm", "-journal")
"""The store's file and the files SQLite keeps next to it."""


class AtomicOutput:
    """An output file being written: :attr:`file` is a temporary file in the folder of
    ``path`` (symbolic links followed), :meth:`commit` renames it over ``path``,
    :meth:`discard` removes it. Raises :class:`OSError` as :func:`open` would (``path``
    a directory, its folder missing or not writable).

    A ``path`` that exists and is not a regular file (``/dev/stdout``, a named pipe) is
    written directly: it cannot be replaced."""

    def __init__(self, path: str | os.PathLike[str], mode: Literal["w", "wb"] = "w", encoding: str = "utf-8"):
        self.path = Path(path)
        self.temp: Path | None = None
        text = mode == "w"
        try:
            found = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            found = None
        if found is not None and stat.S_ISDIR(found.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if found is not None and not stat.S_ISREG(found.st_mode):
            self.file: IO[Any] = open(self.path, mode, encoding=encoding if text else None)  # noqa: SIM115
            return
        self.target = Path(os.path.realpath(self.path))  # a link's target is replaced, not the link
        fd, self.temp = _create_temp(self.target)
        try:
            if found is not None:  # as writing over it would: the earlier file's permissions
                os.fchmod(fd, stat.S_IMODE(found.st_mode))
            self.file = os.fdopen(fd, mode, encoding=encoding if text else None)
        except BaseException:
            os.close(fd)
            self._remove_temp()
            raise

    def commit(self) -> None:
        """Put the file in place (written whole); on failure nothing changes and the
        temporary file is gone."""
        if self.temp is None:
            self.file.close()
            return
        try:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
            os.replace(self.temp, self.target)
        except BaseException:
            self.discard()
            raise
        self.temp = None

    def discard(self) -> None:
        """Drop what was written; an earlier file at ``path`` stays as it was."""
        with suppress(OSError, ValueError):
            self.file.close()  # a failed flush still closes it
        self._remove_temp()

    def _remove_temp(self) -> None:
        if self.temp is not None:
            with suppress(FileNotFoundError):
                os.unlink(self.temp)
            self.temp = None


def _create_temp(target: Path) -> tuple[int, Path]:
    """A new file next to ``target`` (created as ``open`` creates one: mode 0666 less
    the umask), hidden, named after it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        temp = target.with_name(f".{target.name[:40]}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(temp, flags, 0o666), temp
        except FileExistsError:
            continue


@contextmanager
def atomic_output(
    path: str | os.PathLike[str], mode: Literal["w", "wb"] = "w", encoding: str = "utf-8"
) -> Iterator[IO[Any]]:
    """A file object to write ``path`` with (text in ``encoding``, or ``"wb"``): the
    file appears at ``path`` when the block ends without an error, whole; an error in
    the block (a full disk) leaves an earlier file byte for byte as it was and no
    temporary file behind, and is raised."""
    output = AtomicOutput(path, mode, encoding)
    try:
        yield output.file
    except BaseException:
        output.discard()
        raise
    output.commit()


def _same_file(a: str, b: str) -> bool:
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return os.path.samefile(a, b)  # a hard link, a case-insensitive file system
    except (OSError, ValueError):  # one of them missing; a NUL in a name
        return False


def refuse_store_path(
    path: str | os.PathLike[str] | None, store: str | os.PathLike[str] | None, option: str
) -> None:
    """An :class:`AssayError` naming ``option`` when ``path`` is the SQLite file
    ``store`` (symbolic links and relative paths resolved) or its ``-wal``, ``-shm`` or
    ``-journal`` file: writing it would destroy the store. ``store`` None (in memory,
    another database) or ``path`` None: nothing to check. Opens neither file."""
    if path is None or store is None:
        return
    out, db = os.fspath(path), os.fspath(store)
    try:
        real = os.path.realpath(db)
    except ValueError:
        real = db
    for suffix in STORE_FILE_SUFFIXES:
        if _same_file(out, db + suffix) or _same_file(out, real + suffix):
            what = f"the {suffix[1:]} file of the store" if suffix else "the store"
            shown = f" ({db})" if suffix or out != db else ""
            raise AssayError(
                f"{option} {out} is {what} the run is read from{shown}; write the output elsewhere"
            )
