"""``assay rank``: ratings (Bradley–Terry or Elo) from pairwise votes or from runs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer
from rich.table import Table

from ..errors import AssayError
from .app import JsonOpt, StoreOpt, app, out, print_json

#: More bootstrap resamples than this add nothing to a 95% interval and only take
#: minutes (one rating fit each).
MAX_RESAMPLES = 100_000


def _ratings_table(result: dict[str, Any]) -> Table:
    method = "Bradley–Terry" if result["method"] == "bradley_terry" else "online Elo"
    conf = round(100 * result["confidence"])
    table = Table(
        title=f"{method} ratings · {result['n_battles']} battles · {conf}% bootstrap CI "
        f"({result['n_resamples']} resamples)",
        show_edge=False,
    )
    for col in ("#", "model", "rating", f"{conf}% CI", "battles", "W", "L", "T"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for m in result["models"]:
        table.add_row(
            str(m["rank"]),
            m["model"],
            f"{m['rating']:.1f}",
            f"{m['low']:.1f} – {m['high']:.1f}",
            str(m["battles"]),
            str(m["wins"]),
            str(m["losses"]),
            str(m["ties"]),
        )
    return table


def _matrix_table(matrix: dict[str, Any], order: list[str], title: str) -> Table:
    index = {m: i for i, m in enumerate(matrix["models"])}
    pairs = sorted(n for i, row in enumerate(matrix["counts"]) for j, n in enumerate(row) if i < j)
    caption = "win rate of the row's model against the column's"
    if pairs:
        caption += (
            f"; battles per pair {pairs[0]}-{pairs[-1]} (median {pairs[len(pairs) // 2]}; counts in --json)"
        )
    table = Table(title=title, caption=caption, show_edge=False)
    table.add_column("model", justify="left", no_wrap=True)
    for rank_no in range(1, len(order) + 1):
        table.add_column(f"vs #{rank_no}", justify="right", no_wrap=True)
    for rank_no, a in enumerate(order, start=1):
        cells = []
        for b in order:
            i, j = index[a], index[b]
            rate, n = matrix["rates"][i][j], matrix["counts"][i][j]
            cells.append("·" if a == b else "–" if rate is None or not n else f"{rate:.2f}")
        table.add_row(f"#{rank_no} {a}", *cells)
    return table


@app.command()
def rank(
    sources: Annotated[
        list[str] | None,
        typer.Argument(help="A votes file (JSONL or CSV), or with --runs two or more run ids."),
    ] = None,
    runs: Annotated[
        bool, typer.Option("--runs", help="Rank runs: battles from per-task rewards between the runs.")
    ] = False,
    method: Annotated[
        str, typer.Option("--method", help="bt (Bradley–Terry, default) or elo (online).")
    ] = "bt",
    resamples: Annotated[
        int,
        typer.Option(
            "--resamples",
            min=1,
            max=MAX_RESAMPLES,
            help=f"Bootstrap resamples for the CIs (at most {MAX_RESAMPLES:,}).",
        ),
    ] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    prior: Annotated[
        float, typer.Option("--prior", min=0.0, help="Bradley–Terry ridge prior (0 = plain MLE).")
    ] = 0.0,
    k: Annotated[float, typer.Option("--elo-k", min=0.0, help="Elo K factor (with --method elo).")] = 4.0,
    history: Annotated[
        str | None, typer.Option("--history", help="Also give ratings at the end of each week or month.")
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rank models from pairwise votes (or runs) with 95% bootstrap CIs and win rates.

    A votes file has model_a, model_b, winner (a, b, tie or a model name) and optionally
    timestamp and question_id; see docs/rankings.md.

    Example: assay rank examples/votes.jsonl --method bt --history week
    Example: assay rank --runs RUN_A RUN_B RUN_C --json
    """
    from ..report.ranking import battles_from_runs, load_votes
    from ..report.ranking import history as rating_history
    from ..report.ranking import rank as do_rank

    if method not in ("bt", "elo"):
        raise AssayError(f"--method must be bt or elo, not {method!r}")
    if history not in (None, "week", "month"):
        raise AssayError(f"--history must be week or month, not {history!r}")
    sources = sources or []
    if runs:
        if len(sources) < 2:
            raise AssayError("--runs needs two or more run ids, e.g. assay rank --runs RUN_A RUN_B")
        from ..runner.stored import Run
        from ..store.store import Store

        st = Store(store)
        battles = battles_from_runs([Run.load(r, st) for r in sources])
    else:
        if len(sources) != 1:
            raise AssayError("give one votes file (JSONL or CSV), or --runs RUN_A RUN_B ...")
        battles = load_votes(sources[0])
    how: Literal["bt", "elo"] = "elo" if method == "elo" else "bt"
    result = do_rank(battles, how, n_resamples=resamples, seed=seed, prior=prior, k=k)
    if history is not None:
        window: Literal["week", "month"] = "month" if history == "month" else "week"
        result["history"] = rating_history(battles, window, how, prior=prior or 0.01, k=k)
    if as_json:
        print_json({"schema": "assay.ranking/1", **result})
        return
    out.print(_ratings_table(result))
    if result["n_failed_resamples"]:
        out.print(
            f"[yellow]{result['n_failed_resamples']} of {resamples} resamples could not be rated "
            "(thin data); consider --prior 0.01[/]"
        )
    order = [m["model"] for m in result["models"]]
    out.print(_matrix_table(result["observed"], order, "observed win rate (ties count half)"))
    if history is not None:
        snaps = result["history"]
        table = Table(title=f"ratings at the end of each {history}", show_edge=False)
        table.add_column("period end")
        table.add_column("battles", justify="right")
        for m in order:
            table.add_column(m, justify="right")
        for s in snaps:
            table.add_row(
                s["period_end"],
                str(s["n_battles"]),
                *[f"{s['ratings'][m]:.0f}" if m in s["ratings"] else "" for m in order],
            )
        out.print(table)
