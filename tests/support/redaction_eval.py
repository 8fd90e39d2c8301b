"""Measuring a redactor: recall on the planted corpus, false positives on clean retail
transcripts, speed. Shared by tests/redact and benchmarks/redaction.py."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from assay.redact import Redactor
from assay.redact.checks import alnum
from tests.support.planted import Planted, Record

_PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]*)_(\d+)>")


def strings(obj: Any) -> Iterator[str]:
    """Every string inside JSON-like data (values, not keys)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from strings(value)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            yield from strings(value)


def leak(item: Planted, texts: list[str], compact: list[str]) -> str | None:
    """The fragment of ``item`` that survived in ``texts``, or None. Checked: the value
    as written, JSON-escaped, the item's own must-not-survive fragments, and (for values
    of 9+ letters and digits) the value without separators in any text without them."""
    for fragment in (item.value, json.dumps(item.value)[1:-1], *item.leaks):
        if any(fragment in t for t in texts):
            return fragment
    core = alnum(item.value)
    if len(core) >= 9 and any(core in t for t in compact):
        return core
    return None


@dataclass
class Recall:
    planted: Counter[str] = field(default_factory=Counter)
    leaked: Counter[str] = field(default_factory=Counter)
    by_context: Counter[str] = field(default_factory=Counter)
    leaks: list[tuple[str, str, str]] = field(default_factory=list)
    triples: int = 0
    triple_failures: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.planted.values())

    @property
    def recall(self) -> float:
        return 1 - sum(self.leaked.values()) / self.total if self.total else 1.0


def placeholders(text: str) -> list[str]:
    return [m.group() for m in _PLACEHOLDER.finditer(text)]


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def measure_recall(redactor: Redactor, corpus: list[Record]) -> Recall:
    """Redact each record as one unit; count planted values that survive anywhere in it,
    and check each record's consistency triple (A, B, A -> X, Y, X with X != Y)."""
    out = Recall()
    for record in corpus:
        redacted = redactor.redact(record.data).value
        texts = list(strings(redacted))
        compact = [alnum(t) for t in texts]
        for item in record.planted:
            out.planted[item.kind] += 1
            out.by_context[record.context] += 1
            fragment = leak(item, texts, compact)
            if fragment is not None:
                out.leaked[item.kind] += 1
                out.leaks.append((item.kind, record.context, item.phrase))
        if record.triple:
            out.triples += 1
            first, second, again = (placeholders(_at(redacted, p)) for p in record.triple)
            if not (first and second and again and first == again and first != second):
                out.triple_failures.append(f"{record.triple_kind}: {first} {second} {again}")
    return out


# -- clean retail transcripts --------------------------------------------------------------

#: Keys under which the retail domain keeps generated personal data.
RETAIL_PERSONAL_KEYS = ("email", "address", "shipping_address", "first_name", "last_name")


def retail_transcripts(
    agents: tuple[str, ...] = ("builtin:retail-careful",), trials: int = 1, seed: int = 0
) -> list[dict[str, Any]]:
    """Transcripts (as JSON data) of the built-in retail suite, run in-process."""
    import assay
    from assay.store.codec import _transcript

    docs = []
    for agent in agents:
        run = assay.run("retail", agent=agent, trials=trials, seed=seed, store=":memory:")
        for result in run.results:
            transcript = run.transcript(result.task_id, result.trial_index)
            if transcript is not None:
                docs.append(_transcript.dump_python(transcript, mode="json"))
    return docs


def retail_personal_values(doc: dict[str, Any]) -> set[str]:
    """The generated personal data a retail transcript holds: values under the personal
    keys of its tool outputs and tool-call arguments."""
    found: set[str] = set()
    stack: list[Any] = []
    for message in doc["messages"]:
        if message["role"] == "tool":
            with contextlib.suppress(json.JSONDecodeError, TypeError):
                stack.append(json.loads(message["content"]))
        stack.extend(call["arguments"] for call in message.get("tool_calls") or [])
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key in RETAIL_PERSONAL_KEYS and isinstance(value, str):
                    found.add(value)
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return found


@dataclass
class FalsePositives:
    """Replacements on clean retail transcripts, split into the retail domain's generated
    personal data (true positives by design) and everything else (false positives)."""

    transcripts: int = 0
    text_bytes: int = 0
    words: int = 0
    personal: Counter[str] = field(default_factory=Counter)
    false: Counter[str] = field(default_factory=Counter)
    examples: list[tuple[str, str]] = field(default_factory=list)
    personal_left: int = 0
    personal_occurrences: int = 0

    @property
    def replacements(self) -> int:
        return sum(self.personal.values()) + sum(self.false.values())

    @property
    def rate(self) -> float:
        """False-positive rate: replacements that hit no sensitive content, over all
        replacements (1 - precision)."""
        return sum(self.false.values()) / self.replacements if self.replacements else 0.0

    @property
    def per_10k_words(self) -> float:
        return sum(self.false.values()) / self.words * 10_000 if self.words else 0.0


def _is_personal(value: str, truth: set[str]) -> bool:
    return value in truth or any(value in t or (len(t) > 3 and t in value) for t in truth)


def measure_false_positives(redactor: Redactor, docs: list[dict[str, Any]]) -> FalsePositives:
    out = FalsePositives()
    for doc in docs:
        truth = retail_personal_values(doc)
        replaced: list[tuple[str, str]] = []
        session = redactor.session(audit=lambda kind, value, seen=replaced: seen.append((kind, value)))
        redacted = session.redact(doc)
        out.transcripts += 1
        for text in strings(doc):
            out.text_bytes += len(text.encode())
            out.words += len(text.split())
        for kind, value in replaced:
            if _is_personal(value, truth):
                out.personal[kind] += 1
            else:
                out.false[kind] += 1
                out.examples.append((kind, value))
        left = " ".join(strings(redacted))
        for value in truth:
            pattern = re.compile(rf"(?<![\w@.-]){re.escape(value)}(?![\w@-])")
            out.personal_occurrences += len(pattern.findall(" ".join(strings(doc))))
            out.personal_left += len(pattern.findall(left))
    return out


def measure_speed(docs: list[dict[str, Any]], repeat: int = 3, cache: bool = True) -> tuple[float, float]:
    """(MB/s of transcript JSON, MB/s of the text inside it) per second of CPU time of this
    process (on a shared machine wall time mostly measures the neighbours): best of
    ``repeat`` passes of a fresh redactor over ``docs`` (its scan cache starts empty)."""
    from assay.redact import redactor as module

    json_mb = sum(len(json.dumps(d, ensure_ascii=False).encode()) for d in docs) / 1e6
    text_mb = sum(len(s.encode()) for d in docs for s in strings(d)) / 1e6
    best = float("inf")
    saved = module._CACHE_TEXT
    module._CACHE_TEXT = saved if cache else -1
    try:
        for _ in range(repeat):
            r = Redactor()
            start = time.process_time()
            for doc in docs:
                r.redact(doc)
            best = min(best, time.process_time() - start)
    finally:
        module._CACHE_TEXT = saved
    return json_mb / best, text_mb / best
