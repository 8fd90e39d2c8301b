"""``assay init``: a starter suite, agent and gate policy that run at once."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated

import typer

from ..errors import AssayError
from .app import app, err

#: starter file -> where it goes, relative to the folder given
FILES = {"my_agent.py": "my_agent.py", "suite.yaml": "evals/suite.yaml", "gate.yaml": "evals/gate.yaml"}


@app.command()
def init(
    folder: Annotated[Path, typer.Argument(help="Where to write the starter (default: here).")] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")] = False,
) -> None:
    """Write a starter: your agent (my_agent.py), a suite (evals/) and a CI gate, ready to run.

    Example: assay init my-evals && cd my-evals && assay run evals
    """
    targets = {name: folder / rel for name, rel in FILES.items()}
    existing = [str(p) for p in targets.values() if p.exists()]
    if existing and not force:
        raise AssayError(f"{existing[0]} exists; give --force to overwrite, or another folder")
    starter = resources.files("assay.cli").joinpath("starter")
    for name, target in targets.items():
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(starter.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
        except OSError as exc:
            raise AssayError(f"cannot write {target}: {exc.strerror or exc}") from None
        err.print(f"wrote {target}")
    where = "" if folder == Path(".") else f"cd {folder} && "
    err.print(
        "next:\n"
        f"  {where}assay run evals            # your agent (my_agent.py) on the suite, 3 trials a task\n"
        "  assay show latest                  # what happened, task by task\n"
        "  assay gate latest --policy evals/gate.yaml   # the CI check (exit 1 on failure)\n"
        "then replace the agent's body with a call to your system, and add tasks to evals/suite.yaml"
    )
