"""tau2-bench's airline, retail, telecom, mock and banking_knowledge domains, ported to assay.

assay's own implementation of tau2's tools (same names, descriptions, schemas, outputs,
errors and state changes), reading its data from a tau2 data folder at run time, plus
tau2's evaluator and a replay of tau2 results files. See ``docs/tau2.md``.

>>> domain = tau2_domain("airline", "../shared/tau2/data")          # doctest: +SKIP
>>> env = domain.task_environment(load_tasks(domain.loaded.tasks_path)[0])  # doctest: +SKIP
>>> env.call("get_user_details", {"user_id": "mia_li_3668"})          # doctest: +SKIP
>>> report = replay_results("airline_results.json", "../shared/tau2/data")  # doctest: +SKIP
"""

from __future__ import annotations

from .domain import GOLD_SEED, Tau2Domain, suite_domain, tau2_domain, tau2_initial_state
from .environment import Tau2Environment
from .evaluate import (
    ActionCheck,
    AssertionCheck,
    CommunicateCheck,
    DbCheck,
    Tau2Verdict,
    assertion_holds,
    check_actions,
    check_communicate,
    check_environment,
    compare_databases,
    evaluate,
    gold_environment,
    replay_trajectory,
)
from .loader import find_domain_folder, load_domain
from .replay import (
    OutputMismatch,
    ResultsReport,
    Simulation,
    SimulationReport,
    load_results,
    replay_outputs,
    replay_results,
    replay_simulation,
)
from .specs import DOMAINS
from .store import Tau2DataError
from .tasks import (
    Action,
    EnvAssertion,
    EnvFunctionCall,
    InitialState,
    Message,
    Task,
    ToolCall,
    load_tasks,
    parse_task,
)

__all__ = [
    "DOMAINS",
    "GOLD_SEED",
    "Action",
    "ActionCheck",
    "AssertionCheck",
    "CommunicateCheck",
    "DbCheck",
    "EnvAssertion",
    "EnvFunctionCall",
    "InitialState",
    "Message",
    "OutputMismatch",
    "ResultsReport",
    "Simulation",
    "SimulationReport",
    "Task",
    "Tau2DataError",
    "Tau2Domain",
    "Tau2Environment",
    "Tau2Verdict",
    "ToolCall",
    "assertion_holds",
    "check_actions",
    "check_communicate",
    "check_environment",
    "compare_databases",
    "evaluate",
    "find_domain_folder",
    "gold_environment",
    "load_domain",
    "load_results",
    "load_tasks",
    "parse_task",
    "replay_outputs",
    "replay_results",
    "replay_simulation",
    "replay_trajectory",
    "suite_domain",
    "tau2_domain",
    "tau2_initial_state",
]
