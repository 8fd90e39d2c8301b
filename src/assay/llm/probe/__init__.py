"""``assay probe``: characterise a model endpoint before it is evaluated.

Streams requests to a model spec and measures time to first token, inter-token latency,
output tokens/s and end-to-end latency (p50/p95/p99 with distribution-free intervals) and
errors by kind (``latency`` mode); ramps concurrency up to find the sustained
requests/tokens per minute and where 429s start, honouring ``Retry-After`` (``ramp``);
or checks the endpoint at a fixed interval for uptime and incidents (``availability``).
Always bounded by a request ceiling and a spend ceiling. See docs/probe.md.
"""

from .compare import COLUMNS, comparison_row, comparison_table
from .guard import Guard, worst_case_cost
from .runner import new_probe_id, run_probe
from .schema import (
    COMPARISON_SCHEMA,
    DEFAULT_PROMPT,
    PROBE_SCHEMA,
    AvailabilitySummary,
    Distribution,
    Incident,
    Metrics,
    ProbeConfig,
    ProbeConfigError,
    ProbeResult,
    Quantile,
    RampLevel,
    RampSummary,
    Sample,
)

__all__ = [
    "COLUMNS",
    "COMPARISON_SCHEMA",
    "DEFAULT_PROMPT",
    "PROBE_SCHEMA",
    "AvailabilitySummary",
    "Distribution",
    "Guard",
    "Incident",
    "Metrics",
    "ProbeConfig",
    "ProbeConfigError",
    "ProbeResult",
    "Quantile",
    "RampLevel",
    "RampSummary",
    "Sample",
    "comparison_row",
    "comparison_table",
    "new_probe_id",
    "run_probe",
    "worst_case_cost",
]
