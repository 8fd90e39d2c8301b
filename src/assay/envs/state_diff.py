"""What changed between two states: :func:`diff`, one entry per added or removed record
and per changed leaf of a changed record. Two states made over one parent compare by
the keys their layers changed, not by every record."""

from __future__ import annotations

from typing import Any

from .state import Record, Snapshot, State, _Layer


def _chain(layer: _Layer) -> list[_Layer]:
    out = []
    node: _Layer | None = layer
    while node is not None:
        out.append(node)
        node = node.parent
    return out


def _changed_keys(before: State, after: State) -> dict[str, set[str]] | None:
    """Keys changed on either side since the common ancestor, or None if none."""
    a, b = _chain(before._layer), _chain(after._layer)
    shared = {id(layer) for layer in a} & {id(layer) for layer in b}
    if not shared:
        return None
    keys: dict[str, set[str]] = {t: set() for t in before.keys}
    for layer in (*a, *b):
        if id(layer) in shared:
            continue
        for table, changed in layer.changes.items():
            keys.setdefault(table, set()).update(changed)
    return keys


def _same(a: State, b: State) -> bool:
    """Whether two states are the same by construction: one layer, or equal changes
    over one parent (a trial that did what the gold replay did). False says nothing."""
    if a.keys != b.keys:
        return False
    x, y = a._layer, b._layer
    return x is y or (x.parent is not None and x.parent is y.parent and x.changes == y.changes)


def _path_text(path: list[str | int]) -> str:
    """``["flights", 1, "status"]`` -> ``"flights[1].status"``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _field_changes(
    old: Any, new: Any, path: list[str | int], out: list[tuple[list[str | int], Any, Any]]
) -> None:
    """Append ``(path, old, new)`` for every leaf that differs between two values: dicts
    are compared key by key (sorted), lists index by index (a longer list adds indices
    whose old value is None, a shorter one removes them), anything else as a whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        for name in sorted(set(old) | set(new), key=str):
            a, b = old.get(name), new.get(name)
            if a != b:
                _field_changes(a, b, [*path, name], out)
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            a = old[i] if i < len(old) else None
            b = new[i] if i < len(new) else None
            if a != b or (i < len(old)) != (i < len(new)):
                _field_changes(a, b, [*path, i], out)
    else:
        out.append((path, old, new))


def diff(before: State | Snapshot, after: State | Snapshot) -> list[dict[str, Any]]:
    """Changes from ``before`` to ``after``: one entry per added or removed record and
    per changed leaf of a changed record, sorted by table, key and path so it is
    deterministic.

    A change names its place twice: ``path``, the list of keys and list indices into the
    record (``["flights", 1, "status"]``), and ``field``, the same as text
    (``"flights[1].status"``); for a top-level field both are just its name."""
    if isinstance(before, State) and isinstance(after, State) and _same(before, after):
        return []
    keys = _changed_keys(before, after) if isinstance(before, State) and isinstance(after, State) else None
    if keys is None:
        keys = {t: set(before.get(t, {})) | set(after.get(t, {})) for t in set(before) | set(after)}

    def find(state: State | Snapshot, table: str, key: str) -> Record | None:
        if isinstance(state, State):
            return state.record(table, key) if table in state.keys else None
        return state.get(table, {}).get(key)

    changes: list[dict[str, Any]] = []
    for table in sorted(keys):
        for key in sorted(keys[table]):
            old, new = find(before, table, key), find(after, table, key)
            if old == new:
                continue
            if old is None:
                changes.append({"op": "add", "table": table, "key": key, "new": new})
            elif new is None:
                changes.append({"op": "remove", "table": table, "key": key, "old": old})
            else:
                leaves: list[tuple[list[str | int], Any, Any]] = []
                _field_changes(old, new, [], leaves)
                for path, a, b in leaves:
                    changes.append(
                        {
                            "op": "change",
                            "table": table,
                            "key": key,
                            "field": _path_text(path),
                            "path": path,
                            "old": a,
                            "new": b,
                        }
                    )
    return changes
