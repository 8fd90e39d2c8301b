"""A tau2 tool's description and argument texts read from its docstring, as tau2 reads
them (``docstring_parser`` in its automatic mode)."""

from __future__ import annotations

import inspect
import re

_SECTIONS = (
    "Arguments",
    "Args",
    "Parameters",
    "Params",
    "Raises",
    "Exceptions",
    "Except",
    "Attributes",
    "Example",
    "Examples",
    "Returns",
    "Yields",
)
_TITLES = re.compile("^(" + "|".join(f"({t})" for t in _SECTIONS) + "):[ \t\r\f\v]*$", flags=re.M)
_PARAM_SECTIONS = {"Arguments", "Args", "Parameters", "Params", "Attributes"}
_SINGULAR_OR_MULTIPLE = {"Returns", "Yields"}
_SINGULAR = {"Example", "Examples"}


def _split_description(desc_chunk: str) -> tuple[str, str]:
    parts = desc_chunk.split("\n", 1)
    short = parts[0]
    long = parts[1].strip() if len(parts) > 1 else ""
    return short, long


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The tool description and per-argument texts tau2 derives from a docstring
    (``docstring_parser.parse`` in its automatic mode: the Google reading when it finds
    sections, else the plain one; short and long descriptions joined by a blank line)."""
    text = inspect.cleandoc(doc or "")
    if not text:
        return "", {}
    params: dict[str, str] = {}
    metas = 0
    match = _TITLES.search(text)
    if match:
        desc_chunk, meta_chunk = text[: match.start()], text[match.start() :]
        titles = list(_TITLES.finditer(meta_chunk))
        bounds = [
            (m.end(), titles[i + 1].start() if i + 1 < len(titles) else len(meta_chunk))
            for i, m in enumerate(titles)
        ]
        for m, (start, end) in zip(titles, bounds, strict=True):
            title = m.group(1)
            details = meta_chunk[start:end]
            unknown = re.search(r"\n\S", details)
            if unknown is not None:
                details = details[: unknown.start()]
            chunk = details.strip("\n")
            if not chunk:
                continue
            if title in _SINGULAR or title in _SINGULAR_OR_MULTIPLE:
                metas += 1
                continue
            indent = re.match(r"^\s*", chunk).group()  # type: ignore[union-attr]
            starts = list(re.finditer("^" + indent + r"(?=\S)", chunk, flags=re.M))
            for i, item in enumerate(starts):
                part = chunk[item.end() : starts[i + 1].start() if i + 1 < len(starts) else len(chunk)].strip(
                    "\n"
                )
                metas += 1
                if title not in _PARAM_SECTIONS or ":" not in part:
                    continue
                before, desc = part.split(":", 1)
                if desc:
                    desc = desc[1:] if desc[0] == " " else desc
                    if "\n" in desc:
                        first, rest = desc.split("\n", 1)
                        desc = first + "\n" + inspect.cleandoc(rest)
                    desc = desc.strip("\n")
                typed = re.match(r"\s*(.+?)\s*\(\s*(.*[^\s]+)\s*\)", before)
                params[typed.group(1) if typed else before] = desc
    if not match or metas == 0:  # the plain reading: description up to a line starting with ':'
        colon = re.search("^:", text, flags=re.M)
        desc_chunk = text[: colon.start()] if colon else text
    short, long = _split_description(desc_chunk)
    return (f"{short}\n\n{long}" if long else short), params


__all__ = ["parse_docstring"]
