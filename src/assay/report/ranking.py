"""Rankings from pairwise records: votes files, battles between runs, rating tables and
ratings over time (the data behind ``assay rank`` and the viewer's bar chart race).

A **votes file** is JSONL (one object per line) or CSV (a header row), with columns
``model_a``, ``model_b``, ``winner`` and optionally ``timestamp`` and ``question_id``.
``winner`` is ``a``, ``b`` or ``tie`` (also ``model_a``, ``model_b``, ``tie (bothbad)``,
case-insensitive) or exactly one of the two model names. ``timestamp`` is an ISO 8601
date or datetime, or Unix seconds. Every bad row is reported as ``file:line: field:
message``.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..core.sources import MAX_DEPTH, MAX_LINE_BYTES, ProblemError, check_text
from ..errors import AssayError, Problem
from ..runner.stored import Run
from ..stats import (
    bootstrap_ratings,
    elo_online,
    expected_win_matrix,
    observed_win_matrix,
    ratings_over_time,
)

Method = Literal["bt", "elo"]
_WINNER_ALIASES = {
    "a": "a",
    "model_a": "a",
    "b": "b",
    "model_b": "b",
    "tie": "tie",
    "draw": "tie",
    "tie (bothbad)": "tie",
    "both_bad": "tie",
}
MAX_PROBLEMS = 20


class VotesError(AssayError):
    """A votes file that cannot be read; carries every located problem."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        shown = [str(p) for p in problems[:MAX_PROBLEMS]]
        more = len(problems) - len(shown)
        super().__init__("\n".join(shown) + (f"\n... and {more} more problems" if more > 0 else ""))


@dataclass(frozen=True)
class Battle:
    """One pairwise record: ``winner`` in {a, b, tie}; ``timestamp`` optional."""

    model_a: str
    model_b: str
    winner: str
    timestamp: datetime | date | None = None
    question_id: str | None = None

    def triple(self) -> tuple[str, str, str]:
        return (self.model_a, self.model_b, self.winner)


def _timestamp(value: Any) -> datetime | date:
    if isinstance(value, bool):
        raise ValueError("must be an ISO 8601 date/datetime or Unix seconds")
    if isinstance(value, (int, float)):
        try:
            seconds = float(value)
        except OverflowError:  # an integer of hundreds of digits
            seconds = math.inf
        if not math.isfinite(seconds):
            raise ValueError("must be a finite number of Unix seconds")
        return _unix_seconds(seconds, value)
    text = str(value).strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        if math.isfinite(seconds):
            return _unix_seconds(seconds, text)
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO 8601 date/datetime or Unix seconds") from None


def _unix_seconds(seconds: float, written: Any) -> datetime:
    """``seconds`` since 1970 as a UTC datetime; a ValueError when no date has them."""
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"{written} is out of range for Unix seconds (years 1 to 9999)") from None


def _battle(row: dict[str, Any], where: tuple[str, int], problems: list[Problem]) -> Battle | None:
    file, line = where
    before = len(problems)
    names: dict[str, str] = {}
    for col in ("model_a", "model_b"):
        value = row.get(col)
        if value is None or str(value).strip() == "":
            problems.append(Problem(file, line, col, "is missing; every vote names model_a and model_b"))
        else:
            names[col] = str(value).strip()
    raw = row.get("winner")
    winner = None
    if raw is None or str(raw).strip() == "":
        problems.append(Problem(file, line, "winner", "is missing; use a, b, tie or one of the model names"))
    elif len(names) == 2:
        text = str(raw).strip()
        if text == names["model_a"] and text != names["model_b"]:
            winner = "a"
        elif text == names["model_b"] and text != names["model_a"]:
            winner = "b"
        else:
            winner = _WINNER_ALIASES.get(text.lower())
        if winner is None:
            problems.append(
                Problem(
                    file,
                    line,
                    "winner",
                    f"must be a, b, tie or one of the two model names "
                    f"({names['model_a']!r}, {names['model_b']!r}), got {text!r}",
                )
            )
        if names["model_a"] == names["model_b"]:
            problems.append(
                Problem(file, line, "model_b", f"a model cannot battle itself ({names['model_a']!r})")
            )
    stamp = None
    if row.get("timestamp") not in (None, ""):
        try:
            stamp = _timestamp(row["timestamp"])
        except ValueError as exc:
            problems.append(Problem(file, line, "timestamp", str(exc)))
    if len(problems) > before or winner is None:
        return None
    qid = row.get("question_id")
    return Battle(names["model_a"], names["model_b"], winner, stamp, None if qid in (None, "") else str(qid))


def _rows_jsonl(path: Path, problems: list[Problem]) -> Iterable[tuple[int, dict[str, Any]]]:
    """The file's votes, read line by line (a large file streams; a line is at most
    :data:`~assay.core.sources.MAX_LINE_BYTES`)."""
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if len(line) > MAX_LINE_BYTES:
                problems.append(Problem(str(path), n, "", f"line longer than {MAX_LINE_BYTES // 2**20} MB"))
                continue
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                obj = json.loads(line)
                check_text(obj, str(path), n)
            except json.JSONDecodeError as exc:
                why = f"not valid JSON ({exc.msg} at column {exc.colno})"
                problems.append(Problem(str(path), n, "", why))
                continue
            except RecursionError:
                problems.append(Problem(str(path), n, "", f"values nest deeper than {MAX_DEPTH} levels"))
                continue
            except ValueError as exc:  # an integer longer than Python converts (4,300 digits)
                problems.append(Problem(str(path), n, "", f"not valid JSON ({str(exc).split(';')[0]})"))
                continue
            except ProblemError as exc:  # nested too deeply, a lone surrogate
                problems.extend(exc.problems)
                continue
            if not isinstance(obj, dict):
                problems.append(Problem(str(path), n, "", "each line must be a JSON object"))
                continue
            yield n, obj


def _rows_csv(path: Path, problems: list[Problem]) -> Iterable[tuple[int, dict[str, Any]]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        try:
            missing = [c for c in ("model_a", "model_b", "winner") if c not in (reader.fieldnames or [])]
            if missing:
                problems.append(Problem(str(path), 1, "header", f"missing column(s) {', '.join(missing)}"))
                return
            for row in reader:
                yield reader.line_num, row
        except csv.Error as exc:  # a field longer than csv.field_size_limit(), ...
            problems.append(Problem(str(path), reader.reader.line_num, "", f"not valid CSV ({exc})"))


def load_votes(path: str | Path) -> list[Battle]:
    """Read a JSONL or CSV votes file (by extension: ``.csv`` is CSV, anything else JSONL)."""
    p = Path(path)
    if p.is_dir():
        raise AssayError(f"votes file {p} is a folder, not a file")
    if not p.is_file():
        raise AssayError(f"votes file {p} does not exist")
    problems: list[Problem] = []
    rows = _rows_csv(p, problems) if p.suffix.lower() == ".csv" else _rows_jsonl(p, problems)
    try:
        battles = [b for n, row in rows if (b := _battle(row, (str(p), n), problems)) is not None]
    except UnicodeDecodeError:
        raise AssayError(f"votes file {p} is not UTF-8 text") from None
    except OSError as exc:
        raise AssayError(f"votes file {p} cannot be read ({exc.strerror or exc})") from None
    if problems:
        raise VotesError(problems)
    if not battles:
        raise AssayError(f"votes file {p} holds no votes")
    return battles


def _run_rate(run: Run) -> dict[str, float]:
    """Each task's success rate over its counted trials, from the run's reward column
    (no trial is loaded: a run of a million trials ranks as fast as its columns read)."""
    frame = run.frame()
    counted = ~np.isnan(frame.reward)
    tasks = frame.task[counted]
    sums = np.bincount(tasks, weights=frame.reward[counted], minlength=len(frame.task_ids))
    counts = np.bincount(tasks, minlength=len(frame.task_ids))
    return {t: float(sums[i] / counts[i]) for i, t in enumerate(frame.task_ids) if counts[i]}


def battles_from_runs(runs: Sequence[Run]) -> list[Battle]:
    """One battle per task and pair of runs: the run with the higher success rate on
    the task wins, equal rates tie. Runs must be of the same suite version; a battle is
    dated by the later of the two runs' creation times (for ratings over time)."""
    if len(runs) < 2:
        raise AssayError("ranking runs needs at least two runs")
    ids = [r.run_id for r in runs]
    if len(set(ids)) != len(ids):
        raise AssayError(f"a run is named twice in {ids}")
    first = runs[0].info
    for run in runs[1:]:
        if (run.info.suite_name, run.info.suite_hash) != (first.suite_name, first.suite_hash):
            raise AssayError(
                f"run {run.run_id} is of suite {run.info.suite_name} hash {run.info.suite_hash} but "
                f"{first.run_id} is of {first.suite_name} hash {first.suite_hash}; "
                "rank runs of one suite version"
            )
    rates = [_run_rate(r) for r in runs]
    out = []
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            when = max(runs[i].info.created_at, runs[j].info.created_at)
            stamp = datetime.fromisoformat(when.replace("Z", "+00:00"))
            for task in sorted(set(rates[i]) & set(rates[j])):
                a, b = rates[i][task], rates[j][task]
                winner = "a" if a > b else "b" if b > a else "tie"
                out.append(Battle(runs[i].run_id, runs[j].run_id, winner, stamp, task))
    if not out:
        raise AssayError(f"runs {ids} have no task with counted trials in common")
    return out


def _matrix(m: Any) -> dict[str, Any]:
    def clean(x: float) -> float | None:
        return None if math.isnan(x) else round(float(x), 4)

    return {
        "models": m.models,
        "rates": [[clean(x) for x in row] for row in m.rates],
        "counts": [[int(x) for x in row] for row in m.counts],
    }


def _elo_intervals(
    triples: list[tuple[str, str, str]], k: float, n_resamples: int, seed: int, confidence: float
) -> dict[str, tuple[float, float]]:
    """Percentile intervals of online Elo over resampled battles (kept in time order)."""
    rng = np.random.default_rng(seed)
    models = sorted({m for a, b, _ in triples for m in (a, b)})
    reps = []
    for _ in range(n_resamples):
        idx = np.sort(rng.integers(0, len(triples), size=len(triples)))
        fit = elo_online([triples[i] for i in idx], k=k)
        reps.append([fit.get(m, np.nan) for m in models])
    arr = np.asarray(reps)
    tail = (1 - confidence) / 2
    low = np.nanquantile(arr, tail, axis=0)
    high = np.nanquantile(arr, 1 - tail, axis=0)
    return {m: (float(lo), float(hi)) for m, lo, hi in zip(models, low, high, strict=True)}


def rank(
    battles: Sequence[Battle],
    method: Method = "bt",
    *,
    n_resamples: int = 200,
    seed: int = 0,
    prior: float = 0.0,
    k: float = 4,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Ratings with bootstrap intervals, record per model, observed and expected win-rate
    matrices. Elo runs in timestamp order when every battle has one, else file order."""
    if method not in ("bt", "elo"):
        raise AssayError(f"method must be bt or elo, not {method!r}")
    ordered = list(battles)
    if all(b.timestamp is not None for b in ordered):
        ordered.sort(key=lambda b: _sort_key(b.timestamp))
    triples = [b.triple() for b in ordered]
    failed = 0
    try:
        if method == "bt":
            boot = bootstrap_ratings(
                triples, n_resamples=n_resamples, confidence=confidence, seed=seed, prior=prior
            )
            ratings, intervals, failed = boot.ratings, boot.intervals, boot.n_failed
        else:
            ratings = elo_online(triples, k=k)
            intervals = _elo_intervals(triples, k, n_resamples, seed, confidence)
    except ValueError as exc:
        raise AssayError(_with_hint(str(exc), prior, method)) from None
    record: dict[str, Counter[str]] = {m: Counter() for m in ratings}
    for a, b, w in triples:
        record[a]["battles"] += 1
        record[b]["battles"] += 1
        if w == "tie":
            record[a]["ties"] += 1
            record[b]["ties"] += 1
        else:
            record[a if w == "a" else b]["wins"] += 1
            record[b if w == "a" else a]["losses"] += 1
    models = sorted(ratings, key=lambda m: (-ratings[m], m))
    return {
        "method": "bradley_terry" if method == "bt" else "elo",
        "confidence": confidence,
        "n_battles": len(triples),
        "n_resamples": n_resamples,
        "n_failed_resamples": failed,
        "prior": prior if method == "bt" else None,
        "k": k if method == "elo" else None,
        "models": [
            {
                "rank": i + 1,
                "model": m,
                "rating": round(ratings[m], 2),
                "low": round(intervals[m][0], 2),
                "high": round(intervals[m][1], 2),
                **{key: record[m][key] for key in ("battles", "wins", "losses", "ties")},
            }
            for i, m in enumerate(models)
        ],
        "observed": _matrix(observed_win_matrix(triples)),
        "expected": _matrix(expected_win_matrix(ratings)),
    }


def _with_hint(message: str, prior: float, method: str) -> str:
    if prior > 0 or method == "elo":
        return message
    hint = "pass --prior 0.01 (or use --method elo)"
    return message.replace("pass prior > 0", hint) if "pass prior > 0" in message else f"{message}; {hint}"


def _sort_key(stamp: datetime | date | None) -> tuple[date, str]:
    if stamp is None:
        return (date.min, "")
    if isinstance(stamp, datetime):
        return (stamp.date(), stamp.isoformat())
    return (stamp, "")


def history(
    battles: Sequence[Battle],
    period: Literal["week", "month"] = "week",
    method: Method = "bt",
    *,
    prior: float = 0.01,
    k: float = 4,
) -> list[dict[str, Any]]:
    """Cumulative ratings at the end of each week or month (frames of the bar chart race).
    Bradley–Terry uses a small ``prior`` by default: early periods are often not
    identifiable otherwise."""
    missing = sum(1 for b in battles if b.timestamp is None)
    if missing:
        raise AssayError(
            f"{missing} of {len(battles)} votes have no timestamp; ratings over time need one on each"
        )
    rows = [(_as_iso(b.timestamp), *b.triple()) for b in battles]
    try:
        snaps = ratings_over_time(
            rows, period=period, method="elo" if method == "elo" else "bradley_terry", prior=prior, k=k
        )
    except ValueError as exc:
        raise AssayError(_with_hint(str(exc), prior, method)) from None
    return [
        {
            "period_end": s.period_end.isoformat(),
            "n_battles": s.n_battles,
            "ratings": {m: round(v, 2) for m, v in s.ratings.items()},
        }
        for s in snaps
    ]


def _as_iso(stamp: datetime | date | None) -> str:
    assert stamp is not None
    return stamp.isoformat()
