"""Graders: rule graders of outcome and process, rubric LLM judges (single or panel),
pairwise judging, judge calibration and bias checks, agent/tool/structured-output
metrics, process metrics, the registry."""

from .actions import ActionsGrader, confirmation_violations
from .agent import ErrorRecoveryGrader, ToolSelectionGrader, TrajectoryGrader
from .base import Grader, GraderSettings
from .bias import LengthBias, VerbosityProbe, judge_scorer, length_bias, pad, verbosity_probe
from .calibration import Agreement, GraderCalibration
from .communicate import CommunicateGrader
from .env_assert import EnvAssertGrader
from .files import GraderFileError, resolve_file
from .judge import NO_JUDGE, JudgeCall, JudgeGrader, PanelResult, ask_judge, combine
from .judge_prompt import PROMPT_VERSION, JudgeInput, MalformedVerdict, Verdict, build_messages, parse_verdict
from .matching import args_match, is_affirmative, normalize_text, values_equal
from .pairwise import Battle, PairInput, PairJudgement, PairwiseReport, judge_pair, write_battles
from .process import process_metrics
from .registry import GRADERS, build_grader, check_grader_spec, grade_trial
from .routing import (
    SafetyGrader,
    SkillRoutingGrader,
    rates_from_grades,
    safety_rates,
    skill_routing_rates,
)
from .rubric import Aggregate, Dimension, Rubric, load_rubric, parse_rubric
from .state import StateGrader
from .structured import (
    StructuredGrader,
    field_accuracy,
    parse_json_output,
    schema_errors,
    structured_rates,
)
from .text import TextGrader
from .trajectory import (
    error_recovery,
    parameter_accuracy,
    tool_selection,
    trajectory_match,
    unnecessary_call_rate,
)

__all__ = [
    "GRADERS",
    "NO_JUDGE",
    "PROMPT_VERSION",
    "ActionsGrader",
    "Aggregate",
    "Agreement",
    "Battle",
    "CommunicateGrader",
    "Dimension",
    "EnvAssertGrader",
    "ErrorRecoveryGrader",
    "Grader",
    "GraderCalibration",
    "GraderFileError",
    "GraderSettings",
    "JudgeCall",
    "JudgeGrader",
    "JudgeInput",
    "LengthBias",
    "MalformedVerdict",
    "PairInput",
    "PairJudgement",
    "PairwiseReport",
    "PanelResult",
    "Params",
    "Rubric",
    "SafetyGrader",
    "SkillRoutingGrader",
    "StateGrader",
    "StructuredGrader",
    "TextGrader",
    "ToolSelectionGrader",
    "TrajectoryGrader",
    "VerbosityProbe",
    "Verdict",
    "args_match",
    "ask_judge",
    "build_grader",
    "build_messages",
    "check_grader_spec",
    "combine",
    "confirmation_violations",
    "error_recovery",
    "field_accuracy",
    "grade_trial",
    "is_affirmative",
    "judge_pair",
    "judge_scorer",
    "length_bias",
    "load_rubric",
    "named_tools",
    "normalize_text",
    "pad",
    "parameter_accuracy",
    "parse_json_output",
    "parse_rubric",
    "parse_verdict",
    "process_metrics",
    "rates_from_grades",
    "resolve_file",
    "safety_rates",
    "schema_errors",
    "skill_routing_rates",
    "structured_rates",
    "tool_selection",
    "trajectory_match",
    "unnecessary_call_rate",
    "values_equal",
    "verbosity_probe",
    "write_battles",
]
