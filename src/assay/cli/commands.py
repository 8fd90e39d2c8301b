"""Which module defines each command, and its one-line help: ``assay --help`` and
``assay --version`` answer from this table without importing any command (that would
load the whole library); a command's module is imported when the command runs.

A test checks this table against the commands the modules actually define.
"""

from __future__ import annotations

#: command -> (modules that define it or its subcommands, one-line help)
COMMANDS: dict[str, tuple[tuple[str, ...], str]] = {
    "init": (("init",), "Write a starter suite, agent and CI gate that run at once."),
    "run": (("run",), "Run a suite: every task k times, graded, stored."),
    "validate": (("run",), "Check a suite: every problem as file:line: field: message."),
    "runs": (("run",), "List the runs in the store, newest first."),
    "show": (("run",), "Show a run: summary, per-task table, or one task's trials and transcript."),
    "compare": (("decide",), "Compare runs paired on the same tasks: is B better than A, by how much."),
    "gate": (("decide",), "Gate a run on a policy: exit 0 pass, 1 fail, 2 bad policy or input."),
    "plan": (("decide",), "How many tasks × trials a decision needs, and what a suite can detect."),
    "robustness": (
        ("robustness",),
        "Run a suite without and with tool faults (or perturbations: metamorphic relations); compare.",
    ),
    "badcase": (
        ("badcase", "badcase_sources"),
        "Badcases: failures with evidence and root cause, and their way back into the suite.",
    ),
    "suite": (("suite",), "Suite versions (accept flow-back tasks, diff) and holdout discipline (status)."),
    "evidence": (("suite",), "A run's snapshot or probe track: frozen, current and stale evidence."),
    "experiment": (("experiment",), "Flag-matrix experiments: arms, main effects and interactions."),
    "report": (("report",), "Write one self-contained HTML report of one or more runs."),
    "view": (("view",), "Browse runs in a web browser (live run pages, drill-down, compare)."),
    "rank": (("rank",), "Rank models from pairwise votes (or runs) with bootstrap CIs."),
    "label": (("judges",), "Label trials or grades by hand; import or export labels."),
    "calibrate": (("judges",), "Judge vs human: agreement, Cohen's kappa, weighted kappas."),
    "judge-pairwise": (("judges",), "Judge two runs' outputs pairwise, in both orders."),
    "prompt": (("prompt",), "What a model agent sees (show), and how two runs' prompts differ (diff)."),
    "probe": (("probe",), "Measure a model endpoint: TTFT, tokens/s, latency, rate limit, uptime."),
    "probes": (("probe",), "Stored probes side by side, for comparing models."),
    "export": (("records",), "Write a run, whole, to one portable file (assay import run reads it)."),
    "import": (
        ("imports", "records", "traces"),
        "Import runs, peer benchmarks (tau2, humaneval) and traces.",
    ),
    "regrade": (("regrade",), "Re-grade recorded simulations (tau2 results files) and store them as a run."),
    "export-traces": (("traces",), "Export a stored run's traces (OpenTelemetry / OpenInference)."),
    "replay": (("traces",), "Replay imported production traces against an agent; report divergences."),
    "redact": (("redact",), "Replace secrets and personal data in a file with pseudonyms."),
}
