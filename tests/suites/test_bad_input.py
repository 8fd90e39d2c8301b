"""Every crash the first fuzzing found, as a case: ``assay validate`` (and ``run`` when
validate accepts the suite) ends in success or located one-line problems with exit 2,
never a traceback, an undocumented exit code or a hang. In process, through the CLI's
own ``main``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.support.suite_fuzz import ALIAS_BOMB, invoke, small_suite, write

from assay.core.sources import parse_yaml

LIMIT_S = 10.0


def suite_with(tmp_path: Path, **changes: bytes | str | None) -> Path:
    """The small suite with files replaced (None deletes; a name ending in / is a folder)."""
    files = small_suite()
    for name, data in changes.items():
        name = name.replace("__", "/").replace("_DOT_", ".")
        if data is None:
            files.pop(name, None)
        else:
            files[name] = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    root = tmp_path / "suite"
    write(files, root)
    return root


def suite_yaml(extra_header: str = "", extra_tasks: str = "") -> str:
    text = small_suite()["suite.yaml"].decode()
    return extra_header + text.replace("\ntasks:\n", "\ntasks:\n" + extra_tasks, 1)


def validate(root: Path) -> tuple[int | None, str]:
    step = invoke(["validate", str(root)], LIMIT_S)
    assert step.outcome in ("ok", "problems"), step.output
    return step.code, step.output


def problems_at(tmp_path: Path, expected: str, **changes: bytes | str | None) -> str:
    code, output = validate(suite_with(tmp_path, **changes))
    assert code == 2, output
    assert expected in output, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert all(not line.startswith((" ", "\t")) for line in lines), output  # one line per problem
    return output


def test_the_small_suite_is_valid_and_runs(tmp_path: Path) -> None:
    root = suite_with(tmp_path)
    code, output = validate(root)
    assert code == 0, output
    assert "imports (loading the suite runs this code): templates.py (templates)" in output
    step = invoke(["run", str(root), "-k", "1", "--store", str(tmp_path / "s.db"), "--json"], 60)
    assert step.outcome == "ok", step.output


def test_not_utf8(tmp_path: Path) -> None:
    problems_at(
        tmp_path,
        "latin1.yaml:2: not UTF-8 text (byte 0xe9)",
        tasks__latin1_DOT_yaml=b"tasks:\n  - {id: caf\xe9}\n",
    )
    problems_at(tmp_path, "suite.yaml:1: not UTF-8 text", suite_DOT_yaml=b"\xff" + suite_yaml().encode())


def test_alias_bomb_is_refused_fast(tmp_path: Path) -> None:
    started = time.monotonic()
    problems_at(
        tmp_path,
        "bomb.yaml:2: YAML aliases expand to more than 100,000 values",
        tasks__bomb_DOT_yaml=ALIAS_BOMB,
    )
    assert time.monotonic() - started < 5


def test_deep_nesting(tmp_path: Path) -> None:
    problems_at(tmp_path, "deep.yaml", tasks__deep_DOT_yaml="tasks: " + "[" * 5000 + "]" * 5000 + "\n")
    problems_at(
        tmp_path, "values nest deeper than 64 levels", tasks__deep_DOT_yaml="tasks: " + "[" * 200 + "]" * 200
    )


def test_nul_and_control_characters(tmp_path: Path) -> None:
    problems_at(
        tmp_path,
        "nul.yaml:2: character '\\x00' is not allowed in YAML",
        tasks__nul_DOT_yaml=b"tasks:\n  - {id: a\x00b}\n",
    )


def test_complex_keys(tmp_path: Path) -> None:
    problems_at(tmp_path, "a key must be a plain value", tasks__k_DOT_yaml="tasks:\n  - {? [a]: b}\n")


def test_bad_dates(tmp_path: Path) -> None:
    problems_at(
        tmp_path,
        "invalid value: month must be in 1..12",
        tasks__d_DOT_yaml="tasks:\n  - {id: d, as_of: 2025-13-45}\n",
    )


def test_task_files_outside_the_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("tasks:\n  - {id: far, template: refund_in_window}\n")
    problems_at(
        tmp_path,
        "task_files[0]: task file '/etc/*' must be a relative path inside",
        suite_DOT_yaml=suite_yaml("task_files: ['/etc/*']\n").replace("task_files: [tasks/*.yaml]\n", ""),
    )
    problems_at(
        tmp_path,
        "must be a relative path inside the suite folder",
        suite_DOT_yaml=suite_yaml("task_files: ['../*.yaml']\n").replace("task_files: [tasks/*.yaml]\n", ""),
    )
    root = suite_with(tmp_path)
    (root / "tasks" / "link.yaml").symlink_to(outside)
    code, output = validate(root)
    assert code == 2 and "tasks/link.yaml is outside the suite folder" in output, output


def test_names_the_system_refuses(tmp_path: Path) -> None:
    long = "a" * 5000
    problems_at(
        tmp_path,
        "templates",
        suite_DOT_yaml=suite_yaml().replace("templates: templates.py", f"templates: {long}"),
    )
    problems_at(
        tmp_path,
        "task_files[0]: bad pattern",
        suite_DOT_yaml=suite_yaml().replace("[tasks/*.yaml]", f"[{long}.yaml]"),
    )


def test_a_folder_where_a_file_should_be(tmp_path: Path) -> None:
    root = suite_with(tmp_path, **{"tasks__folder_DOT_yaml/": b""})
    code, output = validate(root)
    assert code == 0, output  # a folder is not a task file: ignored
    odd = suite_with(tmp_path / "b", suite_DOT_yaml=suite_yaml().replace("[tasks/*.yaml]", "[tasks]"))
    code, output = validate(odd)
    assert code == 2 and "task file tasks is a folder" in output, output
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "suite.yaml").mkdir()
    code, output = validate(tmp_path / "c")
    assert code == 2 and "folder has no suite.yaml file" in output


def test_empty_and_unknown_template_names(tmp_path: Path) -> None:
    problems_at(
        tmp_path, "unknown template ''", suite_DOT_yaml=suite_yaml(extra_tasks="  - {id: e, template: ''}\n")
    )


@pytest.mark.parametrize(
    "module, expected",
    [
        ("raise SystemExit(7)\n", "importing templates.py exited (SystemExit(7))"),
        ("import sys\nsys.exit(0)\n", "importing templates.py exited (SystemExit(0))"),
        ("1/0\n", "importing templates.py failed: ZeroDivisionError"),
        (
            "from assay.suites.templates import template\n\n@template('local_status')\n"
            "def t(ctx):\n    raise SystemExit(3)\n",
            "template 'local_status' failed: SystemExit(3)",
        ),
    ],
)
def test_templates_module_that_exits_or_fails(tmp_path: Path, module: str, expected: str) -> None:
    problems_at(tmp_path, expected, templates_DOT_py=module)


def test_templates_module_outside_the_folder(tmp_path: Path) -> None:
    (tmp_path / "evil.py").write_text("raise SystemExit('ran outside code')\n")
    header = suite_yaml().replace("templates: templates.py\n", "templates: ../evil.py\n")
    output = problems_at(
        tmp_path, "templates module ../evil.py must be a file inside the suite folder", suite_DOT_yaml=header
    )
    assert "ran outside code" not in output


def test_ids_unique_after_template_expansion(tmp_path: Path) -> None:
    output = problems_at(
        tmp_path,
        "task id 'refund-1' (instance of 'refund') clashes with the task at",
        suite_DOT_yaml=suite_yaml(extra_tasks="  - {id: refund-1, template: refund_in_window}\n"),
    )
    assert "suite.yaml:" in output


@pytest.mark.parametrize("bad_id", ["a[/]b", "]x", "a b", "a/b", "-x", "x{y}", "u\u202ev"])
def test_task_ids_are_restricted_to_a_safe_charset(tmp_path: Path, bad_id: str) -> None:
    problems_at(
        tmp_path,
        "use letters, digits and _ . : - [ ] |",
        suite_DOT_yaml=suite_yaml(extra_tasks=f"  - {{id: '{bad_id}', template: refund_in_window}}\n"),
    )


def test_text_must_be_valid_unicode(tmp_path: Path) -> None:
    problems_at(
        tmp_path,
        "invalid Unicode character escape",
        suite_DOT_yaml=suite_yaml(
            extra_tasks='  - {id: l, template: refund_in_window, description: "\\ud800"}\n'
        ),
    )
    problems_at(
        tmp_path,
        "more.jsonl:1: id: text with a lone surrogate",
        suite_DOT_yaml=suite_yaml().replace("[tasks/*.yaml]", "[tasks/*.yaml, tasks/*.jsonl]"),
        tasks__more_DOT_jsonl=b'{"id": "\\ud800"}\n',
    )


def test_seeds_must_fit_the_store(tmp_path: Path) -> None:
    problems_at(
        tmp_path,
        "initial_state.seed: seed 99999999999999999999 does not fit in 64 bits",
        suite_DOT_yaml=suite_yaml(
            extra_tasks="  - {id: i, template: refund_in_window, initial_state: {seed: 99999999999999999999}}"
            "\n"
        ),
    )
    problems_at(
        tmp_path,
        "defaults.data_seed",
        suite_DOT_yaml=suite_yaml().replace("defaults:\n", "defaults:\n  data_seed: 99999999999999999999\n"),
    )


def test_run_seed_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    root = suite_with(tmp_path)
    for seed in (str(2**63), "-1"):
        step = invoke(["run", str(root), "--seed", seed, "--store", str(tmp_path / "s.db")], LIMIT_S)
        assert step.outcome == "problems" and "--seed" in step.output, step.output


def test_line_numbers_print_as_numbers_not_emoji(tmp_path: Path) -> None:
    filler = "".join(f"# line {n}\n" for n in range(95))
    text = filler + suite_yaml(extra_tasks="  - {id: zz, template: nope}\n")
    code, output = validate(suite_with(tmp_path, suite_DOT_yaml=text))
    assert code == 2 and "\U0001f4af" not in output and ":1" in output
    step = invoke(["run", str(tmp_path / "suite"), "--store", str(tmp_path / "s.db")], LIMIT_S)
    assert step.outcome == "problems" and "\U0001f4af" not in step.output, step.output


def test_markup_in_names_prints_as_text(tmp_path: Path) -> None:
    text = suite_yaml().replace("name: fuzz-small", "name: '[/]fuzz [bold]x'")
    root = suite_with(tmp_path, suite_DOT_yaml=text)
    code, output = validate(root)
    assert code == 0 and "[/]fuzz [bold]x" in output, output
    step = invoke(["run", str(root), "-k", "1", "--store", str(tmp_path / "s.db")], 60)
    assert step.outcome == "ok", step.output
    step = invoke(["runs", "--store", str(tmp_path / "s.db")], LIMIT_S)
    assert step.outcome == "ok", step.output


def test_instances_are_bounded(tmp_path: Path) -> None:
    started = time.monotonic()
    problems_at(
        tmp_path,
        "instances",
        suite_DOT_yaml=suite_yaml(extra_tasks="  - {id: g, template: refund_in_window, instances: 100001}\n"),
    )
    assert time.monotonic() - started < 5


def test_trials_are_bounded_as_on_the_command_line(tmp_path: Path) -> None:
    """``-k`` stops at 10,000; the suite's default did not, and the run then failed."""
    header = suite_yaml().replace("  trials: 1\n", "  trials: 99999999999999999999\n")
    problems_at(
        tmp_path,
        "suite.yaml:7: defaults.trials: Input should be less than or equal to 10000",
        suite_DOT_yaml=header,
    )


@pytest.mark.parametrize(
    ("grader", "expected"),
    [
        (
            '{text: {regex: "(["}}',
            "text: regex '([' is not a valid regular expression: unterminated character set",
        ),
        ("{text: {numeric: .nan}}", "text: numeric must be a finite number, not nan"),
        ("{text: {numeric: 3, tolerance: .inf}}", "text: tolerance must be a finite number, not inf"),
        ("{text: {numeric: 3, tolerance: -1}}", "text: tolerance must be 0 or more, not -1.0"),
    ],
)
def test_text_grader_parameters_are_checked(tmp_path: Path, grader: str, expected: str) -> None:
    task = f"  - {{id: g, user: {{opening: hi}}, graders: [{grader}]}}\n"
    problems_at(tmp_path, f"tasks[0].graders[0].{expected}", suite_DOT_yaml=suite_yaml(extra_tasks=task))


def test_time_zones_must_exist(tmp_path: Path) -> None:
    """Agents are told the task's time zone: a misspelt one was passed on silently."""
    from zoneinfo import available_timezones

    assert available_timezones(), "this machine has no time zone database (Debian: tzdata)"
    header = suite_yaml().replace("America/New_York", "Mars/Olympus")
    problems_at(
        tmp_path, "suite.yaml:11: defaults.timezone: unknown time zone 'Mars/Olympus'", suite_DOT_yaml=header
    )
    task = "  - {id: g, template: refund_in_window, timezone: Europe/Pari}\n"
    problems_at(
        tmp_path,
        "tasks[0].timezone: unknown time zone 'Europe/Pari'",
        suite_DOT_yaml=suite_yaml(extra_tasks=task),
    )
    task = "  - {id: g, template: refund_in_window, timezone: Asia/Ho_Chi_Minh}\n"
    code, output = validate(suite_with(tmp_path / "ok", suite_DOT_yaml=suite_yaml(extra_tasks=task)))
    assert code == 0, output


@pytest.mark.parametrize("name", ["a.json", "a.jsonl"])
def test_an_integer_too_long_to_read_is_a_problem(tmp_path: Path, name: str) -> None:
    """Python converts at most 4,300 digits: ``json.loads`` raised a plain ValueError."""
    text = '{"id": "big", "user": {"opening": "hi"}, "initial_state": {"seed": %s}}\n' % ("9" * 5000)
    header = suite_yaml().replace("task_files: [tasks/*.yaml]", f"task_files: [tasks/*.yaml, tasks/{name}]")
    line = ":1" if name.endswith("l") else ""
    problems_at(
        tmp_path,
        f"{name}{line}: invalid JSON: Exceeds the limit (4300 digits) for integer string conversion",
        suite_DOT_yaml=header,
        **{f"tasks__{name.replace('.', '_DOT_')}": text},
    )


def test_file_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import assay.core.sources as sources

    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 1000)
    problems_at(tmp_path, "big.yaml: file too large", tasks__big_DOT_yaml="tasks:\n" + "#" * 2000 + "\n")


def test_retail_goals_are_not_cut_at_a_hash() -> None:
    from assay.suites.loader import load_suite

    suite = load_suite("retail")
    goals = {t.id: t.user.goal for t in suite.tasks}
    assert goals["static-refund-headphones"].endswith("The Wireless Headphones stopped working.")
    assert goals["static-cancel-processing"].endswith("I found a better chair.")


def test_parse_yaml_limits_directly() -> None:
    from assay.core.sources import ProblemError

    with pytest.raises(ProblemError, match="duplicate key"):
        parse_yaml("a: 1\na: 2\n", "f.yaml")
    data, located = parse_yaml("a: &x [1, 2]\nb: *x\n", "f.yaml")
    assert data == {"a": [1, 2], "b": [1, 2]} and located.line(("b",)) == 2  # small aliases still work
