"""Stored probes: write / list / load round trip and the comparison table."""

from __future__ import annotations

from typing import Any

import pytest

from assay.llm.probe import COLUMNS, comparison_table
from assay.store.probes import ProbeNotFound, list_probes, load_probe, write_probe
from assay.store.store import Store


def doc(probe_id: str, model: str, mode: str, created_at: str, **extra: Any) -> dict[str, Any]:
    dist = {"n": 5, "mean": 0.2, "min": 0.1, "max": 0.3}
    quantile = {"p": 0.5, "value": 0.21, "low": 0.18, "high": 0.24}
    return {
        "schema": "assay.probe/1",
        "probe_id": probe_id,
        "model": model,
        "mode": mode,
        "created_at": created_at,
        "stopped_by": "completed",
        "requests_sent": 6,
        "cost_usd": 0.001,
        "metrics": {
            "error_rate": 0.0,
            "ttft_s": {**dist, "p50": quantile, "p95": {**quantile, "value": 0.29}, "p99": quantile},
            "output_tokens_per_s": {**dist, "p50": {**quantile, "value": 50.0}},
            "e2e_s": None,
            "itl_s": None,
        },
        **extra,
    }


def test_write_list_load_and_compare() -> None:
    store = Store(":memory:")
    write_probe(store, doc("p1", "openai:gpt-4o-mini", "latency", "2026-12-01T10:00:00.000+00:00"))
    write_probe(
        store,
        doc(
            "p2",
            "anthropic:claude-3-5-haiku",
            "ramp",
            "2026-12-01T11:00:00.000+00:00",
            ramp={"sustainable_rpm": 55.0, "sustainable_tpm": 4000.0, "rate_limit_rpm": 60.0},
        ),
    )
    write_probe(store, doc("p3", "openai:gpt-4o-mini", "latency", "2026-12-01T12:00:00.000+00:00"))
    assert [d["probe_id"] for d in list_probes(store)] == ["p3", "p2", "p1"]
    assert [d["probe_id"] for d in list_probes(store, model="gpt-4o")] == ["p3", "p1"]
    assert [d["probe_id"] for d in list_probes(store, mode="ramp")] == ["p2"]
    assert [d["probe_id"] for d in list_probes(store, limit=1)] == ["p3"]
    assert load_probe(store, "p2")["ramp"]["rate_limit_rpm"] == 60.0

    table = comparison_table(list_probes(store))
    assert table["schema"] == "assay.probe-comparison/1"
    assert [c["key"] for c in table["columns"]] == [k for k, _, _ in COLUMNS]
    rows = {r["probe_id"]: r for r in table["rows"]}
    assert rows["p1"]["ttft_p50_s"] == 0.21 and rows["p1"]["ttft_p95_s"] == 0.29
    assert rows["p1"]["tokens_per_s_p50"] == 50.0 and rows["p1"]["e2e_p50_s"] is None
    assert rows["p2"]["rate_limit_rpm"] == 60.0 and rows["p1"]["rate_limit_rpm"] is None
    newest = {m["model"]: m["newest"] for m in table["models"]}
    assert newest["openai:gpt-4o-mini"] == {"latency": "p3"}


def test_rewriting_replaces_and_unknown_ids_are_user_errors() -> None:
    store = Store(":memory:")
    write_probe(store, doc("p1", "openai:a", "latency", "2026-12-01T10:00:00.000+00:00"))
    write_probe(store, doc("p1", "openai:b", "latency", "2026-12-01T10:00:00.000+00:00"))
    assert [d["model"] for d in list_probes(store)] == ["openai:b"]
    with pytest.raises(ProbeNotFound, match="no probe 'nope'"):
        load_probe(store, "nope")
    with pytest.raises(ValueError, match="lacks probe_id"):
        write_probe(store, {"model": "x"})
