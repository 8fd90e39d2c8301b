"""A planted corpus for measuring redaction: secrets and personal data of many kinds and
formats inside realistic transcripts, tool outputs (JSON, also JSON-encoded inside a
tool message) and error messages. Deterministic: everything comes from one
``random.Random(seed)``.

Each record lists what was planted in it (kind, value, fragments that must not survive)
and a consistency triple: three strings holding one value each (A, B, A, with A != B of
the same kind) whose pseudonyms must come out as X, Y, X.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.planted_personal import (  # noqa: F401  (_iban_check, _luhn_complete: for the tests)
    Planted,
    _iban_check,
    _luhn_complete,
    address,
    card,
    cpf,
    dni,
    email,
    iban,
    ip_address,
    nino,
    phone,
    ssn,
)
from tests.support.planted_secrets import (
    anthropic_key,
    auth_token,
    aws_access_key,
    aws_secret_key,
    generic_secret,
    github_token,
    google_key,
    jwt,
    openai_key,
    private_key,
    sendgrid_key,
    slack_token,
    stripe_key,
    url_password,
)

GENERATORS: dict[str, Callable[[random.Random], Planted]] = {
    "EMAIL": email,
    "PHONE": phone,
    "CARD": card,
    "IBAN": iban,
    "SSN": ssn,
    "NINO": nino,
    "DNI": dni,
    "CPF": cpf,
    "ADDRESS": address,
    "IP_ADDRESS": ip_address,
    "OPENAI_KEY": openai_key,
    "ANTHROPIC_KEY": anthropic_key,
    "AWS_ACCESS_KEY": aws_access_key,
    "AWS_SECRET_KEY": aws_secret_key,
    "GITHUB_TOKEN": github_token,
    "SLACK_TOKEN": slack_token,
    "GOOGLE_API_KEY": google_key,
    "JWT": jwt,
    "PRIVATE_KEY": private_key,
    "AUTH_TOKEN": auth_token,
    "URL_PASSWORD": url_password,
    "SECRET": generic_secret,
    "STRIPE_ACCESS_KEY": stripe_key,
    "SENDGRID_API_KEY": sendgrid_key,
}


@dataclass
class Record:
    context: str
    data: Any
    planted: list[Planted] = field(default_factory=list)
    #: paths (into ``data``) of the three consistency strings, and their kind
    triple: tuple[tuple[Any, ...], ...] = ()
    triple_kind: str = ""


# -- records ----------------------------------------------------------------------------

_USER_LINES = [
    "Hi, I need help with my order.",
    "Sure, one second.",
    "Thanks, that's all for today.",
    "I was charged twice for the same item.",
    "Can you update my details? {p}",
    "Here you go: {p}",
    "{p}",
    "Also, {p} -- please note it down.",
]
_AGENT_LINES = [
    "I'd be glad to help. Could you confirm your details?",
    "I found order #W{order} placed on 2025-06-{day:02d} for ${price}.",
    "Thanks! I've noted: {p}",
    "Let me look that up with get_order_details.",
    "Your refund of ${price} was issued (R-{ref:04d}).",
]
_ERRORS = [
    "openai.AuthenticationError: Error code: 401 - "
    "{{'error': {{'message': '{p}', 'type': 'invalid_request_error'}}}}",
    'Traceback (most recent call last):\n  File "/srv/agent/run.py", line {line}, in call\n'
    "    resp = client.post(url, json=payload)\nRuntimeError: request failed ({p})",
    "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) {p}",
    "httpx.HTTPStatusError: Client error '403 Forbidden' for url "
    "'https://api.acme.io/v2/customers/{order}': {p}",
    "ValueError: could not parse field: {p}",
    "tool get_user_details failed: {p}",
]


def _phrase(rng: random.Random, kinds: list[str]) -> Planted:
    return GENERATORS[rng.choice(kinds)](rng)


def _fill(rng: random.Random, template: str, p: str) -> str:
    return template.format(
        p=p,
        order=rng.randint(1000000, 9999999),
        day=rng.randint(1, 28),
        price=f"{rng.randint(5, 900)}.{rng.randint(0, 99):02d}",
        ref=rng.randint(1, 999),
        line=rng.randint(10, 400),
    )


def _transcript(rng: random.Random, kinds: list[str]) -> Record:
    planted: list[Planted] = []
    messages: list[dict[str, Any]] = []
    for turn in range(rng.randint(3, 6)):
        item = _phrase(rng, kinds)
        planted.append(item)
        messages.append({"role": "user", "content": _fill(rng, rng.choice(_USER_LINES[4:]), item.phrase)})
        if rng.random() < 0.5:
            tool_item = _phrase(rng, kinds)
            planted.append(tool_item)
            call_id = f"call_{turn}_0"
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": call_id, "name": "get_user_details", "arguments": {"user_id": f"user_{turn}"}}
                    ],
                }
            )
            output = {
                "user_id": f"user_{turn}",
                "orders": [f"#W{rng.randint(1000000, 9999999)}"],
                "created_at": f"2025-06-{rng.randint(1, 28):02d}",
                rng.choice(["notes", "raw", "details", "log"]): f"customer wrote: {tool_item.phrase}",
            }
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "name": "get_user_details",
                    "content": json.dumps(output),
                }
            )
        agent_item = _phrase(rng, kinds) if rng.random() < 0.4 else None
        if agent_item:
            planted.append(agent_item)
        line = rng.choice(_AGENT_LINES[2:3] if agent_item else _AGENT_LINES)
        messages.append(
            {"role": "assistant", "content": _fill(rng, line, agent_item.phrase if agent_item else "")}
        )
    return Record(
        "transcript", {"messages": messages, "spans": [{"id": 0, "kind": "trial", "attributes": {}}]}, planted
    )


def _tool_output(rng: random.Random, kinds: list[str]) -> Record:
    items = [_phrase(rng, kinds) for _ in range(rng.randint(4, 8))]
    data: dict[str, Any] = {
        "status": "ok",
        "order_id": f"#W{rng.randint(1000000, 9999999)}",
        "total": round(rng.uniform(5, 900), 2),
        "items": [{"product_id": f"P{rng.randint(100000, 999999)}", "quantity": 1}],
    }
    containers = [
        data.setdefault("customer", {}),
        data.setdefault("payment", {}),
        data.setdefault("audit", {}),
    ]
    for i, item in enumerate(items):
        target = rng.choice(containers)
        if rng.random() < 0.6:
            target[rng.choice(["note", "raw", "text", "comment", "data"]) + f"_{i}"] = item.phrase
        elif item.kind in NATURAL_KEYS:
            # a bare value under the key a real payload would use (a bare SSN, AWS secret
            # or password is only recognisable by its name)
            target[NATURAL_KEYS[item.kind]] = item.value
        else:
            target[rng.choice(["value", "raw", "field"]) + f"_{i}"] = item.value
    return Record("tool_output", data, items)


#: Keys a real payload would hold a bare value of a kind under.
NATURAL_KEYS = {
    "SSN": "ssn",
    "CPF": "cpf",
    "PHONE": "phone",
    "AWS_SECRET_KEY": "aws_secret_access_key",
    "SECRET": "client_secret",
    "AUTH_TOKEN": "Authorization",
    "DNI": "dni",
    "NINO": "national_insurance_number",
}


def _error(rng: random.Random, kinds: list[str]) -> Record:
    items = [_phrase(rng, kinds) for _ in range(rng.randint(2, 5))]
    errors = [_fill(rng, rng.choice(_ERRORS), item.phrase) for item in items]
    data = {
        "run_id": f"run-{rng.randint(1000, 9999)}",
        "task_id": "refund-1",
        "root_cause": "MODEL",
        "errors": errors,
    }
    return Record("error", data, items)


def _add_triple(rng: random.Random, record: Record, kinds: list[str]) -> None:
    kind = rng.choice(kinds)
    gen = GENERATORS[kind]
    a = gen(rng)
    b = gen(rng)
    while b.value == a.value:
        b = gen(rng)
    record.planted.extend([a, b])
    record.data["consistency"] = [f"first {a.phrase}", f"second {b.phrase}", f"again {a.phrase}"]
    record.triple = (("consistency", 0), ("consistency", 1), ("consistency", 2))
    record.triple_kind = kind


def build_corpus(seed: int = 0, records: int = 150) -> list[Record]:
    """``records`` records (a third each: transcripts, tool outputs, errors) with planted
    values of every kind in :data:`GENERATORS`; deterministic in ``seed``."""
    rng = random.Random(seed)
    kinds = sorted(GENERATORS)
    out = []
    builders = [_transcript, _tool_output, _error]
    for i in range(records):
        record = builders[i % 3](rng, kinds)
        _add_triple(rng, record, kinds)
        out.append(record)
    return out
