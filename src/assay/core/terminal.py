"""Text shown on a terminal: what a transcript, a label or a model's answer holds is not
the terminal's to obey.

A model's reply, a tool's result or a hand-written label may carry escape sequences
(``\\x1b[2J`` clears the screen, OSC 52 writes the clipboard), a carriage return that
hides what came before, lone surrogates that cannot be written out, or the
bidirectional overrides that make text read otherwise than it is.
:func:`printable` writes those as Python escapes; :func:`terminal_json` writes them as
JSON escapes in a JSON document (which then reads back to the same data).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

__all__ = ["printable", "shown", "terminal_json"]

#: Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069).
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _unprintable(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Cs") or c in _BIDI


def printable(text: str, width: int | None = None) -> str:
    """``text`` safe to show on a terminal: control characters other than newline and tab
    (escape sequences, bell, carriage return...), lone surrogates and the bidirectional
    overrides that reorder what is shown written as Python escapes (``\\x1b``); cut to
    ``width`` characters (then "...") when given."""
    if width is not None and len(text) > width:
        text = text[:width] + "..."
    if text.isprintable():  # the common case: nothing to escape (newline and tab aside)
        return text
    return "".join(c if c in "\n\t" or not _unprintable(c) else ascii(c)[1:-1] for c in text)


def shown(value: Any, width: int = 40) -> str:
    """A value of the user's, quoted, cut short and printable, for a message."""
    return printable(repr(value), width)


#: What JSON (``ensure_ascii=False``) leaves raw and a terminal may act on: DEL, the C1
#: controls, lone surrogates and the bidirectional controls. JSON itself escapes U+0000-U+001F.
_RAW_IN_JSON = re.compile("[\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


def terminal_json(text: str) -> str:
    """A JSON document (as ``json.dumps(..., ensure_ascii=False)`` wrote it) with the
    characters a terminal may act on written as ``\\uXXXX`` escapes: the same JSON value,
    safe to print. Outside strings JSON has no such characters, so only strings change."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
