"""Two agents for the ui-screenshots example: each answers a component request with the
HTML of a card whose copy is taken from the quoted strings of the request.

``careful`` wraps long words and uses near-black text on white; ``sloppy`` keeps every
line on one line (``white-space: nowrap``) in light grey, so long lines run out of the
card and the text has a contrast of about 2:1. Both draw the card with the same blue
border (the tests' stand-in vision judge finds the card by it).

    PYTHONPATH=examples/ui-screenshots assay run examples/ui-screenshots --agent python:ui_agents:careful
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

BORDER = "#2563eb"
QUOTED = re.compile(r"'([^']+)'")


def _copy(conversation: Sequence[Any]) -> list[str]:
    request = " ".join(conversation[-1].content.split())  # undo the YAML line folding
    return QUOTED.findall(request)


def _page(lines: list[str], text_css: str) -> str:
    title, *rest = lines or ["(nothing asked)"]
    body = "\n".join(f'    <p style="margin: 8px 0 0">{html.escape(line)}</p>' for line in rest)
    return f"""```html
<!doctype html>
<html>
<body style="margin: 0; padding: 16px; background: #ffffff; font: 16px/1.4 sans-serif">
  <div style="width: 280px; padding: 12px; border: 3px solid {BORDER}; background: #ffffff; {text_css}">
    <h2 style="margin: 0; font-size: 22px">{html.escape(title)}</h2>
{body}
  </div>
</body>
</html>
```"""


def careful(conversation: Sequence[Any]) -> str:
    return _page(_copy(conversation), "color: #1a1a1a; overflow-wrap: anywhere")


def sloppy(conversation: Sequence[Any]) -> str:
    return _page(_copy(conversation), "color: #b8b8b8; white-space: nowrap")
