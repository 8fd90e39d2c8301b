"""The trial table of the viewer, as columns: a page of rows is built per request, so
a run of a million trials holds no object per trial (filters, search and sorting are
numpy operations over the run's :class:`~assay.metrics.TrialFrame`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..metrics.frame import TrialFrame
from ..report.runview import frame_rows

_NUMERIC = ("reward", "trial", "latency_s", "cost_usd", "tokens")


def _none(values: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    return np.fromiter((v is None for v in values.tolist()), dtype=bool, count=values.size)


class TrialTable:
    """Every trial of a run as columns, with :meth:`page` as the tables' JSON source."""

    def __init__(self, frame: TrialFrame, failed: dict[tuple[str, int], list[str]]):
        self.frame, self.failed = frame, failed
        f = frame
        self.size = len(f)
        task_ids = np.asarray(f.task_ids, dtype=object)
        category = (
            f.error_category if f.error_category is not None else np.full(self.size, None, dtype=object)
        )
        outcome = np.where(np.isnan(f.reward), "excluded", np.where(f.reward == 1, "pass", "fail"))
        tokens = np.where(
            np.isnan(f.input_tokens) & np.isnan(f.output_tokens),
            np.nan,
            np.nan_to_num(f.input_tokens) + np.nan_to_num(f.output_tokens),
        )
        self.columns: dict[str, npt.NDArray[Any]] = {
            "task_id": task_ids[f.task] if self.size else np.zeros(0, dtype=object),
            "trial": f.trial_index.astype(np.float64),
            "reward": f.reward,
            "outcome": outcome.astype(object),
            "termination": f.termination,
            "category": category,
            "root_cause": f.root_cause,
            "latency_s": f.latency_s,
            "cost_usd": f.cost_usd,
            "tokens": tokens,
        }
        self._lower: dict[str, npt.NDArray[Any]] = {}

    def __len__(self) -> int:
        return self.size

    def _text(self, key: str) -> npt.NDArray[Any]:
        if key not in self._lower:
            values = self.columns[key]
            self._lower[key] = np.char.lower(np.where(_none(values), "", values).astype(str))
        return self._lower[key]

    def page(
        self,
        *,
        offset: int,
        limit: int,
        sort: str | None,
        desc: bool,
        filters: dict[str, str],
        q: str = "",
        search: tuple[str, ...] = ("task_id",),
    ) -> dict[str, Any]:
        """Filter (equality), search (substring of ``search`` fields, any case), sort
        (missing values last) and slice, as :func:`assay.server.data.page` does."""
        keep = np.ones(self.size, dtype=bool)
        for key, value in filters.items():
            if value and key in self.columns:
                column = self.columns[key]
                keep &= (column == float(value)) if key in _NUMERIC else (column == value)
        if q:
            needle = q.lower()
            hit = np.zeros(self.size, dtype=bool)
            for key in search:
                hit |= np.char.find(self._text(key), needle) >= 0
            keep &= hit
        rows = np.flatnonzero(keep)
        if sort in self.columns:
            values = self.columns[sort][rows]
            if sort in _NUMERIC:
                missing = np.isnan(values.astype(np.float64))
                order = np.argsort(values.astype(np.float64), kind="stable")
            else:
                missing = _none(values)
                order = np.argsort(np.where(missing, "", values).astype(str), kind="stable")
            if desc:
                order = order[::-1]
            order = np.concatenate([order[~missing[order]], order[missing[order]]])
            rows = rows[order]
        limit = max(1, min(limit, 500))
        offset = max(0, offset)
        shown = frame_rows(self.frame, rows[offset : offset + limit], self.failed)
        return {"rows": shown, "total": int(rows.size), "offset": offset, "limit": limit}
