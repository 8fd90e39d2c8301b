"""tau2's banking_knowledge, transactional side: the port's tools against tau2's source
(names, order, arguments, docstrings, state-changing flags, discoverable tools), tool
behaviours whose expected values are read off tau2's code (``tools.py``, ``db_query.py``,
``utils.py``), the discoverable unlock / give / call mechanics, malformed data, and the
gold-replay check through the CLI (every one of the 97 tasks scores 1)."""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import re
import shutil
from pathlib import Path

import pytest

from assay.domains.tau2 import InitialState, Tau2DataError, Tau2Domain, ToolCall, load_tasks, tau2_domain
from assay.domains.tau2.environment import Tau2Environment
from assay.domains.tau2.specs import domain_spec
from assay.domains.tau2.tasks import InitializationData
from assay.domains.tau2.toolkit import Tau2Toolkit, parse_docstring
from assay.suites.loader import load_suite
from tests.support.cli import assay_main

TOOLS_PY = ("reference", "tau2", "domains", "banking_knowledge", "tools.py")


@pytest.fixture(scope="module")
def banking(data_dir: Path) -> Tau2Domain:
    return tau2_domain("banking_knowledge", data_dir)


def env_of(domain: Tau2Domain, **options: object) -> Tau2Environment:
    env = domain.environment_for(options=options)
    env.reset(0)
    return env


def call(
    env: Tau2Environment, name: str, args: dict[str, object], requestor: str = "assistant"
) -> tuple[str, bool]:
    return env.response(ToolCall(id="c", name=name, arguments=args, requestor=requestor))  # type: ignore[arg-type]


def sha_id(seed: str, length: int = 16) -> str:
    """utils.py ``_deterministic_id``."""
    return hashlib.sha256(seed.encode()).digest()[: length // 2].hex()


# --- the tools declare what tau2's do ---------------------------------------------------
def _reference(root: Path, cls: str) -> list[tuple[str, list[str], str, bool, bool]]:
    tree = ast.parse(root.joinpath(*TOOLS_PY).read_text(encoding="utf-8"))
    klass = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    out = []
    for node in klass.body:
        if not isinstance(node, ast.FunctionDef) or not node.decorator_list:
            continue
        mark = ast.unparse(node.decorator_list[0])
        write = ("WRITE" in mark and "mutates_state=False" not in mark) or "mutates_state=True" in mark
        args = [a.arg for a in node.args.args[1:]]
        out.append(
            (node.name, args, ast.get_docstring(node) or "", write, mark.startswith("is_discoverable"))
        )
    return out


@pytest.mark.parametrize(("side", "cls"), [("agent", "KnowledgeTools"), ("user", "KnowledgeUserTools")])
def test_tools_and_discoverable_tools_match_tau2_source(root: Path, side: str, cls: str) -> None:
    spec = domain_spec("banking_knowledge")
    kit: Tau2Toolkit | None = spec.tools if side == "agent" else spec.user_tools
    assert kit is not None and kit.owner == cls
    reference = _reference(root, cls)
    offered = [r for r in reference if not r[4]]
    hidden = [r for r in reference if r[4]]
    tools = kit.tools[1:] if side == "agent" else kit.tools  # the agent's first tool is KB_search
    assert [t.name for t in tools] == [r[0] for r in offered]
    assert sorted(kit.discoverable) == sorted(r[0] for r in hidden)
    assert (len(offered), len(hidden)) == ((14, 44) if side == "agent" else (6, 4))
    for tool, (name, args, doc, write, _) in zip(tools, offered, strict=True):
        description, arg_docs = parse_docstring(doc)
        assert (tool.description, tool.signature.names, tool.write) == (description, args, write), name
        assert {a: tool.parameters["properties"][a].get("description") for a in arg_docs} == arg_docs, name
    for name, args, doc, write, _ in hidden:
        tool = kit.discoverable[name]
        assert inspect.getdoc(tool.fn) == doc and tool.signature.names == args and tool.write == write, name
    if side == "agent":
        assert kit.tools[0].name == "KB_search" and not kit.tools[0].write
        reason = next(t for t in kit.tools if t.name == "transfer_to_human_agents").parameters["properties"][
            "reason"
        ]
        assert reason["default"] == "other" and len(reason["enum"]) == 19


# --- tool behaviours, values read off tau2's code --------------------------------------------
def test_queries_list_records_as_tau2_formats_them(banking: Tau2Domain) -> None:
    env = env_of(banking)
    assert call(env, "get_user_information_by_id", {"user_id": "123"}) == (
        "Found 1 record(s) in 'users':\n\n1. Record ID: 123\n   name: Mia Smith\n   user_id: 123\n"
        "   address: 742 Maple Street, Austin, TX 78701\n   email: mia.smith8574@gmail.com\n"
        "   phone_number: 512-555-0147\n   date_of_birth: 03/15/1992\n",
        False,
    )
    assert call(env, "get_user_information_by_email", {"email": "nobody@x"}) == (
        "No records found in 'users'.",
        False,
    )
    # the constraint is JSON built by an f-string: a quote breaks it, and tau2 says so
    text, error = call(env, "get_user_information_by_name", {"customer_name": 'Mia "M" Smith'})
    assert not error and text == "Error: Invalid JSON: Expecting ',' delimiter: line 1 column 16 (char 15)"
    assert call(env, "get_current_time", {}) == ("The current time is 2025-11-14 03:40:00 EST.", False)


def test_errors_are_tau2s_texts_and_flags(banking: Tau2Domain) -> None:
    env = env_of(banking)
    assert call(env, "get_user_information_by_id", {}) == (
        "Error: KnowledgeTools.get_user_information_by_id() missing 1 required positional argument: "
        "'user_id'",
        True,
    )
    args = {k: "x" for k in ("name", "user_id", "address", "email", "phone_number", "date_of_birth")}
    assert call(env, "log_verification", {**args, "time_verified": 5}) == (
        "Error: 'int' object has no attribute 'replace'",
        True,
    )
    assert call(env, "transfer_to_human_agents", {"summary": "s", "reason": "bored"})[0].startswith(
        "Error: Invalid transfer reason 'bored'. Must be one of: fraud_or_security_concern, "
    )
    assert call(env, "change_user_email", {"user_id": "nope", "new_email": "a@b"}) == (
        "Error: User with ID 'nope' not found.",
        False,
    )
    assert call(env, "freeze_debit_card_3892", {"card_id": "dbc_lj82d4f1a9_bluest"}, "user") == (
        "Error: Tool 'freeze_debit_card_3892' not found.",
        True,
    )


def test_unlock_then_call_changes_the_card_and_logs_the_call(banking: Tau2Domain) -> None:
    env = env_of(banking)
    card = "dbc_lj82d4f1a9_bluest"
    args = json.dumps({"card_id": card})
    assert call(
        env, "call_discoverable_agent_tool", {"agent_tool_name": "freeze_debit_card_3892", "arguments": args}
    ) == (
        "Error: Tool 'freeze_debit_card_3892' has not been unlocked. You must first use "
        "`unlock_discoverable_agent_tool` to unlock this tool before calling it.",
        False,
    )
    assert call(env, "unlock_discoverable_agent_tool", {"agent_tool_name": "freeze_debit_card_3892"}) == (
        "Tool unlocked: freeze_debit_card_3892\n"
        "Description: Temporarily freeze a debit card. The card can be unfrozen later.\n\n"
        "Tool: freeze_debit_card_3892\n"
        "Description: Temporarily freeze a debit card. The card can be unfrozen later.\n"
        "Parameters:\n  - card_id: string (required) - The debit card ID to freeze\n\n"
        "You can now use this tool by calling `call_discoverable_agent_tool` with "
        "agent_tool_name='freeze_debit_card_3892' and the required arguments.",
        False,
    )
    assert env.snapshot()["agent_discoverable_tools"] == {}  # unlocking is remembered, not stored
    text, error = call(
        env, "call_discoverable_agent_tool", {"agent_tool_name": "freeze_debit_card_3892", "arguments": args}
    )
    assert not error and text.startswith(
        f"Debit Card Frozen Successfully\nCard ID: {card}\nStatus: FROZEN\nFrozen Date: 11/14/2025\n"
    )
    state = env.snapshot()
    assert (state["debit_cards"][card]["status"], state["debit_cards"][card]["frozen_date"]) == (
        "FROZEN",
        "11/14/2025",
    )
    log_id = sha_id("agent_discoverable_tool:freeze_debit_card_3892")
    assert dict(state["agent_discoverable_tools"]) == {
        log_id: {"tool_name": "freeze_debit_card_3892", "status": "CALLED"}
    }
    assert call(
        env, "call_discoverable_agent_tool", {"agent_tool_name": "freeze_debit_card_3892", "arguments": args}
    ) == (
        f"Error: Debit card '{card}' is already frozen.",
        False,
    )
    # a fresh environment forgets the unlock (tau2 keeps it on the toolkit object)
    again = env_of(banking)
    assert call(
        again,
        "call_discoverable_agent_tool",
        {"agent_tool_name": "freeze_debit_card_3892", "arguments": args},
    )[0].startswith("Error: Tool 'freeze_debit_card_3892' has not been unlocked.")


def test_discoverable_calls_read_numbers_as_floats_and_reject_bad_arguments(banking: Tau2Domain) -> None:
    env = env_of(banking)
    name = "submit_credit_limit_increase_request_7392"
    call(env, "unlock_discoverable_agent_tool", {"agent_tool_name": name})
    arguments = {
        "credit_card_account_id": "cc_lj82d4f1a9_silver",
        "user_id": "lj82d4f1a9",
        "requested_increase_amount": 2500,
    }
    text, _ = call(
        env, "call_discoverable_agent_tool", {"agent_tool_name": name, "arguments": json.dumps(arguments)}
    )
    request_id = "cli_" + sha_id("cli_request:cc_lj82d4f1a9_silver:lj82d4f1a9:2500.00", 12)
    assert text == (
        "Credit limit increase request submitted successfully.\n\n"
        f"Executed: {name}\n  - Request ID: {request_id}\n  - Account: cc_lj82d4f1a9_silver\n"
        "  - Requested Increase: $2,500\n  - Status: PENDING"
    )
    assert env.snapshot()["credit_limit_increase_requests"][request_id]["requested_increase_amount"] == 2500
    bad = {"agent_tool_name": name, "arguments": json.dumps({"user_id": "lj82d4f1a9"})}
    assert call(env, "call_discoverable_agent_tool", bad) == (
        f"Error: Invalid arguments: KnowledgeTools.{name}() missing 2 required positional arguments: "
        "'credit_card_account_id' and 'requested_increase_amount'",
        False,
    )
    listed = {"agent_tool_name": name, "arguments": "[1]"}
    assert call(env, "call_discoverable_agent_tool", listed) == (
        f"Error: Invalid arguments: tau2.domains.banking_knowledge.tools.KnowledgeTools.{name}() "
        "argument after ** must be a mapping, not list",
        False,
    )
    assert call(env, "call_discoverable_agent_tool", {"agent_tool_name": name, "arguments": {}}) == (
        "Error: the JSON object must be str, bytes or bytearray, not dict",
        True,
    )
    assert call(env, "unlock_discoverable_agent_tool", {"agent_tool_name": "no_such_tool"}) == (
        "Error: Unknown agent tool 'no_such_tool'. This tool is not available.",
        False,
    )


def test_reads_are_logged_only_when_the_gold_actions_call_them(banking: Tau2Domain) -> None:
    name = "get_debit_cards_by_account_id_7823"
    gold = [("call_discoverable_agent_tool", {"agent_tool_name": name, "arguments": "{}"})]
    assert banking.options_for(gold) == {"read_log_allowlist": frozenset({name})}
    arguments = {"agent_tool_name": name, "arguments": json.dumps({"account_id": "chk_lj82d4f1a9"})}
    for options, logged in ((banking.options_for([]), False), (banking.options_for(gold), True)):
        env = env_of(banking, **options)
        call(env, "unlock_discoverable_agent_tool", {"agent_tool_name": name})
        text, _ = call(env, "call_discoverable_agent_tool", arguments)
        cards = json.loads(text)
        assert cards[0]["card_id"] == "dbc_lj82d4f1a9_bluest"
        assert cards[0]["card_number_last_4"] == "4821" and "last_4_digits" not in cards[0]
        assert (
            sha_id(f"agent_discoverable_tool:{name}") in env.snapshot()["agent_discoverable_tools"]
        ) is logged
    # called directly by name, as tau2's use_tool allows: it runs, unlocked or not, unlogged
    env = env_of(banking)
    assert call(env, name, {"account_id": "chk_lj82d4f1a9"})[0].startswith('[\n  {\n    "card_id": "dbc_')
    assert name not in {t.name for t in env.tools("agent")}


def test_a_given_user_tool_runs_on_the_users_side(banking: Tau2Domain) -> None:
    env = env_of(banking)
    deposit = {
        "discoverable_tool_name": "deposit_check_3847",
        "arguments": '{"account_id": "03", "check_amount": 120}',
    }
    assert call(env, "call_discoverable_user_tool", deposit, "user") == (
        "Error: Tool 'deposit_check_3847' has not been given to you by the agent. "
        "The agent must first use `give_discoverable_user_tool` to give this tool to you.",
        False,
    )
    given, _ = call(env, "give_discoverable_user_tool", {"discoverable_tool_name": "deposit_check_3847"})
    assert given.startswith(
        "Tool given to user: deposit_check_3847\n"
        "Description: Deposit a check into a checking or savings account."
    )
    assert given.endswith(
        "Arguments: (no arguments)\n\nThe user can now execute this action by calling "
        "`call_discoverable_user_tool` with discoverable_tool_name='deposit_check_3847' and the same "
        "arguments."
    )
    text, error = call(env, "call_discoverable_user_tool", deposit, "user")
    assert not error and text.endswith(
        "Check deposit processed!\n  - Account: 03\n  - Check Amount: $120.00\n"
        "  - Previous Balance: $3400.00\n  - New Balance: $3520.00"
    )
    assert '"check_amount": 120.0' in text  # JSON numbers are read as floats
    state = env.snapshot()
    assert state["accounts"]["03"]["current_holdings"] == "$3520.00"
    assert dict(state["user_discoverable_tools"]) == {
        sha_id("user_discoverable_tool:deposit_check_3847"): {
            "tool_name": "deposit_check_3847",
            "status": "GIVEN",
        }
    }
    logged_args = {"account_id": "03", "check_amount": 120.0}
    call_id = sha_id(
        f"user_discoverable_tool_call:deposit_check_3847:{json.dumps(logged_args, sort_keys=True)}"
    )
    assert state["user_discoverable_tool_calls"][call_id] == {
        "tool_name": "deposit_check_3847",
        "arguments": logged_args,
        "called_at": "11/14/2025",
        "status": "CALLED",
    }
    missing = {"discoverable_tool_name": "deposit_check_3847", "arguments": '{"account_id": "03"}'}
    assert call(env, "call_discoverable_user_tool", missing, "user") == (
        "Error: Missing required parameter: check_amount",
        False,
    )


def test_user_tools_write_what_tau2_writes(banking: Tau2Domain) -> None:
    env = env_of(banking)
    application = {"card_type": "Gold Rewards Card", "customer_name": "Sarah Bosch", "annual_income": 100000}
    assert call(env, "apply_for_credit_card", {**application, "rho_bank_subscription": True}, "user")[
        0
    ].startswith("Credit card application submitted:\n")
    app_id = sha_id("credit_card:Gold Rewards Card:Sarah Bosch:100000.0:True")
    assert env.snapshot()["credit_card_applications"][app_id]["annual_income"] == 100000.0
    assert call(env, "request_human_agent_transfer", {}, "user")[0].startswith(
        "Transfer request #1 submitted."
    )
    assert call(env, "request_human_agent_transfer", {}, "user")[0].startswith(
        "Transfer request #2 submitted."
    )
    assert list(env.snapshot()["human_transfer_requests"]) == ["transfer_request_1", "transfer_request_2"]
    assert call(env, "list_discoverable_user_tools", {}, "user") == (
        "Tools given to you by the agent:\nNo records found in 'user_discoverable_tools'.",
        False,
    )


def test_initialization_data_is_merged_into_the_tables(banking: Tau2Domain) -> None:
    tasks = {t.id: t for t in load_tasks(banking.loaded.tasks_path)}
    auto = banking.task_environment(tasks["task_026"])
    assert auto.snapshot()["task_config"]["dispute_settings"] == {"auto_resolve_disputes": True}
    call(auto, "give_discoverable_user_tool", {"discoverable_tool_name": "submit_cash_back_dispute_0589"})
    text, _ = call(
        auto,
        "call_discoverable_user_tool",
        {
            "discoverable_tool_name": "submit_cash_back_dispute_0589",
            "arguments": '{"user_id": "u", "transaction_id": "t"}',
        },
        "user",
    )
    assert text.endswith(
        "Status: RESOLVED - The dispute has been reviewed and approved. The transaction rewards need to be "
        "updated."
    )
    added = banking.task_environment(tasks["task_078"]).snapshot()
    assert "mc78a5b9d2" in added["users"] and "mc78a5b9d2" not in banking.loaded.base["users"]


# --- malformed data ------------------------------------------------------------------------
def test_malformed_banking_data_is_one_line(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "domains" / "banking_knowledge"
    source = data_dir / "domains" / "banking_knowledge"
    shutil.copytree(source / "prompts", folder / "prompts")
    (folder / "documents").mkdir()
    shutil.copy(next((source / "documents").glob("*.json")), folder / "documents")
    db = json.loads((source / "db.json").read_text(encoding="utf-8"))
    db["users"]["data"]["123"] = "Mia Smith"
    (folder / "db.json").write_text(json.dumps(db), encoding="utf-8")
    with pytest.raises(Tau2DataError, match=r"db.json: not a valid tau2 banking database: users.data.123: "):
        tau2_domain("banking_knowledge", tmp_path)
    proc = assay_main(
        "import", "tau2", str(tmp_path), "--domain", "banking_knowledge", "-o", str(tmp_path / "out")
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0
    assert proc.err == (
        f"error: {folder / 'db.json'}: not a valid tau2 banking database: users.data.123: "
        "Input should be a valid dictionary"
    )
    assert not (tmp_path / "out").exists()  # nothing written
    db["users"]["data"]["123"] = {"name": "Mia Smith"}
    db["loans"] = {"data": {}}
    (folder / "db.json").write_text(json.dumps(db), encoding="utf-8")
    with pytest.raises(
        Tau2DataError, match=r"db.json: not a valid tau2 banking database: loans: Extra inputs"
    ):
        tau2_domain("banking_knowledge", tmp_path)


def test_malformed_initialization_data_is_one_line(banking: Tau2Domain) -> None:
    for agent_data, message in (
        ({"loans": {"data": {}}}, "initialization data names 'loans', which the database does not have"),
        (
            {"users": {"data": {"123": 5}}},
            "initialization data: users.data.123: Input should be a valid dictionary",
        ),
    ):
        state = InitialState(initialization_data=InitializationData(agent_data=agent_data))
        with pytest.raises(Tau2DataError, match=re.escape(message)):
            banking.environment_for(state).reset(0)


# --- gold replay through the CLI ----------------------------------------------------------------
#: The first tasks of the suite (default run); all 97 in the slow run.
FIRST = 12


@pytest.mark.parametrize(
    "everything",
    [pytest.param(False, id=f"first-{FIRST}"), pytest.param(True, id="all-97", marks=pytest.mark.slow)],
)
def test_gold_replay_scores_one_through_the_cli(data_dir: Path, tmp_path: Path, everything: bool) -> None:
    suite = tmp_path / "banking"
    proc = assay_main(
        "import", "tau2", str(data_dir), "--domain", "banking_knowledge", "-o", str(suite), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["tasks"] == 97 and report["gating"] == {"db": 88, "actions": 9}
    assert report["graders"] == {"db": 97, "actions": 97, "retrieval": 97}
    assert sorted(report["data_files"]) == ["db.json", "documents/", "prompts/"]
    assert (suite / "data" / "LICENSE").is_file() and len(
        list((suite / "data" / "documents").iterdir())
    ) == 698
    ids = [task.id for task in load_suite(suite).tasks]
    assert len(ids) == 97
    chosen = ids if everything else ids[:FIRST]
    only = [] if everything else [arg for task in chosen for arg in ("--task", task)]
    proc = assay_main(
        "run",
        str(suite),
        "--agent",
        "builtin:gold-replay",
        "-k",
        "1",
        *only,
        "--json",
        env={"ASSAY_STORE": str(tmp_path / "s.db")},
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    rewards = {t["task_id"]: t["rewards"] for t in summary["tasks"]}
    n = len(chosen)
    assert sorted(rewards) == sorted(chosen)
    assert [t for t, r in rewards.items() if r != [1]] == []
    assert summary["overall"]["successes"] == n
    graders = summary["graders"]
    assert graders["db"] == graders["actions"] == {"needs_review": 0, "passed": n}
    assert graders["retrieval"] == {"failed": n, "needs_review": 0}  # reported, not gating: no search
