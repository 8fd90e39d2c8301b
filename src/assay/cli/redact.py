"""``assay redact FILE``: strip secrets and personal data from a file before sharing it.

JSON files are one record (one set of pseudonyms), JSONL files one record per line,
anything else is text (one record). The redacted file goes to ``-o OUT`` or stdout;
``--json`` prints what was found (counts per kind, never the values) instead of a
summary line; ``--json`` without ``-o`` writes no redacted file (a dry run), with
``-o -`` the file goes to stdout and the report to stderr.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from ..core.outputs import atomic_output
from ..core.sources import MAX_DEPTH, ProblemError, check_text
from ..errors import AssayError
from ..redact import Redactor, load_config
from .app import JsonOpt, app, err, print_json

Format = Literal["auto", "json", "jsonl", "text"]


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    p = Path(path)
    if not p.is_file():
        raise AssayError(f"{path}: no such file")
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise AssayError(
            f"{path}: not UTF-8 text (byte {exc.start}); redact works on text, JSON and JSONL"
        ) from None
    except OSError as exc:
        raise AssayError(f"{path}: cannot read: {exc.strerror}") from None


def _format(path: str, fmt: Format) -> Format:
    if fmt != "auto":
        return fmt
    suffix = Path(path).suffix.lower()
    return "jsonl" if suffix == ".jsonl" else "json" if suffix == ".json" else "text"


def _json(text: str, where: str, line: int = 0) -> Any:
    place = f"{where}:{line}" if line else where
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        at = line or exc.lineno
        raise AssayError(f"{where}:{at}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise AssayError(f"{place}: values nest deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # an integer longer than Python converts (4,300 digits)
        raise AssayError(f"{place}: invalid JSON: {str(exc).split(';')[0]}") from None
    try:  # nesting the redactor can walk, text it can write back (no lone surrogate)
        check_text(value, where, line or None)
    except ProblemError as exc:
        raise AssayError(str(exc.problems[0])) from None
    return value


def redact_document(
    redactor: Redactor, text: str, fmt: Format, where: str
) -> tuple[str, int, int, Counter[str], Counter[str]]:
    """The redacted document, its number of records, of redacted records, and the counts
    (occurrences, distinct values per record summed) per kind."""
    counts: Counter[str] = Counter()
    distinct: Counter[str] = Counter()
    records = redacted_records = 0
    if fmt == "jsonl":
        lines = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                lines.append(line)
                continue
            result = redactor.redact(_json(line, where, number))
            lines.append(json.dumps(result.value, ensure_ascii=False, separators=(",", ":")))
            records += 1
            redacted_records += result.redacted
            counts.update(result.counts)
            distinct.update(result.distinct)
        output = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
        return output, records, redacted_records, counts, distinct
    if fmt == "json":
        result = redactor.redact(_json(text, where))
        output = json.dumps(result.value, ensure_ascii=False, indent=2) + "\n"
    else:
        result = redactor.redact(text)
        output = result.value
    counts.update(result.counts)
    distinct.update(result.distinct)
    return output, 1, int(result.redacted), counts, distinct


@app.command("redact")
def redact(
    file: Annotated[str, typer.Argument(help="A JSON, JSONL or text file ('-' reads standard input).")],
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="Where to write the redacted file ('-': stdout).")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Redaction config (YAML/JSON; see docs/redaction.md).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="auto (by extension), json, jsonl or text.")] = "auto",
    secret_env: Annotated[
        list[str] | None,
        typer.Option(
            "--secret-env", help="An environment variable holding a known secret to remove (repeatable)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Replace secrets and personal data in FILE with pseudonyms (<EMAIL_1>, <OPENAI_KEY_1>...).

    Example: assay redact transcript.json -o transcript.redacted.json
    """
    if fmt not in ("auto", "json", "jsonl", "text"):
        raise AssayError(f"--format {fmt!r}: expected auto, json, jsonl or text")
    if (
        output is not None
        and output != "-"
        and file != "-"
        and Path(output).resolve() == Path(file).resolve()
    ):
        raise AssayError(f"-o {output}: would overwrite the input; write to another file")
    secrets = [os.environ[name] for name in secret_env or [] if os.environ.get(name)]
    missing = [name for name in secret_env or [] if not os.environ.get(name)]
    if missing:
        raise AssayError(f"--secret-env {missing[0]}: the variable is not set")
    redactor = Redactor(load_config(config) if config else None, secrets=secrets)
    kind = _format(file, fmt)  # type: ignore[arg-type]
    where = "<stdin>" if file == "-" else file
    text, records, redacted, counts, distinct = redact_document(redactor, _read(file), kind, where)
    if output == "-" or (output is None and not as_json):
        sys.stdout.write(text)
    elif output is not None:
        try:
            with atomic_output(output) as fh:  # whole or not at all
                fh.write(text)
        except OSError as exc:
            raise AssayError(f"-o {output}: cannot write: {exc.strerror}") from None
    report = {
        "schema": "assay.redact-report/1",
        "file": where,
        "format": kind,
        "output": output,
        "records": records,
        "redacted_records": redacted,
        "total": sum(counts.values()),
        "counts": dict(sorted(counts.items())),
        "distinct": dict(sorted(distinct.items())),
    }
    if as_json and output == "-":  # stdout holds the redacted file
        sys.stderr.write(json.dumps(report, ensure_ascii=False) + "\n")
    elif as_json:
        print_json(report)
    if as_json:
        return
    found = ", ".join(f"{k} {n}" for k, n in sorted(counts.items())) or "nothing found"
    err.print(
        f"redacted {report['total']} value(s) in {redacted} of {records} record(s): {found}",
        markup=False,
        highlight=False,
    )
