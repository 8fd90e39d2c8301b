"""``assay probe MODEL``: characterise a model endpoint; ``assay probes``: stored probes
side by side."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.table import Table

from ..errors import AssayError
from .app import JsonOpt, StoreOpt, app, err, out, parse_params, print_json


def _s(value: float | None, unit: str = "s") -> str:
    if value is None:
        return "–"
    if unit == "s":
        return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
    return f"{value:,.1f}"


def _q(q: dict[str, Any], unit: str) -> str:
    low, high = q.get("low"), q.get("high")
    ci = f" [{_s(low, unit)}, {_s(high, unit)}]" if low is not None and high is not None else " [n too small]"
    return _s(q["value"], unit) + ci


def _metrics_table(doc: dict[str, Any]) -> Table:
    m = doc["metrics"]
    conf = round(100 * doc["config"]["confidence"])
    table = Table(
        title=f"{doc['model']} · {doc['mode']} · {m['requests']} requests measured "
        f"(warm-up excluded) · {m['errors']} errors",
        caption=f"p50/p95/p99 with {conf}% distribution-free (order-statistic) intervals",
        show_edge=False,
    )
    for col in ("metric", "n", "mean", "p50", "p95", "p99"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for key, label, unit in (
        ("ttft_s", "time to first token", "s"),
        ("itl_s", "inter-token latency (chunk gaps)", "s"),
        ("tpot_s", "time per output token", "s"),
        ("output_tokens_per_s", "output tokens/s", "rate"),
        ("e2e_s", "end-to-end latency", "s"),
        ("retry_after_s", "Retry-After asked", "s"),
    ):
        d = m.get(key)
        if not d:
            continue
        table.add_row(
            label,
            str(d["n"]),
            _s(d["mean"], unit),
            _q(d["p50"], unit),
            _q(d["p95"], unit),
            _q(d["p99"], unit),
        )
    return table


def _ramp_table(ramp: dict[str, Any]) -> Table:
    table = Table(title="concurrency ramp", show_edge=False)
    for col in (
        "concurrency",
        "sent",
        "ok",
        "429",
        "other errors",
        "load req/min",
        "served req/min",
        "tok/min",
        "TTFT p50",
        "e2e p50",
    ):
        table.add_column(col, justify="right")
    for lv in ramp["levels"]:
        other = sum(n for k, n in lv["errors_by_kind"].items() if k != "rate_limited")
        table.add_row(
            str(lv["concurrency"]),
            str(lv["sent"]),
            str(lv["ok"]),
            str(lv["rate_limited"]),
            str(other),
            _s(lv["demand_rpm"], "rate"),
            _s(lv["success_rpm"], "rate"),
            _s(lv["tokens_per_min"], "rate"),
            _s(lv["ttft_p50_s"]),
            _s(lv["e2e_p50_s"]),
        )
    return table


def _print_probe(doc: dict[str, Any]) -> None:
    m = doc["metrics"]
    out.print(_metrics_table(doc))
    if m["errors"]:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(m["errors_by_kind"].items()))
        low, high = m["error_rate_ci"]
        out.print(f"errors: {m['error_rate']:.1%} [{low:.1%}, {high:.1%}] ({kinds})")
    ramp = doc.get("ramp")
    if ramp:
        out.print(_ramp_table(ramp))
        out.print(
            f"sustained: {_s(ramp['sustainable_rpm'], 'rate')} requests/min, "
            f"{_s(ramp['sustainable_tpm'], 'rate')} tokens/min"
        )
        if ramp["first_429_concurrency"] is not None:
            out.print(
                f"429s start at concurrency {ramp['first_429_concurrency']} (load "
                f"{_s(ramp['demand_rpm_at_first_429'], 'rate')} requests/min); estimated limit "
                f"{_s(ramp['rate_limit_rpm'], 'rate')} requests/min"
            )
        else:
            out.print(f"no 429 seen (ramp ended by {ramp['ended_by'].replace('_', ' ')})")
    avail = doc.get("availability")
    if avail:
        if avail["uptime"] is not None:
            low, high = avail["uptime_ci"]
            out.print(
                f"uptime {avail['uptime']:.2%} [{low:.1%}, {high:.1%}] over {avail['checks']} checks "
                f"every {avail['interval_s']:g} s; {len(avail['incidents'])} incident(s), "
                f"{avail['downtime_s']:.1f} s down"
            )
        for inc in avail["incidents"]:
            end = "ongoing" if inc["ended_at_s"] is None else f"{inc['ended_at_s']:.1f} s"
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(inc["kinds"].items()))
            out.print(
                f"  incident {inc['started_at_s']:.1f} s → {end}: {inc['failed_checks']} failed ({kinds})"
            )
    cost = doc["cost_usd"]
    spend = (
        "unknown (no price)"
        if cost is None
        else f"${cost:.4f}" + ("" if doc["cost_complete"] else " (lower bound)")
    )
    out.print(f"{doc['requests_sent']} requests sent in {doc['duration_s']:.1f} s; spend {spend}")
    for note in doc["notes"]:
        out.print(f"[yellow]note:[/] {note}", highlight=False)
    if doc["stopped_by"] != "completed":
        out.print(f"[yellow]stopped early:[/] {doc['stop_message']}", highlight=False)


@app.command()
def probe(
    model: Annotated[str, typer.Argument(help="Model spec: openai:MODEL, anthropic:MODEL or litellm:MODEL.")],
    mode: Annotated[
        str, typer.Option("--mode", help="latency (default), ramp (concurrency ramp) or availability.")
    ] = "latency",
    requests: Annotated[int, typer.Option("--requests", min=1, help="latency: requests to measure.")] = 20,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="latency: requests in flight.")
    ] = 1,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Output tokens asked per request.")
    ] = 64,
    prompt: Annotated[
        str | None, typer.Option("--prompt", help="The prompt (default: count to 1000).")
    ] = None,
    warmup: Annotated[
        int, typer.Option("--warmup", min=0, help="Warm-up requests left out of the figures.")
    ] = 1,
    max_requests: Annotated[
        int, typer.Option("--max-requests", min=1, help="Ceiling: HTTP requests in all (429s included).")
    ] = 200,
    max_cost_usd: Annotated[
        float, typer.Option("--max-cost-usd", min=0.0, help="Ceiling: spend in USD (worst case per request).")
    ] = 1.0,
    max_concurrency: Annotated[
        int, typer.Option("--max-concurrency", min=1, help="ramp: highest level.")
    ] = 32,
    step_s: Annotated[float, typer.Option("--step-s", min=0.1, help="ramp: seconds per level.")] = 15.0,
    interval_s: Annotated[
        float, typer.Option("--interval-s", min=0.01, help="availability: seconds between checks.")
    ] = 10.0,
    duration_s: Annotated[
        float, typer.Option("--duration-s", min=0.01, help="availability: seconds in all.")
    ] = 300.0,
    timeout_s: Annotated[float, typer.Option("--timeout-s", min=0.1, help="Per request.")] = 60.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the backoff jitter.")] = 0,
    pricing: Annotated[
        str | None, typer.Option("--pricing", help="Pricing YAML file (USD per million tokens).")
    ] = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option(
            "--model-option", "-m", help="Client setting KEY=VALUE: base_url, api_key, stream_usage, ..."
        ),
    ] = None,
    save: Annotated[bool, typer.Option("--save/--no-save", help="Store the probe (default: yes).")] = True,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure a model endpoint: TTFT, inter-token latency, tokens/s, latency quantiles,
    errors; a concurrency ramp to the rate limit; or uptime over time. Always bounded by
    --max-requests and --max-cost-usd. See docs/probe.md.

    Example: assay probe openai:gpt-4o-mini --requests 30
    Example: assay probe openai:llama3.1 -m base_url=http://localhost:11434/v1 --mode ramp
    """
    from ..llm.probe import ProbeConfig, run_probe

    if mode not in ("latency", "ramp", "availability"):
        raise AssayError(f"--mode must be latency, ramp or availability, not {mode!r}")
    fields: dict[str, Any] = {
        "model": model,
        "mode": mode,
        "requests": requests,
        "concurrency": concurrency,
        "max_tokens": max_tokens,
        "warmup": warmup,
        "max_requests": max_requests,
        "max_cost_usd": max_cost_usd,
        "max_concurrency": max_concurrency,
        "step_s": step_s,
        "interval_s": interval_s,
        "duration_s": duration_s,
        "timeout_s": timeout_s,
        "seed": seed,
    }
    if prompt is not None:
        fields["prompt"] = prompt
    config = ProbeConfig.make(**fields)
    options = parse_params(model_option or [])
    if pricing:
        options["pricing"] = pricing
    if not as_json:
        err.print(f"probing {model} ({mode}) ...", highlight=False)
    result = asyncio.run(run_probe(config, **options))
    doc = result.to_json_dict()
    if save:
        from ..store.probes import write_probe
        from ..store.store import Store

        write_probe(Store(store), doc)
    if as_json:
        print_json(doc)
    else:
        _print_probe(doc)
        if save:
            out.print(f"stored as {doc['probe_id']} (compare with: assay probes)", highlight=False)
    if result.stopped_by == "rejected" and result.metrics.ok == 0:
        raise typer.Exit(3)


@app.command()
def probes(
    model: Annotated[
        str | None, typer.Option("--model", help="Only probes whose model contains this.")
    ] = None,
    mode: Annotated[str | None, typer.Option("--mode", help="Only probes of this mode.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Newest N probes.")] = 20,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Stored probes side by side (newest first), for comparing models.

    Example: assay probes --mode latency
    """
    from ..llm.probe import comparison_table
    from ..store.probes import list_probes
    from ..store.store import Store

    table_doc = comparison_table(list_probes(Store(store), model=model, mode=mode, limit=limit))
    if as_json:
        print_json(table_doc)
        return
    if not table_doc["rows"]:
        out.print("no probes stored yet (run: assay probe MODEL)")
        return
    short = {
        "model": "model",
        "mode": "mode",
        "requests": "req",
        "error_rate": "err",
        "ttft_p50_s": "TTFT p50",
        "tokens_per_s_p50": "tok/s",
        "e2e_p95_s": "e2e p95",
        "sustainable_rpm": "req/min",
        "rate_limit_rpm": "limit/min",
        "uptime": "uptime",
        "cost_usd": "cost",
        "stopped_by": "stopped by",
    }
    units = {c["key"]: c["unit"] for c in table_doc["columns"]}
    table = Table(title="model probes (newest first; all columns in --json)", show_edge=False)
    for key, label in short.items():
        left = key in ("model", "mode", "stopped_by")
        table.add_column(label, justify="left" if left else "right", no_wrap=key in ("model", "stopped_by"))
    for row in table_doc["rows"]:
        cells = []
        for key in short:
            v, unit = row[key], units[key]
            if v is None:
                cells.append("–")
            elif unit == "s":
                cells.append(_s(v))
            elif unit == "share":
                cells.append(f"{v:.1%}")
            elif unit == "USD":
                cells.append(f"${v:.4f}")
            elif isinstance(v, float):
                cells.append(f"{v:,.0f}" if v >= 100 else f"{v:.1f}")
            else:
                cells.append(str(v).replace("_", " ") if key == "stopped_by" else str(v))
        table.add_row(*cells)
    out.print(table)
