"""Runs a page's commands (see :mod:`tests.docs.extract`) the way a reader would, in a
scratch folder of its own, and records what happened to each.

**How each command is carried out**, by its program:

- ``assay ...``: in this process through ``assay.cli.main()`` (as ``tests.support.cli``
  does), in the page's folder, with the page's environment; ``assay view`` is started as a
  process, checked to answer on 127.0.0.1 and stopped;
- ``pip install``: not executed; what it installs must be this project (``.``, ``-e .``,
  ``assay``) with extras that ``pyproject.toml`` declares;
- ``export NAME=VALUE``: sets the variable for the page's later commands; ``cd DIR``
  changes the page's folder;
- ``python FILE.py``: in this process (``runpy``) with the page's environment;
- the development loop (``pytest``, ``ruff``, ``mypy``, ``lint-imports``, ``.ci/run``,
  ``python3 -m venv``, ``. VENV/bin/activate``): checked to be installed and declared, not
  run (they are the test suite and CI themselves);
- any other program is an error of the page: give it a rule here or a skip marker.

**The page's folder and environment.** Each page runs in a fresh folder holding a copy of
the repository's ``examples/`` (the docs are written from a checkout), with its own store
(``ASSAY_STORE=.assay/assay.db`` there) and response cache. Model endpoints are the
loopback fake server: ``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL`` and keys are set, and
loopback URLs in commands are rewritten: ``http://localhost:PORT/v1`` (or 127.0.0.1) to the
fake model endpoint, other loopback URLs to a loopback OTLP collector; ``--port N`` of
``assay view`` becomes a free port.

**Placeholders** (whole words of ``assay`` commands): ``RUN_ID`` and ``RUN`` are the newest
run of the page's store (the shared run ``careful`` if the page made none); ``RUN_A``,
``RUN_B``, ``RUN_C`` are the shared runs ``careful``, ``flaky`` and ``hasty``. The shared
runs are ``assay run retail --agent builtin:retail-NAME -k 1 --run-id NAME``, made once per
session and imported into a page's store when it needs them. An unknown upper-case word is
an error, so a new placeholder cannot go unnoticed.

**Shared runs of identical commands.** ``assay run retail`` with only built-in agents and
plain options gives the same run on every page, so it runs once per session; a page that
gives the identical command later gets that run imported into its store and the same
output and exit status (reported as ``shared``).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import re
import runpy
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .extract import ROOT, Block, Command, DocsTestError, blocks, commands

FIXTURE_RUNS = ("careful", "flaky", "hasty")
RUN_PLACEHOLDERS = {"RUN_A": "careful", "RUN_B": "flaky", "RUN_C": "hasty"}
LATEST_PLACEHOLDERS = ("RUN_ID", "RUN")
DEV_TOOLS = {"pytest": "pytest", "ruff": "ruff", "mypy": "mypy", "lint-imports": "import-linter"}
LOOPBACK_URL = re.compile(r"https?://(?:localhost|127\.0\.0\.1):\d+(?P<path>/[^\s'\"]*)?")
#: ``assay run`` options that make a run depend on nothing but its words (see "shared runs")
PLAIN_RUN_OPTIONS = {"--agent", "-a", "-k", "--trials", "--seed", "--executor", "--run-id", "--json"}


@dataclass
class Outcome:
    where: str
    source: str
    status: str  # run, shared, checked, skipped
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


@dataclass
class Shared:
    """What the session shares between pages: endpoints, shared runs, identical runs."""

    root: Path  # a scratch folder of the session
    openai_url: str
    anthropic_url: str
    otlp_url: str
    tau2: Path | None
    exports: dict[str, Path] = field(default_factory=dict)  # fixture or memo key -> run file
    memo: dict[tuple[str, ...], tuple[Result, str, str]] = field(default_factory=dict)  # -> result, store, id

    def fixture_file(self, name: str) -> Path:
        if name not in self.exports:
            store = self.root / "fixtures.db"
            res = assay_in_process(
                ["run", "retail", "--agent", f"builtin:retail-{name}", "-k", "1", "--run-id", name],
                {"ASSAY_STORE": str(store)},
            )
            if res.code != 0:
                raise AssertionError(f"shared run {name} failed: {res.stderr}")
            self.exports[name] = self.export(str(store), name)
        return self.exports[name]

    def export(self, store: str, run_id: str) -> Path:
        path = self.root / f"{len(self.exports)}-{run_id}.jsonl.gz"
        res = assay_in_process(["export", run_id, "-o", str(path), "--store", store], {})
        if res.code != 0:
            raise AssertionError(f"export of {run_id} failed: {res.stderr}")
        return path


@contextlib.contextmanager
def environment(
    env: dict[str, str], cwd: Path | None = None, path: list[str] | None = None, purge: Path | None = None
) -> Iterator[None]:
    """``os.environ`` updated by ``env``, the working folder ``cwd`` and ``path`` first on
    ``sys.path``, for the duration; modules imported from under ``purge`` are forgotten
    afterwards (a page's ``my_agent.py`` is not another page's)."""
    saved_env, saved_cwd, saved_path = dict(os.environ), os.getcwd(), list(sys.path)
    saved_modules = set(sys.modules)
    os.environ.update(env)
    sys.path[:0] = path or []
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path
        if purge is not None:
            for name in set(sys.modules) - saved_modules:
                file = getattr(sys.modules[name], "__file__", None) or ""
                if file.startswith(str(purge)):
                    del sys.modules[name]


def assay_in_process(args: list[str], env: dict[str, str], stdin: str = "") -> Result:
    """``assay ARGS`` through ``main()`` in this process, as ``tests.support.cli`` does."""
    from assay.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv, saved_stdin = sys.argv, sys.stdin
    sys.argv, sys.stdin = ["assay", *args], io.StringIO(stdin)
    code = 0
    try:
        with environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv, sys.stdin = argv, saved_stdin
    return Result(code, out.getvalue(), err.getvalue())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def declared_extras() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(data["project"]["optional-dependencies"])


def declared_test_deps() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {re.split(r"[<>=\[ ]", d)[0].lower() for d in data["project"]["optional-dependencies"]["test"]}


def check_pip(argv: list[str]) -> str:
    """``pip install`` of this project with declared extras (not executed)."""
    if argv[1:2] != ["install"]:
        raise AssertionError(f"only `pip install` is understood, not {' '.join(argv)}")
    targets = [a for a in argv[2:] if not a.startswith("-")]
    extras = declared_extras()
    if not targets:
        raise AssertionError("`pip install` names nothing to install")
    for t in targets:
        m = re.fullmatch(r"(?P<what>\.|assay)(?:\[(?P<extras>[^\]]*)\])?", t)
        if m is None:
            raise AssertionError(f"`pip install {t}`: not this project (., -e . or assay[...])")
        named = [e.strip() for e in (m.group("extras") or "").split(",") if e.strip()]
        missing = [e for e in named if e not in extras]
        if missing:
            raise AssertionError(f"`pip install {t}`: no extra {missing} in pyproject.toml ({sorted(extras)})")
    return "extras declared in pyproject.toml"


def check_dev_tool(cmd: Command, venvs: set[str]) -> str:
    """A development-loop program: installed and declared, not run."""
    prog = cmd.program
    if prog in DEV_TOOLS:
        found = shutil.which(prog) or (Path(sys.executable).parent / prog).exists()
        if not found:
            raise AssertionError(f"`{prog}` is not installed")
        if DEV_TOOLS[prog] not in declared_test_deps():
            raise AssertionError(f"`{prog}` ({DEV_TOOLS[prog]}) is not in the test extra of pyproject.toml")
        return f"{prog} installed, in the test extra"
    if prog == ".ci/run":
        path = ROOT / ".ci" / "run"
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise AssertionError(".ci/run is not an executable file of the repository")
        return "executable file of the repository"
    if prog in ("python", "python3") and cmd.argv[1:3] == ["-m", "venv"]:
        venvs.add(cmd.argv[3])
        return "python -m venv available" if shutil.which(prog) else ""
    if prog == "." and len(cmd.argv) == 2:
        target = cmd.argv[1]
        if not any(target == f"{v}/bin/activate" for v in venvs):
            raise AssertionError(f"`. {target}`: not the activate script of a venv made before")
        return "activates the venv made before"
    raise DocsTestError(f"{cmd.where}: no rule to run `{prog}`: add one to tests/docs/runner.py or a skip marker")


class PageRun:
    """One page's commands, in order, in a folder of its own."""

    def __init__(self, page: Path, folder: Path, shared: Shared, echo: bool = False) -> None:
        self.page, self.shared, self.echo = page, shared, echo
        self.work = folder / "work"
        self.work.mkdir(parents=True)
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
        self.venvs: set[str] = set()
        self.stdin = ""

    # -- markers ------------------------------------------------------------------------
    def prepare(self, block: Block) -> None:
        self.stdin = ""
        for m in block.markers:
            name, _, value = m.arg.partition("=")
            if m.kind == "file":
                target = self.cwd / m.arg
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(block.text, encoding="utf-8")
            elif m.kind == "link":
                source = self.source_path(value, block)
                link = self.cwd / name
                link.parent.mkdir(parents=True, exist_ok=True)
                if not link.exists():
                    link.symlink_to(source, target_is_directory=source.is_dir())
            elif m.kind == "run":
                self.ensure_run(name, value or name)
            elif m.kind == "env":
                self.env[name] = value
            elif m.kind == "stdin":
                self.stdin = m.arg.encode().decode("unicode_escape")

    def source_path(self, value: str, block: Block) -> Path:
        if value.startswith("$ASSAY_TAU2_DATA"):
            if self.shared.tau2 is None:
                raise AssertionError(f"{block.where}: needs tau2 data: set ASSAY_TAU2_DATA (e.g. /work/shared/tau2)")
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

    def latest_run(self) -> str:
        from assay.store import Store

        if not self.runs():
            self.ensure_run("careful", "careful")
        with environment(self.env):
            return Store(str(self.store)).resolve("latest")

    def ensure_run(self, run_id: str, fixture: str) -> None:
        if fixture not in FIXTURE_RUNS:
            raise DocsTestError(f"{self.page.name}: no shared run {fixture!r} (one of {FIXTURE_RUNS})")
        if run_id in self.runs():
            return
        file = self.shared.fixture_file(fixture)
        res = assay_in_process(["import", "run", str(file), "--run-id", run_id], self.env)
        if res.code != 0:
            raise AssertionError(f"importing the shared run {fixture} as {run_id} failed: {res.stderr}")

    # -- words ----------------------------------------------------------------------------
    def expand(self, word: str, cmd: Command) -> str:
        def var(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(2)
            if name not in self.env and name not in os.environ:
                raise DocsTestError(f"{cmd.where}: ${name} is not set (an env marker gives it)")
            return self.env.get(name, os.environ.get(name, ""))

        word = re.sub(r"\$\{(\w+)\}|\$(\w+)", var, word)

        def url(m: re.Match[str]) -> str:
            path = (m.group("path") or "").rstrip("/")
            if path.endswith("/v1"):
                return self.shared.openai_url
            if path:
                raise DocsTestError(f"{cmd.where}: no loopback stand-in for {m.group(0)}")
            return self.shared.otlp_url

        return LOOPBACK_URL.sub(url, word)

    def assay_args(self, cmd: Command) -> list[str]:
        args = [self.expand(w, cmd) for w in cmd.argv[1:]]
        out = []
        for a in args:
            if a in LATEST_PLACEHOLDERS:
                a = self.latest_run()
            elif a in RUN_PLACEHOLDERS:
                self.ensure_run(a, RUN_PLACEHOLDERS[a])
            elif re.fullmatch(r"[A-Z][A-Z0-9_]{1,}", a):
                raise DocsTestError(f"{cmd.where}: unknown placeholder {a} in `{cmd.source}`")
            out.append(a)
        return out

    # -- running ----------------------------------------------------------------------------
    def run(self) -> list[Outcome]:
        for block in blocks(self.page):
            self.prepare(block)
            cmds = commands(block)
            failed = False
            for cmd in cmds:
                reason = cmd.skip_reason()
                if reason is not None:
                    self.outcomes.append(Outcome(cmd.where, cmd.source, "skipped", reason))
                    continue
                if failed and cmd.chained:
                    continue
                started = time.perf_counter()
                status, detail = self.execute(cmd)
                self.outcomes.append(
                    Outcome(cmd.where, cmd.source, status, detail, time.perf_counter() - started)
                )
                if self.echo:
                    o = self.outcomes[-1]
                    print(f"{o.seconds:6.1f}s {o.status:8} {o.where}: {o.source} {o.detail}", flush=True)
        return self.outcomes

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
            return "run", "environment of the page"
        if prog == "cd":
            target = (self.cwd / self.expand(cmd.argv[1], cmd)).resolve()
            if not target.is_dir():
                raise AssertionError(f"{cmd.where}: `cd {cmd.argv[1]}`: no such folder")
            self.cwd = target
            return "run", ""
        if prog in ("python", "python3") and cmd.argv[1:2] and cmd.argv[1].endswith(".py"):
            return self.run_python(cmd)
        return "checked", check_dev_tool(cmd, self.venvs)

    def check_options(self, cmd: Command) -> None:
        """Every ``--option`` of a synopsis' optional groups is an option of the command."""
        import typer

        from assay.cli import app

        command = typer.main.get_command(app)
        for word in cmd.argv[1:]:
            sub = getattr(command, "commands", {}).get(word)
            if sub is None:
                break
            command = sub
        names = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        unknown = [o for o in cmd.optional_options if o not in names]
        if unknown:
            raise AssertionError(f"{cmd.where}: `{cmd.source}`: {unknown} not options of the command")

    def run_python(self, cmd: Command) -> tuple[str, str]:
        script = self.cwd / cmd.argv[1]
        argv, code = sys.argv, 0
        sys.argv = [str(script), *cmd.argv[2:]]
        err = io.StringIO()
        try:
            with environment({**self.env, **cmd.env}, self.cwd, purge=self.work), contextlib.redirect_stdout(
                io.StringIO()
            ):
                with contextlib.redirect_stderr(err):
                    runpy.run_path(str(script), run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.argv = argv
        self.check_code(cmd, Result(code, "", err.getvalue()))
        return "run", ""

    def check_code(self, cmd: Command, res: Result) -> None:
        if res.code != cmd.expect:
            tail = "\n".join((res.stderr.strip() or res.stdout.strip()).splitlines()[-15:])
            raise AssertionError(
                f"{cmd.where}: `{cmd.source}` exited {res.code}, the docs say {cmd.expect}"
                + (" (mark a promised failure with `# exit N`)" if cmd.expect == 0 else "")
                + f"\n{tail}"
            )
        if "Traceback (most recent call last)" in res.stderr:
            raise AssertionError(f"{cmd.where}: `{cmd.source}` printed a traceback:\n{res.stderr[-3000:]}")

    def run_assay(self, cmd: Command) -> tuple[str, str]:
        args = self.assay_args(cmd)
        env = {**self.env, **{k: self.expand(v, cmd) for k, v in cmd.env.items()}}
        if args[:1] == ["view"]:
            return self.run_server(cmd, args, env)
        key = self.memo_key(args)
        if key is not None and key in self.shared.memo:
            res, store, run_id = self.shared.memo[key]
            if run_id not in self.runs():
                memo_file = self.shared.exports.get(f"memo:{run_id}") or self.shared.export(store, run_id)
                self.shared.exports[f"memo:{run_id}"] = memo_file
                imported = assay_in_process(["import", "run", str(memo_file)], self.env)
                if imported.code != 0:
                    raise AssertionError(f"importing the shared run {run_id} failed: {imported.stderr}")
                self.check_code(cmd, res)
                self.write_stdout(cmd, res)
                return "shared", f"run {run_id}, made by the identical command of an earlier page"
        before = set(self.runs()) if key is not None else set()
        # PYTHONPATH=... given to the command: the interpreter reads it at start, so here it
        # goes on sys.path
        extra = [str(self.cwd / p) for p in cmd.env.get("PYTHONPATH", "").split(os.pathsep) if p]
        importlib.invalidate_caches()  # files the page just wrote are importable
        with environment({}, self.cwd, extra, purge=self.work):
            res = assay_in_process(args, env, self.stdin)
        self.check_code(cmd, res)
        self.write_stdout(cmd, res)
        if key is not None and res.code == 0:
            made = sorted(set(self.runs()) - before)
            if len(made) == 1:
                self.shared.memo[key] = (res, str(self.store), made[0])
        return "run", ""

    def write_stdout(self, cmd: Command, res: Result) -> None:
        if cmd.stdout_to:
            (self.cwd / cmd.stdout_to).write_text(res.stdout, encoding="utf-8")

    @staticmethod
    def memo_key(args: list[str]) -> tuple[str, ...] | None:
        if args[:2] != ["run", "retail"]:
            return None
        rest = args[2:]
        for i, a in enumerate(rest):
            if a.startswith("-"):
                if a not in PLAIN_RUN_OPTIONS:
                    return None
            elif i == 0 or rest[i - 1] not in PLAIN_RUN_OPTIONS - {"--json"}:
                return None
            elif rest[i - 1] in ("--agent", "-a") and not a.startswith("builtin:"):
                return None
        return tuple(args)

    def run_server(self, cmd: Command, args: list[str], env: dict[str, str]) -> tuple[str, str]:
        """``assay view``: started, asked for ``/`` on 127.0.0.1 until it answers, stopped."""
        port = free_port()
        if "--port" in args:
            args[args.index("--port") + 1] = str(port)
        else:
            args += ["--port", str(port)]
        if "--host" in args:
            raise DocsTestError(f"{cmd.where}: the test binds 127.0.0.1 only; no --host")
        pythonpath = os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])
        proc = subprocess.Popen(
            [sys.executable, "-m", "assay", *args],
            cwd=self.cwd,
            env={**os.environ, **env, "PYTHONPATH": pythonpath},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise AssertionError(f"{cmd.where}: `{cmd.source}` exited {proc.returncode}: {proc.stderr.read()}")
                try:
                    with urllib.request.urlopen(url, timeout=5) as page:
                        if page.status == 200:
                            return "run", f"answered {url}"
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    time.sleep(0.2)
            raise AssertionError(f"{cmd.where}: `{cmd.source}` did not answer on {url} within 60 s")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
