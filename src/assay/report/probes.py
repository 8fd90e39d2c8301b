"""The "Model probes" section of the HTML report and the viewer.

For the models the reported runs called (agent, user and judges, as each run's stored
spec names them), the newest stored probe of each model per mode (``which="used"``), or
every stored probe (``"all"``), as rows of figures with their intervals: TTFT, ITL,
output tokens/s and end-to-end latency (p50/p95), errors by kind, the ramp's sustained
rate and where 429s started, availability. Pure functions of the store and the runs'
specs (see docs/probe.md, docs/reports.md); the templates only format these rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..core.results import RunInfo
from ..errors import AssayError
from ..runner.preflight import models_of
from ..store.probes import count_probes, list_probes
from ..store.store import Store

ProbeChoice = Literal["used", "all", "none"]
PROBE_CHOICES: tuple[ProbeChoice, ...] = ("used", "all", "none")
MODES = ("latency", "ramp", "availability")
#: At most this many probes in a report's section with ``all`` (newest first).
MAX_PROBES = 200

#: (key in the probe's metrics, label, unit) of the distributions a section shows.
FIGURES: tuple[tuple[str, str, str], ...] = (
    ("ttft_s", "time to first token", "s"),
    ("itl_s", "inter-token latency", "s"),
    ("output_tokens_per_s", "output tokens/s", "rate"),
    ("e2e_s", "end-to-end latency", "s"),
)


def probe_choice(value: str) -> ProbeChoice:
    """``value`` as a :data:`ProbeChoice`; :class:`AssayError` naming the option otherwise."""
    for choice in PROBE_CHOICES:
        if value == choice:
            return choice
    raise AssayError(f"--probes must be used, all or none, not {value!r}")


def models_used(infos: Sequence[RunInfo]) -> dict[str, list[dict[str, Any]]]:
    """Each model spec the runs called, in the order they name them (agent, user,
    judges), with its uses: ``{"run_id", "role", "base_url"}`` (``base_url`` as the
    run's options give it, None when they name none)."""
    used: dict[str, list[dict[str, Any]]] = {}
    for info in infos:
        spec = info.spec
        if spec.agent is None or spec.user is None:  # a spec stored before it was resolved
            spec = spec.model_copy(
                update={"agent": spec.agent or info.config.agent, "user": spec.user or info.config.user}
            )
        for role, model, options in models_of(spec):
            base_url = options.get("base_url")
            use = {"run_id": info.run_id, "role": role, "base_url": str(base_url) if base_url else None}
            uses = used.setdefault(model, [])
            if use not in uses:
                uses.append(use)
    return used


def _quantile(q: Mapping[str, Any] | None) -> dict[str, float | None] | None:
    if not q or q.get("value") is None:
        return None
    return {"value": float(q["value"]), "low": q.get("low"), "high": q.get("high")}


def _same_endpoint(a: str, b: str) -> bool:
    return a.rstrip("/").lower() == b.rstrip("/").lower()


def probe_card(doc: Mapping[str, Any], uses: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """One stored probe (schema ``assay.probe/1``) as the row a section shows; ``uses``
    are the runs and roles that called its model (:func:`models_used`). A use whose
    ``base_url`` is not the endpoint the probe measured is listed in ``other_endpoints``."""
    m: Mapping[str, Any] = doc.get("metrics") or {}
    figures = []
    for key, label, unit in FIGURES:
        d = m.get(key)
        if d:
            figures.append(
                {
                    "key": key,
                    "label": label,
                    "unit": unit,
                    "n": d.get("n"),
                    "p50": _quantile(d.get("p50")),
                    "p95": _quantile(d.get("p95")),
                }
            )
    endpoint = str(doc.get("endpoint") or "")
    other = sorted(
        {
            str(u["base_url"])
            for u in uses
            if u.get("base_url") and endpoint and not _same_endpoint(str(u["base_url"]), endpoint)
        }
    )
    ramp: Mapping[str, Any] | None = doc.get("ramp")
    avail: Mapping[str, Any] | None = doc.get("availability")
    config: Mapping[str, Any] = doc.get("config") or {}
    return {
        "probe_id": doc.get("probe_id"),
        "model": doc.get("model"),
        "mode": doc.get("mode"),
        "created_at": doc.get("created_at"),
        "provider": doc.get("provider"),
        "endpoint": endpoint or None,
        "confidence": config.get("confidence", 0.95),
        "requests_sent": doc.get("requests_sent"),
        "measured": m.get("requests"),
        "ok": m.get("ok"),
        "errors": m.get("errors"),
        "error_rate": m.get("error_rate"),
        "error_rate_ci": m.get("error_rate_ci"),
        "errors_by_kind": sorted((m.get("errors_by_kind") or {}).items()),
        "figures": figures,
        "ramp": None
        if not ramp
        else {
            key: ramp.get(key)
            for key in (
                "sustainable_rpm",
                "sustainable_tpm",
                "clean_rpm",
                "rate_limit_rpm",
                "first_429_concurrency",
                "first_429_at_s",
                "demand_rpm_at_first_429",
                "ended_by",
            )
        }
        | {"levels": len(ramp.get("levels") or [])},
        "availability": None
        if not avail
        else {
            "uptime": avail.get("uptime"),
            "uptime_ci": avail.get("uptime_ci"),
            "checks": avail.get("checks"),
            "up": avail.get("up"),
            "incidents": len(avail.get("incidents") or []),
            "downtime_s": avail.get("downtime_s"),
            "interval_s": avail.get("interval_s"),
            "duration_s": avail.get("duration_s"),
        },
        "cost_usd": doc.get("cost_usd"),
        "cost_complete": doc.get("cost_complete", True),
        "stopped_by": doc.get("stopped_by"),
        "stop_message": doc.get("stop_message"),
        "notes": list(doc.get("notes") or []),
        "uses": [{"run_id": u["run_id"], "role": u["role"]} for u in uses],
        "other_endpoints": other,
    }


def _newest_per_mode(store: Store, model: str) -> list[dict[str, Any]]:
    found = []
    for mode in MODES:
        newest = list_probes(store, model=model, mode=mode, limit=1, exact=True)
        found.extend(newest)
    return found


def probe_section(
    store: Store, infos: Sequence[RunInfo], which: ProbeChoice = "used", *, limit: int = MAX_PROBES
) -> dict[str, Any] | None:
    """The rows of a "Model probes" section for runs ``infos``, or None when there is
    nothing to show (``which="none"``, or no stored probe of what ``which`` asks for).

    ``used``: for each model the runs called, its newest probe per mode (latency, ramp,
    availability); models without any are listed in ``unprobed``. ``all``: every stored
    probe, newest first, at most ``limit`` (``left_out`` counts the rest); each row still
    says which runs used its model."""
    if which == "none":
        return None
    used = models_used(infos)
    left_out = 0
    if which == "used":
        docs = [doc for model in used for doc in _newest_per_mode(store, model)]
    else:
        docs = list_probes(store, limit=limit)
        left_out = max(0, count_probes(store) - len(docs))
    if not docs:
        return None
    probed = {str(d.get("model")) for d in docs}
    return {
        "which": which,
        "rows": [probe_card(d, used.get(str(d.get("model")), [])) for d in docs],
        "unprobed": [
            {"model": model, "uses": [{"run_id": u["run_id"], "role": u["role"]} for u in uses]}
            for model, uses in used.items()
            if model not in probed
        ],
        "left_out": left_out,
        "limit": limit,
    }
