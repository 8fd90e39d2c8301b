"""``assay badcase add`` and ``assay badcase from-traces``: badcases reported by hand and
badcases of recorded conversations (the ``manual`` and ``trace`` sources; ``from-run``,
in :mod:`.badcase`, makes the ``trial`` ones)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..core.sources import MAX_DEPTH, ProblemError, check_text
from ..errors import AssayError
from ..lifecycle.badcase import LAYERS, SEVERITIES
from ..lifecycle.clustering import DEFAULT_THRESHOLD
from ..lifecycle.manual import manual_badcase
from ..lifecycle.traced import badcases_from_traces
from ..runner.stored import Run, pick_trial
from ..store.badcases import write_badcase
from ..store.holdout import holdout_tasks, log_holdout
from ..store.store import Store, now_iso
from .app import JsonOpt, StoreOpt, err, out, print_json
from .badcase import _row, _table, badcase_app, counts_line, store_new


def _read_evidence(where: str) -> Any:
    """The evidence given with ``--evidence``: JSON when it parses, else text."""
    if where == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(where).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AssayError(
                f"--evidence {where}: cannot read it ({getattr(exc, 'strerror', None) or exc})"
            ) from None
    if not text.strip():
        raise AssayError(f"--evidence {where}: the evidence is empty")
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    except RecursionError:
        raise AssayError(f"--evidence {where}: values nest deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # an integer longer than Python converts (4,300 digits)
        raise AssayError(f"--evidence {where}: invalid JSON: {str(exc).split(';')[0]}") from None
    try:  # nesting the redactor can walk, text the store can write (no lone surrogate)
        check_text(value, where, None)
    except ProblemError as exc:
        raise AssayError(f"--evidence {exc.problems[0]}") from None
    return value


@badcase_app.command("add")
def add(
    phenomenon: Annotated[str, typer.Option("--phenomenon", help="What happened, one line.")],
    layer: Annotated[str, typer.Option("--layer", help=", ".join(LAYERS))],
    severity: Annotated[str, typer.Option("--severity", help=", ".join(SEVERITIES))],
    root_cause: Annotated[str, typer.Option("--root-cause", help="The root cause, if known.")] = "",
    owner: Annotated[str | None, typer.Option("--owner", help="Who fixes it.")] = None,
    evidence: Annotated[
        str | None,
        typer.Option("--evidence", help="A file (text or JSON) with the evidence, or - for stdin; redacted."),
    ] = None,
    run_id: Annotated[str | None, typer.Option("--run", help="The run of a trial that shows it.")] = None,
    task: Annotated[str | None, typer.Option("--task", help="That trial's task (with --run).")] = None,
    trial: Annotated[
        int | None, typer.Option("--trial", help="That trial's index (default: the task's first failure).")
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Record a badcase by hand (source manual): what happened, layer, severity, and the
    evidence you have; with --run/--task, the trial's transcript, grader reasons and state
    diff are added. Everything is redacted before it is stored.

    Example: assay badcase add --phenomenon "refunds without asking" --layer policy --severity high
    --evidence report.txt --run hasty --task refund-in-window-email
    """
    if (run_id is None) != (task is None) or (trial is not None and run_id is None):
        raise AssayError("--run and --task go together (and --trial needs them): the trial that shows it")
    report = _read_evidence(evidence) if evidence is not None else None
    st = Store(store)
    source_trial = None
    if run_id is not None and task is not None:
        run = Run.load(run_id, st)
        result = pick_trial(run.task_results(task), run.run_id, task, trial)
        source_trial = (run.info, result, run.transcript)
        log_holdout(st, run.info, "badcase", holdout_tasks([t for t in run.tasks if t.task_id == task]))
    case = manual_badcase(
        phenomenon=phenomenon,
        layer=layer,
        severity=severity,
        at=now_iso(),
        root_cause=root_cause,
        owner=owner,
        report=report,
        trial=source_trial,
    )
    write_badcase(st, case.document())
    if as_json:
        print_json(case.document())
        return
    redacted = case.evidence.get("redaction", {}).get("total", 0)
    err.print(
        f"{case.badcase_id}: recorded (manual, {case.layer}, {case.severity}"
        + (f", trial {task}#{source_trial[1].trial_index} of run {run_id}" if source_trial else "")
        + f"; {redacted} value(s) redacted)"
    )
    typer.echo(case.badcase_id)


@badcase_app.command("from-traces")
def from_traces(
    files: Annotated[
        list[Path], typer.Argument(help="Trace files: OTLP-JSON, Phoenix spans and annotations, JSONL.")
    ],
    everything: Annotated[
        bool,
        typer.Option("--all", help="Every conversation, flagged or not (one badcase each unless flagged)."),
    ] = False,
    fail_label: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-label",
            help="Another label that means failure (repeatable; fail, incorrect... are built in).",
        ),
    ] = None,
    threshold: Annotated[
        float,
        typer.Option("--threshold", help="Reason-token Jaccard similarity that links two conversations."),
    ] = DEFAULT_THRESHOLD,
    no_cluster: Annotated[
        bool, typer.Option("--no-cluster", help="One badcase per flagged conversation.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the proposals; store nothing.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Propose badcases from recorded conversations (source trace): those a verdict marks
    as failed (an evaluator or annotation labelled fail, an error status, reward 0...),
    clustered like from-run; evidence is a redacted excerpt with a link to the trace.
    Files are read as `assay import traces` reads them. Running it again finds the same records.

    Example: assay badcase from-traces prod.otlp.jsonl annotations.json
    """
    from ..traces.importer import conversations_by_file

    if not 0 < threshold <= 1:
        raise AssayError(f"--threshold {threshold}: expected a similarity in (0, 1]")
    notes: list[str] = []
    conversations = [(str(path), conv) for path, conv in conversations_by_file(list(files), notes)]
    if not conversations:
        raise AssayError(
            f"no conversation found in {', '.join(map(str, files))} (no user message, no tool call)"
        )
    cases, flagged = badcases_from_traces(
        conversations,
        at=now_iso(),
        threshold=threshold,
        cluster=not no_cluster,
        everything=everything,
        fail_labels=fail_label or (),
    )
    doc: dict[str, Any] = {
        "schema": "assay.badcase-proposal/1",
        "files": [str(p) for p in files],
        "conversations": len(conversations),
        "flagged": flagged,
        **store_new(Store(store), cases, dry_run),
        "proposed": [{**_row(c.document()), "trace": c.source.trace} for c in cases],
        "notes": notes,
    }
    if as_json:
        print_json(doc)
        return
    out.print(
        _table(
            doc["proposed"],
            f"{len(cases)} badcases from {flagged} flagged of {len(conversations)} recorded conversations",
        )
    )
    for note in notes:
        err.print(f"[yellow]note:[/] {note}")
    err.print(counts_line(doc))
