"""Stored probes side by side: a pure function from probe documents to a JSON-able table
(schema ``assay.probe-comparison/1``), for ``assay probes``, the report and the viewer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .schema import COMPARISON_SCHEMA, ProbeResult

#: (key, label, unit) of every column, in display order.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("probe_id", "probe", ""),
    ("model", "model", ""),
    ("mode", "mode", ""),
    ("created_at", "when", ""),
    ("requests", "requests", ""),
    ("error_rate", "errors", "share"),
    ("ttft_p50_s", "TTFT p50", "s"),
    ("ttft_p95_s", "TTFT p95", "s"),
    ("tokens_per_s_p50", "tokens/s p50", "tokens/s"),
    ("itl_p50_s", "ITL p50", "s"),
    ("e2e_p50_s", "e2e p50", "s"),
    ("e2e_p95_s", "e2e p95", "s"),
    ("sustainable_rpm", "sustained req/min", "requests/min"),
    ("sustainable_tpm", "sustained tok/min", "tokens/min"),
    ("rate_limit_rpm", "limit req/min", "requests/min"),
    ("uptime", "uptime", "share"),
    ("cost_usd", "cost", "USD"),
    ("stopped_by", "stopped by", ""),
)


def _dist(metrics: Mapping[str, Any], name: str, q: str) -> float | None:
    d = metrics.get(name)
    if not d:
        return None
    value = (d.get(q) or {}).get("value")
    return None if value is None else float(value)


def comparison_row(probe: ProbeResult | Mapping[str, Any]) -> dict[str, Any]:
    """One probe's headline figures (None where the probe has no such figure)."""
    doc: Mapping[str, Any] = probe.to_json_dict() if isinstance(probe, ProbeResult) else probe
    m: Mapping[str, Any] = doc.get("metrics") or {}
    ramp: Mapping[str, Any] = doc.get("ramp") or {}
    avail: Mapping[str, Any] = doc.get("availability") or {}
    return {
        "probe_id": doc.get("probe_id"),
        "model": doc.get("model"),
        "mode": doc.get("mode"),
        "created_at": doc.get("created_at"),
        "requests": doc.get("requests_sent"),
        "error_rate": m.get("error_rate"),
        "ttft_p50_s": _dist(m, "ttft_s", "p50"),
        "ttft_p95_s": _dist(m, "ttft_s", "p95"),
        "tokens_per_s_p50": _dist(m, "output_tokens_per_s", "p50"),
        "itl_p50_s": _dist(m, "itl_s", "p50"),
        "e2e_p50_s": _dist(m, "e2e_s", "p50"),
        "e2e_p95_s": _dist(m, "e2e_s", "p95"),
        "sustainable_rpm": ramp.get("sustainable_rpm"),
        "sustainable_tpm": ramp.get("sustainable_tpm"),
        "rate_limit_rpm": ramp.get("rate_limit_rpm"),
        "uptime": avail.get("uptime"),
        "cost_usd": doc.get("cost_usd"),
        "stopped_by": doc.get("stopped_by"),
    }


def comparison_table(probes: Iterable[ProbeResult | Mapping[str, Any]]) -> dict[str, Any]:
    """``{"schema", "columns": [{key, label, unit}], "rows": [...], "models": [...]}``,
    rows in the order given; ``models`` maps each model to its newest probe per mode."""
    rows = [comparison_row(p) for p in probes]
    newest: dict[str, dict[str, str]] = {}
    for row in rows:
        per_mode = newest.setdefault(str(row["model"]), {})
        mode = str(row["mode"])
        current = next((r for r in rows if r["probe_id"] == per_mode.get(mode)), None)
        if current is None or str(row["created_at"] or "") > str(current["created_at"] or ""):
            per_mode[mode] = str(row["probe_id"])
    return {
        "schema": COMPARISON_SCHEMA,
        "columns": [{"key": k, "label": label, "unit": unit} for k, label, unit in COLUMNS],
        "rows": rows,
        "models": [{"model": model, "newest": modes} for model, modes in newest.items()],
    }
