"""Redaction figures: recall on the planted corpus, false positives on clean retail
transcripts, speed.

    python benchmarks/redaction.py                 # the figures in docs/redaction.md
    python benchmarks/redaction.py --seeds 3 --trials 1

- recall: planted secrets and personal data (tests/support/planted.py: 24 kinds, varied
  formats, in transcripts, JSON tool outputs and error messages), each record redacted
  as one unit; a planted value counts as leaked if it, its JSON-escaped form, its
  must-not-survive fragments or (9+ characters) its letters-and-digits survive anywhere
  in the record. Consistency: per record, A, B, A of one kind must come out X, Y, X.
- false positives: the built-in retail suite run in-process with the built-in agents;
  every replacement is checked against the personal data the retail domain generates
  (values under email, address, shipping_address, first_name, last_name in the
  transcript's tool outputs and arguments): a replacement of such a value (or part of
  one) is a true positive by design, anything else a false positive.
  false-positive rate = false positives / all replacements; also per 10,000 words.
- speed: a fresh Redactor over the transcripts (MB of JSON and MB of the text inside it
  per second of this process's CPU time: on a shared machine wall time mostly measures
  the neighbours), best of 3, with its per-text scan cache (the default) and without it.
Everything printed is measured in this run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from tests.support.planted import build_corpus  # noqa: E402
from tests.support.redaction_eval import (  # noqa: E402
    measure_false_positives,
    measure_recall,
    measure_speed,
    retail_transcripts,
)

from assay.redact import Redactor, detect_secrets_version  # noqa: E402

AGENTS = ("builtin:retail-careful", "builtin:retail-hasty", "builtin:retail-flaky")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="planted corpora (150 records each)")
    parser.add_argument("--trials", type=int, default=3, help="retail trials per task and agent")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    redactor = Redactor()
    figures: dict[str, object] = {"detect_secrets": detect_secrets_version()}

    planted: Counter[str] = Counter()
    leaked: Counter[str] = Counter()
    contexts: Counter[str] = Counter()
    triples = triple_failures = 0
    for seed in range(args.seeds):
        result = measure_recall(redactor, build_corpus(seed, records=150))
        planted.update(result.planted)
        leaked.update(result.leaked)
        contexts.update(result.by_context)
        triples += result.triples
        triple_failures += len(result.triple_failures)
    total = sum(planted.values())
    figures["recall"] = {
        "planted": total,
        "kinds": len(planted),
        "by_context": dict(contexts),
        "leaked": sum(leaked.values()),
        "recall": 1 - sum(leaked.values()) / total,
        "per_kind": {k: {"planted": n, "leaked": leaked[k]} for k, n in sorted(planted.items())},
        "consistency_triples": triples,
        "consistency_failures": triple_failures,
    }

    docs = retail_transcripts(AGENTS, trials=args.trials)
    fp = measure_false_positives(redactor, docs)
    figures["false_positives"] = {
        "transcripts": fp.transcripts,
        "text_bytes": fp.text_bytes,
        "words": fp.words,
        "replacements": fp.replacements,
        "retail_personal_data": dict(fp.personal),
        "false_positives": dict(fp.false),
        "false_positive_rate": fp.rate,
        "false_positives_per_10k_words": fp.per_10k_words,
        "retail_personal_occurrences": fp.personal_occurrences,
        "retail_personal_left": fp.personal_left,
        "examples": fp.examples[:20],
    }

    # technical text: this repository's docs and Python sources (not classified here:
    # printed so a reader can look at what was found)
    repo: Counter[str] = Counter()
    repo_bytes = 0
    for path in sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md", *ROOT.glob("src/assay/**/*.py")]):
        text = path.read_text(encoding="utf-8")
        repo_bytes += len(text.encode())
        repo.update(f.kind for f in redactor.find(text))
    figures["repo_text"] = {"bytes": repo_bytes, "findings": dict(repo)}

    cached = measure_speed(docs)
    uncached = measure_speed(docs, cache=False)
    dense = measure_speed([r.data for r in build_corpus(0, records=150)])
    figures["speed_mb_per_s"] = {
        "retail_json": round(cached[0], 2),
        "retail_text": round(cached[1], 2),
        "retail_json_no_cache": round(uncached[0], 2),
        "retail_text_no_cache": round(uncached[1], 2),
        "planted_json": round(dense[0], 2),
    }

    if args.json:
        print(json.dumps(figures, indent=2))
        return
    rec, fps, speed = figures["recall"], figures["false_positives"], figures["speed_mb_per_s"]
    assert isinstance(rec, dict) and isinstance(fps, dict) and isinstance(speed, dict)
    print(f"detect-secrets {figures['detect_secrets']}")
    print(
        f"recall: {rec['planted']} planted values of {rec['kinds']} kinds {rec['by_context']}: "
        f"{rec['leaked']} leaked, recall {rec['recall']:.4f}; consistency {rec['consistency_triples']} "
        f"triples, {rec['consistency_failures']} failures"
    )
    for kind, row in rec["per_kind"].items():
        print(f"  {kind:<20} {row['planted']:>5} planted, {row['leaked']} leaked")
    print(
        f"false positives: {fps['transcripts']} retail transcripts, "
        f"{fps['text_bytes'] / 1e6:.2f} MB of text, {fps['words']} words: {fps['replacements']} "
        f"replacements, retail personal data {fps['retail_personal_data']}, "
        f"false {fps['false_positives']}; rate {fps['false_positive_rate']:.4f} "
        f"({fps['false_positives_per_10k_words']:.2f} per 10k words); retail personal data left: "
        f"{fps['retail_personal_left']} of {fps['retail_personal_occurrences']} occurrences"
    )
    repo_text = figures["repo_text"]
    assert isinstance(repo_text, dict)
    print(f"repository docs and sources: {repo_text['bytes'] / 1e6:.2f} MB, findings {repo_text['findings']}")
    print(
        f"speed (per CPU second): retail transcripts {speed['retail_json']} MB/s of JSON "
        f"({speed['retail_text']} MB/s of text); "
        f"without the scan cache {speed['retail_json_no_cache']} ({speed['retail_text_no_cache']}); "
        f"planted corpus {speed['planted_json']} MB/s of JSON"
    )


if __name__ == "__main__":
    main()
