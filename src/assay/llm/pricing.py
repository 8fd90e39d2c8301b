"""Prices per million tokens, the bundled example table and user overrides."""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from assay.errors import SpecError

from .types import Usage

log = logging.getLogger("assay.llm")

PRICING_ENV = "ASSAY_PRICING"
_DATE_SUFFIX = re.compile(r"^[-@](\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$")


@dataclass(frozen=True, slots=True)
class Pricing:
    """USD per million tokens. Cache reads and writes cost the input price when None."""

    input_per_mtok: float
    output_per_mtok: float
    cache_read_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None

    def cost(self, usage: Usage) -> float:
        """Cost of ``usage`` in USD: uncached input at the input price, cache reads and
        writes at their prices, output (reasoning included) at the output price."""
        read = self.input_per_mtok if self.cache_read_per_mtok is None else self.cache_read_per_mtok
        write = self.input_per_mtok if self.cache_write_per_mtok is None else self.cache_write_per_mtok
        return (
            usage.uncached_input_tokens * self.input_per_mtok
            + usage.cache_read_tokens * read
            + usage.cache_write_tokens * write
            + usage.output_tokens * self.output_per_mtok
        ) / 1_000_000


def _pricing_of(name: str, entry: Any, source: str) -> Pricing:
    if not isinstance(entry, Mapping):
        raise SpecError(f"{source}: models.{name}: expected a mapping with input and output")
    unknown = set(entry) - {"input", "output", "cache_read", "cache_write"}
    if unknown:
        raise SpecError(f"{source}: models.{name}: unknown field {sorted(unknown)[0]!r}")
    try:
        return Pricing(
            input_per_mtok=float(entry["input"]),
            output_per_mtok=float(entry["output"]),
            cache_read_per_mtok=None if entry.get("cache_read") is None else float(entry["cache_read"]),
            cache_write_per_mtok=(None if entry.get("cache_write") is None else float(entry["cache_write"])),
        )
    except KeyError as exc:
        raise SpecError(f"{source}: models.{name}: missing field {exc.args[0]!r}") from None
    except (TypeError, ValueError):
        raise SpecError(f"{source}: models.{name}: prices must be numbers") from None


def parse_pricing(data: Any, source: str = "<pricing>") -> dict[str, Pricing]:
    """``{"models": {NAME: {input, output, cache_read?, cache_write?}}}`` → prices by name."""
    if not isinstance(data, Mapping) or not isinstance(data.get("models"), Mapping):
        raise SpecError(f"{source}: expected a top-level 'models:' mapping")
    return {str(k): _pricing_of(str(k), v, source) for k, v in data["models"].items()}


def _load_file(path: str | Path) -> dict[str, Pricing]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"{p}: cannot read pricing file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise SpecError(f"{p}: the pricing file is not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as exc:
        raise SpecError(f"{p}: invalid YAML ({exc})") from None
    return parse_pricing(data, str(p))


class PricingTable:
    """Prices by model name. Lookup tries the exact name, the name without a provider
    prefix (``openai:``, ``openai/``) and the name without a date suffix
    (``-2024-08-06``, ``-20241022``, ``-latest``)."""

    def __init__(self, prices: Mapping[str, Pricing] | None = None):
        self.prices: dict[str, Pricing] = dict(prices or {})
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def bundled(cls) -> PricingTable:
        text = resources.files("assay.llm").joinpath("pricing.yaml").read_text(encoding="utf-8")
        return cls(parse_pricing(yaml.safe_load(text), "assay/llm/pricing.yaml"))

    @classmethod
    def load(cls, path: str | Path | None = None, *, bundled: bool = True) -> PricingTable:
        """The bundled table, overridden by ``$ASSAY_PRICING`` and then by ``path``."""
        table = cls.bundled() if bundled else cls()
        env = os.environ.get(PRICING_ENV)
        for source in (env, path):
            if source:
                table.prices.update(_load_file(source))
        return table

    def with_prices(self, prices: Mapping[str, Pricing]) -> PricingTable:
        return PricingTable({**self.prices, **prices})

    def find(self, model: str) -> Pricing | None:
        """The price of ``model``, or None (no warning)."""
        candidates = [model]
        for sep in (":", "/"):
            if sep in model:
                candidates.append(model.split(sep, 1)[1])
        for name in list(candidates):
            if name in self.prices:
                return self.prices[name]
        for name in candidates:
            for known, price in self.prices.items():
                if name.startswith(known) and _DATE_SUFFIX.match(name[len(known) :]):
                    return price
        return None

    def lookup(self, model: str) -> Pricing | None:
        """Like :meth:`find`, logging a warning the first time a model has no price."""
        price = self.find(model)
        if price is None:
            with self._lock:
                first = model not in self._warned
                self._warned.add(model)
            if first:
                log.warning(
                    "no price for model %r: its cost is recorded as unknown (None); add it to "
                    "a pricing file (--pricing or $%s)",
                    model,
                    PRICING_ENV,
                )
        return price


_default: PricingTable | None = None
_default_lock = threading.Lock()


def default_pricing() -> PricingTable:
    """The process-wide table: bundled + ``$ASSAY_PRICING`` (loaded once)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = PricingTable.load()
        return _default
