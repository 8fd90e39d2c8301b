"""The ``assay`` Typer application, shared options and console helpers."""

from __future__ import annotations

import contextlib
import functools
import json
import signal
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperCommand, TyperGroup

from ..core.terminal import terminal_json
from .commands import COMMANDS


class LazyGroup(TyperGroup):
    """The top-level group: lists commands from :data:`COMMANDS` and imports a command's
    module only when that command runs (``assay --help`` stays fast)."""

    def list_commands(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        return list(COMMANDS)

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:  # type: ignore[override]
        """A light stand-in carrying the command's help line (for listings)."""
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        return TyperCommand(cmd_name, help=entry[1], short_help=entry[1])

    def resolve_command(self, ctx: typer.Context, args: list[str]) -> Any:  # type: ignore[override]
        name = args[0] if args else None
        if name in COMMANDS:
            return name, load_command(name), args[1:]
        return super().resolve_command(ctx, args)


@functools.cache
def load_command(name: str) -> Any:
    """Import the modules that define ``name`` and build its click command: that command
    only, once per process (building every registered command cost each in-process call
    as much as a small run)."""
    import importlib

    for module in COMMANDS[name][0]:
        importlib.import_module(f"assay.cli.{module}")
    command = _build(name)
    _tidy(command)
    return command


def _build(name: str) -> Any:
    """The click command (or group) registered on :data:`app` under ``name``."""
    from typer.main import get_command_from_info, get_command_name, get_group_from_info

    short, markup = app.pretty_exceptions_short, app.rich_markup_mode
    for info in app.registered_commands:
        if info.callback is not None and (info.name or get_command_name(info.callback.__name__)) == name:
            return get_command_from_info(info, pretty_exceptions_short=short, rich_markup_mode=markup)
    for group in app.registered_groups:
        if (group.name or (group.typer_instance and group.typer_instance.info.name)) == name:
            return get_group_from_info(
                group,
                pretty_exceptions_short=short,
                rich_markup_mode=markup,
                suggest_commands=app.suggest_commands,
            )
    return typer.main.get_group(app).commands[name]  # registered some other way


@functools.cache
def root_command() -> Any:
    """The top-level click group, built once per process (its subcommands are resolved
    by :class:`LazyGroup`, not read from it)."""
    command = typer.main.get_command(app)
    _tidy(command)
    return command


def _tidy(command: Any) -> None:
    """Boolean flags take no value: shown without a ``<bool>`` placeholder; a
    subcommand's line in its group's listing is its help's first paragraph, unwrapped."""
    help_option = command.get_help_option(typer.Context(command))  # built once, kept on the command
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        if sub.short_help is None and sub.help:
            sub.short_help = " ".join(sub.help.strip().split("\n\n")[0].split())
        _tidy(sub)


app = typer.Typer(
    name="assay",
    help="Evaluate AI agents: run suites k times, grade outcome and process, compare, gate.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=LazyGroup,
)
# No emoji codes (``suite.yaml:100:`` must not print as a 💯); every string that comes
# from input (ids, names, messages) is passed through ``rich.markup.escape``.
out = Console(emoji=False)
err = Console(stderr=True, emoji=False)


def version_callback(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"assay {version('assay')}")
        except PackageNotFoundError:
            typer.echo("assay (not installed)")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=version_callback, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Evaluate AI agents: run suites k times, grade outcome and process, compare, gate."""


StoreOpt = Annotated[
    str | None,
    typer.Option("--store", help="Store path or SQLAlchemy URL (default $ASSAY_STORE or .assay/assay.db)."),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON (see docs/json-output.md).")
]


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout; characters a terminal would act on (escape
    sequences, bidirectional overrides) and lone surrogates written as JSON escapes."""
    sys.stdout.write(terminal_json(json.dumps(data, indent=2, ensure_ascii=False, default=str)) + "\n")


def parse_params(items: list[str], option: str = "--param") -> dict[str, Any]:
    """``["temperature=0", "mode=fast"]`` -> ``{"temperature": 0, "mode": "fast"}``
    (values are JSON when they parse as JSON, else strings)."""
    from ..errors import AssayError

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise AssayError(f"{option} {item!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Inside the block, SIGTERM (a CI job cancelled, ``kill``) stops the work as Ctrl-C
    does: what finished is kept and the run is marked interrupted."""

    def interrupt(signum: int, frame: Any) -> None:
        # Hand the signal to the SIGINT handler: inside ``asyncio.run`` that cancels the
        # main task (which then marks the run interrupted) instead of raising
        # KeyboardInterrupt in whichever task happens to run.
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler) and handler is not interrupt:
            handler(signal.SIGINT, frame)
            return
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    # ``asyncio.run`` installs its cancelling SIGINT handler only over Python's default one;
    # a process that inherited SIGINT ignored (a background job, a pytest-xdist worker's
    # child) would otherwise get KeyboardInterrupt raised mid-request, inside a library's
    # task group, and print a traceback. So the default is in place for the block.
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
