"""The probe of the order-status-desk suite: the current status of an order, read from
the carrier feed. Here the feed is ``live.json`` next to this file (a stand-in for the
carrier's API, so the example runs offline); a real probe would call the API.

A probe gets the evidence record and the task, returns the current value, and raises
when the source cannot answer (that is a probe error, never an agent failure)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FEED = Path(__file__).with_name("live.json")


def carrier_status(evidence: Any, task: Any) -> Any:
    feed = json.loads(FEED.read_text(encoding="utf-8"))
    order = evidence.query["order_id"]
    if order not in feed:
        raise LookupError(f"the carrier feed has no order {order}")
    return feed[order][evidence.query.get("field", "status")]
