"""The shell commands of README.md and docs/*.md, as the docs test runs them.

**What counts as a command.** Every line of a fenced code block whose info string is
``bash``, ``sh``, ``shell`` or ``console``, in page order:

- in a ``console`` block only lines starting with ``$ `` are commands (the rest is
  their output);
- a line ending in ``\\`` continues on the next line, and so does a synopsis whose next
  line starts with ``[``;
- ``#`` at the start of a line or after a space (outside quotes) starts a comment;
  blank and comment-only lines are not commands. ``# exit N`` in a line's comment is the
  exit status the docs promise for its (last) command; without it the status must be 0;
- ``A && B``, ``A ; B`` and ``A & B`` are separate commands, run in order;
- ``[...]`` (or ``[...]...``) after a space is an optional part of a synopsis: the
  command runs without it, and every ``--option`` it names must be an option of the
  command;
- leading ``NAME=VALUE`` words set environment variables for that command only, and
  ``> FILE`` sends its standard output to a file.

Commands of other blocks are not run; a line starting with ``assay`` outside a shell block
is an error of the page (``test_commands.py`` says so), so no command hides from the test.

**Markers.** HTML comments right before a block (invisible on GitHub) tell the test what
a reader is assumed to have, or what cannot run here; each applies to the next block:

- ``<!-- docs-test: skip: REASON -->``: none of the block's commands run;
- ``<!-- docs-test: skip `TEXT`: REASON -->``: the commands containing TEXT do not run;
- ``<!-- docs-test: file NAME -->``: the block's text is written to NAME in the page's folder;
- ``<!-- docs-test: link NAME=SOURCE -->``: NAME is a symbolic link to SOURCE (relative to the
  repository, or ``$ASSAY_TAU2_DATA/...``): files the reader has from elsewhere;
- ``<!-- docs-test: copy NAME=SOURCE -->``: NAME is a copy of SOURCE (for what the
  commands change, such as a suite folder);
- ``<!-- docs-test: run ID=FIXTURE -->``: the store holds the shared run FIXTURE (``careful``,
  ``flaky`` or ``hasty``) under the id ID;
- ``<!-- docs-test: env NAME=VALUE -->``: a variable the reader's shell has;
- ``<!-- docs-test: stdin TEXT -->``: what the reader types (``\\n`` for Enter) into the
  block's interactive commands.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^(?P<fence>```+|~~~+)(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.S | re.M)
MARKER = re.compile(r"<!--\s*docs-test:\s*(?P<body>.*?)\s*-->", re.S)
EXIT = re.compile(r"\bexit (\d+)\b")
OPTIONAL = re.compile(r"(?<=\s)\[[^\[\]]*\](?:\.\.\.)?")
SEPARATORS = {"&&", ";", "&"}


class DocsTestError(ValueError):
    """A page the test cannot read: a bad marker or a command it has no rule for."""


def pages() -> list[Path]:
    """README.md and every docs/*.md page (new pages are picked up as they appear)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


@dataclass
class Marker:
    kind: str  # skip, file, link, copy, run, env, stdin
    arg: str = ""  # skip: the TEXT to match ("" = whole block); link/run/env: NAME=VALUE; file: NAME
    reason: str = ""  # skip: why


@dataclass
class Block:
    page: Path
    line: int  # line of the opening fence
    lang: str
    text: str
    markers: list[Marker] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{rel(self.page)}:{self.line}"


@dataclass
class Command:
    block: Block
    line: int  # line in the page where the command starts
    source: str  # the command as the docs write it (comment and optional groups removed)
    argv: list[str]  # words, variables not yet expanded
    env: dict[str, str] = field(default_factory=dict)  # NAME=VALUE prefixes
    stdout_to: str | None = None
    expect: int = 0
    optional_options: list[str] = field(default_factory=list)  # options named in [...] groups
    chained: bool = False  # after `&&`: runs only when the one before succeeded

    @property
    def where(self) -> str:
        return f"{rel(self.block.page)}:{self.line}"

    @property
    def program(self) -> str:
        return self.argv[0]

    def skip_reason(self) -> str | None:
        for m in self.block.markers:
            if m.kind == "skip" and (not m.arg or m.arg in self.source):
                return m.reason
        return None


def parse_marker(body: str, where: str) -> Marker:
    kind, _, rest = body.partition(" ")
    kind = kind.rstrip(":")
    rest = rest.strip()
    if kind == "skip":
        m = re.fullmatch(r"(?:`(?P<text>[^`]+)`\s*)?:?\s*(?P<reason>.+)", rest, re.S)
        if m is None or not m.group("reason").strip():
            raise DocsTestError(f"{where}: docs-test skip needs a reason: <!-- docs-test: skip: WHY -->")
        return Marker("skip", m.group("text") or "", " ".join(m.group("reason").split()))
    if kind == "file" and rest and " " not in rest:
        return Marker("file", rest)
    if kind in ("link", "copy", "run", "env") and "=" in rest and " " not in rest:
        return Marker(kind, rest)
    if kind == "stdin" and rest:
        return Marker("stdin", rest)
    raise DocsTestError(
        f"{where}: unknown docs-test marker {body!r} (skip, file NAME, link NAME=SOURCE, copy NAME=SOURCE, "
        "run ID=FIXTURE, env NAME=VALUE, stdin TEXT)"
    )


def blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, with the markers written right before it."""
    text = page.read_text(encoding="utf-8")
    found: list[Block] = []
    last_end = 0
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        between = text[last_end : m.start()]
        markers: list[Marker] = []
        # markers count when only blank lines and other markers separate them from the fence
        for mm in MARKER.finditer(between):
            if not MARKER.sub("", between[mm.end() :]).strip():
                markers.append(parse_marker(mm.group("body"), f"{rel(page)}:{line}"))
        lang = m.group("info").strip().split(" ")[0].lower()
        found.append(Block(page, line, lang, m.group("body"), markers))
        last_end = m.end()
    return found


def strip_comment(line: str) -> tuple[str, str]:
    """(code, comment) of one line: ``#`` outside quotes at the start or after whitespace."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1 :].strip()
    return line.rstrip(), ""


def logical_lines(block: Block) -> list[tuple[int, str, str]]:
    """(page line, code, comment) with continuations joined and comments split off."""
    out: list[tuple[int, str, str]] = []
    pending: list[str] = []
    comments: list[str] = []
    start = 0
    for offset, raw in enumerate(block.text.splitlines()):
        if block.lang == "console" and not pending:  # `$ command`, then its output
            if not raw.startswith("$ "):
                continue
            raw = raw[2:]
        code, comment = strip_comment(raw)
        if not pending and code.strip().startswith("[") and out:  # a synopsis wrapped on two lines
            line, previous, previous_comment = out.pop()
            joined_comment = " ".join(filter(None, [previous_comment, comment]))
            out.append((line, f"{previous} {code.strip()}", joined_comment))
            continue
        if not pending:
            start = block.line + 1 + offset
        if comment:
            comments.append(comment)
        if code.endswith("\\"):
            pending.append(code[:-1].strip())
            continue
        pending.append(code.strip())
        joined = " ".join(p for p in pending if p)
        if joined:
            out.append((start, joined, " ".join(comments)))
        pending, comments = [], []
    if pending and any(pending):
        raise DocsTestError(f"{block.where}: the block ends with a line continuation")
    return out


def split_words(code: str, where: str) -> list[list[str]]:
    """Words of a command line, split into commands at ``&&``, ``;`` and ``&``."""
    lex = shlex.shlex(code, posix=True, punctuation_chars=";&|<>")
    lex.whitespace_split = True
    try:
        words = list(lex)
    except ValueError as exc:
        raise DocsTestError(f"{where}: cannot split {code!r}: {exc}") from None
    commands: list[list[str]] = [[]]
    for w in words:
        if w in SEPARATORS:
            commands.append([])
        elif w in ("|", "||", "<", ">>"):
            raise DocsTestError(f"{where}: {w!r} is not supported in a docs command: {code!r}")
        else:
            commands[-1].append(w)
    return [c for c in commands if c]


def commands(block: Block) -> list[Command]:
    """The commands of a shell block, in order."""
    if block.lang not in SHELL:
        return []
    found: list[Command] = []
    for line, code, comment in logical_lines(block):
        where = f"{rel(block.page)}:{line}"
        optional = " ".join(OPTIONAL.findall(code))
        while OPTIONAL.search(code):
            code = OPTIONAL.sub("", code)
        code = " ".join(code.split())
        groups = split_words(code, where)
        separators = re.findall(r"&&|;|(?<!&)&(?!&)", code)
        for i, words in enumerate(groups):
            env: dict[str, str] = {}
            while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
                name, _, value = words.pop(0).partition("=")
                env[name] = value
            stdout_to = None
            if ">" in words:
                at = words.index(">")
                if at != len(words) - 2:
                    raise DocsTestError(f"{where}: '>' must be followed by one file at the end")
                stdout_to = words[at + 1]
                words = words[:at]
            if not words:
                raise DocsTestError(f"{where}: an empty command in {code!r}")
            found.append(
                Command(
                    block=block,
                    line=line,
                    source=shlex.join(words) if len(groups) > 1 else code,
                    argv=words,
                    env=env,
                    stdout_to=stdout_to,
                    expect=0,
                    optional_options=re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", optional),
                    chained=i > 0 and separators[i - 1] == "&&",
                )
            )
        exit_code = EXIT.search(comment)
        if exit_code:
            found[-1].expect = int(exit_code.group(1))
    return found


def page_commands(page: Path) -> list[Command]:
    return [c for b in blocks(page) for c in commands(b)]


def stray_commands(page: Path) -> list[str]:
    """Lines that look like assay commands in blocks that are not shell blocks."""
    found = []
    for b in blocks(page):
        if b.lang in SHELL or b.lang in ("python", "yaml", "json", "toml"):
            continue
        for offset, raw in enumerate(b.text.splitlines()):
            if re.match(r"\s*(\$\s+)?assay\s", raw):
                found.append(f"{rel(page)}:{b.line + 1 + offset}: {raw.strip()}")
    return found
