"""The columns and aggregates a finished run keeps for the next reader (store/runcache.py),
on SQLite and PostgreSQL: the same values as computed from the rows, read back instead of
recomputed, and never stale: a run that gains or loses trials after they were kept is
read from its rows again."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import inspect, text
from tests.server.support import toy_runs
from tests.store.faults import tmpfs

from assay.compare import compare_runs
from assay.errors import SpecError
from assay.runner.api import Run
from assay.store import Store, frames, runcache

PARTS = {"frame", "aggregates", "graded_scores", "value_sums"}
SUMMARY_PARTS = PARTS - {"value_sums"}  # what a summary reads (a comparison: value_sums too)


def _kept(store: Store, run_id: str) -> dict[str, str]:
    with store.engine.connect() as conn:
        if not inspect(conn).has_table("run_cache"):
            return {}
        rows = conn.execute(text("SELECT part, stamp FROM run_cache WHERE run_id = :r"), {"r": run_id})
        return {part: stamp for part, stamp in rows}


def _equal(a: Any, b: Any) -> None:
    """Equal values of equal types (arrays: same dtype, NaN where NaN, same objects)."""
    assert type(a) is type(b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype.kind == "f":
            assert np.array_equal(a, b, equal_nan=True)
        else:
            assert a.tolist() == b.tolist()
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            _equal(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _equal(x, y)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b


@pytest.fixture
def store(store_url: str, tmp_path: Path) -> Store:
    st = Store(store_url)
    st.cache_min_trials = 0  # the toy runs are small; real stores keep runs of 20,000+ trials
    toy_runs(tmp_path, st)
    return st


def _completed(summary: Any) -> int:
    assert summary.run is not None
    return int(summary.run.completed_trials)


def _computed(store: Store, run_id: str) -> dict[str, Any]:
    return {
        "frame": frames.frame_columns(store.engine, run_id),
        "aggregates": frames.frame_aggregates(store.engine, run_id, store.metric_columns),
        "graded_scores": frames.graded_scores(store.engine, run_id),
        "value_sums": frames.value_sums(store.engine, run_id, store.metric_columns),
    }


def _read(store: Store, run_id: str) -> dict[str, Any]:
    return {
        "frame": store.frame_columns(run_id),
        "aggregates": store.frame_aggregates(run_id),
        "graded_scores": store.graded_scores(run_id),
        "value_sums": store.value_sums(run_id),
    }


def test_a_finished_run_keeps_what_it_reads_and_reads_it_back(store: Store, monkeypatch: Any) -> None:
    for run_id in ("careful", "flaky"):
        reference = _computed(store, run_id)
        assert not _kept(store, run_id)
        _equal(_read(store, run_id), reference)  # computed, and kept
        assert set(_kept(store, run_id)) == PARTS
        summary = Run.load(run_id, store).summary().to_dict()

        def boom(*_: Any) -> Any:
            raise AssertionError("read from the rows although the run's parts are kept")

        with monkeypatch.context() as m:
            for name in ("frame_columns", "frame_aggregates", "graded_scores", "value_sums"):
                m.setattr(f"assay.store.columns.{name}", boom)
            _equal(_read(store, run_id), reference)  # from the kept parts
            assert Run.load(run_id, store).summary().to_dict() == summary


def test_a_comparison_reads_the_kept_parts(store: Store, monkeypatch: Any) -> None:
    store.cache_min_trials = 10**9
    from_rows = compare_runs([Run.load("careful", store), Run.load("flaky", store)]).to_dict()
    assert not _kept(store, "careful") and not _kept(store, "flaky")
    store.cache_min_trials = 0
    kept = compare_runs([Run.load("careful", store), Run.load("flaky", store)]).to_dict()
    assert {"frame", "value_sums"} <= set(_kept(store, "careful")) & set(_kept(store, "flaky"))
    with monkeypatch.context() as m:
        for name in ("frame_columns", "value_sums"):
            m.setattr(f"assay.store.columns.{name}", None)  # not called: kept
        again = compare_runs([Run.load("careful", store), Run.load("flaky", store)]).to_dict()
    assert from_rows == kept == again


def test_more_trials_after_the_parts_were_kept_are_never_hidden(store: Store) -> None:
    before = Run.load("careful", store).summary()
    assert set(_kept(store, "careful")) == SUMMARY_PARTS
    results = store.load_results("careful")
    failed = [
        replace(r, trial_index=r.trial_index + 10, reward=0, termination="max_turns") for r in results[:4]
    ]
    assert store.write_trials(failed) == 4  # the run stays "finished"
    after = Run.load("careful", store).summary()
    assert _completed(after) == _completed(before) + 4
    assert after.overall.trials == before.overall.trials + 4
    assert after.terminations.get("max_turns", 0) == before.terminations.get("max_turns", 0) + 4
    _equal(_read(store, "careful"), _computed(store, "careful"))
    stamps = set(_kept(store, "careful").values())
    assert len(stamps) == 1 and runcache.stamp(store.engine, "careful", 0) in stamps  # kept anew


def test_retried_errors_run_again_are_read_afresh(store: Store) -> None:
    results = store.load_results("careful")
    broken = [
        replace(r, trial_index=r.trial_index + 10, reward=None, termination="harness_error")
        for r in results[:2]
    ]
    store.write_trials(broken)
    with_errors = Run.load("careful", store).summary()
    assert with_errors.excluded.trials == 2 and set(_kept(store, "careful")) == SUMMARY_PARTS
    assert store.retry_errors("careful") == 2  # the same trials are moved to the attempts...
    fixed = [replace(r, reward=1, termination="user_stop") for r in broken]
    store.write_trials(fixed)  # ...and run again: as many trials as when the parts were kept
    again = Run.load("careful", store).summary()
    assert _completed(again) == _completed(with_errors)
    assert again.excluded.trials == 0 and again.overall.successes == with_errors.overall.successes + 2
    _equal(_read(store, "careful"), _computed(store, "careful"))


def test_a_resumed_run_is_not_kept_while_it_runs(store: Store) -> None:
    before = Run.load("flaky", store).summary()
    kept = _kept(store, "flaky")
    store.set_status("flaky", "running")
    assert runcache.stamp(store.engine, "flaky", 0) is None  # a running run is never kept
    results = store.load_results("flaky")
    store.write_trials([replace(r, trial_index=r.trial_index + 10) for r in results[:3]])
    assert _completed(Run.load("flaky", store).summary()) == _completed(before) + 3
    assert _kept(store, "flaky") == kept  # left as it was, and not used
    store.set_status("flaky", "finished")
    after = Run.load("flaky", store).summary()
    assert after.overall.trials == before.overall.trials + 3
    assert set(_kept(store, "flaky").values()) == {runcache.stamp(store.engine, "flaky", 0)}


def test_deleting_a_run_deletes_what_it_kept(store: Store) -> None:
    Run.load("flaky", store).summary()
    assert set(_kept(store, "flaky")) == SUMMARY_PARTS
    store.delete_run("flaky")
    assert not _kept(store, "flaky") and set(_kept(store, "careful")) <= PARTS


def test_small_and_unfinished_runs_are_not_kept(store_url: str, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("ASSAY_RUN_CACHE_MIN_TRIALS", raising=False)
    st = Store(store_url)
    toy_runs(tmp_path, st)
    assert st.cache_min_trials == runcache.MIN_TRIALS
    Run.load("careful", st).summary()
    with st.engine.connect() as conn:  # 18 trials: read from the rows each time
        assert not inspect(conn).has_table("run_cache")  # a store of small runs is as before
    st.delete_run("flaky")
    assert runcache.stamp(st.engine, "careful", 18) is not None
    assert runcache.stamp(st.engine, "careful", 19) is None
    assert runcache.stamp(st.engine, "no-such-run", 0) is None


def test_a_damaged_part_is_computed_again(store: Store) -> None:
    reference = _computed(store, "flaky")
    _read(store, "flaky")
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE run_cache SET data = :d WHERE run_id = 'flaky'"), {"d": b"not an npz"})
    _equal(_read(store, "flaky"), reference)
    _equal(_read(store, "flaky"), reference)  # replaced by a sound one
    assert set(_kept(store, "flaky")) == PARTS


def test_a_locked_store_is_read_without_waiting(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    st = Store(path)
    st.cache_min_trials = 0
    toy_runs(tmp_path, st)
    other = sqlite3.connect(path, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        reference = _computed(st, "careful")
        _equal(_read(st, "careful"), reference)  # computed; keeping it gave up at once
    finally:
        other.rollback()
        other.close()
    assert not _kept(st, "careful")
    with st.engine.connect() as conn:  # the store's own busy timeout is back
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
    _read(st, "careful")
    assert set(_kept(st, "careful")) == PARTS


def test_a_read_only_store_uses_what_is_kept_and_reads_the_rest(tmp_path: Path, monkeypatch: Any) -> None:
    path = tmp_path / "store.db"
    st = Store(path)
    st.cache_min_trials = 0
    toy_runs(tmp_path, st)
    _read(st, "careful")  # kept; flaky not
    st.close()
    old = tmp_path / "old.db"  # a store made before the table existed
    old.write_bytes(path.read_bytes())
    conn = sqlite3.connect(old)
    conn.execute("DROP TABLE run_cache")
    conn.close()
    with contextlib.ExitStack() as stack:
        try:
            point = stack.enter_context(tmpfs("16m"))
        except OSError:
            pytest.skip("cannot mount a read-only file system here")
        for db in (path, old):
            (point / db.name).write_bytes(db.read_bytes())
        subprocess.run(["mount", "-o", "remount,ro", str(point)], check=True)
        ro, ro_old = Store(point / path.name), Store(point / old.name)
        assert ro.read_only and ro_old.read_only
        ro.cache_min_trials = ro_old.cache_min_trials = 0
        _equal(_read(ro_old, "careful"), _computed(ro_old, "careful"))
        _equal(_read(ro, "flaky"), _computed(ro, "flaky"))
        reference = _computed(ro, "careful")
        monkeypatch.setattr("assay.store.columns.frame_columns", None)  # not called: kept
        _equal(ro.frame_columns("careful"), reference["frame"])
        ro.engine.dispose()
        ro_old.engine.dispose()


def test_encodings_round_trip_nones_nans_and_model_calls() -> None:
    columns = {
        "task_ids": ["a", "b"],
        "task": np.array([0, 0, 1], dtype=np.intp),
        "trial_index": np.array([0, 1, 0], dtype=np.int64),
        "reward": np.array([1.0, np.nan, 0.0]),
        "termination": np.array(["completed", "harness_error", "max_turns"], dtype=object),
        "root_cause": np.array([None, "harness", "agent"], dtype=object),
        "latency_s": np.array([0.5, 1.25, 2.0]),
        "cost_usd": np.array([np.nan, 0.01, 0.02]),
        "input_tokens": np.array([10.0, np.nan, 30.0]),
        "output_tokens": np.array([1.0, 2.0, np.nan]),
        "error_category": np.array([None, None, "tool_misuse"], dtype=object),
    }
    _equal(runcache.decode_frame(runcache.encode_frame(columns)), columns)
    aggregates = {
        "graders": {"g": {"failed": 1, "needs_review": 0, "passed": 2}},
        "process": {"turns": 3.5},
        "process_totals": {"turns": 7.0},
        "failed_graders": {"g": 1},
        "usage_by_role": {"agent": {"calls": 2, "cost_usd": 0.1, "unpriced_trials": 0}},
        "failures": {"b": {"g": 1}},
        "model_calls": [("m1", 0.25, None, False), ("m2", None, 0.1, True), ("m1", 1.5, 0.3, False)],
    }
    _equal(runcache.decode_aggregates(runcache.encode_aggregates(aggregates)), aggregates)
    empty = {**aggregates, "model_calls": []}
    _equal(runcache.decode_aggregates(runcache.encode_aggregates(empty)), empty)
    scores = [("a", "judge", 0.5), ("a", "judge", 1.0), ("b", "rubric", 0.25)]
    _equal(runcache.decode_scores(runcache.encode_scores(scores)), scores)
    _equal(runcache.decode_scores(runcache.encode_scores([])), [])
    sums = [("a", "turns", 7.0, 2), ("b", "score.judge", 0.75, 3)]
    _equal(runcache.decode_value_sums(runcache.encode_value_sums(sums)), sums)


def test_the_least_size_kept_is_set_by_the_environment(monkeypatch: Any) -> None:
    monkeypatch.setenv("ASSAY_RUN_CACHE_MIN_TRIALS", "0")
    assert runcache.min_trials() == 0
    monkeypatch.setenv("ASSAY_RUN_CACHE_MIN_TRIALS", "lots")
    with pytest.raises(SpecError, match="ASSAY_RUN_CACHE_MIN_TRIALS"):
        runcache.min_trials()
    monkeypatch.delenv("ASSAY_RUN_CACHE_MIN_TRIALS")
    assert runcache.min_trials() == runcache.MIN_TRIALS
