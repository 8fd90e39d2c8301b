"""Bernoulli agents for benchmarks/adaptive_cli.py: a known success rate and a
controllable correlation with a baseline, through the normal agent interface.

Use as ``--agent python:bernoulli_agent:BernoulliAgent`` (with ``benchmarks/`` on the
import path) and parameters ``-p p=0.85 -p coupling=0.5 -p icc=0.5``:

- ``p``: the success rate, over the tasks of the suite (exactly, up to the quadrature of
  the task effects below);
- ``icc``: share of the latent that belongs to the task (the same for every trial of a
  task, for every agent: some tasks are hard for everyone). The suite's tasks say
  ``Task i of T``; task i's effect is the normal quantile ``(i + ½)/T``, so the effects
  of any suite are a quadrature of N(0, 1) and the mean rate is ``p``;
- ``coupling`` r: correlation of the trial-level latent with the *shared* stream, which
  depends only on the trial's seed (task, trial index and run seed). The baseline uses
  r = 1 (its trial latent *is* the shared stream); a candidate run with the baseline's
  seed then has latent correlation ``icc + (1 − icc)·r`` with it. r = 0 and icc = 0:
  independent agents;
- ``stream``: names the agent's own noise (two candidates with different streams are
  independent given the shared parts);
- ``latency_ms``: mean of a uniform random delay per answer, so trials overlap and
  finish out of order, as model calls do.

A trial passes when the latent is below ``Φ⁻¹(p)``: the agent answers "hello" (the
suite's grader wants it) or "goodbye". Every random number comes from a
``random.Random`` seeded by the trial's seed.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

from assay.agents import AgentContext
from assay.core.hashing import derive_seed

_Z = NormalDist()
_TASK = re.compile(r"Task (\d+) of (\d+)")


def task_effect(opening: str) -> float:
    """The task's latent effect from its opening line ``Task i of T``."""
    found = _TASK.search(opening)
    if found is None:
        raise ValueError(f"the bernoulli agent needs tasks that say 'Task i of T', got {opening!r}")
    i, total = int(found.group(1)), int(found.group(2))
    return _Z.inv_cdf((i + 0.5) / total)


class BernoulliAgent:
    """See the module doc."""

    def __init__(self, ctx: AgentContext):
        params = ctx.params
        self.p = float(params["p"])
        self.coupling = float(params.get("coupling", 1.0))
        self.icc = float(params.get("icc", 0.0))
        self.stream = str(params.get("stream", "own"))
        self.latency = float(params.get("latency_ms", 0.0)) / 1000
        if not (0 < self.p < 1 and 0 <= self.coupling <= 1 and 0 <= self.icc < 1):
            raise ValueError("need 0 < p < 1, 0 <= coupling <= 1, 0 <= icc < 1")
        self.seed = ctx.seed

    def passes(self, opening: str) -> bool:
        shared = random.Random(derive_seed(self.seed, "shared")).gauss(0.0, 1.0)
        own = random.Random(derive_seed(self.seed, "own", self.stream)).gauss(0.0, 1.0)
        trial = self.coupling * shared + math.sqrt(1 - self.coupling**2) * own
        latent = math.sqrt(self.icc) * task_effect(opening) + math.sqrt(1 - self.icc) * trial
        return latent < _Z.inv_cdf(self.p)

    async def respond(self, conversation: Sequence[Any], tools: Sequence[Any]) -> str:
        if self.latency:
            rng = random.Random(derive_seed(self.seed, "latency", self.stream))
            await asyncio.sleep(rng.uniform(0, 2 * self.latency))
        opening = next(m.content for m in conversation if m.role == "user")
        return "hello" if self.passes(opening) else "goodbye"


def _simpson(f: Any, lo: float, hi: float, n: int = 400) -> float:
    h = (hi - lo) / n
    total = f(lo) + f(hi)
    total += sum((4 if j % 2 else 2) * f(lo + j * h) for j in range(1, n))
    return total * h / 3


def cells(pa: float, pb: float, icc: float, coupling: float, tasks: int) -> dict[str, float]:
    """The exact joint outcome shares of a baseline (rate ``pa``, coupling 1) and a
    candidate (``pb``, ``coupling``) with the same ``icc`` on a suite of ``tasks``
    tasks: ``p10`` (only the baseline passes), ``p01`` (only the candidate passes), by
    Simpson quadrature over the shared latent, task by task."""
    ca, cb = _Z.inv_cdf(pa), _Z.inv_cdf(pb)
    rest = math.sqrt(1 - coupling**2)
    scale = math.sqrt(1 - icc)
    p10 = p01 = 0.0
    for i in range(tasks):
        t = math.sqrt(icc) * _Z.inv_cdf((i + 0.5) / tasks)
        edge = (ca - t) / scale  # the baseline passes when the shared latent x < edge

        def b_passes(x: float, t: float = t) -> float:
            if rest == 0:
                return 1.0 if t + scale * coupling * x < cb else 0.0
            return _Z.cdf(((cb - t) / scale - coupling * x) / rest)

        if rest == 0:  # the candidate passes when x < its own edge: the cells are intervals
            edge_b = (cb - t) / (scale * coupling)
            p10 += max(0.0, _Z.cdf(edge) - _Z.cdf(edge_b))
            p01 += max(0.0, _Z.cdf(edge_b) - _Z.cdf(edge))
            continue
        p10 += _simpson(lambda x: _Z.pdf(x) * (1 - b_passes(x)), -9.0, edge)
        p01 += _simpson(lambda x: _Z.pdf(x) * b_passes(x), edge, 9.0)
    return {"p10": p10 / tasks, "p01": p01 / tasks}
