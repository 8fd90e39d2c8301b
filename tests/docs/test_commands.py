"""Every shell command of README.md and docs/*.md runs, in page order, and exits as the
docs say (issue 16, item 5), so examples cannot rot. The rules (what counts as a command,
markers, placeholders, how each program is carried out) are in ``extract.py`` and
``runner.py``; the summary per page is printed at the end of the session."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.fake_llm_server import FakeLLMServer

from .conftest import REPORT
from .extract import ROOT, Block, DocsTestError, blocks, commands, logical_lines, page_commands, pages, rel, stray_commands
from .fakes import TraceSink, docs_brain
from .runner import PageRun, Shared

PAGES = [p for p in pages() if page_commands(p)]


def tau2_root() -> Path | None:
    given = os.environ.get("ASSAY_TAU2_DATA")
    root = Path(given) if given else ROOT.parent / "shared" / "tau2"
    return root if (root / "data" / "domains").is_dir() else None


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    with FakeLLMServer(docs_brain) as llm, TraceSink() as sink:
        yield Shared(
            root=tmp_path_factory.mktemp("docs-shared"),
            openai_url=llm.openai_base_url,
            anthropic_url=llm.anthropic_base_url,
            otlp_url=sink.url,
            tau2=tau2_root(),
        )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: rel(p))
def test_page_commands_run_as_documented(page: Path, shared: Shared, tmp_path: Path) -> None:
    started = time.perf_counter()
    run = PageRun(page, tmp_path, shared)
    try:
        run.run()
    except (AssertionError, DocsTestError) as exc:
        pytest.fail(str(exc), pytrace=False)
    finally:
        REPORT[rel(page)] = (run.outcomes, time.perf_counter() - started)
    done = [o for o in run.outcomes if o.status != "skipped"]
    assert done, f"{rel(page)}: every command is skipped"


def test_no_command_outside_a_shell_block() -> None:
    stray = [line for p in pages() for line in stray_commands(p)]
    assert not stray, "commands outside ```bash blocks are never run; fence them as bash:\n" + "\n".join(stray)


def test_skips_are_few_and_never_the_first_lines_of_the_readme() -> None:
    first = commands(next(b for b in blocks(ROOT / "README.md") if commands(b)))
    assert first and all(c.skip_reason() is None for c in first)
    skipped = [c for p in pages() for c in page_commands(p) if c.skip_reason() is not None]
    total = sum(len(page_commands(p)) for p in pages())
    assert len(skipped) <= max(5, total // 10), [f"{c.where}: {c.source}" for c in skipped]


def block(text: str, lang: str = "bash") -> Block:
    return Block(ROOT / "README.md", 1, lang, text)


def test_the_extraction_rules() -> None:
    cmds = commands(
        block(
            "# a comment line\n"
            "assay run retail --agent 'python:a b:c' \\\n"
            "    -k 1   # two lines, one command\n"
            "pip install -e . && assay runs ; assay plan --baseline 0.7 # exit 2\n"
            "PYTHONPATH=x assay run y > out.txt\n"
            "assay label RUN_ID [--task T] [--relabel] --import 'l#1.jsonl'\n"
        )
    )
    assert [c.argv for c in cmds] == [
        ["assay", "run", "retail", "--agent", "python:a b:c", "-k", "1"],
        ["pip", "install", "-e", "."],
        ["assay", "runs"],
        ["assay", "plan", "--baseline", "0.7"],
        ["assay", "run", "y"],
        ["assay", "label", "RUN_ID", "--import", "l#1.jsonl"],
    ]
    assert [c.line for c in cmds] == [3, 5, 5, 5, 6, 7]
    assert [c.expect for c in cmds] == [0, 0, 0, 2, 0, 0]
    assert [c.chained for c in cmds] == [False, False, True, False, False, False]
    assert cmds[4].env == {"PYTHONPATH": "x"} and cmds[4].stdout_to == "out.txt"
    assert cmds[5].optional_options == ["--task", "--relabel"]
    assert commands(block("assay run retail", lang="python")) == []
    assert logical_lines(block("a \\\n b # c\n")) == [(2, "a b", "c")]
