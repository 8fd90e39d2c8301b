"""Holdout discipline: how often the holdout has been looked at, and by whom.

The holdout estimates how a configuration does on cases nobody tuned against. Each
look spends some of that: a configuration chosen among several by their holdout
scores, or changed after seeing holdout failures, has a holdout score that is biased
upwards. :func:`holdout_status` reads the store's holdout log (every run that held
holdout tasks, every time such a run was shown, reported, compared or gated) and warns:

- **selected after looking**: a configuration first run on the suite after the
  holdout had already been looked at, and then evaluated on the holdout itself (it
  may have been shaped by what the holdout showed);
- **compared on the holdout**: more than one configuration evaluated on it (picking
  the best of them uses the holdout as a validation set).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.task import Task


def holdout_status(
    suite_name: str,
    tasks: Iterable[Task],
    log: Sequence[Mapping[str, Any]],
    runs: Iterable[Mapping[str, Any]],
    config_of: Mapping[str, tuple[str, str]],
) -> dict[str, Any]:
    """The status document (schema ``assay.suite-status/1``).

    ``log`` is the suite's holdout log (time order), ``runs`` the store's runs (dicts
    of ``assay runs --json``), ``config_of`` maps run ids to (config hash, agent)."""
    splits = Counter(t.split for t in tasks)
    looks = [dict(e) for e in log]
    holdout_runs = [e for e in looks if e["action"] == "run"]
    first_seen: dict[str, str] = {}
    agents: dict[str, str] = {}
    for r in sorted((r for r in runs if r["suite_name"] == suite_name), key=lambda r: r["created_at"]):
        config = config_of.get(r["run_id"])
        if config is not None:
            first_seen.setdefault(config[0], r["created_at"])
            agents.setdefault(config[0], config[1])
    evaluated = list(dict.fromkeys(e["config_hash"] for e in holdout_runs))
    warnings = []
    first_look = looks[0]["at"] if looks else None
    for config in evaluated:
        agents.setdefault(config, next(e["agent"] for e in holdout_runs if e["config_hash"] == config))
        born = first_seen.get(config)
        earlier = [e for e in looks if born is not None and e["at"] < born and e["config_hash"] != config]
        if earlier:
            warnings.append(
                f"configuration {config[:12]} ({agents[config]}) was first run on {born}, after the "
                f"holdout had been looked at {len(earlier)} time(s) (first {earlier[0]['at']}), and was "
                "then evaluated on it: it may have been selected or tuned on what the holdout showed, "
                "so its holdout score is biased"
            )
    if len(evaluated) > 1:
        warnings.append(
            f"{len(evaluated)} configurations were evaluated on the holdout: picking the best of them by "
            "their holdout scores makes the holdout a validation set; report the chosen one on fresh "
            "holdout tasks"
        )
    by_version = Counter(str(e["suite_version"]) for e in looks)
    return {
        "schema": "assay.suite-status/1",
        "suite": suite_name,
        "splits": dict(sorted(splits.items())),
        "holdout_tasks": splits.get("holdout", 0),
        "holdout": {
            "looks": len(looks),
            "runs": len(holdout_runs),
            "by_action": dict(sorted(Counter(e["action"] for e in looks).items())),
            "by_suite_version": dict(sorted(by_version.items())),
            "configurations": [{"config_hash": c, "agent": agents.get(c)} for c in evaluated],
            "first_look": first_look,
            "last_look": looks[-1]["at"] if looks else None,
            "log": [
                {
                    k: e[k]
                    for k in ("at", "action", "run_id", "agent", "config_hash", "suite_version", "tasks")
                }
                for e in looks
            ],
        },
        "warnings": warnings,
    }
