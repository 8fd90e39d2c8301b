"""``assay prompt show``: exactly what a model will see."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ..agents.base import AgentContext
from ..agents.llm import prompt_version, render_system_prompt
from ..core.terminal import printable
from ..envs.registry import get_domain
from ..errors import AssayError
from ..llm.spec import PROVIDERS
from ..runner.plan import trial_seed
from ..suites.instantiate import instantiate
from ..suites.loader import load_suite
from ..users.llm import render_user_prompt
from .app import JsonOpt, StoreOpt, app, print_json

prompt_app = typer.Typer(help="Inspect the prompts models get.", no_args_is_help=True)
app.add_typer(prompt_app, name="prompt")


@prompt_app.command("show")
def show(
    suite: Annotated[str, typer.Argument(help="Suite folder, suite.yaml, or built-in name.")],
    agent: Annotated[str, typer.Option("--agent", "-a", help="An LLM agent spec, e.g. openai:gpt-4o-mini.")],
    task: Annotated[str | None, typer.Option("--task", help="Task id (default: the first task).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Run seed (templated tasks depend on it).")] = 0,
    user: Annotated[
        bool, typer.Option("--user", help="Show the LLM user simulator's prompt instead.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print the rendered system prompt, its version hash and the tool schemas.

    Example: assay prompt show retail --agent openai:gpt-4o-mini --task refund-in-window-1
    """
    if agent.partition(":")[0] not in PROVIDERS:
        raise AssayError(f"agent {agent!r} is not model-backed ({', '.join(PROVIDERS)}): it has no prompt")
    loaded = load_suite(suite)
    tasks = instantiate(loaded, seed)
    chosen = next((t for t in tasks if t.id == task), None) if task else tasks[0]
    if chosen is None:
        raise AssayError(f"suite {loaded.name} has no task {task!r}")
    domain = get_domain(loaded.domain_ref)
    if user:
        text = render_user_prompt(chosen.user)
        tools: list[dict[str, object]] = []
    else:
        ctx = AgentContext(
            trial_seed(seed, chosen.id, 0),
            domain.name,
            domain.policy,
            chosen.as_of,  # type: ignore[arg-type]
            chosen.timezone or "UTC",
        )
        text = render_system_prompt(ctx)
        tools = [spec.to_openai() for spec in domain.toolkit.specs("agent")]
    version = prompt_version(text)
    if as_json:
        print_json(
            {
                "schema": "assay.prompt/1",
                "task": chosen.id,
                "prompt_version": version,
                "system_prompt": text,
                "tools": tools,
            }
        )
        return
    _say(f"# task {chosen.id} · prompt version {version}\n")
    _say(text)
    if tools:
        _say(f"# tools ({len(tools)})\n")
        _say(json.dumps(tools, indent=2, ensure_ascii=False))


@prompt_app.command("diff")
def diff(
    run_a: Annotated[str, typer.Argument(help="The first run id.")],
    run_b: Annotated[str, typer.Argument(help="The second run id.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show what changed between two runs' prompts: prompt versions, template ids,
    system prompts and tool definitions their model calls were made with.

    Example: assay prompt diff baseline candidate
    """
    from ..store.store import Store
    from ..traces.prompts import prompt_diff, run_prompts

    st = Store(store)
    result = prompt_diff(run_prompts(st, run_a), run_prompts(st, run_b))
    if as_json:
        print_json(result)
        return
    versions = result["prompt_version"]
    if versions["a"] != versions["b"]:
        _say(f"prompt version: {versions['a']} -> {versions['b']}")
    for role, entry in result["roles"].items():
        _say(f"# {role}")
        if "templates" in entry:
            _say(
                f"template: {', '.join(entry['templates']['a']) or '-'} -> "
                f"{', '.join(entry['templates']['b']) or '-'}"
            )
        if "system" in entry:
            _say(f"system prompt: {entry['system']['a']} -> {entry['system']['b']}")
            _say("\n".join(entry["system"]["diff"]) or "(texts not recorded)")
        if "tools" in entry:
            t = entry["tools"]
            _say(
                f"tools: {t['a']} -> {t['b']} (added {t['added']}, removed {t['removed']}, "
                f"changed {t['changed']})"
            )
            _say("\n".join(t["diff"]))
    if result["same"]:
        _say(f"the prompts of {run_a} and {run_b} are the same")


def _say(text: str) -> None:
    """A line of a prompt or its diff on stdout; the prompts a run recorded (from imported
    traces too) are shown with their control characters escaped."""
    print(printable(text))
