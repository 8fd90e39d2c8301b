"""The cyclic collector during a run: the run's long-lived objects frozen out of its
reach, young collections less often, and every setting restored afterwards."""

from __future__ import annotations

import gc
import importlib
from pathlib import Path

import pytest
from tests.runner.test_hot_path import TRIVIAL

import assay
from assay.core.collector import RUN_YOUNG_THRESHOLD, run_collector

SEEN: list[tuple[int, int]] = []


def observing(conversation: object) -> str:
    SEEN.append((gc.get_threshold()[0], gc.get_freeze_count()))
    return "hello"


def test_a_run_freezes_what_exists_collects_less_often_and_restores_both(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(TRIVIAL)  # 3 tasks
    before = gc.get_threshold()
    seen = importlib.import_module("tests.runner.test_collector").SEEN  # the agent's module
    seen.clear()
    run = assay.run(
        tmp_path, agent="python:tests.runner.test_collector:observing", trials=2, store=str(tmp_path / "s.db")
    )
    assert run.summary().overall.success_rate == 1.0
    assert len(seen) == 6  # 3 tasks x 2 trials
    assert all(threshold == max(before[0], RUN_YOUNG_THRESHOLD) for threshold, _ in seen)
    assert all(frozen > 1000 for _, frozen in seen)  # modules, the suite, the plan
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_overlapping_runs_restore_the_settings_when_the_last_one_ends() -> None:
    before = gc.get_threshold()
    first, second = run_collector(), run_collector()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_threshold()[0] == max(before[0], RUN_YOUNG_THRESHOLD)  # the other run goes on
    second.__exit__(None, None, None)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_run_that_fails_restores_the_collector() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), run_collector():
        raise RuntimeError("the store broke")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
