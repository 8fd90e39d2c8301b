"""The bubblewrap command line of a sandbox: which namespaces, what is visible.

Inside the sandbox the command sees a read-only system (``/usr`` and the merged-usr
links, a few harmless files of ``/etc``, the Python interpreter and its virtual
environment), a fresh ``/proc``, a minimal ``/dev`` (with a private ``/dev/shm``), a
private ``/tmp`` (tmpfs), and
its workspace, read-write, at ``/workspace``. Nothing else of the host exists there:
no home directories, no ``/root``, no project checkout, no host ``/tmp``. There is no
network (an empty network namespace: only its own loopback), no view of the
host's processes (own PID namespace, killed as a whole when its first process ends),
no IPC, its own hostname, a new session (no terminal injection).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

#: Where the workspace and assay's helper files appear inside the sandbox.
WORKSPACE = "/workspace"
HELPERS = "/.assay"

#: System folders bound read-only (or recreated as the symbolic links they are).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: The files of /etc a program needs to start and resolve "localhost"; nothing secret.
ETC_ENTRIES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "timezone",
    "hosts",
    "nsswitch.conf",
    "mime.types",
)
NAMESPACES = ("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")


def python_roots() -> list[str]:
    """Folders the running interpreter needs: its installation and its virtual env."""
    roots = {sys.base_prefix, sys.prefix, sys.exec_prefix, str(Path(sys.executable).resolve().parents[1])}
    return sorted(r for r in roots if r and Path(r).is_dir())


def closed_python_root() -> str | None:
    """A folder of the interpreter (:func:`python_roots`) that other users may not enter
    (``mktemp -d`` makes them mode 0700). It is bound into the sandbox as it is, and as
    root the sandboxed command runs as an unprivileged uid: it could not start Python."""
    for root in python_roots():
        if os.stat(os.path.realpath(root)).st_mode & 0o005 != 0o005:
            return root
    return None


def _etc_paths() -> list[str]:
    found = [f"/etc/{name}" for name in ETC_ENTRIES if os.path.lexists(f"/etc/{name}")]
    found += sorted(str(p) for p in Path("/etc").glob("python3*"))
    return found


def _covered(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


class BindPlan:
    """Accumulates bubblewrap mount arguments, creating parent folders world-readable
    (bubblewrap would otherwise create them mode 0700, hiding what is bound below)."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.dirs: set[str] = {"/", "/tmp", "/proc", "/dev", "/dev/shm"}
        self.bound: list[str] = []

    def parents(self, dest: str) -> None:
        missing = []
        parent = str(Path(dest).parent)
        while parent not in self.dirs:
            missing.append(parent)
            parent = str(Path(parent).parent)
        for folder in reversed(missing):
            self.args += ["--perms", "0755", "--dir", folder]
            self.dirs.add(folder)

    def ro(self, source: str, dest: str | None = None) -> None:
        dest = dest or source
        if _covered(dest, self.bound):
            return
        if os.path.islink(source) and dest == source:
            self.parents(dest)
            self.args += ["--symlink", os.readlink(source), dest]
            self.dirs.add(dest)
            return
        self.parents(dest)
        self.args += ["--ro-bind", source, dest]
        self.bound.append(dest)
        self.dirs.add(dest)


def bwrap_argv(
    bwrap: str,
    workspace: Path,
    helpers: Mapping[str, Path],
    env: Mapping[str, str],
    extra_ro: Sequence[str] = (),
    tmp_bytes: int = 256 << 20,
    drop_user: bool = True,
) -> list[str]:
    """The bubblewrap arguments (up to ``--``) for one sandboxed command.

    ``helpers`` maps file names to host files shown read-only under :data:`HELPERS`;
    ``drop_user`` adds a user namespace (bubblewrap run by an ordinary user; as root the
    launcher switches to an unprivileged uid instead)."""
    plan = BindPlan()
    for path in SYSTEM_PATHS:
        if os.path.lexists(path):
            plan.ro(path)
    for path in _etc_paths():
        plan.ro(path)
    for path in [*python_roots(), *extra_ro]:
        real = os.path.realpath(path)
        if os.path.exists(real):
            plan.ro(real)
            if real != path and path not in plan.dirs and not _covered(path, plan.bound):
                plan.parents(path)
                plan.args += ["--symlink", real, path]
                plan.dirs.add(path)
    plan.args += ["--perms", "0755", "--dir", HELPERS]
    plan.dirs.add(HELPERS)
    for name, source in helpers.items():
        plan.args += ["--ro-bind", str(source), f"{HELPERS}/{name}"]
    args = [bwrap, *NAMESPACES, "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if drop_user:
        args += ["--unshare-user", "--disable-userns"]
    # first the private /tmp and /dev/shm (world-writable, sticky), so binds below stay visible
    size = str(tmp_bytes)
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]  # POSIX semaphores
    args += plan.args
    args += ["--bind", str(workspace), WORKSPACE, "--chdir", WORKSPACE, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--"]


@functools.lru_cache(maxsize=4)
def probe(bwrap: str | None, drop_user: bool) -> str | None:
    """None when bubblewrap can start a sandbox here, else why it cannot (one clause)."""
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    args = [bwrap, *NAMESPACES, "--die-with-parent"]
    if drop_user:
        args += ["--unshare-user"]
    args += ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "true"]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap cannot be started ({exc})"
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return f"bubblewrap cannot create a sandbox here ({reason})"
    closed = None if drop_user else closed_python_root()
    if closed is not None:
        mode = oct(os.stat(os.path.realpath(closed)).st_mode & 0o777)[2:]
        return (
            f"the sandbox's unprivileged user cannot enter {closed} (mode {mode}), where this Python "
            f"is installed (chmod o+rx {closed}, or use a Python environment others can read)"
        )
    return None


def find_bwrap() -> str | None:
    return shutil.which("bwrap")
