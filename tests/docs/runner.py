"""Runs a page's commands (see :mod:`tests.docs.extract`) the way a reader would, in a
folder of its own, and records what happened to each.

**How each command is carried out**, by its program:

- ``assay ...``: in this process through ``assay.cli.main()`` (as ``tests.support.cli``
  does), in the page's folder, with the page's environment; ``assay view`` is started as
  a process, asked for ``/`` on 127.0.0.1 until it answers, and stopped;
- ``python FILE.py``: in this process (``runpy``); ``pytest ARGS`` (the reader's own tests)
  and the repository's ``scripts/...``: in processes of their own;
- ``export NAME=VALUE`` sets the variable for the page's later commands; ``cd DIR``
  changes the page's folder;
- not run, checked: ``pip install`` must name this project with extras that
  ``pyproject.toml`` declares; the development loop (``pytest`` alone, ``ruff``, ``mypy``,
  ``lint-imports``, ``.ci/run``, ``python3 -m venv``, ``. VENV/bin/activate``) must be
  installed and declared (they are the test suite and CI themselves);
- any other program is an error of the page: give it a rule here or a skip marker.

**The page's folder and environment.** Each page runs in a fresh folder (with a copy of
the repository's ``examples/`` when its commands name it: the docs are written from a
checkout), with its own store (``ASSAY_STORE=.assay/assay.db`` there) and response cache.
Model endpoints are the loopback fake server: ``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL``
and keys are set, and loopback URLs in commands are rewritten: ``http://localhost:PORT/v1``
(or 127.0.0.1) to the fake model endpoint, other loopback URLs to a loopback OTLP
collector; ``--port N`` of ``assay view`` becomes a free port.

**Placeholders** (whole words of ``assay`` commands): ``RUN_ID`` and ``RUN`` are the run
the page's commands made last (the shared run ``careful`` if none); ``RUN_A``, ``RUN_B``,
``RUN_C`` are the shared runs ``careful``, ``flaky`` and ``hasty``; ``SUITE`` is
``retail``, ``SPEC`` ``builtin:retail-flaky`` and ``DIR`` ``suites/retail`` (a copy of the
retail suite, given by a copy marker); ``BADCASE_ID`` and ``ID`` are the badcase id
(``bc-...``) and ``TASK_ID`` the candidate task (``.review/TASK_ID.yaml``) that the
newest output of the page's commands holding one printed. The shared runs are ``assay run
retail --agent builtin:retail-NAME -k 1 --run-id NAME``, made once per session and
imported into a page's store when it needs them. Any other upper-case word that is not
a variable of the page or a run of its store is an error, so a new placeholder cannot go
unnoticed.

**Identical runs are shared.** ``assay run retail`` with built-in agents and plain options
(:data:`PLAIN_RUN_OPTIONS`) gives the same run on every page, so it runs once per session;
a later page giving the identical command gets that run imported into its store and the
same output and exit status (reported as ``shared``).
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .execution import (
    Result,
    assay_in_process,
    check_dev_tool,
    check_pip,
    environment,
    free_port,
    in_process_of_its_own,
    python_in_process,
    serve_and_ask,
)
from .extract import ROOT, Block, Command, DocsTestError, blocks, commands

FIXTURE_RUNS = ("careful", "flaky", "hasty")
RUN_PLACEHOLDERS = {"RUN_A": "careful", "RUN_B": "flaky", "RUN_C": "hasty"}
WORD_PLACEHOLDERS = {"SUITE": "retail", "SPEC": "builtin:retail-flaky", "DIR": "suites/retail"}
#: placeholders of what an earlier command printed: the newest output that holds one
PRINTED_PLACEHOLDERS = {
    "BADCASE_ID": r"\b(bc-[0-9a-f]{10})\b",
    "ID": r"\b(bc-[0-9a-f]{10})\b",
    "TASK_ID": r"\.review/([\w.-]+)\.yaml",
}
LATEST_PLACEHOLDERS = ("RUN_ID", "RUN")
LOOPBACK_URL = re.compile(r"https?://(?:localhost|127\.0\.0\.1):\d+(?P<path>/[^\s'\"]*)?")
#: ``assay run retail`` options after which a run depends on nothing but its words
PLAIN_RUN_OPTIONS = {"--agent", "-a", "-k", "--trials", "--seed", "--executor", "--run-id", "--json"}


@dataclass
class Outcome:
    where: str
    source: str
    status: str  # run, shared, checked, skipped
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Shared:
    """What the session shares between pages: endpoints, shared runs, identical runs."""

    root: Path  # a scratch folder of the session
    openai_url: str
    anthropic_url: str
    otlp_url: str
    tau2: Path | None  # $ASSAY_TAU2_DATA (holding data/ and simulations/)
    files: dict[str, Path] = field(default_factory=dict)  # run id -> its exported file
    #: identical commands -> (their result, the store and id of the run they made)
    memo: dict[tuple[str, ...], tuple[Result, str, str]] = field(default_factory=dict)

    def fixture_file(self, name: str) -> Path:
        if f"fixture:{name}" not in self.files:
            store = str(self.root / "fixtures.db")
            args = ["run", "retail", "--agent", f"builtin:retail-{name}", "-k", "1", "--run-id", name]
            res = assay_in_process(args, {"ASSAY_STORE": store})
            if res.code != 0:
                raise AssertionError(f"the shared run {name} failed: {res.stderr}")
            self.files[f"fixture:{name}"] = self.export(store, name)
        return self.files[f"fixture:{name}"]

    def export(self, store: str, run_id: str) -> Path:
        path = self.root / f"{len(self.files)}-{run_id}.jsonl.gz"
        res = assay_in_process(["export", run_id, "-o", str(path), "--store", store], {})
        if res.code != 0:
            raise AssertionError(f"exporting {run_id} failed: {res.stderr}")
        return path


class PageRun:
    """One page's commands, in order, in a folder of its own."""

    def __init__(self, page: Path, folder: Path, shared: Shared, echo: bool = False) -> None:
        self.page, self.shared, self.echo = page, shared, echo
        self.blocks = blocks(page)
        self.work = folder / "work"
        self.work.mkdir(parents=True)
        if any("examples/" in c.source for b in self.blocks for c in commands(b)):
            shutil.copytree(ROOT / "examples", self.work / "examples")
        self.cwd = self.work
        self.store = self.work / ".assay" / "assay.db"
        self.env = {
            "ASSAY_STORE": str(self.store),
            "ASSAY_CACHE_DIR": str(self.work / ".assay" / "cache"),
            "OPENAI_BASE_URL": shared.openai_url,
            "ANTHROPIC_BASE_URL": shared.anthropic_url,
            "OPENAI_API_KEY": "sk-docs-test",
            "ANTHROPIC_API_KEY": "sk-ant-docs-test",
            "COLUMNS": "120",
        }
        self.outcomes: list[Outcome] = []
        self.made: list[str] = []  # runs the page's commands made, in order
        self.outputs: list[str] = []  # what the page's assay commands printed, in order
        self.venvs: set[str] = set()
        self.stdin = ""

    # -- the page -------------------------------------------------------------------------
    def run(self) -> list[Outcome]:
        for block in self.blocks:  # files the reader wrote are there from the start
            for m in block.markers:
                if m.kind == "file":
                    (self.work / m.arg).parent.mkdir(parents=True, exist_ok=True)
                    (self.work / m.arg).write_text(block.text, encoding="utf-8")
        for block in self.blocks:
            self.prepare(block)
            for cmd in commands(block):  # a command that fails stops the page (it raises)
                reason = cmd.skip_reason()
                if reason is not None:
                    self.outcomes.append(Outcome(cmd.where, cmd.source, "skipped", reason))
                    continue
                started = time.perf_counter()
                status, detail = self.execute(cmd)
                self.outcomes.append(
                    Outcome(cmd.where, cmd.source, status, detail, time.perf_counter() - started)
                )
                if self.echo:
                    o = self.outcomes[-1]
                    print(f"{o.seconds:6.1f}s {o.status:8} {o.where}: {o.source}  [{o.detail}]", flush=True)
        return self.outcomes

    def prepare(self, block: Block) -> None:
        """The block's markers: links, shared runs, variables and what the reader types."""
        self.stdin = ""
        for m in block.markers:
            name, _, value = m.arg.partition("=")
            if m.kind in ("link", "copy") and not (self.cwd / name).exists():
                source, target = self.source_path(value, block), self.cwd / name
                target.parent.mkdir(parents=True, exist_ok=True)
                if m.kind == "link":
                    target.symlink_to(source, target_is_directory=source.is_dir())
                elif source.is_dir():
                    shutil.copytree(source, target)
                else:
                    shutil.copyfile(source, target)
            elif m.kind == "run":
                self.ensure_run(name, value)
            elif m.kind == "env":
                self.env[name] = value
            elif m.kind == "stdin":
                self.stdin = m.arg.encode().decode("unicode_escape")

    def source_path(self, value: str, block: Block) -> Path:
        if value.startswith("$ASSAY_TAU2_DATA"):
            if self.shared.tau2 is None:
                raise AssertionError(f"{block.where}: needs tau2-bench's data: set ASSAY_TAU2_DATA")
            source = self.shared.tau2 / value.removeprefix("$ASSAY_TAU2_DATA").lstrip("/")
        else:
            source = ROOT / value
        if not source.exists():
            raise AssertionError(f"{block.where}: link source {source} does not exist")
        return source

    # -- runs in the page's store ---------------------------------------------------------
    def runs(self) -> list[str]:
        from assay.store import Store

        if not self.store.exists():
            return []
        with environment(self.env):
            return [r["run_id"] for r in Store(str(self.store)).list_runs()]

    def ensure_run(self, run_id: str, fixture: str) -> None:
        """The shared run ``fixture`` is in the page's store as ``run_id``."""
        if fixture not in FIXTURE_RUNS:
            raise DocsTestError(f"{self.page.name}: no shared run {fixture!r} (one of {FIXTURE_RUNS})")
        if run_id not in self.runs():
            self.import_run(self.shared.fixture_file(fixture), run_id)

    def import_run(self, file: Path, run_id: str | None = None) -> None:
        res = assay_in_process(
            ["import", "run", str(file), *(["--run-id", run_id] if run_id else [])], self.env
        )
        if res.code != 0:
            raise AssertionError(f"importing {file.name} failed: {res.stderr}")

    # -- words ----------------------------------------------------------------------------
    def expand(self, word: str, cmd: Command) -> str:
        """``$VAR`` from the page's environment; loopback URLs to the session's stand-ins."""

        def var(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(2)
            if name not in self.env and name not in os.environ:
                raise DocsTestError(f"{cmd.where}: ${name} is not set (an env marker gives it)")
            return self.env.get(name, os.environ.get(name, ""))

        def url(m: re.Match[str]) -> str:
            path = (m.group("path") or "").rstrip("/")
            if path.endswith("/v1"):
                return self.shared.openai_url
            if path:
                raise DocsTestError(f"{cmd.where}: no loopback stand-in for {m.group(0)}")
            return self.shared.otlp_url

        return LOOPBACK_URL.sub(url, re.sub(r"\$\{(\w+)\}|\$(\w+)", var, word))

    def assay_args(self, cmd: Command) -> list[str]:
        out = []
        for a in (self.expand(w, cmd) for w in cmd.argv[1:]):
            if a in LATEST_PLACEHOLDERS:
                if not self.made:
                    self.ensure_run("careful", "careful")
                a = self.made[-1] if self.made else "careful"
            elif a in WORD_PLACEHOLDERS:
                a = WORD_PLACEHOLDERS[a]
            elif a in RUN_PLACEHOLDERS:
                a = RUN_PLACEHOLDERS[a]
                self.ensure_run(a, a)
            elif a in PRINTED_PLACEHOLDERS:
                a = self.printed(a, cmd)
            elif re.fullmatch(r"[A-Z][A-Z0-9_]+", a) and a not in self.env and a not in self.runs():
                raise DocsTestError(f"{cmd.where}: unknown placeholder {a} in `{cmd.source}`")
            out.append(a)
        return out

    def printed(self, placeholder: str, cmd: Command) -> str:
        for output in reversed(self.outputs):
            found = re.search(PRINTED_PLACEHOLDERS[placeholder], output)
            if found:
                return found.group(1)
        raise DocsTestError(f"{cmd.where}: no earlier command of the page printed a {placeholder}")

    # -- commands -------------------------------------------------------------------------
    def execute(self, cmd: Command) -> tuple[str, str]:
        prog = cmd.program
        if cmd.optional_options:
            self.check_options(cmd)
        if prog == "assay":
            return self.run_assay(cmd)
        if prog == "pip":
            return "checked", check_pip(cmd.argv)
        if prog == "export":
            for word in cmd.argv[1:]:
                name, eq, value = word.partition("=")
                if not eq:
                    raise DocsTestError(f"{cmd.where}: `export {word}` sets nothing")
                self.env[name] = self.expand(value, cmd)
            return "run", "the page's environment"
        if prog == "cd":
            target = (self.cwd / self.expand(cmd.argv[1], cmd)).resolve()
            if not target.is_dir():
                raise AssertionError(f"{cmd.where}: `cd {cmd.argv[1]}`: no such folder")
            self.cwd = target
            return "run", ""
        env = {**self.env, **{k: self.expand(v, cmd) for k, v in cmd.env.items()}}
        if prog in ("python", "python3") and cmd.argv[1:2] and cmd.argv[1].endswith(".py"):
            res = python_in_process(self.cwd / cmd.argv[1], cmd.argv[2:], env, self.cwd, self.work)
            return self.finish(cmd, res)
        if prog == "pytest" and len(cmd.argv) > 1:  # the reader's own tests (alone: the suite's)
            argv = [sys.executable, "-m", "pytest", *cmd.argv[1:], "-p", "no:cacheprovider"]
            return self.finish(cmd, in_process_of_its_own(argv, self.cwd, env), "in a process of its own")
        if prog.startswith("scripts/") and (ROOT / prog).is_file():
            res = in_process_of_its_own([str(ROOT / prog), *cmd.argv[1:]], self.cwd, env)
            return self.finish(cmd, res, "in a process of its own")
        return "checked", check_dev_tool(cmd, self.venvs)

    def finish(self, cmd: Command, res: Result, detail: str = "") -> tuple[str, str]:
        """The exit status the docs promise, and no traceback; stdout to ``> FILE``."""
        if res.code != cmd.expect:
            tail = "\n".join((res.stderr.strip() or res.stdout.strip()).splitlines()[-15:])
            hint = " (a failure the docs promise is marked `# exit N`)" if cmd.expect == 0 else ""
            raise AssertionError(
                f"{cmd.where}: `{cmd.source}` exited {res.code}, the docs say {cmd.expect}{hint}\n{tail}"
            )
        if "Traceback (most recent call last)" in res.stderr:
            raise AssertionError(f"{cmd.where}: `{cmd.source}` printed a traceback:\n{res.stderr[-3000:]}")
        if cmd.stdout_to:
            (self.cwd / cmd.stdout_to).write_text(res.stdout, encoding="utf-8")
        return "run", detail or res.last_line()

    def check_options(self, cmd: Command) -> None:
        """Every ``--option`` of a synopsis' optional groups is an option of the command."""
        import typer

        from assay.cli import app

        command = typer.main.get_command(app)
        ctx = typer.Context(command)
        for word in cmd.argv[1:]:
            if not hasattr(command, "resolve_command"):  # not a group (typer's own click classes)
                break
            try:  # resolve_command: assay's top-level group loads a command's module only here
                _, sub, _ = command.resolve_command(ctx, [word])
            except Exception:  # not a subcommand (click's UsageError)
                break
            command, ctx = sub, typer.Context(sub, parent=ctx)
        names = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        unknown = [o for o in cmd.optional_options if o not in names]
        if unknown:
            raise AssertionError(f"{cmd.where}: `{cmd.source}`: {unknown} are not options of the command")

    def run_assay(self, cmd: Command) -> tuple[str, str]:
        args = self.assay_args(cmd)
        env = {**self.env, **{k: self.expand(v, cmd) for k, v in cmd.env.items()}}
        if args[:1] == ["view"]:
            return self.run_view(cmd, args, env)
        key = self.memo_key(args)
        if key is not None and key in self.shared.memo:
            res, store, run_id = self.shared.memo[key]
            if run_id not in self.runs():
                if f"memo:{run_id}" not in self.shared.files:
                    self.shared.files[f"memo:{run_id}"] = self.shared.export(store, run_id)
                self.import_run(self.shared.files[f"memo:{run_id}"])
                self.outputs.append(res.stdout + res.stderr)
                self.finish(cmd, res)
                self.made.append(run_id)
                return "shared", f"run {run_id}, made by the identical command of an earlier page"
        before = set(self.runs())
        # PYTHONPATH=... before a command: an interpreter reads it when it starts, so here
        # it goes on sys.path
        extra = [str(self.cwd / p) for p in cmd.env.get("PYTHONPATH", "").split(os.pathsep) if p]
        importlib.invalidate_caches()  # files the page just wrote are importable
        with environment({}, self.cwd, extra, purge=self.work):
            res = assay_in_process(args, env, self.stdin)
        self.outputs.append(res.stdout + res.stderr)
        status = self.finish(cmd, res)
        made = sorted(set(self.runs()) - before)
        self.made += made
        if key is not None and res.code == 0 and len(made) == 1:
            self.shared.memo[key] = (res, str(self.store), made[0])
        return status

    @staticmethod
    def memo_key(args: list[str]) -> tuple[str, ...] | None:
        """``args`` if they make a run that depends on nothing but them, else None."""
        if args[:2] != ["run", "retail"]:
            return None
        rest = args[2:]
        for i, a in enumerate(rest):
            if a.startswith("-"):
                plain = a in PLAIN_RUN_OPTIONS
            else:  # a value: of a plain option, and a built-in agent
                option = rest[i - 1] if i else ""
                plain = option in PLAIN_RUN_OPTIONS - {"--json"}
                plain = plain and (option not in ("--agent", "-a") or a.startswith("builtin:"))
            if not plain:
                return None
        return tuple(args)

    def run_view(self, cmd: Command, args: list[str], env: dict[str, str]) -> tuple[str, str]:
        """``assay view``: started on a free port of 127.0.0.1, asked for ``/``, stopped."""
        if "--host" in args:
            raise DocsTestError(f"{cmd.where}: the test serves on 127.0.0.1 only; no --host")
        port = str(free_port())
        if "--port" in args:
            args[args.index("--port") + 1] = port
        else:
            args += ["--port", port]
        url = f"http://127.0.0.1:{port}/"
        try:
            serve_and_ask([sys.executable, "-m", "assay", *args], self.cwd, env, url)
        except AssertionError as exc:
            raise AssertionError(f"{cmd.where}: `{cmd.source}` {exc}") from None
        return "run", f"answered on {url}"
