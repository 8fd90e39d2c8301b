"""The report's charts: laid out before ``savefig`` (one draw instead of two), each SVG
is byte for byte what ``savefig`` alone writes; histograms of equal bins over a range
count as those of the edges; the collector paused while a report or comparison is
made is left as it was found."""

from __future__ import annotations

import gc

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from assay.core.collector import paused_gc
from assay.report import charts


def _curves(shift: float, k_max: int = 8) -> dict[str, list[dict[str, float | int | None]]]:
    points = [
        {"k": k, "value": max(0.0, 0.9 - shift - 0.01 * k), "low": 0.5 - shift, "high": 0.95 - shift}
        for k in range(1, k_max + 1)
    ]
    return {"pass_hat_k": points, "pass_at_k": points}


def _all_charts() -> list[str]:
    rng = np.random.default_rng(3)
    latency = {"run-a": rng.lognormal(2, 0.5, 5000), "run-b": rng.lognormal(2.1, 0.6, 4000)}
    pct = {
        run: {"p50": float(np.median(v)), "p95": float(np.quantile(v, 0.95))} for run, v in latency.items()
    }
    return [
        charts.passk_curves({"run-a": _curves(0.0)}),
        charts.passk_curves({"run-a": _curves(0.0), "run-b": _curves(0.1)}),
        charts.passk_curves({"run-a": _curves(0.0, 50)}),  # too many k for one tick each
        charts.passk_curves({"none": {"pass_hat_k": [], "pass_at_k": []}}),
        charts.distribution({"run-a": latency["run-a"]}, "latency (s)", {"run-a": pct["run-a"]}),
        charts.distribution(latency, "latency (s)", pct),
        charts.distribution({"run-a": []}, "cost per trial (USD)", {}),
        charts.bars({"run-a": {"timeout": 40, "wrong_answer": 12, "tool_error": 3}}, "failure categories"),
        charts.bars(
            {"run-a": {"TOOL": 5, "MODEL": 9}, "run-b": {"MODEL": 4, "ENV": 1}, "run-c": {"TOOL": 2}},
            "root-cause layers",
        ),
        charts.bars({"run-a": {}}, "failure categories"),
        charts.loss_distributions({"run-a": rng.exponential(0.3, 3000), "run-b": rng.exponential(0.5, 300)}),
    ]


def test_charts_laid_out_first_are_the_svg_savefig_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    laid_out = _all_charts()
    monkeypatch.setattr(charts, "_lay_out", lambda fig: None)  # savefig lays the figure out itself
    assert _all_charts() == laid_out


def test_laying_out_switches_the_engine_off() -> None:
    fig = charts._figure(4.0, 2.0)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1])
    charts._lay_out(fig)
    assert fig.get_layout_engine() is None
    assert fig.dpi == 100  # as it was (the SVG backend draws at 72 dpi)


def test_the_collector_pause_of_reports_and_comparisons_restores_what_it_found() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError("boom")
    assert gc.isenabled()


@pytest.mark.parametrize(
    "lo, hi", [(0.0, 1.0), (1e-9, 3.3), (0.12345, 0.12345 + 1e-9), (7.77, 1234.5678), (-3.1, 2.9)]
)
def test_histograms_of_equal_bins_over_a_range_are_those_of_the_edges(lo: float, hi: float) -> None:
    """``distribution`` asks for 40 bins over a range, not for the edges themselves (numpy
    then counts without sorting): the edges and counts are the same, values on an edge too."""
    rng = np.random.default_rng(0)
    edges = np.linspace(lo, hi, 41)
    values = rng.uniform(lo, hi, 10000)
    values[:4] = [lo, hi, edges[7], edges[39]]
    counts, got = np.histogram(values, bins=40, range=(float(edges[0]), float(edges[-1])))
    expected_counts, expected = np.histogram(values, bins=list(edges))
    assert got.tolist() == expected.tolist() and counts.tolist() == expected_counts.tolist()


def test_labels_with_dollar_signs_are_text_not_math() -> None:
    """A run stored under an id like ``r$\\q$`` (older stores had no rule for run ids)
    is a label, not a formula: matplotlib parsed it as math and the report failed."""
    label = "r$\\q$"
    rng = np.random.default_rng(1)
    svgs = [
        charts.passk_curves({label: _curves(0.0), "b": _curves(0.1)}),
        charts.distribution({label: rng.lognormal(2, 0.5, 50), "b": rng.lognormal(2, 0.5, 50)}, "s", {}),
        charts.bars({label: {"timeout": 2}, "b": {"timeout": 1}}, "failure categories"),
        charts.loss_distributions({label: rng.exponential(0.3, 50), "b": rng.exponential(0.3, 50)}),
    ]
    assert all(">r$\\q$</text>" in svg for svg in svgs)
