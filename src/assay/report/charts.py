"""Charts as inline SVG, drawn with matplotlib (the ``report`` extra).

Why matplotlib: it is the best-kept plotting library in Python, draws entirely offline,
and writes SVG that embeds in one HTML file with no JavaScript and no fonts (text stays
text: ``svg.fonttype = none``). A chart costs 5-20 kB. Output is deterministic (no date,
fixed ids), so the same run gives the same file.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import AssayError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: One color per run or configuration, in order (colour-blind-safe Tableau 10 subset).
PALETTE = ("#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948", "#9c755f")
INK = "#334155"
GRID = "#e2e8f0"


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _figure(width: float, height: float) -> Figure:
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - depends on the environment
        raise AssayError(
            "charts need matplotlib, which is not installed; pip install 'assay[report]'"
        ) from None
    matplotlib.rcParams.update(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": "assay",
            "text.parse_math": False,  # run ids and labels are text: "$x$" is not math
            "font.family": "sans-serif",
            "font.size": 9,
            "axes.edgecolor": GRID,
            "axes.labelcolor": INK,
            "xtick.color": INK,
            "ytick.color": INK,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return Figure(figsize=(width, height), layout="constrained")


def _style(ax: Axes) -> None:
    ax.grid(True, color=GRID, linewidth=0.6)
    ax.set_axisbelow(True)


def _lay_out(fig: Figure) -> None:
    """Run the figure's constrained layout as ``savefig`` would, then switch the engine
    off. ``savefig`` lays a figure out by drawing it whole once with drawing disabled
    (the layout runs at the start of that draw), then draws it again for the file; the
    layout alone gives the same positions (it is computed, as there, with an SVG renderer
    at the 72 dpi an SVG is drawn at, before anything is drawn) without the first draw,
    a fifth of a chart's time. The SVG is byte-identical (tests/report check it)."""
    engine = fig.get_layout_engine()
    if engine is None or not fig.axes:
        return
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    FigureCanvasSVG(fig)  # the canvas savefig switches to: its renderer measures the text
    dpi = fig.dpi
    fig.dpi = 72  # what the SVG backend sets before its first draw
    try:
        engine.execute(fig)
    except ValueError:  # as Figure.draw: the layout gives up, the figure is drawn as is
        pass
    finally:
        fig.dpi = dpi
    fig.set_layout_engine(None)  # no engine: savefig draws once (a placeholder engine: twice)
    if fig.get_layout_engine() is not None:  # a matplotlibrc asks for a layout by default
        fig.set_layout_engine("none")


def to_svg(fig: Figure, label: str) -> str:
    """The figure as an ``<svg>`` element ready to inline (no XML prolog, labelled)."""
    _lay_out(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, transparent=True)
    text = buf.getvalue()
    start = text.find("<svg")
    svg = text[start:]
    svg = re.sub(r"<svg ", f'<svg role="img" aria-label="{_escape(label)}" class="chart" ', svg, count=1)
    return svg


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def passk_curves(series: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]]) -> str:
    """pass^k (left) and pass@k (right) over k, one line per run with its 95% band.

    ``series`` maps a run label to ``{"pass_hat_k": [{k, value, low, high}], "pass_at_k": ...}``.
    """
    fig = _figure(9.0, 2.8)
    axes = fig.subplots(1, 2, sharey=True)
    titles = ("pass^k (all k succeed)", "pass@k (any of k)")
    for ax, key, title in zip(axes, ("pass_hat_k", "pass_at_k"), titles, strict=True):
        _style(ax)
        ks_all: set[int] = set()
        for i, (label, curves) in enumerate(series.items()):
            points = [p for p in curves[key] if p["value"] is not None]
            if not points:
                continue
            ks = [p["k"] for p in points]
            ks_all.update(ks)
            ax.fill_between(
                ks, [p["low"] for p in points], [p["high"] for p in points], color=color(i), alpha=0.15, lw=0
            )
            ax.plot(ks, [p["value"] for p in points], marker="o", ms=3.5, color=color(i), label=label, lw=1.6)
        ax.set_title(title, fontsize=9, color=INK)
        ax.set_xlabel("k")
        ax.set_ylim(-0.02, 1.02)
        if 0 < len(ks_all) <= 12:
            ax.set_xticks(sorted(ks_all))
        elif ks_all:  # one tick per k would be unreadable (and slow to lay out)
            from matplotlib.ticker import MaxNLocator

            ax.xaxis.set_major_locator(MaxNLocator(nbins=10, integer=True))
    axes[0].set_ylabel("rate (95% band over tasks)")
    if len(series) > 1:
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(
            handles, labels, loc="outside upper center", ncols=min(len(series), 4), frameon=False, fontsize=8
        )
    return to_svg(fig, "pass^k and pass@k curves")


def distribution(
    values: Mapping[str, Sequence[float]], unit: str, percentiles: Mapping[str, Mapping[str, float | None]]
) -> str:
    """Histogram per run (step outlines when several) with p50/p95/p99 marked."""
    import numpy as np

    fig = _figure(9.0, 2.4)
    ax = fig.subplots()
    _style(ax)
    data = {k: np.asarray(v, dtype=float) for k, v in values.items() if len(v)}
    if not data:
        ax.text(0.5, 0.5, "no values recorded", ha="center", va="center", transform=ax.transAxes, color=INK)
        return to_svg(fig, f"{unit} distribution")
    lo = min(float(v.min()) for v in data.values())
    hi = max(float(v.max()) for v in data.values())
    bins = np.linspace(lo, hi if hi > lo else lo + 1e-9, 41)
    for i, (label, v) in enumerate(data.items()):
        several = len(data) > 1
        ax.hist(
            v,
            # 40 equal bins over the range: numpy's edges are these (np.linspace), and it
            # counts them without sorting the values (3x faster on 500,000 trials)
            bins=bins.size - 1,
            range=(float(bins[0]), float(bins[-1])),
            color=color(i),
            alpha=0.85 if not several else 0.9,
            histtype="step" if several else "bar",
            lw=1.4 if several else 0,
            label=label,
        )
        for j, (name, style) in enumerate((("p50", "-"), ("p95", "--"), ("p99", ":"))):
            q = percentiles.get(label, {}).get(name)
            if q is not None:
                ax.axvline(q, color=color(i), ls=style, lw=1)
                ax.annotate(
                    name,
                    (q, 1),
                    xycoords=("data", "axes fraction"),
                    fontsize=7,
                    color=color(i),
                    xytext=(2, -8 - 9 * (j + 3 * i)),
                    textcoords="offset points",
                )
    ax.set_xlabel(unit)
    ax.set_ylabel("trials")
    if len(data) > 1:
        ax.legend(fontsize=7, frameon=False)
    return to_svg(fig, f"{unit} distribution")


def bars(
    counts: Mapping[str, Mapping[str, float]], label: str, xlabel: str = "trials", width: float = 6.0
) -> str:
    """Horizontal bars: one group per category (the 14 largest), one bar per run."""
    import numpy as np

    totals: dict[str, float] = {}
    for per in counts.values():
        for c, n in per.items():
            totals[c] = totals.get(c, 0) + n
    cats = sorted(totals, key=lambda c: -totals[c])[:14]
    fig = _figure(width, 0.7 + 0.22 * max(1, len(cats)) * max(1, min(len(counts), 3)) ** 0.5)
    ax = fig.subplots()
    _style(ax)
    if not cats:
        ax.text(0.5, 0.5, "none", ha="center", va="center", transform=ax.transAxes, color=INK)
        ax.set_yticks([])
        return to_svg(fig, label)
    n = len(counts)
    height = 0.8 / n
    y = np.arange(len(cats))
    for i, (run, per) in enumerate(counts.items()):
        ax.barh(
            y + (i - (n - 1) / 2) * height,
            [per.get(c, 0) for c in cats],
            height=height,
            color=color(i),
            label=run,
        )
    ax.set_yticks(y, cats)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    if n > 1:
        fig.legend(loc="outside upper right", ncols=min(n, 4), frameon=False, fontsize=7)
    return to_svg(fig, label)


MAX_FLIERS = 200


def loss_distributions(losses: Mapping[str, Sequence[float]]) -> str:
    """Box-score trial losses per configuration: box plot of log(1 + loss). Boxes and
    whiskers are computed from every trial; at most ``MAX_FLIERS`` outliers per
    configuration are drawn (evenly spaced in rank, the extremes kept), so the chart
    stays small for a million trials."""
    import numpy as np
    from matplotlib import cbook

    fig = _figure(9.0, 0.8 + 0.45 * max(1, len(losses)))
    ax = fig.subplots()
    _style(ax)
    names = list(losses)
    stats = []
    for n in names:
        (st,) = cbook.boxplot_stats(np.log1p(np.asarray(losses[n], dtype=float)))
        fliers = np.sort(np.asarray(st["fliers"]))
        if fliers.size > MAX_FLIERS:
            fliers = fliers[np.unique(np.linspace(0, fliers.size - 1, MAX_FLIERS).round().astype(int))]
        st["fliers"] = fliers
        stats.append(st)
    parts = ax.bxp(stats, orientation="horizontal", patch_artist=True, widths=0.5, showfliers=True)
    for i, box in enumerate(parts["boxes"]):
        box.set_facecolor(color(i))
        box.set_alpha(0.6)
    ax.set_yticks(range(1, len(names) + 1), names)
    ax.invert_yaxis()
    ax.set_xlabel("log(1 + trial loss)   (RMSLoss = root mean square of this)")
    return to_svg(fig, "box-score loss distribution")
