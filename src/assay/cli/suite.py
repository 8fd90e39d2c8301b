"""``assay suite accept|diff|status``: suite versions and holdout discipline;
``assay evidence RUN``: the snapshot or probe track of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ..errors import AssayError
from ..lifecycle.badcase import Badcase, apply_changes
from ..lifecycle.flowback import pending
from ..lifecycle.holdout import holdout_status
from ..lifecycle.tracks import snapshot_evidence, track_report
from ..lifecycle.versions import accept as accept_candidates
from ..lifecycle.versions import diff_suites, suite_folder
from ..runner.stored import Run
from ..store.badcases import BadcaseNotFound, load_badcase, write_badcase
from ..store.evidence import load_checks
from ..store.holdout import holdout_log
from ..store.store import Store, now_iso
from ..suites.instantiate import iter_instances
from ..suites.loader import load_suite
from .app import JsonOpt, StoreOpt, app, err, out, print_json

suite_app = typer.Typer(help="Suite versions, flow-back and holdout discipline.", no_args_is_help=True)
app.add_typer(suite_app, name="suite")


@suite_app.command()
def accept(
    suite: Annotated[str, typer.Argument(help="The suite folder.")],
    candidates: Annotated[list[str] | None, typer.Argument(help="Candidate task ids (see --list).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Accept every pending candidate.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List the pending candidates and stop.")] = False,
    version: Annotated[
        str | None, typer.Option("--version", help="The new version (default: bump the last number).")
    ] = None,
    message: Annotated[
        str | None, typer.Option("--message", "-m", help="A line for the changelog entry.")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Add a candidate even if the suite has the same task.")
    ] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Move reviewed flow-back candidates into the suite: version bumped, changelog entry
    added, the previous version archived in SUITE/.history/.

    Example: assay suite accept suites/retail refund-in-window-email-2-bc-1a2b3c4d5e
    """
    folder = Path(suite)
    if list_:
        waiting = [
            {"task_id": c["task"].get("id"), "path": str(c["path"]), **(c.get("candidate") or {})}
            for c in pending(folder)
        ]
        print_json(waiting) if as_json else out.print(
            "\n".join(f"{w['task_id']}  ({w['path']})" for w in waiting) or "no candidate is waiting"
        )
        return
    if not candidates and not all_:
        raise AssayError(
            "name the candidates to accept (assay suite accept SUITE --list shows them) or pass --all"
        )
    at = now_iso()
    done = accept_candidates(
        folder, None if all_ else list(candidates or []), at=at, version=version, message=message, force=force
    )
    _mark_golden(Store(store) if store or done.badcases else None, done.badcases, done.tasks, suite, at)
    doc = {
        "schema": "assay.suite-accept/1",
        "suite": str(folder),
        "old_version": done.old_version,
        "new_version": done.new_version,
        "accepted": done.tasks,
        "archive": str(done.archive),
        "warnings": done.warnings,
    }
    if as_json:
        print_json(doc)
        return
    for w in done.warnings:
        err.print(f"[yellow]warning:[/] {escape(w)}")
    out.print(
        f"suite {folder} v{done.old_version} → v{done.new_version}: accepted {', '.join(done.tasks)}; "
        f"previous version archived in {done.archive} (assay suite diff {folder}@{done.old_version} {folder})"
    )


def _mark_golden(st: Store | None, badcases: list[str], tasks: list[str], suite: str, at: str) -> None:
    """The badcases whose candidates were accepted are in the golden set now."""
    if st is None:
        return
    for badcase_id, task_id in zip(badcases, tasks, strict=False):
        try:
            case = Badcase.model_validate(load_badcase(st, badcase_id))
        except BadcaseNotFound:
            continue
        if case.status != "golden":
            apply_changes(case, {"status": "golden"}, at)
        case.candidate = {**(case.candidate or {}), "suite": suite, "task_id": task_id, "state": "accepted"}
        write_badcase(st, case.document())


@suite_app.command()
def diff(
    old: Annotated[
        str,
        typer.Argument(help="Old version: folder, suite.yaml, built-in name, or FOLDER@VERSION (archived)."),
    ],
    new: Annotated[str, typer.Argument(help="New version (same forms).")],
    seed: Annotated[int, typer.Option("--seed", help="Seed the templated tasks are instantiated with.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Tasks added, removed and changed (by field) between two suite versions, with hashes.

    Example: assay suite diff suites/retail@1 suites/retail
    """
    if not 0 <= seed < 2**63:  # as assay run takes it (RunSpec.seed)
        raise AssayError(f"--seed {seed}: a seed is an integer from 0 to {2**63 - 1}, as assay run takes")
    doc = diff_suites(old, new, seed)
    if as_json:
        print_json(doc)
        return
    o, n = doc["old"], doc["new"]
    out.print(
        f"{o['name']} v{o['version']} ({o['hash']}) → {n['name']} v{n['version']} ({n['hash']}), seed {seed}"
    )
    for t in doc["added"]:
        out.print(f"[green]+ {t['id']}[/]  {t['hash']}  ({t['split']})")
    for t in doc["removed"]:
        out.print(f"[red]- {t['id']}[/]  {t['hash']}  ({t['split']})")
    for t in doc["changed"]:
        fields = ", ".join(t["fields"][:8]) + (f" (+{len(t['fields']) - 8})" if len(t["fields"]) > 8 else "")
        out.print(f"[yellow]~ {t['id']}[/]  {t['old_hash']} → {t['new_hash']}: {fields}")
    out.print(
        f"{len(doc['added'])} added, {len(doc['removed'])} removed, {len(doc['changed'])} changed, "
        f"{doc['unchanged']} unchanged"
    )


@suite_app.command()
def status(
    suite: Annotated[str, typer.Argument(help="Suite folder, suite.yaml or built-in name.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """How often the suite's holdout has been looked at, by which configurations; warns
    when a configuration was selected after looking at it.

    Example: assay suite status suites/retail
    """
    loaded = load_suite(suite_folder(suite) if "@" in suite else suite)
    st = Store(store)
    runs = st.list_runs()
    config_of: dict[str, tuple[str, str]] = {}
    for r in runs:
        if r["suite_name"] == loaded.name:
            info = st.get_run(r["run_id"])
            config_of[r["run_id"]] = (info.config_hash, info.config.agent)
    doc = holdout_status(
        loaded.name, iter_instances(loaded, 0), holdout_log(st, loaded.name), runs, config_of
    )
    doc.update(
        version=loaded.version,
        hash=loaded.hash,
        pending_candidates=len(pending(Path(loaded.path))) if loaded.path else 0,
    )
    if as_json:
        print_json(doc)
        return
    h = doc["holdout"]
    out.print(
        f"suite {loaded.name} v{loaded.version} ({loaded.hash}): "
        + ", ".join(f"{k} {v}" for k, v in doc["splits"].items())
        + f" · {doc['pending_candidates']} flow-back candidate(s) pending"
    )
    out.print(
        f"holdout looked at {h['looks']} time(s) "
        f"({', '.join(f'{k} {v}' for k, v in h['by_action'].items()) or 'never'})"
        f" by {len(h['configurations'])} configuration(s)"
        + (f"; first {h['first_look']}, last {h['last_look']}" if h["looks"] else "")
    )
    for w in doc["warnings"]:
        err.print(f"[yellow]warning:[/] {escape(w)}")


@app.command()
def evidence(
    run_id: Annotated[str, typer.Argument(help="A run (snapshot track, or probe track with --probe).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The track of a run and its time-sensitive evidence: frozen (snapshot) or re-checked
    (probe: stale evidence and probe errors reported apart from agent failures).

    Example: assay evidence probe-run --json
    """
    st = Store(store)
    run = Run.load(run_id, st)
    if run.info.spec.probe:
        doc = track_report(load_checks(st, run_id), run.results, track="probe", run_id=run_id)
    else:
        loaded = load_suite(run.info.suite_source)
        wanted = set(run.info.task_ids)
        frozen = snapshot_evidence(t for t in iter_instances(loaded, run.info.seed) if t.id in wanted)
        doc = track_report([], run.results, track="snapshot", run_id=run_id) | {"frozen": frozen}
    if as_json:
        print_json(doc)
        return
    _render_track(doc)


def _render_track(doc: dict[str, Any]) -> None:
    e = doc["evidence"]
    a = doc["agent"]["all"]
    rate = (
        "–" if a["success_rate"] is None else f"{a['success_rate']:.3f} [{a['ci'][0]:.3f}, {a['ci'][1]:.3f}]"
    )
    out.print(
        f"run {doc['run_id']} · {doc['track']} track · agent success {rate} over {a['trials']} trials "
        f"({a['agent_failures']} agent failures)"
    )
    if doc["track"] == "snapshot":
        old = [f for f in doc.get("frozen", []) if f["out_of_date"]]
        out.print(
            f"{len(doc.get('frozen', []))} evidence record(s) frozen; {len(old)} older than their max age "
            "(evaluated as frozen)"
        )
        return
    out.print(
        f"evidence checked {e['checked']}: current {e['current']}, stale {e['stale']}, "
        f"probe errors {e['probe_errors']}"
    )
    table = Table(title="stale evidence (content drift: not agent failures)", show_edge=False)
    for col in ("task", "evidence", "source", "frozen", "current", "action"):
        table.add_column(col, overflow="fold")
    for s in doc["stale"]:
        table.add_row(
            s["task_id"], s["evidence_id"], s["source"], str(s["frozen"]), str(s["current"]), s["action"]
        )
    if doc["stale"]:
        out.print(table)
    for p in doc["probe_errors"]:
        out.print(
            f"probe error (not the agent's): {p['task_id']} {p['evidence_id']} {p['source']}: "
            f"{escape(str(p['error']))}"
        )
