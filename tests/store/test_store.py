"""The store on SQLite and PostgreSQL alike (``store_url`` is each in turn): runs written
by the real write path, read back as objects, as columns and as SQL aggregates (which
must agree), duplicates, retried attempts, the portable record, and several processes
writing one store at once."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic_core import PydanticSerializationError
from sqlalchemy import inspect
from tests.compare.fakes import FakeRun
from tests.server.support import AGENT, SUITE, toy_runs
from tests.support.old_store import as_schema_4

from assay.compare import compare_runs
from assay.compare.rundata import RunData
from assay.core.results import TrialResult
from assay.errors import ResumeError
from assay.metrics import FrameExtras, summarize
from assay.runner.api import Run
from assay.store import Store, schema
from assay.store.record import export_run
from assay.store.record_import import import_run

ROOT = Path(__file__).parents[2]


def _same(a: object, b: object, path: str = "") -> None:
    """Equal, floats to 1e-9 relative."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert set(a) == set(b), path
        for k in a:
            _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12), path
    else:
        assert a == b, path


@pytest.fixture
def runs(store_url: str, tmp_path: Path) -> tuple[Store, Run, Run]:
    store = Store(store_url)
    a, b = toy_runs(tmp_path, store)
    return store, Run.load(a, store), Run.load(b, store)


def test_summary_from_sql_equals_summary_from_objects(runs: tuple[Store, Run, Run]) -> None:
    store, careful, flaky = runs
    for run in (careful, flaky):
        results = store.load_results(run.run_id)
        assert len(results) == len(run.frame()) == 18
        from_sql = run.summary().to_dict()
        from_objects = summarize(results, run.tasks, run.info.trials_per_task).to_dict()
        from_sql.pop("run")
        from_objects.pop("run")
        _same(from_sql, from_objects)
        extras, reference = run.extras(), FrameExtras.from_results(results)
        _same(extras.process_totals, reference.process_totals)
        assert extras.failed_graders == reference.failed_graders
    assert [r["run_id"] for r in store.list_runs()] == ["flaky", "careful"]
    assert {r["completed"] for r in store.list_runs()} == {18}


def test_comparison_from_columns_equals_comparison_from_objects(runs: tuple[Store, Run, Run]) -> None:
    store, careful, flaky = runs
    from_store = compare_runs([careful, flaky]).to_dict()
    objects = [FakeRun(r.info, r.tasks, store.load_results(r.run_id)) for r in (careful, flaky)]
    from_objects = compare_runs(objects).to_dict()
    _same(from_store, from_objects)
    by_trial = compare_runs([careful, flaky], match="trial").to_dict()
    _same(by_trial, compare_runs(objects, match="trial").to_dict())


def test_trial_values_and_sums_read_by_sql(runs: tuple[Store, Run, Run]) -> None:
    store, _, flaky = runs
    results = store.load_results(flaky.run_id)
    data = RunData.of(flaky)
    reference = RunData.from_results(flaky.info, flaky.tasks, results)
    assert data.task_ids == reference.task_ids and data.counted == reference.counted
    for name in sorted(reference.metric_names()):
        assert np.allclose(data.per_trial(name), reference.per_trial(name), equal_nan=True), name
        assert np.allclose(data.per_task_mean(name), reference.per_task_mean(name), equal_nan=True), name
    assert "score.deposit" in data.metric_names() or any(n.startswith("score.") for n in data.metric_names())
    failed = store.failed_graders(flaky.run_id)
    expected = {
        r.key: [g.grader for g in r.grades if g.gating and g.passed is False]
        for r in results
        if any(g.gating and g.passed is False for g in r.grades)
    }
    assert failed == expected
    keys = [r.key for r in results[::5]][::-1]
    assert [r.key for r in store.load_trials(flaky.run_id, [*keys, ("nope", 0)])] == keys


def test_duplicates_are_skipped_and_retried_errors_kept_as_attempts(runs: tuple[Store, Run, Run]) -> None:
    store, careful, _ = runs
    results = store.load_results(careful.run_id)
    assert store.write_trials(results[:3]) == 0  # already there: never written twice
    broken = [
        replace(
            r, run_id=careful.run_id, trial_index=r.trial_index + 10, reward=None, termination="harness_error"
        )
        for r in results[:2]
    ]
    assert store.write_trials([*results[:1], *broken]) == 2
    assert store.count_retryable(careful.run_id) == 2
    assert store.retry_errors(careful.run_id) == 2
    assert store.count_attempts(careful.run_id) == 2 and store.count_retryable(careful.run_id) == 0
    assert len(store.load_attempts(careful.run_id)) == 2


def test_record_round_trip_between_backends(runs: tuple[Store, Run, Run], tmp_path: Path) -> None:
    store, _, flaky = runs
    path = tmp_path / "flaky.jsonl.gz"
    assert export_run(store, flaky.run_id, path) == {"trials": 18, "attempts": 0}
    other = Store(tmp_path / "other.db")
    imported = import_run(other, path, run_id="copy")
    assert imported.status == "finished"
    a = Run.load(flaky.run_id, store).summary().to_dict()
    b = Run.load("copy", other).summary().to_dict()
    a.pop("run")
    b.pop("run")
    _same(a, b)


def test_the_same_run_id_twice_is_refused(runs: tuple[Store, Run, Run]) -> None:
    store, careful, _ = runs
    with pytest.raises(ResumeError, match="already exists"):
        store.create_run(careful.info, careful.tasks)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_STORE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT), env.get("PYTHONPATH", "")])
    env["ASSAY_PLUGINS"] = "tests.toydomain"
    return env


def _cli(tmp_path: Path, store_url: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assay",
            "run",
            str(tmp_path / "suite"),
            "--agent",
            AGENT,
            "--store",
            store_url,
            *args,
        ],
        env=_env(),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_several_processes_write_one_store(tmp_path: Path) -> None:
    _several_processes_write(str(tmp_path / "store.db"), tmp_path)


@pytest.mark.slow  # five CLI processes: 6 s of CPU; the SQLite case above runs by default
def test_several_processes_write_one_postgres_store(pg_server: str, tmp_path: Path) -> None:
    from tests.support import postgres

    _several_processes_write(postgres.fresh_database(pg_server), tmp_path)


def _several_processes_write(store_url: str, tmp_path: Path) -> None:
    """Three runs in three processes and two processes racing for one run id write one
    store: every trial of each run once, the loser of the race told in one line."""
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(SUITE)
    procs = [_cli(tmp_path, store_url, "--run-id", f"p{i}", "-k", "4", "--seed", str(i)) for i in range(3)]
    race = [_cli(tmp_path, store_url, "--run-id", "same", "-k", "2") for _ in range(2)]
    for proc in procs:
        assert proc.wait(timeout=600) == 0, proc.stderr.read() if proc.stderr else ""
    codes = sorted(p.wait(timeout=600) for p in race)
    errors = [p.stderr.read() if p.stderr else "" for p in race]
    assert codes in ([0, 0], [0, 2]), errors  # the loser of the race is told, in one line
    assert not any("Traceback" in e for e in errors)
    if codes == [0, 2]:
        loser = next(e for e in errors if "already exists" in e)
        assert loser.count("\n") == 1
    store = Store(store_url)
    for i in range(3):
        frame = Run.load(f"p{i}", store).frame()
        keys = set(zip(frame.task.tolist(), frame.trial_index.tolist(), strict=True))
        assert len(frame) == len(keys) == 24
    assert {r["status"] for r in store.list_runs()} == {"finished"}


@pytest.mark.slow
def test_a_ray_driver_and_a_local_run_write_one_postgres_store(pg_server: str, tmp_path: Path) -> None:
    """The shared-store set-up of docs/scale.md: a Ray run's driver and a local run on
    another "machine" write one PostgreSQL database at the same time."""
    pytest.importorskip("ray")
    from tests.support import postgres

    url = postgres.fresh_database(pg_server)
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(SUITE)
    ray_run = _cli(tmp_path, url, "--run-id", "on-ray", "-k", "3", "--executor", "ray")
    local = _cli(tmp_path, url, "--run-id", "local", "-k", "3")
    for proc in (ray_run, local):
        assert proc.wait(timeout=900) == 0, proc.stderr.read() if proc.stderr else ""
    store = Store(url)
    for run_id in ("on-ray", "local"):
        run = Run.load(run_id, store)
        assert run.info.status == "finished" and len(run.frame()) == 18
    on_ray, local_run = (Run.load(r, store).summary() for r in ("on-ray", "local"))
    assert on_ray.overall.success_rate == local_run.overall.success_rate  # same seeds, same results


def _reads(store: Store, run_id: str) -> dict[str, Any]:
    """What summaries and comparisons read of a run, computed from its rows (no kept parts)."""
    from assay.store import frames

    engine, columns = store.engine, store.metric_columns
    sums = sorted(frames.value_sums(engine, run_id, columns))
    return {
        "sums": sums,
        "aggregates": frames.frame_aggregates(engine, run_id, columns),
        "values": {n: sorted(frames.value_rows(engine, run_id, n, columns)) for n in {s[1] for s in sums}},
    }


def test_metrics_are_columns_and_a_schema_4_store_is_read_then_migrated_alike(
    runs: tuple[Store, Run, Run], store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, careful, flaky = runs
    results = store.load_results(careful.run_id)
    broken = [  # not counted: their metrics count in the means, not in the per-task sums
        replace(r, trial_index=r.trial_index + 10, reward=None, termination="harness_error")
        for r in results[:3]
    ]
    custom = [  # a metric that is not a column (an imported record's own) is a row
        replace(r, trial_index=r.trial_index + 20, metrics={**r.metrics, "custom": 2.5}) for r in results[:2]
    ]
    assert store.write_trials([*broken, *custom]) == 5
    with store.engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT name, COUNT(*) FROM trial_metrics GROUP BY name").all()
        turns = conn.exec_driver_sql("SELECT COUNT(turns) FROM trials").scalar()
    assert [tuple(r) for r in rows] == [("custom", 2)]
    assert turns == 18 * 2 + 5
    before = {run_id: _reads(store, run_id) for run_id in (careful.run_id, flaky.run_id)}
    sums = {(t, n): (s, c) for t, n, s, c in before[careful.run_id]["sums"]}
    first = results[0]
    counted = [r for r in [*results, *custom] if r.task_id == first.task_id and r.reward is not None]
    assert sums[(first.task_id, "turns")] == (sum(r.metrics["turns"] for r in counted), len(counted))
    mine = [r for r in custom if r.task_id == first.task_id]
    assert sums[(first.task_id, "custom")] == (2.5 * len(mine), len(mine)) and mine
    assert before[careful.run_id]["aggregates"]["process"]["custom"] == 2.5

    as_schema_4(store)  # what an older assay left: metrics as rows, per-task sums
    if not store_url.startswith("postgresql"):  # read as it is where it cannot be migrated
        with monkeypatch.context() as m:
            m.setattr("assay.store.store.read_only_reason", lambda path: "a read-only copy")
            old = Store(store_url)
        assert old.read_only and not old.metric_columns
        for run_id, reads in before.items():
            _same(_reads(old, run_id), reads)
        old.engine.dispose()
    migrated = Store(store_url)  # migrated on open: the metrics become columns again
    assert migrated.metric_columns
    for run_id, reads in before.items():
        _same(_reads(migrated, run_id), reads)
    with migrated.engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT name, COUNT(*) FROM trial_metrics GROUP BY name").all()
        assert [tuple(r) for r in rows] == [("custom", 2)]
        assert conn.exec_driver_sql("SELECT COUNT(turns) FROM trials").scalar() == 18 * 2 + 5
        version = conn.exec_driver_sql("SELECT value FROM assay_meta WHERE key = 'schema_version'").scalar()
        assert version == "5"
        assert not inspect(conn).has_table("task_sums")
        indexed = {c for ix in inspect(conn).get_indexes("trials") for c in ix["column_names"]}
        assert set(schema.METRIC_COLUMNS) <= indexed
    assert migrated.retry_errors(careful.run_id) == 3  # moved to the attempts: out of every read
    assert len(_reads(migrated, careful.run_id)["values"]["turns"]) == 18 + 2


def test_processes_opening_a_schema_4_store_at_once_migrate_it_once(
    runs: tuple[Store, Run, Run], store_url: str
) -> None:
    """The migration is one transaction; the processes that lose the race to make it
    find the store migrated and read it."""
    store, careful, _ = runs
    expected = _reads(store, careful.run_id)
    as_schema_4(store)
    code = (
        "import sys; from assay.store import Store; s = Store(sys.argv[1]); "
        "print(s.metric_columns, len(s.completed_keys(sys.argv[2])))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, store_url, careful.run_id],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [out.strip() for out, _ in outs] == ["True 18"] * 3, [err for _, err in outs]
    migrated = Store(store_url)
    _same(_reads(migrated, careful.run_id), expected)


def _odd_trial(store: Store, run_id: str, offset: int, char: str) -> TrialResult:
    """A copy of the run's first trial (``offset`` added to its index) with ``char`` in a
    record field, a grade's reason and the transcript's last message."""
    first = store.load_results(run_id)[0]
    transcript = store.load_transcript(run_id, first.task_id, first.trial_index)
    assert transcript is not None and transcript.messages and transcript.spans
    last = replace(transcript.messages[-1], content=f"a{char}b")
    return replace(
        first,
        trial_index=first.trial_index + offset,
        error_category=f"odd {char} x",
        grades=[replace(first.grades[0], reason=f"quoted {char} text")],
        transcript=replace(transcript, messages=[*transcript.messages[:-1], last]),
    )


def _stored_text(store: Store, run_id: str, odd: TrialResult) -> tuple[str | None, str, str]:
    """(record field, grade reason, last message) of ``odd`` as stored."""
    [back] = store.load_trials(run_id, [odd.key])
    kept = store.load_transcript(run_id, odd.task_id, odd.trial_index)
    assert kept is not None
    return back.error_category, back.grades[0].reason, kept.messages[-1].content


@pytest.mark.parametrize("char", ["\ud800", "\udc80", "\ud83d"])
def test_text_that_is_not_unicode_is_stored_with_replacement_characters(
    runs: tuple[Store, Run, Run], char: str
) -> None:
    """A lone surrogate (a model endpoint's JSON ``\\ud800`` escape decodes to one) in a
    message, a grade's reason or a record field: the trial is stored with U+FFFD in its
    place; an encoder error of another cause is raised as it was."""
    store, careful, _ = runs
    odd = _odd_trial(store, careful.run_id, 20, char)
    assert store.write_trials([odd]) == 1
    assert _stored_text(store, careful.run_id, odd) == ("odd \ufffd x", "quoted \ufffd text", "a\ufffdb")
    assert odd.error_category == f"odd {char} x"  # the caller's result is left as it was
    assert odd.transcript is not None
    spans = [replace(odd.transcript.spans[0], attributes={"thing": object()})]
    broken = replace(odd, trial_index=odd.trial_index + 1, transcript=replace(odd.transcript, spans=spans))
    with pytest.raises(PydanticSerializationError):
        store.write_trials([broken])
    assert store.load_trials(careful.run_id, [broken.key]) == []


def test_a_nul_in_text_is_kept_where_the_database_can_hold_it(runs: tuple[Store, Run, Run]) -> None:
    """A NUL in a trial's text (a judge's reply can carry one): SQLite keeps it;
    PostgreSQL's text columns cannot, so there it becomes U+FFFD (the transcript, stored
    as bytes, keeps it on both) instead of stopping the run."""
    store, careful, _ = runs
    odd = _odd_trial(store, careful.run_id, 30, "\x00")
    assert store.write_trials([odd]) == 1
    nul = "\x00" if store.engine.dialect.name == "sqlite" else "\ufffd"
    assert _stored_text(store, careful.run_id, odd) == (f"odd {nul} x", f"quoted {nul} text", "a\x00b")
