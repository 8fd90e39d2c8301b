"""Seeded fuzzing of suite folders through ``assay validate`` and ``assay run``.

A *case* is a base suite (the built-in retail suite, or a small suite with its own
templates module and task files) changed by a few seeded mutations: bytes, lines,
values, keys, whole files. Each case goes through ``assay validate`` and, when that
passes, ``assay run -k 1``, in this process (the CLI's own ``main``), and ends in one
of these outcomes:

- ``ok`` (exit 0) or ``problems`` (exit 2: located problems, the documented outcome of
  bad input); ``harness`` (exit 3, reported apart);
- ``traceback`` (an exception escaped, or a traceback was printed), ``exit N`` (an
  undocumented exit code), ``hang`` (a step over the time limit), or
  ``validate ok, run crashed`` — the failures the fuzz exists to find.

``python scripts/fuzz_suites.py`` runs thousands; ``tests/suites/test_fuzz.py`` a few
hundred.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

RETAIL = Path(__file__).parents[2] / "src" / "assay" / "domains" / "retail" / "suite"
DOCUMENTED = {0, 2, 3}  # 0 ok, 2 bad input, 3 harness failure (1 is the gate's)
FAILURES = ("traceback", "hang", "undocumented exit", "validate ok, run crashed")

SMALL_SUITE = """\
name: fuzz-small
version: 1
domain: retail
canary: "fuzz canary 2f6b1c0e-0b7e-4a1e-9d3c-5c1f0c0d9e11"
templates: templates.py
defaults:
  trials: 1
  agent: builtin:retail-careful
  limits: {max_turns: 20, timeout_s: 30}
  as_of: "2025-06-15T12:00:00"
  timezone: America/New_York
task_files: [tasks/*.yaml]
tasks:
  - id: refund
    stratum: normal
    template: refund_in_window
    params: {identity: email}
    instances: 2
  - id: status-local
    stratum: edge
    template: local_status
    tags: [local]
"""

SMALL_TEMPLATES = """\
from assay.domains.retail.templates.orders import order_status
from assay.suites.templates import template


@template("local_status")
def local_status(ctx):
    task = order_status(ctx)
    task["tags"] = sorted(set(task.get("tags", [])) | {"local"})
    return task
"""

SMALL_TASKS = """\
tasks:
  - id: static-cancel
    stratum: normal
    as_of: "2025-06-15T12:00:00"
    initial_state:
      seed: 0
      records:
        users:
          - user_id: omar_haddad_0007
            first_name: Omar
            last_name: Haddad
            email: omar.haddad@example.org
            zip: "07030"
            address: 5 River Road, Hoboken, NJ 07030
        orders:
          - order_id: "#W0054321"
            user_id: omar_haddad_0007
            items: [{product_id: P000044, name: Office Chair, price: 249.0, quantity: 1}]
            total: 249.0
            status: processing
            created_at: "2025-06-13"
            delivered_at: null
            shipping_address: 5 River Road, Hoboken, NJ 07030
            refund_id: null
    user:
      opening: Hi, I'd like some help with an order.
      goal: "Please cancel order #W0054321, I found a better chair."
      known: {email: omar.haddad@example.org, order_id: "#W0054321"}
    graders:
      - state: gold
      - actions:
          forbidden: [cancel_pending_order, refund_delivered_order, update_order_address]
          confirm_before_write: true
      - communicate: [processing]
    reference:
      actions:
        - {name: find_user_id_by_email, args: {email: omar.haddad@example.org}}
        - {name: get_user_details, args: {user_id: omar_haddad_0007}}
        - {name: get_order_details, args: {order_id: "#W0054321"}}
"""


def small_suite() -> dict[str, bytes]:
    return {
        "suite.yaml": SMALL_SUITE.encode(),
        "templates.py": SMALL_TEMPLATES.encode(),
        "tasks/static.yaml": SMALL_TASKS.encode(),
    }


def retail_suite() -> dict[str, bytes]:
    files = {}
    for path in sorted(RETAIL.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(RETAIL).as_posix()] = path.read_bytes()
    return files


BASES: dict[str, Callable[[], dict[str, bytes]]] = {"small": small_suite, "retail": retail_suite}

# -- mutations -------------------------------------------------------------------------

#: Values that have broken loaders before (or could): types, ranges, dates, YAML tags,
#: markup, emoji codes, surrogates, paths, aliases, nesting.
NASTY_VALUES = [
    "",
    "~",
    "[]",
    "{}",
    "-1",
    "0",
    "1001",
    "99999",
    "100000000000000000000",
    "9223372036854775808",
    "-9223372036854775809",
    ".inf",
    "-.inf",
    ".nan",
    "2025-13-45",
    "2025-02-30 25:61:00",
    "0000-00-00",
    "true",
    "'[/]'",
    "'[bold]x[/bold]'",
    '"a:100:b"',
    '"\\ud800"',
    '"x\\udfff"',
    '"\\x00"',
    '"\\u202e"',
    "!!binary aGVsbG8=",
    "!!python/object:os.system ls",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "&anchor x",
    "*anchor",
    "*undefined",
    "'../../etc/passwd'",
    "/etc/passwd",
    "'tasks'",
    "x #W123",
    "'x' # comment",
    "[" * 300 + "]" * 300,
    "{? [a]: b}",
    "{[1, 2]: x}",
    "12:30:00",
    "0x10",
    "0o17",
    "1_000",
    "'" + "a" * 5000 + "'",
    "Mars/Olympus_Mons",
    "-",
    "|",
    ">",
    "%TAG",
    "'\t'",
]
NASTY_BYTES = [
    b"\x00",
    b"\xff",
    b"\xfe\xff",
    b"\xc3",
    "💯".encode(),
    b"\t",
    b"\r",
    b"'",
    b'"',
    b"[",
    b"]",
    b"{",
    b"}",
    b":",
    b"- ",
    b"#",
    b"&a ",
    b"*a ",
    b"!!",
    b"\\",
    b"%",
    b"@",
    b"`",
    b"\x1b[31m",
    b"\xef\xbb\xbf",
]
KEYS = [
    "id",
    "template",
    "instances",
    "params",
    "tasks",
    "task_files",
    "templates",
    "domain",
    "defaults",
    "seed",
    "data_seed",
    "as_of",
    "timezone",
    "graders",
    "kind",
    "user",
    "goal",
    "unknown_field",
    "<<",
    "? x",
]
TEMPLATE_MODULES = [
    "raise SystemExit(7)\n",
    "import sys\nsys.exit(0)\n",
    "raise RuntimeError('boom')\n",
    "1/0\n",
    "def broken(:\n",
    "import this_module_does_not_exist\n",
    "from assay.suites.templates import template\n\n@template('')\ndef t(ctx):\n    return {}\n",
    "from assay.suites.templates import template\n\n@template('local_status')\n"
    "def t(ctx):\n    raise SystemExit(3)\n",
    "from assay.suites.templates import template\n\n@template('local_status')\n"
    "def t(ctx):\n    return {'id': 'x', 'user': 5}\n",
    "from assay.suites.templates import template\n\n@template('local_status')\n"
    "def t(ctx):\n    return {'user': {'goal': '\\ud800'}}\n",
    "from assay.suites.templates import template\n\n@template('local_status')\n"
    "def t(ctx):\n    return None\n",
    b"\xff\xfe not python".decode("latin-1"),
]
ALIAS_BOMB = (
    "bomb:\n"
    "  a: &a [x, x, x, x, x, x, x, x, x]\n"
    "  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    "  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
    "  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
    "  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
)
EXTRA_TASKS = [
    "  - {id: refund-1, template: refund_in_window}\n",  # clashes with refund's instances
    "  - {id: 'a[/]b', template: refund_in_window}\n",
    "  - {id: 'x:100:y', template: refund_in_window}\n",
    "  - {id: '', template: refund_in_window}\n",
    "  - {id: e, template: ''}\n",
    "  - {id: f, template: nope}\n",
    "  - {id: g, template: refund_in_window, instances: 100001}\n",
    "  - {id: h, template: refund_in_window, instances: 1000}\n",
    "  - {id: i, initial_state: {seed: 99999999999999999999}}\n",
    "  - {id: j, as_of: 2025-13-45}\n",
    "  - {id: k, timezone: Mars/Olympus}\n",
    '  - {id: l, user: {goal: "\\ud800"}}\n',
    "  - {id: m, graders: [{kind: nope}]}\n",
    "  - {id: n, graders: [{kind: state, params: {expect: [{table: x}]}}]}\n",
    "  - {id: o, limits: {timeout_s: .nan}}\n",
    "  - {id: p, limits: {timeout_s: 1e308}}\n",
    "  - {id: q, difficulty: 9}\n",
    "  - {id: r, split: nope}\n",
    "  - {id: s, template: refund_in_window, params: {identity: 5}}\n",
    "  - !!python/object:os.system {id: t}\n",
    "  - {id: u\u202ev, template: refund_in_window}\n",
]
SUITE_HEADERS = [
    "task_files: ['/etc/*']\n",
    "task_files: ['../*']\n",
    "task_files: ['tasks']\n",
    "task_files: ['*']\n",
    "task_files: ['**/*.yaml', '**/*.yaml']\n",
    "task_files: 5\n",
    "templates: ../outside.py\n",
    "templates: /etc/passwd\n",
    "templates: tasks\n",
    "templates: ''\n",
    "domain: nope\n",
    "defaults: {data_seed: 99999999999999999999}\n",
    "defaults: {trials: 0}\n",
    "defaults: {agent: 'python:os:system'}\n",
    "defaults: {agent: 'builtin:[/]'}\n",
    "defaults: {limits: {timeout_s: 0.001}}\n",
    "name: '[/]'\n",
    "name: 'a:100:'\n",
    "version: '[bold]'\n",
]


@dataclass
class Case:
    """One fuzz case: its seed, the base suite and the mutations applied (to redo it)."""

    seed: int
    base: str
    mutations: list[str] = field(default_factory=list)
    run_seed: int | None = None


def _yaml_files(files: dict[str, bytes]) -> list[str]:
    return sorted(k for k in files if k.endswith((".yaml", ".yml", ".json", ".jsonl")))


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def mutate(files: dict[str, bytes], rng: random.Random) -> str:
    """Apply one random mutation to ``files`` (in place); return its description."""
    names = _yaml_files(files)
    name = rng.choice(names) if names else "suite.yaml"
    data = files.get(name, b"")
    kind = rng.randrange(14)
    if kind == 0 and data:  # insert nasty bytes
        at = rng.randrange(len(data) + 1)
        piece = rng.choice(NASTY_BYTES)
        files[name] = data[:at] + piece + data[at:]
        return f"{name}: insert {piece!r} at {at}"
    if kind == 1 and data:  # delete a span
        at = rng.randrange(len(data))
        n = rng.choice([1, 1, 2, 5, 20])
        files[name] = data[:at] + data[at + n :]
        return f"{name}: delete {n} bytes at {at}"
    lines = _lines(data)
    if kind == 2 and lines:  # duplicate, delete or swap lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        op = rng.choice(["dup", "del", "swap"])
        if op == "dup":
            lines.insert(i, lines[i])
        elif op == "del":
            del lines[i]
        else:
            lines[i], lines[j] = lines[j], lines[i]
        files[name] = b"\n".join(lines)
        return f"{name}: {op} line {i + 1}"
    if kind == 3 and lines:  # indentation
        i = rng.randrange(len(lines))
        delta = rng.choice([-4, -2, -1, 1, 2, 4])
        lines[i] = lines[i][-delta:] if delta < 0 else b" " * delta + lines[i]
        files[name] = b"\n".join(lines)
        return f"{name}: indent line {i + 1} by {delta}"
    if kind in (4, 5, 6) and lines:  # replace a value
        candidates = [i for i, line in enumerate(lines) if b": " in line]
        if candidates:
            i = rng.choice(candidates)
            head = lines[i].split(b": ", 1)[0]
            value = rng.choice(NASTY_VALUES)
            lines[i] = head + b": " + value.encode("utf-8", "surrogatepass")
            files[name] = b"\n".join(lines)
            return f"{name}: line {i + 1} value -> {value[:40]!r}"
    if kind == 7 and lines:  # rename a key
        candidates = [i for i, line in enumerate(lines) if b": " in line or line.rstrip().endswith(b":")]
        if candidates:
            i = rng.choice(candidates)
            line = lines[i]
            indent = line[: len(line) - len(line.lstrip())]
            rest = line.lstrip()
            bullet = b"- " if rest.startswith(b"- ") else b""
            rest = rest[len(bullet) :]
            _, sep, value = rest.partition(b":")
            key = rng.choice(KEYS)
            lines[i] = indent + bullet + key.encode() + sep + value
            files[name] = b"\n".join(lines)
            return f"{name}: line {i + 1} key -> {key!r}"
    if kind == 8:  # a task that breaks something
        extra = rng.choice(EXTRA_TASKS)
        suite = files.get("suite.yaml", b"")
        marker = b"\ntasks:\n"
        if marker in suite:
            files["suite.yaml"] = suite.replace(marker, marker + extra.encode("utf-8", "surrogatepass"), 1)
            return f"suite.yaml: add task {extra.strip()!r}"
    if kind == 9:  # a suite header field
        header = rng.choice(SUITE_HEADERS)
        files["suite.yaml"] = header.encode() + files.get("suite.yaml", b"")
        return f"suite.yaml: header {header.strip()!r}"
    if kind == 10:  # the templates module
        module = rng.choice(TEMPLATE_MODULES)
        files["templates.py"] = module.encode("utf-8", "surrogatepass")
        if not files.get("suite.yaml", b"").startswith(b"templates:"):
            files["suite.yaml"] = b"templates: templates.py\n" + files.get("suite.yaml", b"")
        return f"templates.py := {module[:50]!r}"
    if kind == 11:  # odd files in the folder
        odd = rng.choice(["dir", "latin1", "empty", "bomb", "nul", "jsonl", "json", "deep", "big"])
        if odd == "dir":
            files["tasks/folder.yaml/"] = b""
        elif odd == "latin1":
            files["tasks/latin1.yaml"] = "tasks:\n  - {id: caf\xe9}\n".encode("latin-1")
        elif odd == "empty":
            files["tasks/empty.yaml"] = b""
        elif odd == "bomb":
            files["tasks/bomb.yaml"] = ALIAS_BOMB.encode()
        elif odd == "nul":
            files["tasks/nul.yaml"] = b"tasks:\n  - {id: a\x00b}\n"
        elif odd == "jsonl":
            files["tasks/more.jsonl"] = rng.choice(
                [b'{"id": "j1"}\n{"id": "j1"}\n', b'{"id": "\\ud800"}\n', b"{bad json\n", b"\xff\n", b"[1]\n"]
            )
        elif odd == "json":
            files["tasks/more.json"] = rng.choice([b'{"tasks": [{"id": "js"}]}', b"{", b'"x"', b"[[[[["])
        elif odd == "deep":
            files["tasks/deep.yaml"] = b"tasks: " + b"[" * 5000 + b"]" * 5000 + b"\n"
        else:
            files["tasks/big.yaml"] = b"tasks:\n" + b"".join(
                f"  - {{id: big-{n}, template: refund_in_window}}\n".encode() for n in range(1000)
            )
        return f"add file ({odd})"
    if kind == 12 and data:  # truncate
        at = rng.randrange(len(data))
        files[name] = data[:at]
        return f"{name}: truncate at {at}"
    if kind == 13 and name in files:  # delete a file
        del files[name]
        return f"delete {name}"
    return "no-op"


def make_case(seed: int, base: str) -> tuple[Case, dict[str, bytes]]:
    rng = random.Random(seed)
    files = BASES[base]()
    case = Case(seed, base)
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        case.mutations.append(mutate(files, rng))
    case.run_seed = rng.choice([None, None, None, 0, 7, 2**63 - 1, 2**63, -1])
    return case, files


def write(files: dict[str, bytes], root: Path) -> None:
    for rel, data in files.items():
        path = root / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


# -- running a case --------------------------------------------------------------------


class _Hang(BaseException):
    pass


#: A step may use ``limit_s`` seconds of CPU, and this many times that of wall-clock
#: time (the machine may be shared with other work).
WALL_FACTOR = 6


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`_Hang` after ``seconds`` of CPU time (SIGPROF) or ``WALL_FACTOR``
    times that of wall-clock time (SIGALRM)."""

    def stop(signum: int, frame: object) -> None:
        raise _Hang

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGALRM, signal.SIGPROF)}
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * WALL_FACTOR)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass
class Step:
    outcome: str  # ok | problems | harness | traceback | hang | undocumented exit
    code: int | None
    seconds: float
    output: str
    cpu_seconds: float = 0.0


def invoke(args: list[str], limit_s: float) -> Step:
    """``assay ARGS`` in this process, with stdout/stderr captured."""
    from assay.cli import main

    buffer = io.StringIO()
    argv = sys.argv
    sys.argv = ["assay", *args]
    started, cpu = time.monotonic(), time.process_time()
    code: int | None = None
    crashed = ""
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer), _time_limit(limit_s):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except _Hang:
        return Step("hang", None, time.monotonic() - started, buffer.getvalue(), time.process_time() - cpu)
    except BaseException:
        crashed = traceback.format_exc()
    finally:
        sys.argv = argv
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu
    output = buffer.getvalue() + crashed
    if crashed or "Traceback (most recent call last)" in output:
        return Step("traceback", code, seconds, output, cpu)
    if code not in DOCUMENTED:
        return Step("undocumented exit", code, seconds, output, cpu)
    return Step({0: "ok", 2: "problems", 3: "harness"}[code], code, seconds, output, cpu)


@dataclass
class Result:
    case: Case
    outcome: str
    validate: Step
    run: Step | None = None

    @property
    def failed(self) -> bool:
        return self.outcome in FAILURES


def run_case(case: Case, files: dict[str, bytes], workdir: Path, limit_s: float = 10.0) -> Result:
    folder = workdir / f"case-{case.base}-{case.seed}"
    if folder.exists():
        shutil.rmtree(folder)
    suite = folder / "suite"
    suite.mkdir(parents=True)
    write(files, suite)
    try:
        validate = invoke(["validate", str(suite)], limit_s)
        if validate.outcome != "ok":
            return Result(case, validate.outcome, validate)
        args = ["run", str(suite), "-k", "1", "-j", "8", "--store", str(folder / "s.db"), "--json"]
        if case.run_seed is not None:
            args += ["--seed", str(case.run_seed)]
        run = invoke(args, limit_s)
        if run.outcome in ("traceback", "undocumented exit", "hang"):
            return Result(
                case, "validate ok, run crashed" if run.outcome != "hang" else "hang", validate, run
            )
        return Result(case, f"run {run.outcome}", validate, run)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fuzz(
    n: int, bases: list[str], seed: int = 0, limit_s: float = 10.0, workdir: Path | None = None
) -> Iterator[Result]:
    """``n`` cases per base suite, seeds ``seed``, ``seed + 1``..."""
    tmp = workdir or Path(tempfile.mkdtemp(prefix="assay-fuzz-"))
    os.environ.setdefault("ASSAY_CACHE_DIR", str(tmp / "cache"))
    try:
        for i in range(n):
            for base in bases:
                case, files = make_case(seed + i, base)
                yield run_case(case, files, tmp, limit_s)
    finally:
        if workdir is None:
            shutil.rmtree(tmp, ignore_errors=True)


def tally(results: list[Result]) -> Counter[str]:
    return Counter(r.outcome for r in results)
