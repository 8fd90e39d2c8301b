"""Large JSONL suites stream: memory stays flat and errors still point at the line."""

import json
import tracemalloc
from pathlib import Path

import pytest

from assay.errors import SuiteError
from assay.suites import iter_instances, load_suite


def write_suite(root: Path, n: int, bad_line: int | None = None) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "suite.yaml").write_text("name: big\n")
    with (root / "tasks" / "qa.jsonl").open("w") as fh:
        for i in range(1, n + 1):
            task = {
                "id": f"q{i}",
                "user": {"opening": f"What is {i} + 1?"},
                "graders": [{"text": {"numeric": i + 1}}],
            }
            if i == bad_line:
                task["difficulty"] = "very"
            fh.write(json.dumps(task) + "\n")
    return root


def peak_mb(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_memory_stays_flat_as_the_suite_grows(tmp_path: Path) -> None:
    small = write_suite(tmp_path / "small", 1_000)
    large = write_suite(tmp_path / "large", 10_000)
    load_suite(small)  # warm imports and caches
    small_peak = peak_mb(lambda: sum(1 for _ in iter_instances(load_suite(small))))
    large_peak = peak_mb(lambda: sum(1 for _ in iter_instances(load_suite(large))))
    # 10x the tasks: only the set of ids grows (kept tasks would cost ~10x the memory)
    assert large_peak < 3 * small_peak + 5, (small_peak, large_peak)
    assert sum(1 for _ in iter_instances(load_suite(large))) == 10_000


def test_errors_point_at_the_line(tmp_path: Path) -> None:
    root = write_suite(tmp_path, 5_000, bad_line=4_321)
    with pytest.raises(SuiteError) as exc:
        load_suite(root)
    (problem,) = exc.value.problems
    assert str(problem).startswith(f"{root / 'tasks' / 'qa.jsonl'}:4321: difficulty: ")
