"""Near-duplicate check: does a task (a flow-back candidate) already exist in a suite?

Two fingerprints of a task:

- **content**: the hash of everything that defines its input except its id and
  metadata-like fields (description, tags, split, stratum, difficulty, metadata):
  equal content means an exact duplicate.
- **shape**: the words of its user scenario, the kinds and parameters of its graders
  and the names of its reference actions, with values that differ between instances
  (ids, amounts, emails, quoted strings, numbers) replaced by placeholders. The Jaccard
  similarity of two shapes says how alike two tasks are; at or above the threshold
  (default 0.9) the candidate is a near-duplicate: probably an instance of a case the
  suite already covers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..core.hashing import canonical_json, stable_hash
from ..core.task import Task
from .clustering import normalize_reason

DEFAULT_NEAR = 0.9
_NOT_CONTENT = {
    "id",
    "description",
    "tags",
    "split",
    "stratum",
    "difficulty",
    "metadata",
    "template",
    "params",
    "instances",
}
_WORD = re.compile(r"<\w+>|[a-z_]+")


def content_hash(task: Task) -> str:
    data = task.model_dump(mode="json", exclude=_NOT_CONTENT, exclude_defaults=True)
    return stable_hash(data)


def shape(task: Task) -> frozenset[str]:
    u = task.user
    text = " ".join([u.opening, u.goal, *u.pushback, *u.follow_ups, u.instructions, *u.known])
    graders = " ".join(f"grader_{g.kind} {canonical_json(g.params)}" for g in task.graders)
    actions = " ".join(f"act_{a.name} " + " ".join(sorted(a.args)) for a in task.reference.actions)
    tokens = set(_WORD.findall(normalize_reason(f"{text} {graders} {actions}")))
    tokens.add(f"confirm_{u.confirm}")
    return frozenset(tokens)


@dataclass(frozen=True)
class Match:
    """An existing task the candidate resembles."""

    task_id: str
    similarity: float
    exact: bool

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "similarity": round(self.similarity, 3), "exact": self.exact}

    def sentence(self, candidate: str) -> str:
        if self.exact:
            return f"{candidate} has the same content as task {self.task_id}: it already exists"
        return (
            f"{candidate} is a near-duplicate of task {self.task_id} (similarity {self.similarity:.2f}): "
            "the suite may already cover this case"
        )


def near_duplicates(
    candidate: Task, existing: Iterable[Task], threshold: float = DEFAULT_NEAR
) -> list[Match]:
    """Existing tasks (other ids) the candidate duplicates or nearly duplicates, most alike first."""
    mine, mine_shape = content_hash(candidate), shape(candidate)
    found = []
    for task in existing:
        if task.id == candidate.id:
            continue
        exact = content_hash(task) == mine
        other = shape(task)
        similarity = 1.0 if exact else len(mine_shape & other) / max(1, len(mine_shape | other))
        if exact or similarity >= threshold:
            found.append(Match(task.id, similarity, exact))
    found.sort(key=lambda m: (not m.exact, -m.similarity, m.task_id))
    return found
