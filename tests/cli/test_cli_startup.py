"""The command table that lets ``assay --help`` answer without importing the library."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time
from pathlib import Path

import typer

from assay.cli.app import app
from assay.cli.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_lists_exactly_the_commands_the_modules_define() -> None:
    for modules, help_line in COMMANDS.values():
        assert help_line.endswith(".") and "\n" not in help_line
        for module in modules:
            importlib.import_module(f"assay.cli.{module}")
    defined = set(typer.main.get_group(app).commands)
    assert defined == set(COMMANDS), "update assay/cli/commands.py"


def test_every_help_page_shows_flags_without_a_value_placeholder() -> None:
    """Boolean flags, ``--help`` included, take no value: no ``<bool>`` on any page (the
    top level, every command, every subcommand of a group)."""
    from tests.support.cli import assay_main

    from assay.cli.app import load_command

    pages = [(), *((name,) for name in COMMANDS)]
    for name in COMMANDS:
        group = load_command(name)
        pages += [(name, sub) for sub in getattr(group, "commands", {})]
    for page in pages:
        shown = assay_main(*page, "--help", env={"COLUMNS": "100"})
        assert shown.code == 0, (page, shown.err)
        assert "--help" in shown.stdout and "<bool>" not in shown.stdout, (page, shown.stdout)


def test_a_command_is_built_once_per_process() -> None:
    """In-process callers (tests, notebooks) pay for building a command once: the same
    click object serves every call, and only the command asked for is built."""
    from assay.cli.app import _build, load_command

    assert load_command("show") is load_command("show")
    assert load_command("badcase").name == "badcase" and "add" in load_command("badcase").commands
    assert _build("show") is not load_command("show") and _build("show").name == "show"


def test_help_and_version_import_no_command() -> None:
    code = (
        "import sys, assay.cli.app as a\n"
        "from assay.cli import main\n"
        "sys.argv = ['assay', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "names = ('assay.runner', 'assay.store', 'sqlalchemy', 'numpy', 'pydantic')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr
    assert "run" in out.stdout and "validate" in out.stdout


def test_help_is_fast_as_a_whole_process() -> None:
    """A generous bound for a loaded CI machine; benchmarks/cli_startup.py measures it."""
    env = {**os.environ, "COLUMNS": "100"}
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "assay", "--help"], capture_output=True, env=env, check=True)
        times.append(time.perf_counter() - start)
    assert sorted(times)[1] < 2.0, times
    version = subprocess.run([sys.executable, "-m", "assay", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("assay ")


def test_error_lines_keep_brackets(monkeypatch) -> None:
    """An install hint such as pip install 'assay[ray]' is printed whole, not as markup."""
    from tests.support.cli import assay_main

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    result = assay_main("run", "retail", "--executor", "ray", "-k", "1")
    assert result.code == 2 and "pip install 'assay[ray]'" in result.stderr, result


def test_reading_a_run_imports_none_of_the_machinery_that_runs_one(tmp_path: Path) -> None:
    """``assay show`` (like compare, report and the viewer) reads a stored run through
    assay.runner.stored: the executors, the orchestrator, environments and model clients
    stay unimported."""
    store = str(tmp_path / "s.db")
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "run",
            "retail",
            "-k",
            "1",
            "--task",
            "refund-in-window-email",
            "--store",
            store,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    code = (
        "import sys\n"
        "from assay.cli import main\n"
        f"sys.argv = ['assay', 'show', 'latest', '--store', {store!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "names = ('assay.runner.api', 'assay.runner.executor', 'assay.runner.orchestrator',\n"
        "         'assay.envs.sandbox')\n"
        "print('RUNNING', [m for m in names if m in sys.modules], 'assay.runner.stored' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "RUNNING [] True" in out.stdout, out.stdout + out.stderr
    assert "retail" in out.stdout
