"""The code domain's environment: a workspace folder per trial, whose files are the
state (the ``files`` table), changed only by tools that run in the sandbox."""

from __future__ import annotations

import asyncio
import random
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ...core.messages import ToolSpec
from ...core.task import Task
from ...envs.environment import Environment
from ...envs.sandbox import FILE_KEY, FILES_TABLE, Sandbox, SandboxLimits, materialize, new_workspace, scan
from ...envs.sandbox.workspace import remove_workspace
from ...envs.state import Database, State
from ...envs.tools import Caller, Toolkit, render_result
from .tools import CodeContext

KEYS = {FILES_TABLE: FILE_KEY}


class CodeEnvironment:
    """The workspace of one trial. ``reset`` writes the task's files
    (``initial_state.records.files``) to a fresh private folder; tools run in a
    :class:`~assay.envs.sandbox.Sandbox` there; ``snapshot`` reads the folder back into
    the ``files`` table, so an outcome's diff lists the files the agent changed. The
    folder is removed when the environment is reset again or garbage-collected."""

    def __init__(
        self,
        toolkit: Toolkit,
        records: Mapping[str, list[dict[str, Any]]],
        now: datetime,
        version: str,
        limits: SandboxLimits | None = None,
    ):
        unknown = sorted(set(records) - {FILES_TABLE})
        if unknown:
            raise ValueError(f"the code domain's state has one table, 'files'; the task gives {unknown}")
        self.toolkit = toolkit
        self._files = list(records.get(FILES_TABLE, []))
        self.now = now
        self.version = version
        self.sandbox = Sandbox(limits or SandboxLimits())
        self.db = Database(KEYS)
        self.root: Path | None = None
        self._seed = 0
        self._cleanup: Any = None

    def reset(self, seed: int) -> None:
        self.sandbox.check()  # no sandbox, no code: a harness error before anything runs
        if self._cleanup is not None:
            self._cleanup()
        self.root = new_workspace()
        self._cleanup = weakref.finalize(self, remove_workspace, self.root)
        materialize(self._files, self.root)
        self.db = Database(KEYS)
        self._sync()
        self._seed = seed

    def tools(self, for_: Caller = "agent") -> list[ToolSpec]:
        return self.toolkit.specs(for_)

    def call(self, name: str, args: dict[str, Any], for_: Caller = "agent") -> str:
        if self.root is None:
            raise RuntimeError("reset the environment before calling its tools")
        tool = self.toolkit.get(name, for_)
        ctx = CodeContext(
            self.db, self.now, random.Random(self._seed), for_, root=self.root, sandbox=self.sandbox
        )
        return render_result(tool(ctx, args))

    async def acall(self, name: str, args: dict[str, Any], for_: Caller = "agent") -> str:
        """:meth:`call` in a worker thread: other trials go on while a command runs."""
        return await asyncio.to_thread(self.call, name, args, for_)

    def snapshot(self) -> State:
        self._sync()
        return self.db.snapshot()

    def write_tools(self) -> set[str]:
        return self.toolkit.write_tools()

    def _sync(self) -> None:
        """Bring the ``files`` table in line with the folder."""
        if self.root is None:
            return
        on_disk = scan(self.root)
        for key in [r[FILE_KEY] for r in self.db.rows(FILES_TABLE)]:
            if key not in on_disk:
                self.db.delete(FILES_TABLE, key)
        for key, record in on_disk.items():
            if self.db.get(FILES_TABLE, key) != record:
                self.db.delete(FILES_TABLE, key)
                self.db.insert(FILES_TABLE, record)


@dataclass
class CodeDomain:
    """The ``code`` domain: workspaces of files, tools run in a sandbox."""

    name: str
    toolkit: Toolkit
    policy: str = ""
    version: str = "1"
    templates: Mapping[str, Any] = field(default_factory=dict)
    limits: SandboxLimits = field(default_factory=SandboxLimits)

    def base_state(self, seed: int) -> Database:
        return Database(KEYS)

    def environment(self, task: Task, now: datetime) -> Environment:
        return CodeEnvironment(
            self.toolkit, task.initial_state.records, now, f"{self.name}-{self.version}", self.limits
        )
