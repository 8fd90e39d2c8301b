"""Graders: rule graders of outcome and process, process metrics, the registry."""

from .actions import ActionsGrader, confirmation_violations
from .base import Grader, GraderSettings, RuleGrader
from .communicate import CommunicateGrader
from .matching import args_match, is_affirmative, normalize_text, values_equal
from .process import process_metrics
from .registry import GRADERS, build_grader, check_grader_spec, grade_trial
from .state import StateGrader
from .text import TextGrader

__all__ = [
    "GRADERS",
    "ActionsGrader",
    "CommunicateGrader",
    "Grader",
    "GraderSettings",
    "RuleGrader",
    "StateGrader",
    "TextGrader",
    "args_match",
    "build_grader",
    "check_grader_spec",
    "confirmation_violations",
    "grade_trial",
    "is_affirmative",
    "normalize_text",
    "process_metrics",
    "values_equal",
]
