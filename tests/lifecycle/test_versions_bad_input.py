"""``assay suite accept`` and ``assay suite diff`` given what an attacker (or a slip)
gives them: version labels that would name a folder outside the suite, a version that
is current or archived already, an accept that fails half-way, a file that is not a
suite, a seed ``assay run`` refuses. One line, exit 2, nothing changed."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import yaml

from assay.domains.retail import SUITE_DIR
from assay.suites.instantiate import instantiate
from assay.suites.loader import load_suite
from tests.support.cli import CliResult, assay_main


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the retail suite (v1) with candidates cand-1 and cand-2 waiting."""
    suite = tmp_path_factory.mktemp("versions") / "retail"
    shutil.copytree(SUITE_DIR, suite, ignore=shutil.ignore_patterns("__pycache__"))
    task = next(t for t in instantiate(load_suite(suite), 0) if t.id == "static-refund-headphones")
    (suite / ".review").mkdir()
    for name in ("cand-1", "cand-2"):
        data = task.model_dump(mode="json", exclude_defaults=True) | {"id": name, "description": name}
        (suite / ".review" / f"{name}.yaml").write_text(yaml.safe_dump({"candidate": {}, "task": data}))
    return suite


@pytest.fixture
def suite(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "retail"
    shutil.copytree(pristine, copy)
    return copy


def accept(suite: Path, *args: str) -> CliResult:
    return assay_main("suite", "accept", str(suite), *args, "--force")


def refused(result: CliResult) -> str:
    assert result.code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.err


def state(folder: Path) -> dict[str, str]:
    """Every file and folder under ``folder`` (with its content's hash)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize(
    "version", ["x/../../../escaped", "../up", ".hidden", "a b", "v2\n", "é", "a" * 51, "-1", "1@2"]
)
def test_a_version_that_is_not_a_label_is_refused(suite: Path, version: str) -> None:
    before = state(suite.parent)
    message = refused(accept(suite, "cand-1", "--version", version))
    assert "is not a version label: use letters, digits, '_', '.' and '-'" in message
    assert "at most 50 characters" in message
    assert state(suite.parent) == before  # nothing archived, written or escaped


def test_the_escape_of_the_review_stays_refused_on_the_next_accept(suite: Path) -> None:
    """The attack: a version label with ``..`` set by hand, then an ordinary accept
    that would archive the suite to ``.history/vx/../../../escaped``."""
    text = (suite / "suite.yaml").read_text()
    (suite / "suite.yaml").write_text(text.replace("\nversion: 1\n", '\nversion: "x/../../../escaped"\n'))
    message = refused(accept(suite, "cand-1", "--version", "3"))
    assert "suite.yaml: version: 'x/../../../escaped' is not a version label" in message
    assert not (suite.parent / "escaped").exists() and not (suite / ".history").exists()


def test_the_current_version_or_an_archived_one_is_refused(suite: Path) -> None:
    assert "the suite is at version 1 already" in refused(accept(suite, "cand-1", "--version", "1"))
    assert accept(suite, "cand-1").code == 0  # 1 -> 2, v1 archived
    assert (suite / ".history" / "v1" / "suite.yaml").is_file()
    before = state(suite)
    assert "version 1 is archived already in" in refused(accept(suite, "cand-2", "--version", "1"))
    assert state(suite) == before
    # suite.yaml set back to 1 by hand: archiving it again would keep the old archive
    # and lose this state; refused, never skipped
    text = (suite / "suite.yaml").read_text()
    (suite / "suite.yaml").write_text(text.replace("\nversion: 2\n", "\nversion: 1\n"))
    before = state(suite)
    message = refused(accept(suite, "cand-2", "--version", "7"))
    assert f"{suite / '.history' / 'v1'} exists already: version 1 was archived before" in message
    assert state(suite) == before


def test_a_failed_accept_leaves_nothing_behind(suite: Path) -> None:
    """A candidate whose id is a task of the suite: the suite no longer loads; no
    archive, no tasks/flowback folder, suite.yaml as it was, and the error names the
    candidate's file (the task file written for it is gone)."""
    review = suite / ".review" / "cand-1.yaml"
    review.write_text(review.read_text().replace("id: cand-1", "id: static-refund-headphones"))
    before = state(suite)
    message = refused(accept(suite, "static-refund-headphones"))
    assert state(suite) == before
    assert "duplicate task id 'static-refund-headphones'" in message
    assert f"(first at {review})" in message and "flowback" not in message
    assert "would break the suite: nothing was changed" in message


def test_suite_diff_names_the_file_given_and_takes_the_seeds_run_takes(suite: Path, tmp_path: Path) -> None:
    text = tmp_path / "text.txt"
    text.write_text("hello\n")
    message = refused(assay_main("suite", "diff", str(text), str(suite)))
    assert message.startswith(f"error: {text}:1:") and "folder has no suite.yaml" not in message
    for seed in ("-1", str(2**63)):
        diff = assay_main("suite", "diff", str(suite), str(suite), "--seed", seed)
        assert f"--seed {seed}: a seed is an integer from 0 to {2**63 - 1}" in refused(diff)
    assert assay_main("suite", "diff", str(suite), str(suite), "--seed", str(2**63 - 1)).code == 0
    archived = refused(assay_main("suite", "diff", f"{suite}@../../x", str(suite)))
    assert "'../../x' is not a version label" in archived
