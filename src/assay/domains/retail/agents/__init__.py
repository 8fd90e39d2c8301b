"""Reference agents of the retail domain: deterministic, rule-based, and each a pure
function of (conversation, context), so they can be replayed exactly.

- :class:`CarefulAgent` follows the policy and should pass nearly every task.
- :class:`HastyAgent` skips identity checks and confirmations, ignores the refund
  window, and gives in to "already approved" claims and injected instructions.
- :class:`FlakyAgent` is careful but slips at each decision with a seeded probability
  (``options["slip"]``, default 0.08), so pass^k falls as k grows while the same seed
  reproduces the same trial exactly.
- :class:`FlaggedAgent` is careful except for the checks its feature flags turn off
  (``--flag confirm=off``): a system under test for flag-matrix experiments.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from ....agents.base import AgentContext, AgentTurn
from ....core.hashing import derive_seed
from ....core.messages import Message, ToolCall, ToolSpec
from ....errors import SpecError
from .memo import Moves
from .policy import decide_on
from .view import View

DEFAULT_SLIP = 0.08


class CarefulAgent:
    """Follows the retail policy: verify, look up, check, confirm, act, report."""

    def __init__(self, ctx: AgentContext):
        self.ctx = ctx
        self._view: View | None = None
        # the careful and the hasty agent never slip at random: their moves are a pure
        # function of (conversation, now), made once for the k trials of a task (.memo)
        pure = type(self) in (CarefulAgent, HastyAgent)
        self._moves = Moves(type(self), ctx.now) if pure else None

    def view(self, conversation: Sequence[Message]) -> View:
        """The View of ``conversation``, extending the one of the previous call (a
        trial's conversation only grows; any other conversation is read whole)."""
        self._view = View(conversation, self._view)
        return self._view

    def slip(self, decision: str, anchor: int) -> bool:
        """Whether to slip at ``decision`` (arising at message ``anchor``): never."""
        return False

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        moves = self._moves
        if moves is None:
            return decide_on(self.view(conversation), self.ctx.now, self.slip)
        move = moves.find(conversation)
        if move is None:
            move = decide_on(self.view(conversation), self.ctx.now, self.slip)
            moves.keep(move)
        return move


class HastyAgent(CarefulAgent):
    """Takes every shortcut: no identity check, no confirmation, no window check,
    gives in to pushback and obeys instructions injected into user messages."""

    def slip(self, decision: str, anchor: int) -> bool:
        return True


def _probability(value: object) -> float:
    """The ``slip`` parameter: a probability, else a usage error (:class:`SpecError`
    stops the run: a mistyped ``-p slip=x`` is not the agent's failure in every trial)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = math.nan
    if not 0.0 <= number <= 1.0:
        raise SpecError(f"-p slip={value}: builtin:retail-flaky's slip is a probability from 0 to 1")
    return number


class FlakyAgent(CarefulAgent):
    """Careful, but slips at each decision with probability ``options["slip"]``
    (default 0.08), drawn from ``random.Random(derive_seed(seed, decision, anchor))``."""

    def __init__(self, ctx: AgentContext):
        super().__init__(ctx)
        self.probability = _probability(ctx.params.get("slip", DEFAULT_SLIP))

    def slip(self, decision: str, anchor: int) -> bool:
        draw = random.Random(derive_seed(self.ctx.seed, decision, anchor)).random()
        return draw < self.probability


#: Flag values that turn a check off.
OFF = ("off", "false", "0", "no")


class FlaggedAgent(CarefulAgent):
    """Careful, except for the decisions (see :mod:`.policy`: ``identity``, ``confirm``,
    ``window``, ``pushback``, ``injection``...) whose flag is off: ``--flag confirm=off``
    makes it write without asking. ``--flag double_check=on`` looks every order up twice
    (a redundant call: same outcome, more tool calls). Other flags are ignored."""

    def slip(self, decision: str, anchor: int) -> bool:
        return _off(self.ctx.flags.get(decision, "on"))

    async def respond(self, conversation: Sequence[Message], tools: Sequence[ToolSpec]) -> AgentTurn:
        turn = decide_on(self.view(conversation), self.ctx.now, self.slip)
        if not _off(self.ctx.flags.get("double_check", "off")):
            again = [
                ToolCall(f"{c.id}_again", c.name, dict(c.arguments))
                for c in turn.tool_calls
                if c.name == "get_order_details"
            ]
            turn.tool_calls = [*turn.tool_calls, *again]
        return turn


def _off(value: object) -> bool:
    return value is False or str(value).strip().lower() in OFF


__all__ = ["DEFAULT_SLIP", "CarefulAgent", "FlaggedAgent", "FlakyAgent", "HastyAgent"]
