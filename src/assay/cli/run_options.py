"""The options every run-like command shares (``run``, ``run --until-decided``,
``robustness``), declared once, and how they become a :class:`RunSpec`.

:func:`with_run_options` adds the options to a command's signature and hands the
command one ``options`` dict; :func:`build_spec` turns it (with an optional ``--spec
FILE``) into the spec. Options given on the command line win over the file's values;
mappings (``--param``, ``--flag``, ``-m``...) are merged key by key.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from .app import parse_params

_PANEL = "Run options (shared by run, run --until-decided and robustness)"


#: (parameter name, type, flags, help). Every one defaults to None ("not given").
RUN_OPTIONS: list[tuple[str, Any, tuple[str, ...], str]] = [
    ("spec_file", Path | None, ("--spec",), "Run spec YAML (docs/run-spec.md); options given here win."),
    (
        "agent",
        str | None,
        ("--agent", "-a"),
        "Agent spec: builtin:NAME, python:module:factory, openai:MODEL...",
    ),
    ("user", str | None, ("--user",), "User simulator spec: scripted (default), openai:MODEL..."),
    (
        "prompt_version",
        str | None,
        ("--prompt-version",),
        "Label of the agent's prompt (part of the config).",
    ),
    ("param", list[str] | None, ("--param", "-p"), "Config parameter KEY=VALUE (JSON value): temperature=0."),
    (
        "flag",
        list[str] | None,
        ("--flag",),
        "Feature flag of the system under test, KEY=VALUE; KEY=A/B (or A/B/C...) crosses its levels "
        "into arms of an experiment (repeat to cross flags; \\/ is a literal slash; docs/lifecycle.md).",
    ),
    (
        "flag_matrix",
        list[str] | None,
        ("--flag-matrix",),
        "Alias of --flag NAME=A/B with commas: NAME=LEVEL,LEVEL crosses a flag's levels into arms.",
    ),
    ("judge", list[str] | None, ("--judge",), "LLM judge model spec (repeat for a panel): openai:gpt-4o."),
    ("judge_option", list[str] | None, ("--judge-option",), "Judge client setting KEY=VALUE (base_url...)."),
    (
        "model_option",
        list[str] | None,
        ("--model-option", "-m"),
        "Model client setting KEY=VALUE: base_url, rpm...",
    ),
    ("trials", int | None, ("--trials", "-k"), "Trials per task (default: the suite's)."),
    ("seed", int | None, ("--seed",), "Run seed: task instances and trial seeds derive from it (default 0)."),
    (
        "split",
        str | None,
        ("--split",),
        "Only tasks of this split (regression, capability, holdout; all: every split).",
    ),
    ("tag", list[str] | None, ("--tag",), "Only tasks with this tag (repeatable)."),
    ("task", list[str] | None, ("--task",), "Only this task id (repeatable)."),
    ("max_cost_usd", float | None, ("--max-cost-usd",), "Per-trial cost budget (USD)."),
    ("max_tokens", int | None, ("--max-tokens",), "Per-trial token budget."),
    (
        "faults",
        str | None,
        ("--faults",),
        "Tool faults: plan file or TOOL:KIND@RATE,... (docs/robustness.md).",
    ),
    (
        "perturb",
        str | None,
        ("--perturb",),
        "Perturb user turns and tool outputs: plan file or KIND[:STYLE][@RATE],... (docs/lifecycle.md).",
    ),
    (
        "probe",
        str | None,
        ("--probe",),
        "Probe track: module:function or file.py:function re-checking tasks' evidence at run time.",
    ),
    ("cache", bool | None, ("--cache/--no-cache",), "Cache agent and user model responses on disk."),
    ("pricing", str | None, ("--pricing",), "Pricing YAML file (USD per million tokens)."),
    ("record", str | None, ("--record",), "Record every model exchange to this cassette file."),
    ("replay", str | None, ("--replay",), "Replay model exchanges from this cassette file."),
    (
        "unsafe_no_sandbox",
        bool | None,
        ("--unsafe-no-sandbox",),
        "Run untrusted code (code tasks) on the host, without the sandbox (docs/code.md).",
    ),
    ("concurrency", int | None, ("--concurrency", "-j"), "Trials running at once (default 8)."),
    (
        "check_models",
        bool | None,
        ("--check-models/--no-check-models",),
        "Probe every model endpoint before the first trial (default on).",
    ),
    (
        "breaker",
        int | None,
        ("--breaker",),
        "Stop the run after N trials in a row failed on the model endpoint (default 3; 0: never).",
    ),
    ("executor", str | None, ("--executor",), "Where trials run: local (asyncio) or ray (docs/scale.md)."),
    (
        "ray_address",
        str | None,
        ("--ray-address",),
        "Ray cluster: auto or ray://HOST:PORT (default: start one).",
    ),
    (
        "store",
        str | None,
        ("--store",),
        "Store path or SQLAlchemy URL (default $ASSAY_STORE, .assay/assay.db).",
    ),
    ("run_id", str | None, ("--run-id",), "Name the run: letters, digits, _ . : - (default: generated)."),
    (
        "otel_endpoint",
        str | None,
        ("--otel-endpoint",),
        "Export trials live as OpenTelemetry traces to this OTLP/HTTP URL (docs/traces.md).",
    ),
]
NAMES = [name for name, *_ in RUN_OPTIONS]

#: Options whose values are lists of KEY=VALUE, and the spec mapping each fills.
_MAPPINGS = {
    "param": "params",
    "flag": "flags",
    "judge_option": "judge_options",
    "model_option": "model_options",
}
#: Options that fill a spec field of another name.
_RENAMED = {"judge": "judges", "tag": "tags", "task": "task_ids"}
_LIMITS = ("max_cost_usd", "max_tokens")


def with_run_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add :data:`RUN_OPTIONS` to a command; it receives them as ``options: dict``."""
    signature = inspect.signature(fn, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "options"]
    extra = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[kind, typer.Option(*flags, help=text, rich_help_panel=_PANEL)],
            default=None,
        )
        for name, kind, flags, text in RUN_OPTIONS
    ]

    @functools.wraps(fn)
    def command(**kwargs: Any) -> Any:
        options = {name: kwargs.pop(name) for name in NAMES}
        return fn(**kwargs, options=options)

    command.__signature__ = signature.replace(parameters=[*own, *extra])  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in [*own, *extra]}
    return command


def given(options: dict[str, Any]) -> list[str]:
    """The run options given on the command line, as their flags (for error messages)."""
    return ["--" + name.replace("_", "-") for name, value in options.items() if value not in (None, [])]


def spec_fields(options: dict[str, Any]) -> dict[str, Any]:
    """The spec fields the given options set (``None`` and empty lists: not given)."""
    fields: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for name, value in options.items():
        if value is None or value == [] or name == "spec_file":
            continue
        if name == "flag":
            fixed, crossed = parse_flags(value)
            if fixed:
                fields["flags"] = fixed
            if crossed:
                _cross(fields, crossed, "--flag")
        elif name in _MAPPINGS:
            fields[_MAPPINGS[name]] = parse_params(value, "--" + name.replace("_", "-"))
        elif name == "flag_matrix":
            _cross(fields, parse_matrix(value), "--flag-matrix")
        elif name in _LIMITS:
            limits[name] = value
        else:
            fields[_RENAMED.get(name, name)] = value
    if limits:
        fields["limits"] = limits
    return fields


def _cross(fields: dict[str, Any], crossed: dict[str, list[Any]], option: str) -> None:
    """Add crossed flags to the spec's matrix (``--flag NAME=A/B`` and ``--flag-matrix``
    fill the same one); a flag crossed twice is a mistake."""
    from ..errors import AssayError

    matrix = fields.setdefault("flag_matrix", {})
    twice = sorted(set(matrix) & set(crossed))
    if twice:
        raise AssayError(
            f"{option} {twice[0]}=...: flag {twice[0]!r} is already crossed; give its levels once"
        )
    matrix.update(crossed)


def split_levels(value: str) -> list[str]:
    """``on/off`` -> ``["on", "off"]``: a value split at each ``/`` that is not escaped
    (``\\/`` is a literal slash, ``\\\\`` a literal backslash; any other backslash stays)."""
    parts, current, i = [], [], 0
    while i < len(value):
        char = value[i]
        if char == "\\" and i + 1 < len(value) and value[i + 1] in "/\\":
            current.append(value[i + 1])
            i += 2
            continue
        if char == "/":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    parts.append("".join(current))
    return parts


def _json_or_text(text: str) -> Any:
    """``text`` parsed as JSON, or ``text`` itself (the same object) when it is not JSON."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_flags(items: list[str]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """``--flag`` values: ``NAME=VALUE`` fixes a flag; ``NAME=A/B[/C]`` crosses its levels
    (as ``--flag-matrix NAME=A,B``). Values and levels are JSON when they parse, else
    strings; ``\\/`` is a literal slash, and a JSON object, array or quoted string is one
    value whole (``--flag 'route="a/b"'``)."""
    from ..errors import AssayError

    fixed: dict[str, Any] = {}
    crossed: dict[str, list[Any]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise AssayError(f"--flag {item!r}: expected NAME=VALUE, or NAME=LEVEL/LEVEL to cross levels")
        whole = _json_or_text(value) if value.strip()[:1] in ("{", "[", '"') else value
        if whole is not value:  # a JSON object, array or quoted string: one value
            fixed[key] = whole
            crossed.pop(key, None)
            continue
        levels = split_levels(value)
        if len(levels) == 1:
            fixed[key] = _json_or_text(levels[0])
            crossed.pop(key, None)
            continue
        if not all(level.strip() for level in levels):
            raise AssayError(
                f"--flag {item!r}: a level is empty; expected NAME=LEVEL/LEVEL (e.g. new_flow=on/off; "
                "\\/ for a slash inside a value)"
            )
        crossed[key] = [_json_or_text(level.strip()) for level in levels]
        fixed.pop(key, None)
    return fixed, crossed


def parse_matrix(items: list[str], option: str = "--flag-matrix") -> dict[str, list[Any]]:
    """``["new_flow=off,on"]`` -> ``{"new_flow": ["off", "on"]}`` (each level is JSON when
    it parses as JSON, else a string)."""
    import json

    from ..errors import AssayError

    matrix: dict[str, list[Any]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        levels = [level.strip() for level in value.split(",")] if sep else []
        if not key or len(levels) < 2 or not all(levels):
            raise AssayError(f"{option} {item!r}: expected NAME=LEVEL,LEVEL (e.g. new_flow=off,on)")
        parsed: list[Any] = []
        for level in levels:
            try:
                parsed.append(json.loads(level))
            except json.JSONDecodeError:
                parsed.append(level)
        matrix[key] = parsed
    return matrix


def build_spec(suite: str | None, options: dict[str, Any], **extra: Any) -> Any:
    """The run spec of a command: ``--spec FILE`` (if given), then the options given on
    the command line, then ``suite`` and ``extra`` (command-specific fields)."""
    from ..runner.resolve import load_spec_file, merge_spec

    base = load_spec_file(options["spec_file"]) if options.get("spec_file") else {}
    fields = spec_fields(options)
    if suite is not None:
        fields["suite"] = suite
    if options.get("spec_file"):
        return merge_spec(base, {**fields, **extra}, source=str(options["spec_file"]))
    return merge_spec(base, {**fields, **extra}, source="run options", name=option_name)


def option_name(field: str) -> str:
    """The command-line option of a spec field (``decide.max_trials`` -> ``--max-trials``)."""
    head, _, rest = field.partition(".")
    reverse = {v: k for k, v in {**_MAPPINGS, **_RENAMED}.items()}
    if head == "decide":
        head, rest = (rest.partition(".")[0], "") if rest else ("until_decided", "")
    elif head == "limits" and rest in _LIMITS:
        head, rest = rest, ""
    flag = "--" + reverse.get(head, head).replace("_", "-")
    return f"{flag} ({field})" if rest else flag
