"""Running untrusted code: bubblewrap isolation, rlimits, wall-clock timeouts, output
caps (:class:`Sandbox`), and workspaces of files kept as state (:mod:`.workspace`).

See ``docs/code.md`` for what is isolated and how to opt in to unsafe execution."""

from .limits import SandboxLimits, SandboxResult
from .runner import RO_PATHS_ENV, UNSAFE_ENV, Sandbox, SandboxUnavailable, unsafe_opted_in
from .workspace import FILE_KEY, FILES_TABLE, clean_path, file_rows, materialize, new_workspace, scan

__all__ = [
    "FILES_TABLE",
    "FILE_KEY",
    "RO_PATHS_ENV",
    "UNSAFE_ENV",
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "clean_path",
    "file_rows",
    "materialize",
    "new_workspace",
    "scan",
    "unsafe_opted_in",
]
