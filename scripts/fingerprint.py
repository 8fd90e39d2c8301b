"""A fingerprint of everything seven retail runs store, times and run ids left out: a
change meant to make assay faster must leave it as it was.

    python scripts/fingerprint.py                            # this checkout
    PYTHONPATH=/tmp/base/src python scripts/fingerprint.py   # an export of another commit

Each configuration (agent, k, seed, user) runs into a fresh SQLite store; every row of
its trials, grades, usage, model calls, task rows and transcripts (decompressed) is read
back in key order, JSON inside records and grades parsed, and hashed. A trial's process
metrics are hashed with its row whether the store keeps them as columns of the row
(schema 5) or as rows of their own (before), so the fingerprint compares the two.
Per-task sums (derived from the rest, kept by schemas 3 and 4) are left out. The last
line is the hash over all seven.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from typing import Any

from sqlalchemy import text

import assay
from assay.store import schema
from assay.store.codec import decompress
from assay.store.store import Store

#: Process metrics kept as columns of a trial's row (schema 5; none before).
METRIC_COLUMNS: tuple[str, ...] = getattr(schema, "METRIC_COLUMNS", ())

#: Keys whose values change from run to run: timestamps, durations, the run's id, and
#: the commit of the checkout a run is made in (two commits are what is compared).
VARYING = re.compile(r"(_at|_s|time|timestamp|start|end|started|ended|duration|when|ms)$")
PROVENANCE = ("run_id", "git_commit")

CONFIGS: list[dict[str, Any]] = [
    {"agent": "builtin:retail-careful", "trials": 2},
    {"agent": "builtin:retail-hasty", "trials": 2},
    {"agent": "builtin:retail-flaky", "trials": 2},
    {"agent": "builtin:retail-flagged", "trials": 1},
    {"agent": "builtin:retail-careful", "trials": 1, "seed": 7},
    {"agent": "builtin:retail-hasty", "trials": 1, "seed": 3},
    {"agent": "builtin:retail-careful", "trials": 1, "user": "scripted", "seed": 11},
]

TABLES = [
    ("trials", "task_id, trial_index"),
    ("grades", "task_id, trial_index, position"),
    ("trial_usage", "task_id, trial_index, role"),
    ("trial_calls", "task_id, trial_index, position"),
    ("run_tasks", "task_id"),
    ("transcripts", "task_id, trial_index"),
]


def stable(value: Any) -> Any:
    """``value`` without the keys that vary from run to run."""
    if isinstance(value, dict):
        kept = sorted((k, v) for k, v in value.items() if not VARYING.search(k) and k not in PROVENANCE)
        return {k: stable(v) for k, v in kept}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def fingerprint(store: Store) -> bytes:
    digest = hashlib.sha256()
    with store.engine.connect() as conn:
        metrics: dict[tuple[str, int], dict[str, float]] = {}
        query = "SELECT task_id, trial_index, name, value FROM trial_metrics"
        for task_id, index, name, value in conn.execute(text(query)):
            metrics.setdefault((task_id, index), {})[name] = value
        for table, order in TABLES:
            for mapping in conn.execute(text(f"SELECT * FROM {table} ORDER BY {order}")).mappings():
                row = dict(mapping)
                if table == "trials":
                    kept = metrics.get((row["task_id"], row["trial_index"]), {})
                    columns = {n: row.pop(n) for n in METRIC_COLUMNS}
                    row["process_metrics"] = {**kept, **{n: v for n, v in columns.items() if v is not None}}
                for key in ("record", "metrics"):
                    if isinstance(row.get(key), str):
                        row[key] = json.loads(row[key])
                if "data" in row:
                    row["data"] = json.loads(decompress(row["data"]))
                digest.update(json.dumps(stable(row), sort_keys=True, default=str).encode())
    return digest.digest()


def main() -> None:
    total = hashlib.sha256()
    for config in CONFIGS:
        location = f"{tempfile.mkdtemp()}/fingerprint.db"
        run = assay.run("retail", store=location, **config)
        one = fingerprint(Store(location))
        print(config, len(run.results), one.hex()[:16])
        total.update(one)
    print("TOTAL", total.hexdigest())


if __name__ == "__main__":
    main()
