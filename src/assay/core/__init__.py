"""Data types of assay, and the few helpers every layer uses (core.outputs writes files
whole or not at all). Imports nothing else of assay but its errors.

Names are imported on first use (``from assay.core import Task`` works as usual), so that
importing one small module of the core does not load all of it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_NAMES = {
    "canonical_json": "hashing",
    "derive_seed": "hashing",
    "stable_hash": "hashing",
    "MEDIA_TYPES": "messages",
    "Media": "messages",
    "Message": "messages",
    "Modality": "messages",
    "Requestor": "messages",
    "Role": "messages",
    "ToolCall": "messages",
    "ToolSpec": "messages",
    "Registry": "registry",
    "import_object": "registry",
    "EXCLUDED_TERMINATIONS": "results",
    "NORMAL_TERMINATIONS": "results",
    "TERMINATIONS": "results",
    "Config": "results",
    "GradeResult": "results",
    "Outcome": "results",
    "RootCause": "results",
    "RunInfo": "results",
    "TaskMeta": "results",
    "Termination": "results",
    "Trial": "results",
    "TrialResult": "results",
    "reward_of": "results",
    "is_secret_option": "secrets",
    "mask_options": "secrets",
    "secret_values": "secrets",
    "DecideSpec": "spec",
    "RunSpec": "spec",
    "SPLITS": "task",
    "STRATA": "task",
    "Action": "task",
    "DomainSource": "task",
    "HistoryCall": "task",
    "HistoryMessage": "task",
    "Speaker": "task",
    "GraderSpec": "task",
    "InitialState": "task",
    "Limits": "task",
    "Reference": "task",
    "Split": "task",
    "Stratum": "task",
    "Suite": "task",
    "SuiteDefaults": "task",
    "Task": "task",
    "UserScenario": "task",
    "Span": "transcript",
    "SpanKind": "transcript",
    "Transcript": "transcript",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.core' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
