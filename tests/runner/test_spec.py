"""One typed run spec: the CLI of every run-like command, ``assay.run()`` and a YAML file
build the same spec and configuration hash; every run option applies to every command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.cli import assay_main
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.cli import robustness as robustness_cli
from assay.cli import run as run_cli
from assay.cli.run_options import NAMES
from assay.core.spec import RunSpec
from assay.core.transcript import Transcript
from assay.errors import SpecError
from assay.runner import api
from assay.runner.resolve import make_spec, resolve

#: One value per run option: (command-line arguments, the spec fields they set).
EXAMPLES: dict[str, tuple[list[str], dict[str, Any]]] = {
    "agent": (["--agent", "builtin:retail-hasty"], {"agent": "builtin:retail-hasty"}),
    "user": (["--user", "scripted"], {"user": "scripted"}),
    "prompt_version": (["--prompt-version", "v2"], {"prompt_version": "v2"}),
    "param": (["-p", "slip=0.2", "-p", "mode=fast"], {"params": {"slip": 0.2, "mode": "fast"}}),
    "flag": (["--flag", "new_flow=true"], {"flags": {"new_flow": True}}),
    "flag_matrix": (
        ["--flag-matrix", "new_flow=off,on", "--flag-matrix", "tier=1,2,3"],
        {"flag_matrix": {"new_flow": ["off", "on"], "tier": [1, 2, 3]}},
    ),
    "judge": (["--judge", "openai:j1", "--judge", "openai:j2"], {"judges": ["openai:j1", "openai:j2"]}),
    "judge_option": (["--judge-option", "cache=true"], {"judge_options": {"cache": True}}),
    "model_option": (["-m", "rpm=500"], {"model_options": {"rpm": 500}}),
    "trials": (["-k", "3"], {"trials": 3}),
    "seed": (["--seed", "0"], {"seed": 0}),
    "split": (["--split", "regression"], {"split": "regression"}),
    "tag": (["--tag", "refund", "--tag", "privacy"], {"tags": ["refund", "privacy"]}),
    "task": (["--task", "refund-in-window-email"], {"task_ids": ["refund-in-window-email"]}),
    "max_cost_usd": (["--max-cost-usd", "0.5"], {"limits": {"max_cost_usd": 0.5}}),
    "max_tokens": (["--max-tokens", "1000"], {"limits": {"max_tokens": 1000}}),
    "faults": (["--faults", "get_order_details:timeout@0.3"], {"faults": "get_order_details:timeout@0.3"}),
    "perturb": (["--perturb", "typos@0.2,casing:upper"], {"perturb": "typos@0.2,casing:upper"}),
    "probe": (["--probe", "probes.py:current"], {"probe": "probes.py:current"}),
    "cache": (["--cache"], {"cache": True}),
    "pricing": (["--pricing", "prices.yaml"], {"pricing": "prices.yaml"}),
    "record": (["--record", "tape.jsonl"], {"record": "tape.jsonl"}),
    "replay": (["--replay", "tape.jsonl"], {"replay": "tape.jsonl"}),
    "concurrency": (["-j", "3"], {"concurrency": 3}),
    "check_models": (["--no-check-models"], {"check_models": False}),
    "breaker": (["--breaker", "5"], {"breaker": 5}),
    "unsafe_no_sandbox": (["--unsafe-no-sandbox"], {"unsafe_no_sandbox": True}),
    "executor": (["--executor", "ray"], {"executor": "ray"}),
    "ray_address": (
        ["--executor", "ray", "--ray-address", "auto"],
        {"executor": "ray", "ray_address": "auto"},
    ),
    "store": (["--store", "team.db"], {"store": "team.db"}),
    "run_id": (["--run-id", "mine"], {"run_id": "mine"}),
    "otel_endpoint": (
        ["--otel-endpoint", "http://127.0.0.1:6006"],
        {"otel_endpoint": "http://127.0.0.1:6006"},
    ),
}
COMMANDS = {
    "run": (["run", "retail"], {}),
    "until-decided": (
        ["run", "retail", "--until-decided", "--threshold", "0.7"],
        {"decide": {"threshold": 0.7}},
    ),
    "robustness": (["robustness", "retail"], {}),
}


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[RunSpec]:
    """Each command's spec, caught where the command would start running it."""
    specs: list[RunSpec] = []
    monkeypatch.setattr(run_cli, "_run", lambda spec, as_json: specs.append(spec))
    monkeypatch.setattr(run_cli, "_adaptive", lambda spec, markdown, as_json: specs.append(spec))
    monkeypatch.setattr(robustness_cli, "_robustness", lambda spec, as_json: specs.append(spec))
    return specs


def cli_spec(captured: list[RunSpec], *args: str) -> RunSpec:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return captured.pop()


def test_every_option_has_an_example() -> None:
    assert set(EXAMPLES) == set(NAMES) - {"spec_file"}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("option", sorted(EXAMPLES))
def test_every_run_option_applies_to_every_run_like_command(
    command: str, option: str, captured: list[RunSpec]
) -> None:
    base_args, base_fields = COMMANDS[command]
    args, fields = EXAMPLES[option]
    spec = cli_spec(captured, *base_args, *args)
    assert spec == RunSpec(suite="retail", **base_fields, **fields)


@pytest.mark.parametrize("command", COMMANDS)
def test_flag_levels_are_a_crossed_axis_like_flag_matrix(command: str, captured: list[RunSpec]) -> None:
    """``--flag NAME=A/B`` crosses NAME's levels exactly as ``--flag-matrix NAME=A,B``;
    ``--flag NAME=V`` stays a fixed flag; ``\\/`` (or a quoted JSON value) keeps a slash."""
    base_args, base_fields = COMMANDS[command]
    slash = cli_spec(captured, *base_args, "--flag", "a=on/off", "--flag", "b=off/on/2", "--flag", "c=1")
    matrix = cli_spec(
        captured, *base_args, "--flag-matrix", "a=on,off", "--flag-matrix", "b=off,on,2", "--flag", "c=1"
    )
    expected = RunSpec(
        suite="retail", **base_fields, flags={"c": 1}, flag_matrix={"a": ["on", "off"], "b": ["off", "on", 2]}
    )
    assert slash == matrix == expected
    escaped = cli_spec(
        captured,
        *base_args,
        "--flag",
        r"route=a\/b",
        "--flag",
        'url="http://127.0.0.1/x"',
        "--flag",
        'cfg={"p": "a/b"}',
        "--flag",
        r"path=a\/b/c\\/d",
    )
    assert escaped.flags == {"route": "a/b", "url": "http://127.0.0.1/x", "cfg": {"p": "a/b"}}
    assert escaped.flag_matrix == {"path": ["a/b", "c\\", "d"]}


def test_cli_api_and_file_build_the_same_spec_and_config(
    captured: list[RunSpec], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fields = {
        "agent": "builtin:retail-flaky",
        "params": {"slip": 0.25},
        "flags": {"new_flow": True},
        "prompt_version": "v7",
        "trials": 2,
        "seed": 0,
        "tags": ["refund"],
        "limits": {"max_tokens": 5000},
        "model_options": {"rpm": 100},
        "concurrency": 4,
    }
    args = [
        "--agent", "builtin:retail-flaky", "-p", "slip=0.25", "--flag", "new_flow=true",
        "--prompt-version", "v7", "-k", "2", "--seed", "0", "--tag", "refund",
        "--max-tokens", "5000", "-m", "rpm=100", "-j", "4",
    ]  # fmt: skip
    from_cli = [cli_spec(captured, "run", "retail", *args), cli_spec(captured, "robustness", "retail", *args)]
    decided = cli_spec(captured, "run", "retail", "--until-decided", "--threshold", "0.7", *args)
    assert decided.decide is not None and decided.decide.threshold == 0.7
    from_cli.append(decided.model_copy(update={"decide": None}))  # the same run, and how to stop it
    spec_file = tmp_path / "run.yaml"
    spec_file.write_text(yaml.safe_dump({"suite": "retail", **fields}))
    from_file = cli_spec(captured, "run", "--spec", str(spec_file))

    seen: list[RunSpec] = []

    def fake_resolve(spec: RunSpec, suite: Any = None) -> Any:
        seen.append(spec)
        raise SpecError("stop here")

    monkeypatch.setattr(api, "resolve", fake_resolve)
    with pytest.raises(SpecError, match="stop here"):
        assay.run("retail", **fields)
    from_api = seen.pop()
    assert from_cli[0] == from_cli[1] == from_cli[2] == from_file == from_api == make_spec("retail", **fields)
    assert resolve(from_cli[0]).config.hash == resolve(from_api).config.hash
    # options given on the command line win over the file's, mappings merge key by key
    merged = cli_spec(captured, "run", "--spec", str(spec_file), "-k", "5", "-p", "extra=1")
    assert merged.trials == 5 and merged.params == {"slip": 0.25, "extra": 1}


def test_seed_zero_is_a_seed_and_the_prompt_version_is_part_of_the_config(captured: list[RunSpec]) -> None:
    zero = cli_spec(captured, "run", "retail", "--seed", "0")
    one = cli_spec(captured, "run", "retail", "--seed", "1")
    assert zero.seed == 0 and one.seed == 1
    base = resolve(cli_spec(captured, "run", "retail"))
    v2 = resolve(cli_spec(captured, "run", "retail", "--prompt-version", "v2"))
    flagged = resolve(cli_spec(captured, "run", "retail", "--flag", "x=1"))
    assert len({base.config.hash, v2.config.hash, flagged.config.hash}) == 3
    # seeds differ in the trials they plan, not in the configuration under test
    assert resolve(zero).config.hash == resolve(one).config.hash == base.config.hash


def test_an_agent_declares_its_prompt_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "versioned.py").write_text(
        "class A:\n    prompt_version = 'support-v1'\n\n"
        "    async def respond(self, c, t):\n        return 'hi'\n\n"
        "class B(A):\n    prompt_version = 'support-v2'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    a = resolve(make_spec("retail", agent="python:versioned:A"))
    b = resolve(make_spec("retail", agent="python:versioned:B"))
    assert a.config.prompt_version == "support-v1" and b.config.prompt_version == "support-v2"
    assert a.config.hash != b.config.hash
    llm = resolve(make_spec("retail", agent="openai:gpt-4o-mini"))
    assert llm.config.prompt_version is not None and llm.config.prompt_version.startswith("tool-agent/v1:")


def test_bad_options_name_the_option_and_store_nothing(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    for args, message in (
        (["-k", "0"], "--trials: Input should be greater than or equal to 1"),
        (["--seed", str(2**63)], "--seed: Input should be less than"),
        (["--executor", "slurm"], "--executor: Input should be 'local' or 'ray'"),
        (["--record", "a", "--replay", "b"], "record and replay exclude each other"),
        (["-p", "nokey"], "--param 'nokey': expected KEY=VALUE"),
        (["--faults", "no_such_tool:timeout@0.5"], "unknown tool 'no_such_tool'"),
    ):
        result = assay_main("run", "retail", "--store", str(db), *args)
        assert result.code == 2 and message in result.err, (args, result)
        assert "Traceback" not in result.stderr
    from assay.store import Store

    assert Store(db).list_runs() == []


def test_spec_file_problems_are_located(tmp_path: Path) -> None:
    spec_file = tmp_path / "run.yaml"
    spec_file.write_text("suite: retail\ntrials: 2\ncolour: blue\n")
    result = assay_main("run", "--spec", str(spec_file))
    assert result.code == 2 and f"{spec_file}:3: colour: unknown field" in result.err


def test_resume_keeps_the_runs_own_spec(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    assay.run("retail", trials=1, task_ids=["refund-in-window-email"], store=db, run_id="r")
    result = assay_main("run", "--resume", "r", "--store", db, "-k", "3")
    assert result.code == 2 and "--trials cannot be given with --resume" in result.err
    result = assay_main("run", "--resume", "r", "--store", db, "--json")
    assert result.code == 0, result


def test_credentials_are_stored_as_names_only(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    run = assay.run(
        "retail",
        trials=1,
        task_ids=["refund-in-window-email"],
        store=str(db),
        model_options={"api_key": "sk-test-PLANTED123", "rpm": 10},
        judge_options={"token": "tok-PLANTED456"},
    )
    assert run.info.spec.model_options == {"api_key": "<SECRET>", "rpm": 10}
    assert run.info.spec.judge_options == {"token": "<SECRET>"}
    run.store.close()
    data = db.read_bytes()
    assert b"PLANTED123" not in data and b"PLANTED456" not in data


def test_every_run_like_command_carries_the_options_out(tmp_path: Path) -> None:
    """Not only parsed: each command's trials run with the options (the agent's params,
    prompt version, flags, seed and tool faults are in the stored runs and their trials)."""
    from assay.envs.faults import FAULT_ATTRIBUTE
    from assay.store import Store

    db = str(tmp_path / "a.db")
    options = [
        "--agent", "builtin:retail-flaky", "-p", "slip=0", "--prompt-version", "v9",
        "--flag", "new_flow=true", "--seed", "0", "--faults", "get_order_details:timeout@1.0",
        "--task", "refund-in-window-email", "--store", db,
    ]  # fmt: skip
    for command in (
        ["run", "retail", "-k", "2"],
        ["run", "retail", "--until-decided", "--threshold", "0.3", "--mde", "0.3"],
        ["robustness", "retail", "-k", "2"],
    ):
        result = assay_main(*command, *options, "--json")
        assert result.code == 0, (command, result)
    store = Store(db)
    runs = [store.get_run(row["run_id"]) for row in store.list_runs()]
    assert len(runs) == 4  # run, until-decided, robustness's baseline and faulted runs
    faulted = 0
    for info in runs:
        assert info.spec.params == {"slip": 0} and info.seed == 0
        assert info.config.prompt_version == "v9" and info.config.flags == {"new_flow": True}
        results = store.load_results(info.run_id)
        assert results and {r.prompt_version for r in results} == {"v9"}
        assert {r.task_id for r in results} <= {f"refund-in-window-email-{i}" for i in (1, 2, 3)}
        spans = [
            s
            for r in results
            for s in (store.load_transcript(info.run_id, r.task_id, r.trial_index) or Transcript()).spans
        ]
        if info.fault_plan is not None:  # the plan as resolved, whichever way it was given
            rules = info.fault_plan["rules"]
            assert [(r["tool"], r["kind"], r["rate"]) for r in rules] == [
                ("get_order_details", "timeout", 1.0)
            ]
            assert any(s.kind == "tool" and s.attributes.get(FAULT_ATTRIBUTE) for s in spans), info.run_id
            faulted += 1
        else:  # robustness's baseline: the same run without the faults
            assert not any(s.attributes.get(FAULT_ATTRIBUTE) for s in spans)
    assert faulted == 3


@pytest.mark.parametrize("command", [["run"], ["robustness"], ["badcase", "add"], ["badcase", "from-traces"]])
def test_help_renders(command: list[str]) -> None:
    """Help texts go through rich markup: a bracket pair in one (``A/B[/C]``) breaks ``--help``."""
    out = assay_main(*command, "--help", env={"COLUMNS": "200"})
    assert out.code == 0, out.stderr
    assert "--flag" in out.stdout or "--phenomenon" in out.stdout or "--fail-label" in out.stdout
