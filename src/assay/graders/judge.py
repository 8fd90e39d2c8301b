"""``judge``: an LLM (or a panel of LLMs) grades the agent's output against a rubric.

One judge call per judge model: the prompt of :mod:`.judge_prompt`, JSON only, validated
against the rubric; a malformed answer is retried once (the judge is told what was
wrong), then the judge counts as failed and the grade goes to human review. A judge that
answers ``unknown`` also sends the grade to review instead of guessing.

Several judges (``--judge`` repeated) make a panel on the same rubric: levels are
combined by mean (levelled dimensions) and majority (pass/fail items), or verdicts by
majority; a spread of judge scores above ``disagreement``, or a split on a veto, marks
the grade ``needs_review``. Judges default to the on-disk response cache.

Recorded with every grade: ``judge_model`` (the spec(s)), ``version`` (prompt version +
rubric name and hash), and in ``metrics`` the temperature, ``dim:<name>`` levels (a
panel's mean), ``pass:<name>`` for veto/pitfall items (share of judges passing it), the
per-judge scores, panel spread and agreement. A veto vetoes the trial only when the
grader is gating. See docs/judges.md.
"""

from __future__ import annotations

import asyncio
import statistics
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal

from pydantic import Field

from ..core.messages import Message
from ..core.results import GradeResult, Outcome
from ..core.task import Task
from ..core.transcript import Transcript
from ..llm.errors import ModelUnavailable
from ..llm.spec import ChatModel, shared_model
from ..llm.types import GenerateConfig
from .attachments import Attach, attach_problems, for_rubric, modalities_of
from .base import Grader, Params, PathKey
from .files import GraderFileError
from .judge_prompt import (
    PROMPT_VERSION,
    JudgeInput,
    MalformedVerdict,
    Verdict,
    build_messages,
    parse_verdict,
    render_transcript,
)
from .rubric import Aggregate, Rubric, load_rubric

NO_JUDGE = "no judge model configured (--judge)"


@dataclass
class JudgeCall:
    """One judge model's answer: its verdict and aggregate, or why there is none."""

    model: str
    verdict: Verdict | None = None
    aggregate: Aggregate | None = None
    error: str | None = None
    attempts: int = 0

    @property
    def usable(self) -> bool:
        return self.verdict is not None and not self.verdict.unknown


async def ask_judge(
    model: ChatModel, name: str, rubric: Rubric, messages: list[Message], config: GenerateConfig
) -> JudgeCall:
    """Call one judge; retry once on a malformed answer, saying what was wrong."""
    call = JudgeCall(name)
    convo = list(messages)
    for attempt in (1, 2):
        call.attempts = attempt
        try:
            completion = await model.complete(convo, [], config)
        except ModelUnavailable as exc:
            call.error = f"judge {name} unavailable: {exc}"
            return call
        try:
            call.verdict = parse_verdict(completion.text, rubric)
        except MalformedVerdict as exc:
            call.error = f"judge {name} gave a malformed answer twice ({exc})"
            convo += [
                Message("assistant", completion.text),
                Message(
                    "user",
                    f"Your answer could not be used: {exc}. Reply again with the JSON object only, "
                    "exactly in the format given, with a score for every dimension.",
                ),
            ]
            continue
        call.error = None
        if not call.verdict.unknown:
            call.aggregate = rubric.aggregate(call.verdict.levels)
        return call
    return call


@dataclass
class PanelResult:
    """The combined judgement of one or more judges."""

    calls: list[JudgeCall]
    score: float | None = None
    passed: bool | None = None
    veto: list[str] = field(default_factory=list)
    needs_review: bool = False
    notes: list[str] = field(default_factory=list)
    levels: dict[str, float] = field(default_factory=dict)
    spread: float | None = None
    agreement: float | None = None


def combine(
    rubric: Rubric,
    calls: list[JudgeCall],
    how: Literal["mean", "majority"] = "mean",
    disagreement: float = 0.25,
) -> PanelResult:
    """Combine judges: see the module docstring."""
    out = PanelResult(calls)
    for c in calls:
        if c.error:
            out.notes.append(c.error)
        elif c.verdict is not None and c.verdict.unknown:
            out.notes.append(f"judge {c.model} answered unknown for {', '.join(c.verdict.unknown)}")
    usable = [c for c in calls if c.usable]
    out.needs_review = len(usable) < len(calls)
    if not usable:
        return out
    aggs = [c.aggregate for c in usable if c.aggregate is not None]
    scores = [a.score for a in aggs]
    consensus: dict[str, Any] = {}
    for d in rubric.dimensions:
        values = [c.verdict.levels[d.name] for c in usable if c.verdict is not None]
        if d.binary:
            fails = sum(v == "fail" for v in values)
            consensus[d.name] = "fail" if 2 * fails > len(values) else "pass"
            out.levels[d.name] = 1.0 - fails / len(values)
            if fails > 0 and 2 * fails <= len(values) and d.weight == "veto":
                out.needs_review = True
                out.notes.append(f"judges split on veto {d.name!r}")
        else:
            consensus[d.name] = statistics.fmean(float(v) for v in values)
            out.levels[d.name] = consensus[d.name]
    if len(usable) > 1:
        out.spread = max(scores) - min(scores)
        pairs = list(combinations([a.passed for a in aggs], 2))
        out.agreement = sum(x == y for x, y in pairs) / len(pairs)
        if out.spread > disagreement + 1e-12:
            out.needs_review = True
            out.notes.append(f"judge scores spread {out.spread:.2f} > {disagreement:g}")
    combined = rubric.aggregate(consensus)
    out.veto = combined.vetoes
    if how == "majority" and len(usable) > 1:
        votes = sum(a.passed for a in aggs)
        out.score = statistics.median(scores)
        if 2 * votes == len(aggs):
            out.needs_review = True
            out.notes.append("judges split evenly on the verdict")
        out.passed = 2 * votes > len(aggs) and not out.veto
    else:
        out.score, out.passed = combined.score, combined.passed
    return out


class JudgeParams(Params):
    rubric: str | dict[str, Any] = Field(description="rubric file (relative: see docs/rubrics.md) or inline")
    question: str | None = Field(None, description="default: the user's goal, else the opening message")
    context: str = Field("", description="trusted reference material given to the judge")
    evidence: list[Literal["policy", "tools", "transcript"]] = Field(default_factory=list)
    reference: str | None = Field(None, description="reference answer; default: task.reference.answer")
    mode: Literal["auto", "reference", "free"] = "auto"
    target: Literal["final", "agent", "transcript"] = "final"
    aggregate: Literal["mean", "majority"] = "mean"
    disagreement: float = Field(0.25, ge=0, le=1)
    temperature: float = Field(0.0, ge=0)
    max_tokens: int | None = Field(1024, ge=1)
    seed: int | None = None
    attach: list[Attach] = Field(
        default_factory=list, description="images and audio the judge sees (docs/judges.md#images-and-audio)"
    )


def label_dimensions(grade: GradeResult) -> list[tuple[str, list[str]]]:
    """What a human labels for a judge's grade: each levelled dimension with its levels
    (best first) and each pass/fail item, read from the grade's metrics."""
    lo, hi = int(grade.metrics.get("scale_min", 1)), int(grade.metrics.get("scale_max", 4))
    dims = []
    for key in grade.metrics:
        kind, _, name = key.partition(":")
        if kind == "dim" and name:
            dims.append((name, [str(v) for v in range(hi, lo - 1, -1)]))
        elif kind == "pass" and name:
            dims.append((name, ["pass", "fail"]))
    return dims


def answer_of(transcript: Transcript, target: str) -> str:
    """The part of a trial the judge grades: the final agent message, all of them, or all."""
    if target == "transcript":
        return render_transcript(transcript)
    texts = transcript.agent_texts()
    if target == "agent":
        return "\n\n".join(f"[agent message {i}] {t}" for i, t in enumerate(texts, start=1))
    return texts[-1] if texts else ""


class JudgeGrader(Grader[JudgeParams]):
    """Rubric-based LLM judge (single judge or panel). See the module docstring."""

    kind = "judge"
    Params = JudgeParams

    @classmethod
    def coerce(cls, raw: Any) -> Any:
        return {"rubric": raw} if isinstance(raw, str) else ({} if raw is None else raw)

    @classmethod
    def check(cls, params: JudgeParams, domain: Any, task: Task) -> list[tuple[PathKey, str]]:
        """Problems of the rubric a spec names (for ``assay validate``)."""
        try:
            rubric = load_rubric(params.rubric, task)
        except GraderFileError as exc:
            return [(("rubric",), str(p)) for p in exc.problems]
        return attach_problems(params.attach, rubric, task)

    def rubric_for(self, task: Task) -> Rubric:
        return load_rubric(self.params.rubric, task)

    def judge_input(self, task: Task, transcript: Transcript) -> JudgeInput | str:
        """The judge's input, or the reason it cannot be built."""
        p: JudgeParams = self.params
        answer = answer_of(transcript, p.target)
        if not answer.strip():
            if not p.attach:
                return "the agent produced no output to judge"
            answer = "(no text: judge the attachments)"
        reference = p.reference if p.reference is not None else task.reference.answer
        if p.mode == "reference" and reference is None:
            return "reference mode, but the task has no reference answer"
        context = [p.context] if p.context else []
        if "policy" in p.evidence and self.domain.policy:
            context.append("Policy the agent must follow:\n" + self.domain.policy)
        evidence = []
        if "tools" in p.evidence:
            evidence.append(render_transcript(transcript, tools_only=True) or "(no tool calls)")
        if "transcript" in p.evidence and p.target != "transcript":
            evidence.append(render_transcript(transcript))
        question = p.question or task.user.goal or task.user.opening or task.description
        return JudgeInput(
            question=question,
            answer=answer,
            context="\n\n".join(context),
            evidence="\n\n".join(evidence),
            reference=None if p.mode == "free" else reference,
            answer_label="Conversation" if p.target == "transcript" else "AI answer",
        )

    def models(self) -> list[tuple[str, ChatModel]]:
        options = {"cache": True, **self.settings.judge_options}
        return [(spec, shared_model(spec, **options)) for spec in self.settings.judges]

    async def grade(self, task: Task, transcript: Transcript, outcome: Outcome) -> GradeResult:
        if not self.settings.judges:
            return self.skip(NO_JUDGE)
        rubric = self.rubric_for(task)
        item = self.judge_input(task, transcript)
        if isinstance(item, str):
            return self.skip(item)
        p: JudgeParams = self.params
        models = self.models()
        unable: list[str] = []
        if p.attach:
            got = await for_rubric(p.attach, rubric, task, transcript, outcome)
            if got.problem is not None:
                if got.fault == "harness":
                    return self.skip(f"attachments: {got.problem}")
                reason = f"attachments: {got.problem}"
                return self.result(False, reason, score=0.0, category="missing_attachment")
            item.attachments = got.media
            needed = {m.kind for m in item.attachments}
            unable = [s for s, m in models if not needed <= modalities_of(m)]
            models = [(s, m) for s, m in models if needed <= modalities_of(m)]
            if not models:
                return self.skip(f"no judge takes {' and '.join(sorted(needed))} input: {', '.join(unable)}")
        config = GenerateConfig(temperature=p.temperature, max_tokens=p.max_tokens, seed=p.seed)
        messages = build_messages(rubric, item)
        calls = await asyncio.gather(*(ask_judge(m, s, rubric, messages, config) for s, m in models))
        panel = combine(rubric, list(calls), p.aggregate, p.disagreement)
        result = self.to_result(rubric, panel, reference=item.reference is not None)
        if item.attachments:
            result.metrics["attachments"] = float(len(item.attachments))
            result.metrics["attachment_bytes"] = float(sum(len(m.data) for m in item.attachments))
        if unable:
            result.metrics["judges_left_out"] = float(len(unable))
        return result

    def to_result(self, rubric: Rubric, panel: PanelResult, reference: bool) -> GradeResult:
        """The grade of a panel result, with the judge's provenance in version and metrics."""
        p: JudgeParams = self.params
        metrics: dict[str, float] = {
            "temperature": p.temperature,
            "judges": float(len(panel.calls)),
            "judges_usable": float(sum(c.usable for c in panel.calls)),
            "judge_calls": float(sum(c.attempts for c in panel.calls)),
            "reference_based": float(reference),
        }
        if rubric.scale:
            metrics["scale_min"], metrics["scale_max"] = float(rubric.scale[0]), float(rubric.scale[-1])
        for name, level in panel.levels.items():
            binary = rubric.dimension(name).binary
            metrics[f"{'pass' if binary else 'dim'}:{name}"] = level
        for c in panel.calls:
            if c.aggregate is not None:
                metrics[f"score[{c.model}]"] = c.aggregate.score
        if panel.spread is not None:
            metrics["panel_spread"] = panel.spread
        if panel.agreement is not None:
            metrics["panel_agreement"] = panel.agreement
        single = panel.calls[0].verdict if len(panel.calls) == 1 else None
        if single is not None and single.verdict in ("pass", "fail") and panel.passed is not None:
            metrics["judge_verdict"] = float(single.verdict == "pass")
            if (single.verdict == "pass") != panel.passed:
                panel.needs_review = True
                panel.notes.append(f"the judge said {single.verdict} but the rubric rules say otherwise")
        version = f"{PROMPT_VERSION}+{rubric.name[:24]}@{rubric.hash}"
        judges = ",".join(c.model for c in panel.calls)[:200]
        if panel.passed is None:
            broken = all(c.error for c in panel.calls)
            return GradeResult(
                grader=self.name,
                kind=self.kind,
                passed=None,
                reason="; ".join(panel.notes) or "no usable judge verdict",
                category="grader_error" if broken else "judge_unknown",
                needs_review=True,
                gating=self.gating,
                metrics=metrics,
                version=version,
                judge_model=judges,
            )
        return GradeResult(
            grader=self.name,
            kind=self.kind,
            passed=panel.passed,
            score=panel.score,
            reason=self._reason(rubric, panel),
            category=None if panel.passed else ("veto:" + panel.veto[0] if panel.veto else "judge_fail"),
            needs_review=panel.needs_review,
            veto=bool(panel.veto) and self.gating,
            gating=self.gating,
            metrics=metrics,
            version=version,
            judge_model=judges,
        )

    @staticmethod
    def _reason(rubric: Rubric, panel: PanelResult) -> str:
        first = next(c for c in panel.calls if c.usable)
        assert first.verdict is not None
        head = first.verdict.reason.strip() or ("passes the rubric" if panel.passed else "fails the rubric")
        if panel.veto:
            head = f"veto {', '.join(panel.veto)} failed: " + first.verdict.reasons.get(panel.veto[0], head)
        weak = []
        for d in rubric.dimensions:
            level = first.verdict.levels[d.name]
            top = (d.binary and level == "pass") or (not d.binary and level == rubric.scale[-1])
            if not top and first.verdict.reasons.get(d.name):
                weak.append(f"{d.name} {level}: {first.verdict.reasons[d.name]}")
        return " | ".join([head, *weak, *panel.notes])
