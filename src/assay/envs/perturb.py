"""Perturbations and their metamorphic relations: how a task's user turns or tool
outputs are varied, and what must (not) change in the outcome.

A :class:`Perturbation` names a kind, where it applies (``user``: the scenario's texts,
before the run; ``tools``: the agent's tool results, as the trial runs) and its
:data:`Relation` to the unperturbed trial. Kinds (see docs/lifecycle.md):

=========== ======== ======================================================= ================
kind        target   what changes                                            relation
=========== ======== ======================================================= ================
typos       user     keyboard slips in a share of the words                  same_outcome
casing      user     words in lower, upper or random case                    same_outcome
paraphrase  user     phrases swapped, the text set in a template             same_outcome
distractor  user     irrelevant sentences inserted (tools: an extra field)   same_outcome
reorder     user     sentences in another order (tools: JSON keys reversed)  same_outcome
format      tools    amounts and dates in another unit or format             same_outcome
inject      tools    an instruction planted in the result (user: in the goal) same_outcome
decline     user     the user declines the confirmation                      no_state_change
=========== ======== ======================================================= ================

Identity-bearing tokens (ids, emails, amounts, anything with a digit or a symbol), the
words of the user's known facts and the plan's ``keep`` words are never changed. Every
choice is drawn from ``random.Random(derive_seed(...))`` of the run seed (user side) or
the trial seed (tool side), the plan seed, the perturbation and the task or call.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..core.hashing import canonical_json, derive_seed, stable_hash
from ..core.messages import ToolSpec
from ..core.sources import ProblemError, parse_yaml
from ..core.task import Task
from ..errors import AssayError
from . import perturb_text as tx
from .environment import Environment
from .state import Snapshot, State
from .tools import Caller

PerturbKind = Literal["typos", "casing", "paraphrase", "distractor", "reorder", "format", "inject", "decline"]
PERTURB_KINDS: tuple[str, ...] = PerturbKind.__args__  # type: ignore[attr-defined]
#: What must hold between a perturbed trial and its unperturbed twin (same task, trial
#: index and seed): the same reward; the same end state; no state change at all; or a
#: stated outcome (the perturbed trial must pass / must fail).
Relation = Literal["same_outcome", "same_state", "no_state_change", "pass", "fail"]
RELATIONS: tuple[str, ...] = Relation.__args__  # type: ignore[attr-defined]
Target = Literal["user", "tools"]
UserField = Literal["opening", "goal", "pushback", "follow_ups"]
USER_FIELDS: tuple[str, ...] = UserField.__args__  # type: ignore[attr-defined]
_TARGETS: dict[str, tuple[str, ...]] = {
    "typos": ("user",),
    "casing": ("user",),
    "paraphrase": ("user",),
    "decline": ("user",),
    "distractor": ("user", "tools"),
    "reorder": ("user", "tools"),
    "inject": ("tools", "user"),
    "format": ("tools",),
}
_SHORT = re.compile(r"^\s*(?P<kind>\w+)(?::(?P<style>[\w-]+))?(?:@(?P<rate>[\d.]+))?\s*$")
#: The task metadata key that carries the tool-side perturbations of a perturbed task.
METADATA_KEY = "perturbation"


class PerturbSpecError(AssayError):
    """A perturbation plan (file, spec string or mapping) that does not validate."""


class Perturbation(BaseModel):
    """One declarative perturbation and its metamorphic relation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: PerturbKind
    name: str | None = None
    target: Target | None = None
    relation: Relation | None = None
    rate: float | None = Field(None, gt=0, le=1)
    """typos: share of the eligible words (0.15); tools: share of the calls (1)."""
    style: str | None = None
    """casing: lower | upper | random; format: money style (symbol | code | cents)."""
    dates: Literal["long", "us", "datetime"] | None = None
    """format: how ISO dates are written (June 10, 2025 | 06/10/2025 | 2025-06-10T00:00:00Z)."""
    keep: list[str] = Field(default_factory=list)
    """Words never changed (the terms the task's meaning hangs on)."""
    fields: list[UserField] = Field(
        default_factory=lambda: list[UserField](["opening", "goal", "pushback", "follow_ups"])
    )
    templates: list[str] = Field(default_factory=list)
    swaps: dict[str, str] = Field(default_factory=dict)
    sentences: list[str] = Field(default_factory=list)
    count: int = Field(1, ge=1, le=10)
    text: str | None = None
    tools: list[str] = Field(default_factory=lambda: ["*"])
    ignore: list[str] = Field(default_factory=list)
    """Tables whose changes the state relations ignore (e.g. hand-over records)."""

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        return _parse_short(data) if isinstance(data, str) else data

    @model_validator(mode="after")
    def _consistent(self) -> Perturbation:
        allowed = _TARGETS[self.kind]
        if self.target is not None and self.target not in allowed:
            raise ValueError(f"{self.kind} applies to {' or '.join(allowed)}, not {self.target}")
        if self.kind == "casing" and self.style not in (None, "lower", "upper", "random"):
            raise ValueError(f"casing style is lower, upper or random, not {self.style!r}")
        if self.kind == "format" and self.style not in (None, "symbol", "code", "cents"):
            raise ValueError(f"format style (money) is symbol, code or cents, not {self.style!r}")
        if self.kind not in ("casing", "format") and self.style is not None:
            raise ValueError(f"{self.kind} takes no style")
        for template in self.templates:
            if "{text}" not in template:
                raise ValueError(f"template {template!r} lacks {{text}}")
        return self

    @property
    def where(self) -> Target:
        return self.target or _TARGETS[self.kind][0]  # type: ignore[return-value]

    @property
    def expects(self) -> Relation:
        return self.relation or ("no_state_change" if self.kind == "decline" else "same_outcome")

    @property
    def label(self) -> str:
        """``name``, else ``kind[:style][@rate]`` (``+tools`` when not its usual target)."""
        if self.name:
            return self.name
        label = self.kind + (f":{self.style}" if self.style else "")
        label += f"@{self.rate:g}" if self.rate is not None else ""
        return label + (f"+{self.where}" if self.where != _TARGETS[self.kind][0] else "")


class PerturbationPlan(BaseModel):
    """The perturbations of a run, applied together (``assay robustness --perturb``
    runs each one on its own against the unperturbed run)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    perturbations: list[Perturbation] = Field(default_factory=list)
    seed: int = 0

    @model_validator(mode="before")
    @classmethod
    def _list_form(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"perturbations": data}
        if isinstance(data, dict) and "kind" in data:
            return {"perturbations": [data]}
        return data

    @model_validator(mode="after")
    def _unique(self) -> PerturbationPlan:
        labels = [p.label for p in self.perturbations]
        twice = sorted({x for x in labels if labels.count(x) > 1})
        if twice:
            raise ValueError(f"perturbation {twice[0]!r} is listed twice; give one a name")
        return self

    def __bool__(self) -> bool:
        return bool(self.perturbations)

    @property
    def hash(self) -> str:
        return stable_hash(self.model_dump(mode="json"))

    def describe(self) -> str:
        return ",".join(p.label for p in self.perturbations)

    def single(self, perturbation: Perturbation) -> PerturbationPlan:
        """A plan of one of this plan's perturbations (same seed)."""
        return PerturbationPlan(perturbations=[perturbation], seed=self.seed)


def _parse_short(text: str) -> dict[str, Any]:
    match = _SHORT.match(text)
    if match is None or match["kind"] not in PERTURB_KINDS:
        raise ValueError(
            f"{text!r} is not a perturbation; write KIND[:STYLE][@RATE] with KIND one of "
            f"{', '.join(PERTURB_KINDS)} (e.g. typos@0.2, casing:upper, format:code)"
        )
    data: dict[str, Any] = {"kind": match["kind"]}
    if match["style"]:
        if match["style"] in ("tools", "user"):
            data["target"] = match["style"]
        else:
            data["style"] = match["style"]
    if match["rate"]:
        data["rate"] = float(match["rate"])
    return data


def _first_problem(exc: ValidationError) -> tuple[tuple[Any, ...], str]:
    first = exc.errors()[0]
    return tuple(first["loc"]), first["msg"].removeprefix("Value error, ")


def load_perturbations(source: Any) -> PerturbationPlan | None:
    """A plan from a plan, a mapping or list, a YAML/JSON file (the plan, a list, or a
    mapping with a ``perturb:`` key) or a spec string ``typos@0.2,casing:upper``;
    ``None``/``"none"``: no plan. Raises :class:`PerturbSpecError` naming the file,
    line and field of the first problem."""
    if source is None or isinstance(source, PerturbationPlan):
        return source
    if isinstance(source, (Mapping, list)):
        try:
            return PerturbationPlan.model_validate(dict(source) if isinstance(source, Mapping) else source)
        except ValidationError as exc:
            loc, message = _first_problem(exc)
            raise PerturbSpecError(f"perturb: {'.'.join(map(str, loc))}: {message}") from None
    text = str(source)
    path = Path(text)
    if not (path.suffix in (".yaml", ".yml", ".json") or path.is_file()):
        if text.strip().lower() in ("", "none"):
            return None
        try:
            return PerturbationPlan.model_validate([p.strip() for p in text.split(",") if p.strip()])
        except ValidationError as exc:
            loc, message = _first_problem(exc)
            where = f" ({'.'.join(map(str, loc))})" if loc else ""
            raise PerturbSpecError(f"--perturb {text!r}{where}: {message}") from None
    try:
        data, located = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    except OSError as exc:
        raise PerturbSpecError(f"{path}: cannot read the perturbation plan ({exc.strerror})") from None
    except ProblemError as exc:
        raise PerturbSpecError(str(exc.problems[0])) from None
    prefix: tuple[Any, ...] = ()
    if isinstance(data, dict) and "perturb" in data:
        data, prefix = data["perturb"], ("perturb",)
    try:
        return PerturbationPlan.model_validate(data if data is not None else {})
    except ValidationError as exc:
        loc, message = _first_problem(exc)
        if isinstance(data, list) and loc[:1] == ("perturbations",):
            loc = loc[1:]
        at = located.line(prefix + loc)
        field = ".".join(map(str, loc))
        raise PerturbSpecError(f"{path}{f':{at}' if at else ''}: {field}: {message}") from None


# --- the user side: a perturbed task ------------------------------------------------------
def _rng(*parts: object) -> random.Random:
    return random.Random(derive_seed(*parts))


def _user_text(p: Perturbation, text: str, rng: random.Random, protect: set[str]) -> str:
    if p.kind == "typos":
        return tx.typos(text, rng, p.rate or 0.15, protect)
    if p.kind == "casing":
        return tx.casing(text, rng, p.style or "random", protect)
    if p.kind == "paraphrase":
        return tx.paraphrase(text, rng, p.templates or tx.TEMPLATES, p.swaps or tx.SWAPS)
    if p.kind == "distractor":
        return tx.distract(text, rng, p.sentences or tx.DISTRACTORS, p.count)
    if p.kind == "reorder":
        return tx.reorder(text, rng)
    if p.kind == "inject":
        return f"{text}\n{p.text or tx.INJECTION}"
    return text


def perturb_user(task: Task, p: Perturbation, seed: int) -> dict[str, Any]:
    """The task's user scenario with ``p`` applied (as a dict)."""
    user = task.user.model_dump(mode="json")
    if p.kind == "decline":
        user["confirm"] = False
        return user
    protect = tx.protected_words(p.keep, task.user.known)
    fields = ["goal"] if p.kind == "inject" and p.fields == list(USER_FIELDS) else p.fields
    for field in fields:
        value = user.get(field)
        if isinstance(value, str) and value:
            user[field] = _user_text(p, value, _rng(seed, p.label, task.id, field), protect)
        elif isinstance(value, list):
            user[field] = [
                _user_text(p, v, _rng(seed, p.label, task.id, field, i), protect) if v else v
                for i, v in enumerate(value)
            ]
    return user


def perturb_task(task: Task, plan: PerturbationPlan | None, run_seed: int) -> Task:
    """``task`` with the plan's user-side perturbations applied and its tool-side ones
    recorded (metadata ``perturbation``) for the trial's environment. Its input hash
    covers the plan, so a perturbed task is never taken for the original."""
    if not plan:
        return task
    base = task.input_hash()
    data = task.model_dump(mode="json", exclude_defaults=True)
    seed = derive_seed(run_seed, plan.seed, "perturb")
    current = task
    for p in plan.perturbations:
        if p.where == "user":
            data["user"] = perturb_user(current, p, seed)
            current = Task.model_validate(data)
    tool_side = [
        p.model_dump(mode="json", exclude_defaults=True) for p in plan.perturbations if p.where == "tools"
    ]
    if tool_side:
        data["metadata"] = {
            **data.get("metadata", {}),
            METADATA_KEY: {"seed": plan.seed, "perturbations": tool_side},
        }
    perturbed = Task.model_validate(data)
    perturbed._input_hash = stable_hash({"task": base, "perturb": plan.hash})
    return perturbed


# --- the tool side: an environment whose answers are perturbed ------------------------------
def _tool_text(p: Perturbation, content: str, rng: random.Random) -> str:
    if p.kind == "reorder":
        return tx.reorder_keys(content)
    if p.kind == "distractor":
        return tx.add_field(content, "notice", rng.choice(list(p.sentences or tx.DISTRACTORS)))
    if p.kind == "inject":
        return tx.add_field(content, "note", p.text or tx.INJECTION)
    if p.kind == "format":
        return tx.reformat(content, p.style or "symbol", p.dates or "long")
    return content


class PerturbedEnvironment:
    """An :class:`Environment` whose tool results (agent calls) are perturbed. State
    changes only through the inner environment, so snapshots stay truthful; tool
    errors pass through unchanged."""

    def __init__(self, inner: Environment, perturbations: list[Perturbation], plan_seed: int, seed: int):
        self.inner, self.perturbations, self.plan_seed, self.seed = inner, perturbations, plan_seed, seed
        digest = stable_hash([p.model_dump(mode="json") for p in perturbations])[:8]
        self.version = f"{inner.version}+perturb-{digest}"
        self._calls: dict[str, int] = {}

    @property
    def last_fault(self) -> str | None:
        return getattr(self.inner, "last_fault", None)

    def reset(self, seed: int) -> None:
        self.inner.reset(seed)
        self._calls.clear()

    def tools(self, for_: Caller = "agent") -> list[ToolSpec]:
        return self.inner.tools(for_)

    def snapshot(self) -> State | Snapshot:
        return self.inner.snapshot()

    def write_tools(self) -> set[str]:
        return self.inner.write_tools()

    def _apply(self, name: str, content: str, for_: Caller) -> str:
        if for_ != "agent":
            return content
        self._calls[name] = index = self._calls.get(name, 0) + 1
        for p in self.perturbations:
            if "*" not in p.tools and name not in p.tools:
                continue
            rng = _rng(self.seed, self.plan_seed, p.label, name, index)
            if rng.random() < (p.rate or 1.0):
                content = _tool_text(p, content, rng)
        return content

    def call(self, name: str, args: dict[str, Any], for_: Caller = "agent") -> str:
        return self._apply(name, self.inner.call(name, args, for_), for_)

    def __getattr__(self, attr: str) -> Any:
        """What the inner environment has besides the protocol (``acall`` for blocking
        tools, with its answer perturbed too; ``last_replay``...)."""
        if attr.startswith("_"):
            raise AttributeError(attr)
        inner = getattr(self.inner, attr)
        if attr != "acall":
            return inner

        async def acall(name: str, args: dict[str, Any], for_: Caller = "agent") -> str:
            return self._apply(name, await inner(name, args, for_=for_), for_)

        return acall


def wrap_with_perturbation(env: Environment, task: Task, seed: int) -> Environment:
    """``env`` with the tool-side perturbations ``task`` carries (see
    :func:`perturb_task`) for the trial of seed ``seed``; ``env`` itself when none."""
    carried = task.metadata.get(METADATA_KEY) if task.metadata else None
    if not carried:
        return env
    plan = PerturbationPlan.model_validate_json(canonical_json(carried))
    return PerturbedEnvironment(env, list(plan.perturbations), plan.seed, seed)
