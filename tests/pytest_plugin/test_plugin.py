"""The pytest plugin, run the way users run it: a test file of evals under plain
``pytest`` in a subprocess, the plugin found through its ``pytest11`` entry point."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib

from assay.store import Store

ROOT = Path(__file__).parents[2]
GATE = (ROOT / "examples" / "gate.yaml").read_text()
#: Retail tasks of every stratum, so the example gate's high-risk check has tasks to judge.
FEW = "task_ids=['refund-in-window-email-1', 'injection-refund-everything-1', 'other-users-order-status-1']"

THREE_EVALS = f"""
import pytest

FEW = dict({FEW})


def test_careful_agent(assay_run):
    run = assay_run("retail", agent="builtin:retail-careful", trials=2, **FEW)
    assert run.pass_hat_k(2) >= 0.9
    assert run.success_rate.low > 0.3 and run.excluded == 0
    assert run.gate("gate.yaml")


@pytest.mark.assay(suite="retail", agent="builtin:retail-flaky", trials=4, seed=1, **FEW)
def test_flaky_agent_gate(assay_run):
    run = assay_run()
    assert run.gate("gate.yaml")


@pytest.mark.assay(suite="retail", trials=3)
def test_hasty_agent_reaches_nothing(assay_run):
    run = assay_run(agent="builtin:retail-hasty", **FEW)
    assert run.pass_at_k(3) <= 0.5
    assert run.group(stratum="high_risk").pass_hat_k(3) == 0.0
"""


def entry_point_site(tmp_path: Path) -> Path:
    """A folder holding only the metadata of a distribution that declares assay's
    ``pytest11`` entry point, as ``pip install assay`` does (the shared test environment
    has assay installed from another checkout, so the real metadata may lack it)."""
    dist = tmp_path / "site" / "assay_pytest_entry_point-0.0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: assay-pytest-entry-point\nVersion: 0.0\n")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["entry-points"]["pytest11"]
    assert declared == {"assay": "assay.pytest_plugin"}
    lines = "".join(f"{name} = {module}\n" for name, module in declared.items())
    (dist / "entry_points.txt").write_text("[pytest11]\n" + lines)
    return dist.parent


def pytest_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "ASSAY_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(entry_point_site(tmp_path)), str(ROOT / "src")])
    env["ASSAY_CACHE_DIR"] = str(tmp_path / "cache")
    env.update(extra)
    return env


def run_pytest(folder: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:asyncio", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_three_evals_under_plain_pytest(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_evals.py").write_text(THREE_EVALS)
    (project / "gate.yaml").write_text(GATE)
    (project / "pytest.ini").write_text("[pytest]\nassay_store = results/evals.db\n")
    done = run_pytest(project, pytest_env(tmp_path), "-q")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "1 failed, 2 passed" in out, out
    # the failing gate fails its test, and says which check failed and why
    assert "FAILED test_evals.py::test_flaky_agent_gate" in out
    assert (
        "AssertionError: assert <gate 'retail-release' FAILED 2 of 7 checks: overall success: "
        "overall.success_rate = 0.6667 misses >= 0.8; high-risk tasks: stratum high_risk:"
    ) in out
    assert "Captured assay gate call" in out
    failed = "FAIL  high-risk tasks: stratum high_risk: 1 of 2 task(s) fail pass^4: injection-refund-"
    assert failed in out
    assert "PASS  regression pass^k: by_split.regression.pass_hat_k.k = 1 meets >= 0.6" in out
    assert "gate.yaml:32" in out  # where the failed check is written
    # the summary is in the terminal report, one block per eval run
    assert "= assay evals =" in out
    ids = re.findall(r"· run (retail-\S+)", out)
    assert len(ids) == 3, out
    assert "test_evals.py::test_careful_agent: retail · builtin:retail-careful" in out
    assert re.search(r"success rate 1\.000 \[0\.\d+, 1\.000\] over 6 trials · pass\^2 1\.000", out), out
    # the runs are in the store the ini names, like any run
    db = project / "results" / "evals.db"
    assert f"3 run(s) stored in {db}" in out
    store = Store(db)
    assert sorted(r["run_id"] for r in store.list_runs()) == sorted(ids)
    agents = ["retail-careful", "retail-flaky", "retail-hasty"]
    for run_id, agent, k in zip(ids, agents, [2, 4, 3], strict=True):
        info = store.get_run(run_id)
        assert info.config.agent == f"builtin:{agent}" and info.trials_per_task == k
        assert info.status == "finished"
        assert len(store.load_results(run_id)) == 3 * k


@pytest.mark.slow
def test_store_option_env_and_suite_selection(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_select.py").write_text(
        textwrap.dedent(
            f"""
            import pytest

            FEW = dict({FEW})

            @pytest.mark.assay(suite="retail", agent="builtin:retail-careful", trials=1, **FEW)
            def test_retail(assay_run):
                assert assay_run().success_rate == 1.0

            @pytest.mark.assay(suite="examples/rag")
            def test_rag(assay_run):
                raise AssertionError("deselected by --assay-suite retail")

            def test_unmarked_eval(assay_run):
                run = assay_run("examples/rag/suite.yaml", agent="builtin:retail-careful")
                raise AssertionError("skipped at run time: its suite is not selected")

            def test_plain():
                pass
            """
        )
    )
    env = pytest_env(tmp_path, ASSAY_STORE=str(tmp_path / "env.db"))
    selected = run_pytest(project, env, "-q", "-rs", "--assay-suite", "retail", "--assay-store", "opt.db")
    assert selected.returncode == 0, selected.stdout + selected.stderr
    assert "1 passed, 1 skipped, 2 deselected" in selected.stdout, selected.stdout
    assert "suite examples/rag/suite.yaml is not selected (--assay-suite retail)" in selected.stdout
    assert (project / "opt.db").exists() and not (tmp_path / "env.db").exists()  # the option wins

    marked = run_pytest(project, env, "-q", "-m", "not assay")  # every eval is marked assay
    assert "1 passed, 3 deselected" in marked.stdout, marked.stdout
    by_env = run_pytest(project, env, "-q", "-k", "test_retail")
    assert by_env.returncode == 0 and (tmp_path / "env.db").exists()  # else $ASSAY_STORE
    assert f"1 run(s) stored in {tmp_path / 'env.db'}" in by_env.stdout


def test_importing_the_plugin_loads_nothing_heavy(tmp_path: Path) -> None:
    """pytest loads the plugin in every session: it must not import assay's machinery."""
    code = (
        "import sys, assay.pytest_plugin\n"
        "heavy = [m for m in ('assay.runner', 'assay.core', 'assay.gate', 'pydantic', 'sqlalchemy', 'numpy')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=pytest_env(tmp_path), capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_an_eval_outside_pytest_gets_a_clear_error(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_bad.py").write_text(
        "def test_no_suite(assay_run):\n    assay_run(agent='builtin:retail-careful')\n\n"
        "def test_big_k(assay_run):\n"
        f"    run = assay_run('retail', agent='builtin:retail-careful', trials=1, {FEW})\n"
        "    run.pass_hat_k(4)\n"
    )
    done = run_pytest(project, pytest_env(tmp_path), "-q", "--assay-store", "x.db")
    assert "2 failed" in done.stdout, done.stdout
    out = done.stdout
    assert "assay_run needs a suite: assay_run('retail', ...) or @pytest.mark.assay(suite='retail')" in out
    assert "pass^4 needs tasks with 4 counted trials, and overall has none (the run has 1 trial(s)" in out


def test_the_entry_point_registers_the_plugin(tmp_path: Path) -> None:
    loaded = run_pytest(tmp_path, pytest_env(tmp_path), "--co", "-q", "--trace-config")
    assert "PLUGIN registered: <module 'assay.pytest_plugin' from" in loaded.stdout, loaded.stdout
    assert "--assay-store" in run_pytest(tmp_path, pytest_env(tmp_path), "--help").stdout
    blocked = run_pytest(tmp_path, pytest_env(tmp_path), "-p", "no:assay", "--help")
    assert "--assay-store" not in blocked.stdout
