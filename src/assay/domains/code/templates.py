"""The code domain's templates: ``workspace`` makes a folder of the suite a task's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...envs.sandbox import FILE_KEY, FILES_TABLE, clean_path, scan
from ...suites.templates import TemplateContext, template

#: A repository folder larger than this is refused (tasks carry their files by value).
MAX_WORKSPACE_BYTES = 20 << 20


@template("workspace")
def workspace(ctx: TemplateContext) -> dict[str, Any]:
    """The task's workspace is the folder ``params.dir`` (relative to the suite's
    folder), read when the suite is loaded so the files travel with the task and its
    hash covers them; ``params.files`` (path -> content) are added over it."""
    folder = ctx.params.get("dir")
    if not isinstance(folder, str) or not folder:
        raise ValueError("the workspace template needs params.dir, a folder relative to the suite")
    if ctx.suite_dir is None:
        raise ValueError("the workspace template needs a suite loaded from a folder")
    suite_dir = Path(ctx.suite_dir).resolve()
    root = (suite_dir / clean_path(folder)).resolve()
    if not root.is_dir() or not root.is_relative_to(suite_dir):
        raise ValueError(f"workspace folder {folder!r} does not exist in the suite folder")
    files = scan(root)
    size = sum(len(str(r.get("content", r.get("content_base64", "")))) for r in files.values())
    if size > MAX_WORKSPACE_BYTES:
        raise ValueError(f"workspace folder {folder!r} holds {size >> 20} MB; the limit is 20 MB")
    for path, content in dict(ctx.params.get("files") or {}).items():
        rel = clean_path(path)
        files[rel] = {FILE_KEY: rel, "content": str(content)}
    return {"records": {FILES_TABLE: [files[k] for k in sorted(files)]}}


TEMPLATES = {"workspace": workspace}
