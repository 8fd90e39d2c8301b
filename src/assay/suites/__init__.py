"""Suites: loading, validation, content hash, templates, instantiation."""

from ..core.sources import Located, format_path
from .instantiate import DEFAULT_AS_OF, instance_ids, instantiate, instantiate_task, iter_instances
from .loaded import LoadedSuite
from .loader import SUITES, iter_specs, load_suite, resolve_source, suite_templates
from .templates import TemplateContext, collect_templates, template

__all__ = [
    "DEFAULT_AS_OF",
    "SUITES",
    "LoadedSuite",
    "Located",
    "TemplateContext",
    "collect_templates",
    "format_path",
    "instance_ids",
    "instantiate",
    "instantiate_task",
    "iter_instances",
    "iter_specs",
    "load_suite",
    "resolve_source",
    "suite_templates",
    "template",
]
