"""The Jinja2 environment of the report's templates and the filters its macros use
(percentages, numbers, durations, costs, heat-map colours); the web viewer
(:mod:`assay.server`) configures its own environment with :func:`configure`, so both
render the same macros the same way."""

from __future__ import annotations

import functools
import json
import math
from importlib import resources
from typing import TYPE_CHECKING

from ..errors import AssayError
from . import charts

if TYPE_CHECKING:
    import jinja2


def static_text(name: str) -> str:
    """The text of a packaged static asset (``report/static/NAME``)."""
    return resources.files("assay.report").joinpath("static", name).read_text(encoding="utf-8")


def _pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.{digits}f}%"


def _num(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:,.0f}"


def _secs(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{1000 * x:.1f} ms" if x < 1 else f"{x:.2f} s"


def _usd(x: float | None) -> str:
    return "–" if x is None else f"${x:.4f}" if x < 1 else f"${x:,.2f}"


def heat_color(rate: float | None) -> str:
    """Background colour of a heat-map cell: red (0) through amber to green (1)."""
    if rate is None:
        return "#f1f5f9"
    hue = 120 * max(0.0, min(1.0, rate))
    return f"hsl({hue:.0f}, 65%, {88 - 18 * (1 - abs(rate - 0.5) * 2):.0f}%)"


def configure(env: jinja2.Environment) -> jinja2.Environment:
    """Register the filters and globals the report macros use (the viewer calls this too)."""
    env.filters.update(pct=_pct, num=_num, secs=_secs, usd=_usd, heat=heat_color)
    env.filters["tojson_compact"] = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    env.globals.update(color=charts.color, static_text=static_text)
    return env


@functools.cache
def environment() -> jinja2.Environment:
    """The Jinja2 environment of the report templates (autoescaped); one per process, so
    its compiled templates are reused (compiling them is a fifth of a small report)."""
    try:
        import jinja2
    except ImportError:  # pragma: no cover - depends on the environment
        raise AssayError(
            "the HTML report needs jinja2, which is not installed; pip install 'assay[report]'"
        ) from None
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("assay.report", "templates"),
        autoescape=jinja2.select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return configure(env)
