"""A ported tau2 domain as an assay :class:`~assay.envs.environment.Domain`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ...core.task import Task as AssayTask
from ...envs.state import Database, State
from ...envs.tools import Toolkit
from .environment import Tau2Environment
from .loader import LoadedDomain, load_domain
from .store import Tau2DataError
from .tasks import InitialState, Task

#: Key of ``Task.metadata`` under which an assay task carries its tau2 parts:
#: ``{"initial_state": <tau2 InitialState dict>, "user_tools": [names] | None}``.
METADATA_KEY = "tau2"

_LOCK = threading.Lock()
_DOMAINS: dict[tuple[str, str], Tau2Domain] = {}


class Tau2Domain:
    """tau2 domain ``name`` read from a data folder: its policy, its tools (agent and
    user), its base state, and environments for its tasks."""

    templates: Mapping[str, Callable[..., Any]] = {}

    def __init__(self, loaded: LoadedDomain):
        self.loaded = loaded
        self.name = f"tau2-{loaded.name}"
        self.version = loaded.fingerprint
        self.policy = loaded.policy
        spec = loaded.spec
        tools = [*spec.tools.tools, *(spec.user_tools.tools if spec.user_tools is not None else [])]
        self.toolkit = Toolkit(tools)
        self._initial: dict[str, State] = {}

    def base_state(self, seed: int) -> Database:
        """The domain's database as the data folder holds it (the same for every seed)."""
        return Database(self.loaded.spec.keys, self.loaded.base)

    def environment(self, task: AssayTask, now: datetime) -> Tau2Environment:
        """A fresh, not yet reset environment for an assay task; its tau2 initial state
        and user tool list come from ``task.metadata["tau2"]`` (see :data:`METADATA_KEY`).
        tau2 domains keep their own fixed "now", so ``now`` is not used."""
        extra = task.metadata.get(METADATA_KEY) or {}
        raw = extra.get("initial_state")
        try:
            initial = InitialState.model_validate(raw) if raw is not None else None
        except Exception as exc:
            raise Tau2DataError(f"task {task.id}: metadata.tau2.initial_state: {exc}") from None
        return self.environment_for(initial, user_tools=extra.get("user_tools"))

    def environment_for(
        self, initial_state: InitialState | None = None, *, user_tools: list[str] | None = None
    ) -> Tau2Environment:
        """A fresh, not yet reset environment starting from ``initial_state``; the state
        after an initial state is computed once and shared by later environments."""
        return Tau2Environment(self.loaded, initial_state, user_tools=user_tools, cache=self._initial)

    def task_environment(self, task: Task, seed: int = 0) -> Tau2Environment:
        """A reset environment for a tau2 task (its ``initial_state`` applied)."""
        env = self.environment_for(task.initial_state, user_tools=task.user_tools)
        env.reset(seed)
        return env


def tau2_domain(name: str, data_dir: Path | str) -> Tau2Domain:
    """The tau2 domain ``name`` (``airline``, ``retail``, ``telecom``,
    ``telecom-workflow`` or ``mock``) with its data read from ``data_dir`` (a folder
    holding ``domains/``, a tau2 checkout, or the domain's own folder). Data are read
    once per process; later calls share them."""
    loaded = load_domain(name, data_dir)
    key = (name, loaded.fingerprint + str(loaded.folder))
    with _LOCK:
        domain = _DOMAINS.get(key)
        if domain is None or domain.loaded is not loaded:
            domain = _DOMAINS[key] = Tau2Domain(loaded)
    return domain


__all__ = ["METADATA_KEY", "Tau2Domain", "tau2_domain"]
