"""Parametric task templates: a named function that, given a seeded context, returns
the concrete parts of a task (user facts, records, graders, reference). Names, ids,
dates and amounts change with the seed; the expected behaviour stays defined."""

from __future__ import annotations

import importlib.util
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from ..envs.state import Database

TemplateFn = Callable[["TemplateContext"], dict[str, Any]]


@dataclass
class TemplateContext:
    """What a template gets: its seed and generator, the task's parameters, the
    task's "now", the domain's generated data for the task's data seed, and the
    suite's folder (None for suites not loaded from one), where files a template
    reads (a code task's repository) are found."""

    task_id: str
    seed: int
    params: dict[str, Any]
    as_of: datetime
    timezone: str
    db: Database
    suite_dir: Path | None = None
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)


def template(name: str | None = None) -> Callable[[TemplateFn], TemplateFn]:
    """Mark a function as the template called ``name`` (default: its own name)."""

    def mark(fn: TemplateFn) -> TemplateFn:
        fn.__assay_template__ = name or fn.__name__  # type: ignore[attr-defined]
        return fn

    return mark


def collect_templates(module: ModuleType) -> dict[str, TemplateFn]:
    """Every function of ``module`` marked with :func:`template`, by name."""
    found: dict[str, TemplateFn] = {}
    for obj in vars(module).values():
        name = getattr(obj, "__assay_template__", None)
        if isinstance(name, str) and callable(obj):
            found[name] = obj
    return found


def load_module(path: Path) -> ModuleType:
    """Import a suite's own templates module from its file path."""
    name = f"assay_suite_templates_{abs(hash(str(path.resolve())))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
