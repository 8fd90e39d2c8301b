"""Room kept on disk for a running run's last word.

A run on a SQLite file writes its trials until the disk is full. SQLite's write-ahead
log can take the disk to the byte at the end of a committed batch; the update that marks
the run ``interrupted`` (or ``finished``) then has no room either, and the run would be
left ``running`` for ever. So while a run is running, the store holds a small file next
to the database (``<db>-reserve-<key>``, :data:`RESERVE_BYTES`) and deletes it just before
it writes the run's final status: that update always has room.

The file is per run (two runs writing to one store each keep their own). A run killed
outright leaves its file behind; resuming the run and ending it removes it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from pathlib import Path

#: Space held while a run is running: room for the status update and some of its index
#: pages in the write-ahead log (a status update takes a few 4 KiB pages).
RESERVE_BYTES = 256 * 1024


def reserve_path(db: Path, run_id: str) -> Path:
    key = hashlib.sha256(run_id.encode()).hexdigest()[:12]
    return db.with_name(f"{db.name}-reserve-{key}")


def hold(db: Path, run_id: str, size: int = RESERVE_BYTES) -> bool:
    """Keep ``size`` bytes of the disk for the run; False when the disk has no room left
    (nothing is held, the run goes on as it would have)."""
    path = reserve_path(db, run_id)
    if path.exists():
        return True
    try:
        with open(path, "wb") as f:
            if not _allocate(f.fileno(), size):  # bytes no file system compresses away
                f.write(os.urandom(size))
        return True
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink()
        return False


def _allocate(fd: int, size: int) -> bool:
    """Allocate the blocks (not a sparse file); False where the system cannot."""
    allocate = getattr(os, "posix_fallocate", None)  # not on macOS
    if allocate is None:
        return False
    try:
        allocate(fd, 0, size)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise
        return False
    return True


def release(db: Path, run_id: str) -> None:
    """Give the run's reserved space back (nothing to do when none is held)."""
    with contextlib.suppress(OSError):
        reserve_path(db, run_id).unlink()
