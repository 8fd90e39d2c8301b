"""How assay steers Python's cyclic garbage collector while it builds or runs many
objects: paused while a suite loads, and during a run kept off the objects that live
through it. Both restore what they changed, so no global setting outlives the block."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Young-generation threshold during a run (Python's default is 700 allocations).
RUN_YOUNG_THRESHOLD = 10_000

_lock = threading.Lock()
_runs = 0
_saved: tuple[int, int, int] = (700, 10, 10)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many long-lived objects (a
    100,000-task suite would otherwise pay for repeated full collections), and resume
    it afterwards (no global side effect survives the load)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def run_collector() -> Iterator[None]:
    """The collector during a run. What exists when the run starts (modules, the suite
    and its tasks, the plan) lives through it, yet every full collection walked it again:
    each entry freezes it out of the collector's reach (``gc.freeze``: enter once more
    when the set-up has made the run's tasks), and young collections run every
    :data:`RUN_YOUNG_THRESHOLD` allocations instead of 700, so a trial's short-lived
    objects mostly die before one looks at them. On a trivial trial the collector was
    13-20% of the harness's CPU (benchmarks/README.md). Runs may overlap (threads,
    nested runs): the first one in changes the threshold, the last one out restores it
    and unfreezes what was frozen."""
    global _runs, _saved
    with _lock:
        if _runs == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(_saved[0], RUN_YOUNG_THRESHOLD), _saved[1], _saved[2])
        gc.freeze()
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0:
                gc.set_threshold(*_saved)
                gc.unfreeze()  # what the run dropped is collectable again
