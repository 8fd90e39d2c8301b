"""A stand-in vision judge for the ui-screenshots example, served by the fake LLM server.

It reads the screenshot out of the request exactly as a provider would receive it (an
OpenAI ``image_url`` data URL or an Anthropic ``image`` block), measures it with Pillow
and answers the rubric's JSON:

- ``text_overflow``: the card is the box drawn in the example's border colour; any ink
  (a pixel that is neither near-white nor the border) right of or below that box is text
  that ran out of it;
- ``contrast``: the WCAG 2 contrast ratio between the card's background (its most common
  colour) and the text colour (of the colours covering at least 12 pixels inside the
  card, the one that contrasts most), mapped to the rubric's levels (7:1 → 4, 4.5:1 → 3,
  3:1 → 2, else 1).

No image, or no card in it, answers "unknown". Every measurement is kept in
``measurements`` for the tests.
"""

from __future__ import annotations

import base64
import io
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

BORDER = (0x25, 0x63, 0xEB)  # examples/ui-screenshots/ui_agents.py BORDER


def luminance(rgb: tuple[int, int, int]) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def images_of(request: dict[str, Any]) -> list[bytes]:
    """The images of a chat-completions or Messages request, decoded."""
    out = []
    for message in request.get("messages", []):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                out.append(base64.b64decode(url.split(";base64,", 1)[1]))
            elif part.get("type") == "image" and part["source"]["type"] == "base64":
                out.append(base64.b64decode(part["source"]["data"]))
    return out


@dataclass
class Measurement:
    size: tuple[int, int]
    card: tuple[int, int, int, int]
    ink_outside: int
    contrast: float


@dataclass
class VisionJudge:
    """The handler: ``FakeLLMServer(handler=VisionJudge())``."""

    measurements: list[Measurement] = field(default_factory=list)

    def measure(self, png: bytes) -> Measurement | None:
        from PIL import Image

        img = Image.open(io.BytesIO(png)).convert("RGB")
        w, h = img.size
        px = img.load()
        border = [(x, y) for y in range(h) for x in range(w) if px[x, y] == BORDER]
        if not border:
            return None
        x0, x1 = min(x for x, _ in border), max(x for x, _ in border)
        y0, y1 = min(y for _, y in border), max(y for _, y in border)

        def ink(c: tuple[int, int, int]) -> bool:
            return min(c) < 235 and c != BORDER

        outside = sum(1 for y in range(h) for x in range(w) if (x > x1 or y > y1) and ink(px[x, y]))
        inside = Counter(px[x, y] for y in range(y0 + 4, y1 - 3) for x in range(x0 + 4, x1 - 3))
        background = inside.most_common(1)[0][0]
        colours = [c for c, n in inside.items() if n >= 12 and c != background]
        ratio = max((contrast_ratio(c, background) for c in colours), default=1.0)
        found = Measurement((w, h), (x0, y0, x1, y1), outside, round(ratio, 2))
        self.measurements.append(found)
        return found

    def __call__(self, request: dict[str, Any]) -> str:
        images = images_of(request)
        m = self.measure(images[0]) if images else None
        if m is None:
            unknown = {"score": "unknown", "reason": "no card to look at"}
            dims = {"text_overflow": unknown, "contrast": unknown}
            return json.dumps({"dimensions": dims, "verdict": "unknown", "reason": "no screenshot of a card"})
        overflow = "fail" if m.ink_outside else "pass"
        level = 4 if m.contrast >= 7 else 3 if m.contrast >= 4.5 else 2 if m.contrast >= 3 else 1
        dims = {
            "text_overflow": {"score": overflow, "reason": f"{m.ink_outside} text pixels outside the card"},
            "contrast": {"score": level, "reason": f"text contrast {m.contrast}:1"},
        }
        verdict = "pass" if overflow == "pass" and level >= 2 else "fail"
        reason = f"overflow {overflow}, contrast {level}"
        return json.dumps({"dimensions": dims, "verdict": verdict, "reason": reason})
