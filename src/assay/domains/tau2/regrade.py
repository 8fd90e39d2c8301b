"""``assay regrade FILE --format tau2``: tau2's recorded simulations run again in assay.

Each simulation of a tau2 results file becomes one trial of an ordinary assay run: the
file's own copy of its task (converted as ``assay import tau2`` converts it, so the
file's tasks win over the suite's), the recorded messages said again by the
``recorded:MODEL`` agent and the ``replay`` user, every recorded tool call run on a
fresh environment of the ported domain, and the trial graded by assay's graders. The run
is stored like any other (agent ``recorded:<the recorded model>``), so ``show``,
``compare``, ``gate``, ``report``, ``rank`` and the viewer work on it.

Then the run is checked against the recording: every replayed tool output against the
recorded one (a mismatch is a broken port, or an environment tau2 did not reset), and
every grade against the recorded verdict (DB, each env assertion, each communicate
check, each action check, the reward where the basis has no NL assertion). The port's
tau2 evaluator (:mod:`.evaluate`) re-derives the same verdicts as a cross-check.

The tasks made of the recording are in :mod:`.regrade_recording`, the checks in
:mod:`.regrade_checks`, the report in :mod:`.regrade_report`; this module runs them and
exports their public names.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...core.results import TrialResult
from ...envs.registry import get_domain
from ...runner.api import run_async
from ...store.store import Store
from ...suites.loader import load_suite
from .domain import Tau2Domain
from .importer import GREETING, import_tau2
from .regrade_checks import check_run
from .regrade_recording import check_tools, recorded_conversation, regrade_suite, regrade_tasks
from .regrade_report import COMPONENTS, Agreement, RegradeReport, ToolMismatch
from .replay import parse_results, read_results
from .store import Tau2DataError


async def regrade_tau2_async(
    path: Path | str,
    *,
    suite: Path | str | None = None,
    data: Path | str | None = None,
    store: Store | str | None = None,
    run_id: str | None = None,
    concurrency: int = 8,
    progress: Callable[[TrialResult, int, int], None] | None = None,
) -> RegradeReport:
    """Regrade a tau2 results file (see the module docstring). ``suite``: an imported
    tau2 suite folder (``assay import tau2``); else ``data``: a tau2 data folder, imported
    for the occasion."""
    path = Path(path)
    raw = read_results(path)
    name, tasks, simulations = parse_results(raw, path)
    info: dict[str, Any] = raw["info"] if isinstance(raw.get("info"), dict) else {}
    agent_info: dict[str, Any] = info["agent_info"] if isinstance(info.get("agent_info"), dict) else {}
    model = str(agent_info.get("llm") or "unknown")
    st = store if isinstance(store, Store) else Store(store)
    with tempfile.TemporaryDirectory(prefix="assay-regrade-") as tmp:
        if suite is None:
            if data is None:
                raise Tau2DataError(
                    "regrade needs --suite DIR (an imported tau2 suite) or --data PATH (tau2's data)"
                )
            import_tau2(data, name, Path(tmp) / name)
            suite = Path(tmp) / name
        loaded = load_suite(suite)
        domain = get_domain(loaded.domain_ref)
        if not isinstance(domain, Tau2Domain) or domain.loaded.name.removesuffix("-workflow") != name:
            raise Tau2DataError(
                f"{path}: a tau2 {name} results file, but suite {loaded.name} is not tau2's {name}"
            )
        check_tools(domain, path, simulations)
        splits = {t.id: t.split for t in loaded.tasks}
        regraded, trials = regrade_tasks(tasks, simulations, splits, path)
        run = await run_async(
            regrade_suite(loaded, regraded, trials),
            agent=f"recorded:{model}",
            user="replay",
            trials=trials,
            split="all",  # every recorded simulation, holdout (tau2's test split) included
            store=st,
            run_id=run_id,
            concurrency=concurrency,
            progress=progress,
        )
    return check_run(run, path, name, model, tasks, simulations, domain)


def regrade_tau2(path: Path | str, **options: Any) -> RegradeReport:
    """Synchronous twin of :func:`regrade_tau2_async`."""
    return asyncio.run(regrade_tau2_async(path, **options))


__all__ = [
    "COMPONENTS",
    "GREETING",
    "Agreement",
    "RegradeReport",
    "ToolMismatch",
    "check_run",
    "recorded_conversation",
    "regrade_suite",
    "regrade_tasks",
    "regrade_tau2",
    "regrade_tau2_async",
]
