"""Record every model exchange of a run to a JSONL file, and replay it exactly."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from .errors import CassetteError, CassetteMiss
from .types import Completion

CassetteMode = Literal["record", "replay"]
FORMAT_VERSION = 1


class Cassette:
    """A JSONL file of exchanges: one line per call,
    ``{"v", "hash", "occurrence", "provider", "model", "request", "completion", "at"}``.

    ``record`` truncates the file and appends every completion served (network, cache
    or not); ``replay`` serves completions by request hash, the n-th identical request
    getting the n-th recorded answer, and raises :class:`CassetteMiss` for a request the
    file does not hold. Replay makes no request and needs no API key. One cassette may
    serve several models (agent, user, judge) at once."""

    def __init__(self, path: str | Path, mode: CassetteMode = "replay"):
        if mode not in ("record", "replay"):
            raise ValueError(f"cassette mode must be record or replay, not {mode!r}")
        self.path = Path(path)
        self.mode: CassetteMode = mode
        self._lock = threading.Lock()
        self._seen: dict[str, int] = defaultdict(int)
        self._entries: dict[str, list[dict[str, Any]]] = defaultdict(list)
        if self.path.is_dir():
            raise CassetteError(f"{self.path}: is a folder, not a cassette file")
        if mode == "record":
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_text("", encoding="utf-8")
            except FileExistsError:  # mkdir: the parent exists and is not a folder
                raise CassetteError(
                    f"{self.path}: cannot write cassette ({self.path.parent} is a file, not a folder)"
                ) from None
            except OSError as exc:
                raise CassetteError(f"{self.path}: cannot write cassette ({exc.strerror or exc})") from None
        else:
            self._load()

    def _load(self) -> None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise CassetteError(f"{self.path}: cannot read cassette ({exc.strerror})") from None
        except UnicodeDecodeError:
            raise CassetteError(f"{self.path}: not a cassette (not UTF-8 text)") from None
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                self._entries[entry["hash"]].append(entry)
            except (json.JSONDecodeError, KeyError, TypeError):
                raise CassetteError(f"{self.path}:{lineno}: not a cassette entry") from None
            except RecursionError:
                raise CassetteError(
                    f"{self.path}:{lineno}: not a cassette entry (values nest too deeply)"
                ) from None
            except ValueError:  # an integer longer than Python converts (4,300 digits)
                raise CassetteError(
                    f"{self.path}:{lineno}: not a cassette entry (a number longer than 4,300 digits)"
                ) from None

    def __len__(self) -> int:
        return sum(len(v) for v in self._entries.values())

    def take(self, request_hash: str, describe: str = "") -> Completion:
        """The next recorded completion for ``request_hash`` (replay mode)."""
        with self._lock:
            n = self._seen[request_hash]
            entries = self._entries.get(request_hash, [])
            if n >= len(entries):
                what = f" ({describe})" if describe else ""
                if entries:
                    raise CassetteMiss(
                        f"{self.path}: request {request_hash}{what} was recorded {len(entries)} "
                        f"time(s) but is asked for a time {n + 1}; record the cassette again"
                    )
                raise CassetteMiss(
                    f"{self.path}: request {request_hash}{what} is not in the cassette (the "
                    "run differs from the recorded one); record the cassette again"
                )
            self._seen[request_hash] = n + 1
            return Completion.from_dict(entries[n]["completion"])

    def record(
        self, request_hash: str, completion: Completion, *, provider: str, model: str, request: Any
    ) -> None:
        with self._lock:
            n = self._seen[request_hash]
            self._seen[request_hash] = n + 1
            entry = {
                "v": FORMAT_VERSION,
                "hash": request_hash,
                "occurrence": n,
                "provider": provider,
                "model": model,
                "request": request,
                "completion": completion.to_dict(),
                "at": time.time(),
            }
            self._entries[request_hash].append(entry)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, ensure_ascii=False) + "\n")  # key order kept: exact replay


_cassette: ContextVar[Cassette | None] = ContextVar("assay_llm_cassette", default=None)


@contextmanager
def use_cassette(cassette: Cassette | None) -> Iterator[Cassette | None]:
    """Route every model call made inside the block through ``cassette`` (models built
    with their own ``cassette=`` option keep theirs)."""
    token = _cassette.set(cassette)
    try:
        yield cassette
    finally:
        _cassette.reset(token)


def current_cassette() -> Cassette | None:
    return _cassette.get()
