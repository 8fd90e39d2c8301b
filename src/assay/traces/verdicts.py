"""What was said about a recorded conversation: evaluator spans, annotations, error
statuses and verdicts in a conversation's metadata (docs/traces.md, "Verdicts").

The readers collect these as :class:`Verdict` facts and leave the judgement to their
users: ``assay badcase from-traces`` (``assay.lifecycle.traced``) decides which of them
mark a conversation as failed.

- **evaluator spans** (OpenInference kind ``EVALUATOR``, or OpenTelemetry GenAI
  ``gen_ai.evaluation.*`` attributes; assay's own exports carry both): name, label,
  score, explanation; assay's also whether the grader gates the reward, its category
  and whether it vetoed;
- **annotations** in Phoenix's form, span or trace annotations (``{"span_id" or
  "trace_id", "name", "annotator_kind", "result": {"label", "score", "explanation"}}``),
  in the trace file or a file of their own; in the JSONL format, a conversation's
  ``annotations`` list (Phoenix's form, or ``{"name", "label", "score",
  "explanation"}`` flat);
- **error statuses** of spans other than tool spans (a failed tool call is part of the
  conversation, not a verdict on it), with the status message;
- **metadata** of a JSONL conversation: ``verdict`` or ``label`` (a label), ``passed``
  (true/false), ``reward`` (1/0), ``error`` (a message: the application failed);
- **reward** of a trial recorded by assay (``assay.reward``; excluded trials have none).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

VerdictSource = Literal["evaluator", "annotation", "status", "metadata", "reward"]


@dataclass
class Verdict:
    """One statement about a conversation (see the module docstring)."""

    name: str
    source: VerdictSource
    label: str | None = None
    score: float | None = None
    passed: bool | None = None
    """An explicit pass/fail (assay's graders, ``passed`` metadata), else None."""
    explanation: str = ""
    category: str | None = None
    gating: bool = True
    """False for an assay grader that does not decide the reward (informational)."""
    veto: bool = False
    annotator: str | None = None
    """HUMAN, LLM, CODE... for annotations."""
    span_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


_PASSED = {"true": True, "false": False}


def evaluator_verdict(name: str, attributes: dict[str, Any], span_id: str | None = None) -> Verdict:
    """The verdict of an evaluator span (its flat attributes)."""
    a = attributes
    assay_label = a.get("assay.grade.passed")
    label = _text(a.get("gen_ai.evaluation.score.label") or a.get("eval.label") or assay_label)
    explanation = a.get("gen_ai.evaluation.explanation") or a.get("eval.explanation") or a.get("output.value")
    return Verdict(
        name=str(a.get("gen_ai.evaluation.name") or name),
        source="evaluator",
        label=label,
        score=_number(a.get("gen_ai.evaluation.score.value", a.get("eval.score"))),
        passed=_PASSED.get(str(assay_label).lower()) if assay_label is not None else None,
        explanation=str(explanation or ""),
        category=_text(a.get("assay.grade.category")),
        gating=a.get("assay.grade.gating") is not False,
        veto=a.get("assay.grade.veto") is True,
        span_id=span_id,
    )


def is_evaluator(kind: str, attributes: dict[str, Any]) -> bool:
    return kind.upper() == "EVALUATOR" or any(
        k in attributes for k in ("gen_ai.evaluation.name", "gen_ai.evaluation.score.label")
    )


def status_verdict(name: str, message: str, span_id: str | None = None) -> Verdict:
    """A span that ended with an error status."""
    text = f"{name}: {message}" if message else f"{name} ended with an error status"
    return Verdict(
        name="status", source="status", label="error", category="error", explanation=text, span_id=span_id
    )


def is_annotation(item: dict[str, Any]) -> bool:
    """A Phoenix span or trace annotation record (not a span: no context, no start)."""
    return (
        "name" in item
        and ("result" in item or "annotator_kind" in item)
        and ("span_id" in item or "trace_id" in item)
        and "context" not in item
        and "start_time" not in item
    )


def annotation_verdict(item: dict[str, Any]) -> Verdict:
    """An annotation, Phoenix's form (``result: {label, score, explanation}``) or flat."""
    result: dict[str, Any] = item["result"] if isinstance(item.get("result"), dict) else item
    return Verdict(
        name=str(item.get("name") or "annotation"),
        source="annotation",
        label=_text(result.get("label")),
        score=_number(result.get("score")),
        explanation=str(result.get("explanation") or ""),
        annotator=_text(item.get("annotator_kind")),
        span_id=_text(item.get("span_id")),
    )


def metadata_verdicts(data: dict[str, Any]) -> list[Verdict]:
    """The verdicts of a JSONL conversation: its metadata and its ``annotations``."""
    meta: dict[str, Any] = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
    out: list[Verdict] = []
    label = meta.get("verdict", meta.get("label"))
    if isinstance(label, (str, bool)):
        out.append(Verdict(name="verdict", source="metadata", label=str(label).lower()))
    if isinstance(meta.get("passed"), bool):
        out.append(Verdict(name="passed", source="metadata", passed=meta["passed"]))
    reward = _number(meta.get("reward"))
    if reward is not None and not isinstance(meta.get("reward"), bool):
        out.append(Verdict(name="reward", source="metadata", score=reward, passed=reward >= 1))
    if meta.get("error"):
        error = meta["error"]
        out.append(status_verdict("application", error if isinstance(error, str) else ""))
    for item in [*(data.get("annotations") or []), *(meta.get("annotations") or [])]:
        if isinstance(item, dict):
            out.append(annotation_verdict(item))
    return out


def reward_verdict(attributes: dict[str, Any]) -> Verdict | None:
    """The reward of a trial recorded by assay (None when it was excluded)."""
    reward = attributes.get("assay.reward")
    if attributes.get("assay.excluded") or not isinstance(reward, (int, float)) or reward < 0:
        return None
    return Verdict(
        name="reward",
        source="reward",
        score=float(reward),
        passed=reward >= 1,
        explanation=str(attributes.get("assay.error_category") or attributes.get("assay.termination") or ""),
        category=_text(attributes.get("assay.error_category") or attributes.get("assay.termination")),
    )
