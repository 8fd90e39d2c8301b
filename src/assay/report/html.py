"""The one-file HTML report: ``assay report RUN_ID [RUN_ID...] --html out.html``.

One self-contained file that opens offline and can be attached to a pull request: CSS,
JavaScript, data and charts (inline SVG) are all inside; nothing is fetched. The per-task
table sorts and filters in the browser; each failed trial links to its transcript, which
is stored gzip-compressed in the file and unpacked on demand (``DecompressionStream``).

Templates (Jinja2) and static assets live in ``report/templates`` and ``report/static``;
the web viewer (:mod:`assay.server`) renders the same macros, so both show one picture.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from ..box import ScoringProfile
from ..core.collector import paused_gc
from ..core.outputs import atomic_output, refuse_store_path
from ..errors import AssayError
from ..metrics.frame import TrialFrame
from ..runner.stored import Run
from ..store.store import Store
from . import charts
from .boxview import box_section
from .comparison import check_comparable, compare_view
from .probes import ProbeChoice, probe_section
from .runview import build_run_view, frame_rows
from .templates_env import environment, static_text
from .transcript_view import transcript_view

if TYPE_CHECKING:
    import jinja2

    from ..redact import Redactor

TranscriptChoice = Literal["failed", "all", "none"]
MAX_TRANSCRIPTS = 500
MAX_TASK_ROWS = 2000
MAX_TRIAL_ROWS = 1000
MAX_COMPARE_ROWS = 2000


def run_charts(views: Sequence[dict[str, Any]]) -> dict[str, str]:
    """The SVG charts of one or several runs (overlaid)."""
    fails = {v["run_id"]: v["failures"] for v in views}
    out = {
        "curves": charts.passk_curves({v["run_id"]: v["headline"]["curves"] for v in views}),
        "latency": charts.distribution(
            {v["run_id"]: v["distributions"]["latency_s"] for v in views},
            "latency (s)",
            {v["run_id"]: v["summary"]["usage"]["latency_s"] for v in views},
        ),
        "categories": charts.bars({k: f["categories"] for k, f in fails.items()}, "failure categories"),
        "root_causes": charts.bars({k: f["root_causes"] for k, f in fails.items()}, "root-cause layers"),
    }
    costs = {
        v["run_id"]: v["distributions"]["cost_usd"] for v in views if len(v["distributions"]["cost_usd"])
    }
    if costs:
        pct = {}
        for run_id, values in costs.items():
            ordered = np.sort(np.asarray(values, dtype=float))
            pct[run_id] = {
                f"p{q}": float(ordered[min(ordered.size - 1, math.ceil(q / 100 * ordered.size) - 1)])
                for q in (50, 95, 99)
            }
        out["cost"] = charts.distribution(costs, "cost per trial (USD)", pct)
    tokens = {v["run_id"]: v["tokens_by_role"] for v in views if v["tokens_by_role"]}
    if tokens:
        out["tokens"] = charts.bars(
            {
                run: {f"{role} {side}": t[side] for role, t in roles.items() for side in ("input", "output")}
                for run, roles in tokens.items()
            },
            "tokens by role",
            "tokens",
        )
    return out


def _pack(transcripts: dict[str, str]) -> str:
    raw = json.dumps(transcripts, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, 9, mtime=0)).decode("ascii")


def _transcripts(
    env: jinja2.Environment,
    run: Run,
    keys: list[tuple[str, int]],
    redactor: Redactor | None = None,
    redacted: Counter[str] | None = None,
) -> dict[str, str]:
    """Rendered transcript HTML of these trials, keyed ``run/task/trial``; with a
    ``redactor``, each trial's free text redacted first (one set of pseudonyms per
    trial), the values replaced counted per kind into ``redacted``."""
    macro = env.get_template("_transcript.html").module.transcript  # type: ignore[attr-defined]
    out: dict[str, str] = {}
    stored = run.store.load_transcripts_of(run.run_id, keys)
    for r in run.trials(keys):
        transcript = stored.get((r.task_id, r.trial_index))
        if redactor is not None:
            from ..redact import redact_trial

            done = redact_trial(r, transcript, redactor)
            r, transcript = done.result, done.transcript
            if redacted is not None:
                redacted.update(done.counts)
        tv = transcript_view(r, transcript)
        out[f"{run.run_id}/{r.task_id}/{r.trial_index}"] = str(macro(tv))
    return out


def trial_order(frame: TrialFrame, which: TranscriptChoice = "failed") -> npt.NDArray[np.intp]:
    """Frame rows of the trials a report lists, in the order it lists them: failed and
    excluded trials (``which="all"``: every trial), one per task first (tasks with the
    lowest success rate first, then by id), then a second per task, and so on - so a
    bounded list covers as many tasks as it can."""
    rows = np.flatnonzero(frame.reward != 1) if which != "all" else np.arange(len(frame))
    if rows.size == 0:
        return rows
    size = len(frame.task_ids)
    valid = ~np.isnan(frame.reward)
    n = np.bincount(frame.task[valid], minlength=size)
    wins = np.bincount(frame.task[valid], weights=frame.reward[valid], minlength=size)
    rate = np.where(n > 0, wins / np.maximum(n, 1), -1.0)  # no counted trial: first
    task = frame.task[rows]
    by_task = rows[np.lexsort((frame.trial_index[rows], task))]
    task_sorted = frame.task[by_task]
    starts = np.searchsorted(task_sorted, task_sorted, side="left")
    nth = np.arange(by_task.size) - starts  # 0 for a task's first listed trial, 1 for its second...
    order = np.lexsort((frame.trial_index[by_task], task_sorted, rate[task_sorted], nth))
    return by_task[order]


@dataclass(frozen=True)
class Bounds:
    """How much of a run a report embeds; the rest is left to ``assay view``."""

    tasks: int = MAX_TASK_ROWS
    trials: int = MAX_TRIAL_ROWS
    compare_tasks: int = MAX_COMPARE_ROWS


@dataclass(frozen=True)
class Report:
    """A rendered report: the HTML, how many transcripts it embeds (and left out), how
    many model probes it shows, when redacted how many values of each kind were replaced
    (``None``: not redacted), and the notes of its comparisons (``"A → B: the runs differ
    in prompt ..."``)."""

    html: str
    transcripts: int
    left_out: int
    probes: int = 0
    redacted: dict[str, int] | None = None
    notes: list[str] = field(default_factory=list)


def build_report(
    runs: Sequence[Run],
    *,
    profile: ScoringProfile | None = None,
    transcripts: TranscriptChoice = "failed",
    max_transcripts: int = MAX_TRANSCRIPTS,
    title: str | None = None,
    bounds: Bounds | None = None,
    probes: ProbeChoice = "used",
    redact: Redactor | bool = False,
) -> Report:
    """The report of one or several runs as one HTML document, of bounded size at any
    scale: aggregates and charts of every trial; the per-task table (at most
    ``bounds.tasks`` tasks: the lowest success rates first), failed and excluded trials
    (at most ``bounds.trials``: one per task first, see :func:`trial_order`) and the
    comparison's tasks (at most ``bounds.compare_tasks``: flipped and most changed
    first); ``transcripts`` chooses which trials' transcripts are embedded (failed and
    excluded ones by default, in the order of the trial list), at most
    ``max_transcripts``. What is left out is counted in the report and shown by
    ``assay view``. ``probes`` chooses the stored model probes shown (see
    :func:`assay.report.probes.probe_section`): of the models the runs called
    (``used``), every stored probe (``all``) or none; no section when there are none.

    ``redact`` (a :class:`~assay.redact.Redactor`, or ``True`` for the default one):
    every free text the report shows from a trial (messages, tool arguments and
    results, errors, grader reasons, state diffs, span errors) is redacted first, one
    set of pseudonyms per trial (:func:`assay.redact.redact_trial`); the figures are
    unchanged."""
    # a report of a million trials holds hundreds of thousands of live containers (task
    # rows, reward lists, chart artists); each full collection its allocations trigger
    # walks them all and finds almost nothing: a dozen took 2.6 s of its 12 s of CPU
    with paused_gc():
        return _build_report(runs, profile, transcripts, max_transcripts, title, bounds, probes, redact)


def _build_report(
    runs: Sequence[Run],
    profile: ScoringProfile | None,
    transcripts: TranscriptChoice,
    max_transcripts: int,
    title: str | None,
    bounds: Bounds | None,
    probes: ProbeChoice,
    redact: Redactor | bool,
) -> Report:
    if not runs:
        raise AssayError("give at least one run to report on")
    if len(runs) > 1:
        check_comparable(list(runs))
    limits = bounds or Bounds()
    env = environment()
    # the per-task rows a report embeds: all of them up to ``limits.tasks``; beyond, the
    # tasks of lowest success rate (runview.lowest_first)
    views = [build_run_view(run, limits.tasks) for run in runs]
    per_run = [run_charts([v]) for v in views]
    overall = run_charts(views) if len(views) > 1 else None
    compared = compare_view(runs, profile) if len(runs) > 1 else None
    comparisons = compared["pairs"] if compared is not None else []
    box = box_section(runs, profile, compared["box_scores"] if compared is not None else None)
    probe_rows = probe_section(runs[0].store, [r.info for r in runs], probes)
    if box is not None and box["losses"]:
        box["chart"] = charts.loss_distributions(box.pop("losses"))
    redactor: Redactor | None = None
    if redact is not False:  # the redaction rules are imported only for a redacted report
        from ..redact import Redactor

        redactor = redact if isinstance(redact, Redactor) else Redactor() if redact else None
    redacted: Counter[str] = Counter()
    packed: dict[str, str] = {}
    left_out = 0
    runs_data, shown = [], []
    for v, run in zip(views, runs, strict=True):
        frame = run.frame()
        listed = trial_order(frame)
        head = listed[: limits.trials]
        head_keys = [(frame.task_ids[frame.task[i]], int(frame.trial_index[i])) for i in head.tolist()]
        failed_rows = frame_rows(frame, head, run.store.failed_graders(run.run_id, head_keys))
        if transcripts != "none":
            chosen = listed if transcripts == "failed" else trial_order(frame, "all")
            room = max(0, max_transcripts - len(packed))
            keys = [
                (frame.task_ids[frame.task[i]], int(frame.trial_index[i])) for i in chosen[:room].tolist()
            ]
            packed.update(_transcripts(env, run, keys, redactor, redacted))
            left_out += int(chosen.size) - len(keys)
        tasks = v["summary"]["tasks"]
        runs_data.append(
            {
                "run_id": v["run_id"],
                "tasks": tasks,
                "failed_trials": failed_rows,
                "filters": v["filters"],
                "k": run.info.trials_per_task,
            }
        )
        shown.append(
            {
                "tasks": len(tasks),
                "all_tasks": v["all_tasks"],
                "trials": len(failed_rows),
                "all_trials": int(listed.size),
            }
        )
    compare_data = []
    for c in comparisons:
        c["shown_tasks"], c["all_tasks"] = min(len(c["tasks"]), limits.compare_tasks), len(c["tasks"])
        compare_data.append({"a": c["a"], "b": c["b"], "tasks": c["tasks"][: limits.compare_tasks]})
    data = {"runs": runs_data, "comparisons": compare_data, "transcripts": sorted(packed)}
    template = env.get_template("report.html")
    html = template.render(
        title=title or "assay report · " + ", ".join(r.run_id for r in runs),
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        views=views,
        shown=shown,
        per_run=per_run,
        overall=overall,
        comparisons=comparisons,
        box=box,
        probes=probe_rows,
        data=data,
        packed=_pack(packed) if packed else "",
        n_transcripts=len(packed),
        max_transcripts=max_transcripts,
        left_out=left_out,
        redaction=None
        if redactor is None
        else dict(sorted(redacted.items(), key=lambda kv: (-kv[1], kv[0]))),
        css=static_text("assay.css"),
        js=static_text("table.js") + "\n" + static_text("report.js"),
    )
    notes = [f"{c['a']} → {c['b']}: {note}" for c in comparisons for note in c["notes"]]
    return Report(
        html,
        len(packed),
        left_out,
        len(probe_rows["rows"]) if probe_rows else 0,
        None if redactor is None else dict(sorted(redacted.items())),
        notes,
    )


@dataclass(frozen=True)
class ReportFile:
    """What :func:`write_report` wrote."""

    path: Path
    size_bytes: int
    runs: list[str]
    transcripts: int
    left_out: int
    probes: int = 0
    redacted: dict[str, int] | None = None
    notes: list[str] = field(default_factory=list)


def write_report(
    run_ids: Sequence[str | Run],
    path: str | Path,
    store: Store | str | None = None,
    **options: Any,
) -> ReportFile:
    """Load runs from the store (or take runs already loaded) and write their report to
    ``path``: whole or not at all (an earlier file stays as it was until then); ``path``
    the store's own file is refused before anything is written."""
    st = store if isinstance(store, Store) else Store(store)
    out = Path(path)
    refuse_store_path(out, st.path, "--html")
    with paused_gc():
        runs = [r if isinstance(r, Run) else Run.load(r, st) for r in run_ids]
        report = build_report(runs, **options)
    if out.is_dir():
        raise AssayError(f"{out} is a directory; give a file name such as report.html")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(out) as fh:
            fh.write(report.html)
    except OSError as exc:
        raise AssayError(f"cannot write {out}: {exc.strerror}") from None
    size = len(report.html.encode("utf-8"))
    named = [r if isinstance(r, str) else r.run_id for r in run_ids]
    return ReportFile(
        out, size, named, report.transcripts, report.left_out, report.probes, report.redacted, report.notes
    )
