"""``assay badcase``: failures recorded, triaged, exported and flowed back into a suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ..core.outputs import atomic_output, refuse_store_path
from ..core.terminal import terminal_json
from ..errors import AssayError
from ..lifecycle.badcase import LAYERS, SEVERITIES, STATUSES, Badcase, Link, apply_changes
from ..lifecycle.clustering import DEFAULT_THRESHOLD
from ..lifecycle.flowback import promote as promote_case
from ..lifecycle.propose import propose
from ..runner.stored import Run
from ..store.badcases import has_badcase, list_badcases, load_badcase, write_badcase
from ..store.holdout import holdout_tasks, log_holdout
from ..store.store import Store, now_iso
from .app import JsonOpt, StoreOpt, app, err, out, print_json

badcase_app = typer.Typer(
    help="Badcases: failures with evidence, layer and root cause, and their way back into the suite.",
    no_args_is_help=True,
)
app.add_typer(badcase_app, name="badcase")


def _load(st: Store, badcase_id: str) -> Badcase:
    return Badcase.model_validate(load_badcase(st, badcase_id))


def _row(case: dict[str, Any]) -> dict[str, Any]:
    return {
        "badcase_id": case["badcase_id"],
        "status": case["status"],
        "source": (case.get("source") or {}).get("kind"),
        "severity": case["severity"],
        "layer": case["layer"],
        "suite": (case.get("suite") or {}).get("name"),
        "run_id": (case.get("source") or {}).get("run_id"),
        "trials": len((case.get("source") or {}).get("trials") or []),
        "tasks": len(case.get("task_ids") or []),
        "owner": case.get("owner"),
        "phenomenon": case["phenomenon"],
        "created_at": case["created_at"],
    }


def _table(rows: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=title, show_edge=False)
    for col in ("id", "status", "severity", "layer", "trials", "tasks", "phenomenon"):
        table.add_column(col, justify="right" if col in ("trials", "tasks") else "left", overflow="fold")
    for r in rows:
        table.add_row(
            r["badcase_id"],
            r["status"],
            r["severity"],
            r["layer"],
            str(r["trials"]),
            str(r["tasks"]),
            escape(r["phenomenon"]),
        )
    return table


@badcase_app.command("from-run")
def from_run(
    run_id: Annotated[str, typer.Argument(help="The run whose failed trials to cluster.")],
    threshold: Annotated[
        float, typer.Option("--threshold", help="Reason-token Jaccard similarity that links two trials.")
    ] = DEFAULT_THRESHOLD,
    with_excluded: Annotated[
        bool,
        typer.Option(
            "--with-excluded", help="Also cluster trials excluded as harness errors (layer harness)."
        ),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the proposals; store nothing.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Propose badcases from a run: failed trials with the same failing graders and similar
    reasons become one record (evidence redacted). Running it again finds the same records.

    Example: assay badcase from-run hasty-run
    """
    st = Store(store)
    run = Run.load(run_id, st)
    cases, _ = propose(
        run.info,
        run.tasks,
        run.results,
        lambda task, index: run.transcript(task, index),
        at=now_iso(),
        threshold=threshold,
        include_excluded=with_excluded,
    )
    log_holdout(
        st,
        run.info,
        "badcase",
        holdout_tasks([t for t in run.tasks if t.task_id in {c for b in cases for c in b.task_ids}]),
    )
    failed = sum(1 for r in run.results if r.reward == 0 or (with_excluded and r.reward is None))
    doc: dict[str, Any] = {
        "schema": "assay.badcase-proposal/1",
        "run_id": run.run_id,
        "failed_trials": failed,
        **store_new(st, cases, dry_run),
        "proposed": [_row(c.document()) for c in cases],
    }
    if as_json:
        print_json(doc)
        return
    out.print(
        _table(doc["proposed"], f"{len(cases)} badcases from {failed} failed trials of run {run.run_id}")
    )
    err.print(counts_line(doc))


def store_new(st: Store, cases: list[Badcase], dry_run: bool) -> dict[str, Any]:
    """Store the proposed badcases the store does not hold yet (none with ``dry_run``);
    the counts every proposal reports (``assay badcase from-run`` / ``from-traces``)."""
    new = [c for c in cases if not has_badcase(st, c.badcase_id)]
    if not dry_run:
        for case in new:
            write_badcase(st, case.document())
    return {
        "badcases": len(cases),
        "new": 0 if dry_run else len(new),
        "known": len(cases) - len(new),
        "rule": cases[0].signature["rule"] if cases else None,
        "stored": not dry_run,
    }


def counts_line(doc: dict[str, Any]) -> str:
    """The line under a proposal's table: new, known, the clustering rule, dry run."""
    return (
        f"{doc['new']} new, {doc['known']} already recorded"
        + (f" · rule: {doc['rule']}" if doc["rule"] else "")
        + ("" if doc["stored"] else " · dry run: nothing stored")
    )


@badcase_app.command("list")
def list_cmd(
    status: Annotated[
        str | None, typer.Option("--status", help=f"Only this status ({', '.join(STATUSES)}).")
    ] = None,
    suite: Annotated[str | None, typer.Option("--suite", help="Only badcases of this suite (name).")] = None,
    layer: Annotated[
        str | None, typer.Option("--layer", help=f"Only this layer ({', '.join(LAYERS)}).")
    ] = None,
    run: Annotated[str | None, typer.Option("--run", help="Only badcases proposed from this run.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List badcases, newest first (``--json``: schema assay.badcase-list/1).

    Example: assay badcase list --status new --json
    """
    if status and status not in STATUSES:
        raise AssayError(f"--status {status!r}: choose from {', '.join(STATUSES)}")
    rows = [_row(c) for c in list_badcases(Store(store), status=status, suite=suite, layer=layer, run_id=run)]
    if as_json:
        print_json({"schema": "assay.badcase-list/1", "badcases": rows})
    else:
        out.print(_table(rows, f"{len(rows)} badcases"))


@badcase_app.command()
def show(
    badcase_id: Annotated[str, typer.Argument(help="Badcase id (see assay badcase list).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one badcase: source, evidence (redacted), triage, links and history.

    Example: assay badcase show bc-1a2b3c4d5e --json
    """
    case = load_badcase(Store(store), badcase_id)
    if as_json:
        print_json(case)
        return
    ev = case.get("evidence") or {}
    out.print(
        f"[bold]{case['badcase_id']}[/] · {case['status']} · {case['severity']} · layer {case['layer']}"
    )
    out.print(escape(case["phenomenon"]))
    src = case.get("source") or {}
    if src.get("kind") == "trace":
        traces = src.get("traces") or []
        where = f" in {traces[0]['file']}" if traces else ""
        out.print(
            escape(
                f"source: trace · {len(traces)} conversation(s) · first trace {src.get('trace')}{where} · "
                f"tasks {', '.join(case.get('task_ids') or [])}"
            )
        )
    else:
        out.print(
            f"source: {src.get('kind')} · run {src.get('run_id')} · {len(src.get('trials') or [])} trials · "
            f"tasks {', '.join(case.get('task_ids') or [])}"
        )
    out.print(f"signature: {', '.join((case.get('signature') or {}).get('graders') or [])}")
    if case.get("root_cause") or case.get("owner"):
        out.print(
            f"root cause: {escape(case.get('root_cause') or '–')} · "
            f"owner: {escape(str(case.get('owner') or '–'))}"
        )
    if ev.get("report") is not None:
        report = (
            ev["report"] if isinstance(ev["report"], str) else json.dumps(ev["report"], ensure_ascii=False)
        )
        out.print(f"report: {escape(report[:2000])}")
    for g in ev.get("grader_reasons") or []:
        out.print(f"  ✗ {g['grader']} ({g['category']}): {escape(g['reason'])}")
    for m in ev.get("transcript") or []:
        calls = "".join(f" → {c['name']}({json.dumps(c['arguments'])})" for c in m.get("tool_calls") or [])
        out.print(f"  [dim]{m['role']}[/]: {escape(m.get('content', '')[:300])}{escape(calls)}")
    for link in case.get("links") or []:
        out.print(f"link: {link['kind']} run {link['run_id']} ({link['at']})")
    if case.get("candidate"):
        out.print(f"candidate: {case['candidate']}")
    redaction = ev.get("redaction") or {}
    if redaction.get("total"):
        err.print(
            f"evidence redacted: {redaction['total']} values "
            f"({', '.join(f'{k} {v}' for k, v in redaction['counts'].items())})"
        )


def _verified(st: Store, case: Badcase, run_id: str) -> str:
    """Check that every trial of the badcase's tasks passed in ``run_id``."""
    run = Run.load(run_id, st)
    wanted = set(case.task_ids)
    results = [r for r in run.results if r.task_id in wanted]
    if not results:
        raise AssayError(f"run {run_id} has no trial of the badcase's tasks ({', '.join(sorted(wanted))})")
    failed = sorted({r.task_id for r in results if r.reward != 1})
    if failed:
        raise AssayError(f"run {run_id} does not verify the fix: {', '.join(failed)} still fail(s)")
    return f"{len(results)} trials of {len(wanted)} task(s) passed"


@badcase_app.command()
def triage(
    badcase_id: Annotated[str, typer.Argument(help="Badcase id.")],
    status: Annotated[
        str | None, typer.Option("--status", help=" → ".join(STATUSES) + " (triaged reopens).")
    ] = None,
    layer: Annotated[str | None, typer.Option("--layer", help=", ".join(LAYERS))] = None,
    root_cause: Annotated[
        str | None, typer.Option("--root-cause", help="The root cause, one sentence.")
    ] = None,
    severity: Annotated[str | None, typer.Option("--severity", help=", ".join(SEVERITIES))] = None,
    owner: Annotated[str | None, typer.Option("--owner", help="Who fixes it.")] = None,
    phenomenon: Annotated[str | None, typer.Option("--phenomenon", help="What happened, one line.")] = None,
    reproduced_by: Annotated[
        list[str] | None,
        typer.Option("--reproduced-by", help="A run that reproduces the failure (repeatable)."),
    ] = None,
    verified_by: Annotated[
        str | None,
        typer.Option(
            "--verified-by", help="A run where every trial of the badcase's tasks passes: status verified."
        ),
    ] = None,
    by: Annotated[str | None, typer.Option("--by", help="Who makes the change (history).")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Set a badcase's status, layer, root cause, severity, owner; link runs.

    Example: assay badcase triage bc-1a2b3c4d5e --status triaged --layer policy --root-cause "no confirm"
    """
    st = Store(store)
    case = _load(st, badcase_id)
    at = now_iso()
    changes: dict[str, Any] = dict(
        status=status,
        layer=layer,
        root_cause=root_cause,
        severity=severity,
        owner=owner,
        phenomenon=phenomenon,
    )
    for run_id in reproduced_by or []:
        Run.load(run_id, st)  # exists
        case.links.append(Link(run_id=run_id, kind="reproduces", at=at))
    if verified_by is not None:
        note = _verified(st, case, verified_by)
        case.links.append(Link(run_id=verified_by, kind="verifies", at=at, note=note))
        if status is None and case.status in ("new", "triaged", "fixed"):
            changes["status"] = "verified"
    changed = apply_changes(case, changes, at, by)
    if reproduced_by or verified_by:
        case.updated_at = at
    write_badcase(st, case.document())
    if as_json:
        print_json(case.document())
    else:
        err.print(
            f"{badcase_id}: " + (", ".join(f"{f} → {getattr(case, f)}" for f in changed) or "links added")
        )


@badcase_app.command()
def export(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="JSONL file (default: stdout).")
    ] = None,
    status: Annotated[str | None, typer.Option("--status", help="Only this status.")] = None,
    suite: Annotated[str | None, typer.Option("--suite", help="Only this suite (name).")] = None,
    store: StoreOpt = None,
) -> None:
    """Export badcases as JSONL, one ``assay.badcase/1`` document a line (evidence redacted).

    Example: assay badcase export -o badcases.jsonl
    """
    st = Store(store)
    refuse_store_path(output, st.path, "-o")
    cases = list_badcases(st, status=status, suite=suite)
    text = "".join(json.dumps(c, ensure_ascii=False, sort_keys=True) + "\n" for c in cases)
    if output is None:
        typer.echo(terminal_json(text), nl=False)  # the same JSON, safe to show
        return
    try:
        with atomic_output(output) as fh:  # whole or not at all
            fh.write(text)
    except OSError as exc:
        raise AssayError(f"cannot write {output}: {exc.strerror or exc}") from None
    err.print(f"{len(cases)} badcases written to {output}")


@badcase_app.command("promote")
def promote_cmd(
    badcase_id: Annotated[str, typer.Argument(help="Badcase id.")],
    suite: Annotated[
        str, typer.Option("--suite", help="The suite folder to flow back into (its .review/ area).")
    ],
    threshold: Annotated[
        float,
        typer.Option("--near", help="Shape similarity at which an existing task counts as a near-duplicate."),
    ] = 0.9,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write the badcase as a candidate regression task (redacted) into SUITE/.review/;
    warn when the suite already has a task like it. Then: assay suite accept SUITE ID.

    Example: assay badcase promote bc-1a2b3c4d5e --suite suites/retail
    """
    st = Store(store)
    case = _load(st, badcase_id)
    at = now_iso()
    path, task, matches = promote_case(case, suite, at=at, threshold=threshold)
    case.candidate = {"suite": str(Path(suite)), "path": str(path), "task_id": task["id"], "state": "pending"}
    case.updated_at = at
    write_badcase(st, case.document())
    if as_json:
        print_json({"path": str(path), "task": task, "near_duplicates": [m.to_dict() for m in matches]})
        return
    for m in matches[:3]:
        err.print(f"[yellow]warning:[/] {escape(m.sentence(task['id']))}")
    err.print(f"candidate written to {path}; review it, then: assay suite accept {suite} {task['id']}")
