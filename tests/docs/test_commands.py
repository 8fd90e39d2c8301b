"""Every shell command of README.md and docs/*.md runs, in page order, and exits as the
docs say (issue 16, item 5), so examples cannot rot. The rules (what counts as a command,
markers, placeholders, how each program is carried out) are in ``extract.py`` and
``runner.py``; the summary per page is printed at the end of the session."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_llm_server import FakeLLMServer

from .conftest import REPORT
from .execution import check_dev_tool, check_pip
from .extract import (
    ROOT,
    Block,
    DocsTestError,
    blocks,
    commands,
    logical_lines,
    page_commands,
    pages,
    rel,
    stray_commands,
)
from .fakes import TraceSink, docs_brain, judge_reply, pairwise_reply
from .runner import PageRun, Shared

PAGES = [p for p in pages() if page_commands(p)]
#: pages whose commands take tens of seconds even when shared (measured on the 2-core
#: machine): marked slow (plain ``pytest`` leaves them out; ``pytest -m slow`` and CI run them)
SLOW = {
    "README.md": "about 40 runs: tau2 telecom, Ray, perturbations, a flag matrix...",
    "docs/code.md": "164 HumanEval problems twice in the sandbox",
    "docs/rag.md": "three runs of the 97 banking_knowledge tasks",
    "docs/pytest.md": "four pytest sessions of two k=4 retail evals",
    "docs/judges.md": "judge runs of the retail suite and a pairwise judging",
    "docs/traces.md": "an LLM run exported, imported and replayed",
    "docs/lifecycle.md": "perturbations and two flag matrices of the retail suite",
    "docs/scale.md": "a Ray started for one run",
    "docs/rankings.md": "tournaments of several retail runs, Elo and Bradley-Terry with intervals",
    "docs/tau2.md": "tau2's five domains imported and run, recorded simulations re-graded",
}


def page_param(page: Path) -> object:
    marks = [pytest.mark.slow] if rel(page) in SLOW else []
    return pytest.param(page, id=rel(page), marks=marks)


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


@pytest.mark.parametrize("page", [page_param(p) for p in PAGES])
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
    stray = "\n".join(line for p in pages() for line in stray_commands(p))
    assert not stray, f"commands outside ```bash blocks are never run; fence them as bash:\n{stray}"


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


def test_markers_belong_to_the_next_block(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- docs-test: skip `--slow`: takes an hour -->\n"
        "<!-- docs-test: link x.yaml=examples/gate.yaml -->\n\n"
        "```bash\nassay run retail\nassay run retail --slow\n```\n\n"
        "<!-- docs-test: stdin p\\nq\\n -->\ntext between\n\n```bash\nassay label RUN_ID\n```\n"
    )
    first, second = blocks(page)
    assert [m.kind for m in first.markers] == ["skip", "link"] and second.markers == []
    assert [c.skip_reason() for c in commands(first)] == [None, "takes an hour"]
    page.write_text("<!-- docs-test: frobnicate -->\n```bash\nassay runs\n```\n")
    with pytest.raises(DocsTestError, match="unknown docs-test marker"):
        blocks(page)
    page.write_text("<!-- docs-test: skip -->\n```bash\nassay runs\n```\n")
    with pytest.raises(DocsTestError, match="needs a reason"):
        blocks(page)


def test_commands_that_are_checked_not_run() -> None:
    assert check_pip(["pip", "install", "-e", ".[llm,view]"]) and check_pip(["pip", "install", "assay[ray]"])
    with pytest.raises(AssertionError, match="no extra"):
        check_pip(["pip", "install", "-e", ".[nope]"])
    with pytest.raises(AssertionError, match="not this project"):
        check_pip(["pip", "install", "requests"])
    (tool,) = commands(block("vllm serve some/model"))
    with pytest.raises(DocsTestError, match="no rule to run `vllm`"):
        check_dev_tool(tool, set())


def test_only_runs_that_depend_on_their_words_alone_are_shared() -> None:
    key = PageRun.memo_key
    assert key(["run", "retail", "--agent", "builtin:retail-hasty", "-k", "8", "--json"]) is not None
    assert key(["run", "retail"]) == ("run", "retail")
    assert key(["run", "retail", "--agent", "python:my_agent:agent"]) is None  # the page's own file
    assert key(["run", "retail", "--spec", "run.yaml"]) is None
    assert key(["run", "retail", "--against", "careful", "--until-decided"]) is None
    assert key(["run", "tau2-telecom"]) is None
    assert key(["show", "retail"]) is None


def test_the_fake_judges_answer_in_the_format_asked() -> None:
    from assay.graders import load_rubric
    from assay.graders.judge_prompt import SYSTEM, output_format

    rubric = load_rubric(ROOT / "examples" / "rubrics" / "retail_explanation.yaml")
    answer = json.loads(judge_reply(SYSTEM.replace("{format}", output_format(rubric))))
    assert set(answer["dimensions"]) == {d.name for d in rubric.dimensions} and answer["verdict"] == "pass"
    for d in rubric.dimensions:
        assert answer["dimensions"][d.name]["score"] == d.allowed()[0]
    assert json.loads(pairwise_reply(pair_text("short", "a longer answer")))["winner"] == "2"
    assert json.loads(pairwise_reply(pair_text("a longer answer", "short")))["winner"] == "1"


def pair_text(one: str, two: str) -> str:
    from assay.graders.pairwise import PairInput, pair_messages

    return pair_messages(PairInput("q?", one, two), swapped=False)[-1].content
