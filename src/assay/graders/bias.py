"""Judge bias diagnostics.

- Length bias: Spearman's rho between a judge's scores and the length of the answers it
  scored, per rubric; a rho above the rubric's ``length_warning`` (default 0.3) warns that
  the judge may be paying for length (the seeds: "if high scores almost always come with
  long answers, the judging is biased by length and the rubric must be fixed").
- Verbosity probe: the same answers judged as they are and padded with content-free
  filler; the mean score shift is how much padding alone buys.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from ..llm.spec import ChatModel
from ..llm.types import GenerateConfig
from ..stats.agreement import spearman_rho
from .judge import ask_judge
from .judge_prompt import JudgeInput, build_messages
from .rubric import Rubric

FILLER = (
    "To restate the situation clearly and completely: the answer above covers the request. ",
    "As always, we value your question and are happy to provide a thorough explanation. ",
    "In summary, and to be perfectly clear, the points above remain exactly as stated. ",
    "Please note that this information is provided with care and attention to detail. ",
)


@dataclass(frozen=True)
class LengthBias:
    rho: float | None
    n: int
    threshold: float
    warning: bool

    @property
    def message(self) -> str:
        if self.rho is None:
            return f"length bias: not measurable ({self.n} scored answers, or constant scores)"
        verdict = "WARNING: scores track answer length" if self.warning else "no strong length effect"
        return (
            f"length bias: Spearman rho {self.rho:+.2f} over {self.n} answers "
            f"({verdict}; warn > {self.threshold:g})"
        )


def length_bias(scores: Sequence[float], lengths: Sequence[int], threshold: float = 0.3) -> LengthBias:
    """Spearman correlation of judge score and answer length, with a warning flag."""
    if len(scores) != len(lengths):
        raise ValueError("scores and lengths must have the same length")
    rho = spearman_rho(list(scores), list(lengths)) if len(scores) >= 3 else float("nan")
    value = None if math.isnan(rho) else rho
    return LengthBias(value, len(scores), threshold, value is not None and value > threshold)


def pad(answer: str, factor: float = 1.0) -> str:
    """``answer`` followed by content-free filler until it is ``1 + factor`` times longer."""
    target = int(len(answer) * (1 + factor))
    out, i = answer.rstrip() + "\n\n", 0
    while len(out) < target:
        out += FILLER[i % len(FILLER)]
        i += 1
    return out.rstrip()


@dataclass(frozen=True)
class VerbosityProbe:
    plain: list[float]
    padded: list[float]
    factor: float

    @property
    def shifts(self) -> list[float]:
        return [b - a for a, b in zip(self.plain, self.padded, strict=True)]

    @property
    def mean_shift(self) -> float | None:
        return statistics.fmean(self.shifts) if self.shifts else None


async def verbosity_probe(
    score: Callable[[str], Awaitable[float | None]], answers: Sequence[str], factor: float = 1.0
) -> VerbosityProbe:
    """Score each answer plain and padded with :func:`pad`; pairs where either score is
    missing (judge failed or answered unknown) are left out."""
    plain, padded = [], []
    for answer in answers:
        a, b = await score(answer), await score(pad(answer, factor))
        if a is not None and b is not None:
            plain.append(a)
            padded.append(b)
    return VerbosityProbe(plain, padded, factor)


def judge_scorer(
    model: ChatModel, name: str, rubric: Rubric, template: JudgeInput, config: GenerateConfig | None = None
) -> Callable[[str], Awaitable[float | None]]:
    """A scorer for :func:`verbosity_probe`: one judge, one rubric, ``template`` with the
    answer replaced."""
    cfg = config or GenerateConfig(temperature=0.0, max_tokens=1024)

    async def score(answer: str) -> float | None:
        item = JudgeInput(template.question, answer, template.context, template.evidence, template.reference)
        call = await ask_judge(model, name, rubric, build_messages(rubric, item), cfg)
        return call.aggregate.score if call.aggregate is not None else None

    return score
