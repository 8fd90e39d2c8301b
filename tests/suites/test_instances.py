"""The instances of a spec are its first instance renamed: each equals the task
``instantiate_task`` makes for its index, hash included."""

from pathlib import Path

from assay.suites import instantiate_task, iter_instances, load_suite
from assay.suites.loader import iter_specs

SUITE = """
name: many
domain: retail
defaults: {trials: 1, timezone: Europe/Paris}
tasks:
  - id: plain
    instances: 5
    tags: [a, b]
    user: {opening: "Say hello.", known: {order: "W1"}}
    metadata: {owner: me}
    graders:
      - text: {contains: hello}
  - id: seeded
    instances: 3
    initial_state: {seed: 7}
    first_speaker: agent
    greeting: Hi
    user: {opening: "Hi."}
    graders:
      - text: {contains: hi}
  - id: single
    user: {opening: "Once."}
    graders:
      - text: {contains: once}
"""


def _fresh_hash(task):
    copy = task.model_copy()
    copy._input_hash = None
    return copy.input_hash()


def test_instances_equal_what_instantiate_task_makes(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE)
    suite = load_suite(tmp_path)
    made = list(iter_instances(suite, seed=3))
    specs = list(iter_specs(suite))
    expected = [instantiate_task(suite, spec, 3, i) for spec in specs for i in range(spec.instances)]
    assert [t.id for t in made] == [t.id for t in expected]
    assert [t.id for t in made][:5] == ["plain-1", "plain-2", "plain-3", "plain-4", "plain-5"]
    for got, want in zip(made, expected, strict=True):
        assert got.input_hash() == want.input_hash() == _fresh_hash(got)
        assert got.model_dump() == want.model_dump()
        assert got.model_fields_set == want.model_fields_set
    hashes = [t.input_hash() for t in made]
    assert len(set(hashes)) == len(hashes)  # the ids differ, so the hashes do
    made[1].metadata["extra"] = 1  # each instance has its own metadata
    assert "extra" not in made[2].metadata and "extra" not in made[0].metadata


def test_stable_hashes_equal_stable_hash_for_any_value() -> None:
    from assay.core.hashing import stable_hash, stable_hashes

    data = {"id": "x", "user": {"opening": 'Héllo "there"'}, "tags": ["b", "a"], "z": 1.5}
    hash_of = stable_hashes(data, "id")
    for value in ["t-1", "tâche-2", 'quo"te', "back\\slash", "\x00assay-hole\x00", ""]:
        assert hash_of(value) == stable_hash({**data, "id": value})
    # the marker already in the data: every value is encoded whole, still equal
    odd = {**data, "note": "\x00assay-hole\x00"}
    assert stable_hashes(odd, "id")("t-3") == stable_hash({**odd, "id": "t-3"})
    # a key the data does not have yet
    assert stable_hashes({"a": 1}, "id")("t") == stable_hash({"a": 1, "id": "t"})
