"""Where a run comes from: git commit, package versions, a fresh run id."""

from __future__ import annotations

import platform
import re
import subprocess
import uuid
from datetime import datetime, timezone
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The commit of the working directory's git checkout, if there is one."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def versions() -> dict[str, str]:
    """Versions of Python, the platform and the packages that shape a run's results."""
    return dict(_versions())


@lru_cache(maxsize=1)
def _versions() -> dict[str, str]:  # read from the installed packages' metadata once per process
    found = {"python": platform.python_version(), "platform": platform.platform()}
    for name in ("assay", "pydantic", "sqlalchemy", "numpy"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def new_run_id(suite_name: str) -> str:
    """``{suite}-{UTC time}-{6 hex digits}``; a suite name's characters that a run id
    may not hold (:data:`assay.core.spec.SAFE_RUN_ID`) become ``_``, and it is cut to fit."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    name = re.sub(r"[^\w.:-]", "_", suite_name)[:100] or "run"
    if not re.match(r"\w", name):
        name = f"_{name}"[:100]
    return f"{name}-{stamp}-{uuid.uuid4().hex[:6]}"
