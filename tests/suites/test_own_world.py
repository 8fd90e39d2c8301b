"""A suite that brings its own world (docs/suite-format.md, "A suite that brings its own
world"): a tools module, a policy and data files in the suite folder, written here from
the docs alone; it loads, runs, and its hash follows every file of that world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.cli import assay_main

from assay.envs import get_domain
from assay.envs.capabilities import AssertionDomain
from assay.errors import SuiteError
from assay.runner.api import run
from assay.suites import load_suite

REPO = Path(__file__).resolve().parents[2]

TOOLS = '''
from assay.envs import ToolContext, ToolError, assertion, tool

POLICY = "Be kind; close a loan only when its book is back."


@tool
def find_book(ctx: ToolContext, title: str) -> dict:
    """Find a book by its title.

    Args:
        title: The exact title.
    """
    for book in ctx.db.rows("books"):
        if book["title"] == title:
            return book
    raise ToolError(f"no book titled {title!r}")


@tool(write=True)
def return_book(ctx: ToolContext, book_id: str) -> str:
    """Record that a book came back.

    Args:
        book_id: The book id, such as 'b1'.
    """
    book = ctx.db.get("books", book_id)
    if book is None:
        raise ToolError(f"no book {book_id}")
    ctx.db.update("books", book_id, on_loan=False)
    return f"{book_id} returned"


@tool(for_="user")
def look_at_shelf(ctx: ToolContext) -> str:
    """Look at the shelf at home."""
    return ", ".join(r["title"] for r in ctx.db.rows("shelf")) or "empty"


@assertion
def on_shelf(ctx: ToolContext, book_id: str) -> bool:
    """The book is not on loan."""
    return not ctx.db.get("books", book_id)["on_loan"]
'''

SUITE = """
name: library
domain:
  module: tools.py
  data: [data]
  keys: {shelf: title}
tasks:
  - id: return-dune
    user:
      opening: "I brought Dune back."
    graders:
      - state: gold
      - env_assert: [{name: on_shelf, args: {book_id: b1}}]
    reference:
      actions:
        - {name: find_book, args: {title: Dune}}
        - {name: return_book, args: {book_id: b1}}
"""


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "library"
    (root / "data").mkdir(parents=True)
    (root / "tools.py").write_text(TOOLS)
    (root / "suite.yaml").write_text(SUITE)
    (root / "data" / "books.jsonl").write_text(
        '{"id": "b1", "title": "Dune", "on_loan": true}\n{"id": "b2", "title": "Emma", "on_loan": false}\n'
    )
    (root / "data" / "home.toml").write_text('[[shelf]]\ntitle = "Dune"\n')
    return root


def test_own_world_loads_and_runs(library: Path, tmp_path: Path) -> None:
    suite = load_suite(library)
    assert suite.imported_modules == ["tools.py (domain)"]
    domain = get_domain(suite.domain_ref)
    assert domain.name == "library" and domain.policy.startswith("Be kind")
    assert domain.toolkit.names("agent") == ["find_book", "return_book"]
    assert domain.toolkit.names("user") == ["look_at_shelf"]
    assert isinstance(domain, AssertionDomain) and domain.assertion_names() == ["on_shelf"]
    base = domain.base_state(0)
    assert base.get("books", "b1")["on_loan"] is True and base.get("shelf", "Dune") == {"title": "Dune"}
    good = run(suite, agent="builtin:gold-replay", trials=1, store=str(tmp_path / "s.db"))
    [result] = good.results
    assert result.reward == 1, [(g.grader, g.reason) for g in result.grades]
    assert {g.grader: g.passed for g in result.grades} == {"state": True, "env_assert": True}
    idle = run(suite, agent="python:tests.toyagents:silent", trials=1, store=str(tmp_path / "s.db"))
    [result] = idle.results
    assert result.reward == 0
    grades = {g.grader: g for g in result.grades}
    assert not grades["env_assert"].passed and "on_shelf" in grades["env_assert"].reason
    assert "books b1.on_loan is True, expected False" in grades["state"].reason


def test_hash_follows_the_tool_bodies_and_the_records(library: Path) -> None:
    first = load_suite(library).hash
    tools = library / "tools.py"
    tools.write_text(tools.read_text().replace('return f"{book_id} returned"', 'return f"{book_id} is back"'))
    second = load_suite(library).hash
    assert second != first
    books = library / "data" / "books.jsonl"
    books.write_text(books.read_text().replace('"on_loan": false', '"on_loan": true'))
    third = load_suite(library).hash
    assert third not in (first, second)
    toml = library / "data" / "home.toml"
    toml.write_text('[[shelf]]\ntitle = "Emma"\n')
    fourth = load_suite(library).hash
    assert fourth not in (first, second, third)
    # the edited tool body is what runs: the domain is rebuilt for the new version
    domain = get_domain(load_suite(library).domain_ref)
    from datetime import datetime

    from assay.core import Task

    env = domain.environment(Task(id="t"), datetime(2025, 1, 1))
    env.reset(0)
    assert env.call("return_book", {"book_id": "b1"}) == "b1 is back"
    assert env.call("look_at_shelf", {}, for_="user") == "Emma"
    # a file nothing names (a store, a report) does not change the hash
    (library / "notes.db").write_bytes(b"\x00\x01")
    assert load_suite(library).hash == fourth


def test_trials_find_the_domain_without_listing_its_data_again(
    library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the suite lists and stats the domain's files once; the trials then find
    the built domain by the stamp the suite carries (a data folder of 698 documents cost
    every trial 30 ms before). A suite loaded after an edit gets the new world."""
    from assay.envs import local

    for i in range(50):
        (library / "data" / f"extra-{i:02d}.jsonl").write_text(
            f'{{"id": "x{i}", "title": "T{i}", "on_loan": false}}\n'
        )
    listed: list[str] = []
    real = local.source_files

    def counting(root: Path, source: object) -> list[Path]:
        listed.append(str(root))
        return real(root, source)  # type: ignore[arg-type]

    monkeypatch.setattr(local, "source_files", counting)
    suite = load_suite(library)
    assert len(listed) == 1 and suite.domain_ref.files_seen  # type: ignore[union-attr]
    done = run(suite, agent="builtin:gold-replay", trials=8, store=str(tmp_path / "s.db"))
    assert [r.reward for r in done.results] == [1] * 8
    assert len(listed) == 1  # not once per trial (nor per grader)
    books = library / "data" / "books.jsonl"
    books.write_text(books.read_text().replace('"title": "Dune"', '"title": "Dune Messiah"'))
    edited = load_suite(library)
    assert len(listed) == 2 and edited.domain_ref != suite.domain_ref
    assert get_domain(edited.domain_ref).base_state(0).get("books", "b1")["title"] == "Dune Messiah"
    assert get_domain(suite.domain_ref).base_state(0).get("books", "b1")["title"] == "Dune"


def test_files_outside_the_folder_are_read_only_when_named_and_then_hashed(
    library: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-data"
    shared.mkdir()
    (shared / "extra.json").write_text(
        json.dumps({"books": [{"id": "b9", "title": "Ulysses", "on_loan": False}]})
    )
    suite_yaml = library / "suite.yaml"
    suite_yaml.write_text(SUITE.replace("data: [data]", f"data: [data, {shared / 'extra.json'}]"))
    loaded = load_suite(library)
    assert get_domain(loaded.domain_ref).base_state(0).get("books", "b9")["title"] == "Ulysses"
    before = loaded.hash
    (shared / "extra.json").write_text(
        json.dumps({"books": [{"id": "b9", "title": "Odyssey", "on_loan": False}]})
    )
    assert load_suite(library).hash != before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("tools.py", "def find_book", "def find_book(:"), "tools.py: importing it failed: SyntaxError"),
        (("suite.yaml", "module: tools.py", "module: nope.py"), "domain: module nope.py does not exist"),
        (("data/books.jsonl", '"id": "b2", ', ""), "books[1] has no 'id' field"),
        (("data/books.jsonl", '{"id": "b1"', '{"id": '), "books.jsonl:1: not JSON"),
        (
            ("suite.yaml", "module: tools.py", "module: tools.py\n  factory: x:y"),
            "give exactly one of module",
        ),
    ],
)
def test_problems_of_the_world_are_one_line_each(
    library: Path, change: tuple[str, str, str], message: str
) -> None:
    name, old, new = change
    path = library / name
    path.write_text(path.read_text().replace(old, new, 1))
    with pytest.raises(SuiteError) as info:
        load_suite(library)
    [problem] = info.value.problems
    assert message in str(problem) and "suite.yaml" in str(problem)


def test_validate_says_which_code_it_imports(library: Path) -> None:
    proc = assay_main("validate", str(library))
    assert proc.returncode == 0, proc.stderr
    assert "imports (loading the suite runs this code): tools.py (domain)" in proc.stdout
    proc = assay_main("validate", str(library), "--json")
    assert json.loads(proc.stdout)["imports"] == ["tools.py (domain)"]


def test_the_helpdesk_example_scores_one_with_gold_replay(tmp_path: Path) -> None:
    suite = load_suite(REPO / "examples" / "helpdesk")
    result = run(suite, agent="builtin:gold-replay", trials=1, store=str(tmp_path / "h.db"))
    assert [r.reward for r in result.results] == [1, 1]
    vpn = result.transcript("vpn-from-home", 0)
    assert vpn is not None and [c.name for c in vpn.user_tool_calls()] == ["connect_vpn"]
