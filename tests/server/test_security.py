"""The viewer is a local tool: a foreign ``Host`` (DNS rebinding) gets 400, a
cross-origin write (CSRF) gets 403, and the same-origin labelling form still works.
Over real HTTP on 127.0.0.1."""

from __future__ import annotations

import http.client
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from assay.server import create_app
from assay.server.security import host_name, trusted_hosts
from assay.store import Store
from assay.store.labels import LabelStore
from tests.server.support import serving, toy_runs


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    tmp = tmp_path_factory.mktemp("sec")
    st = Store(tmp / "sec.db")
    toy_runs(tmp, st, k=1)
    return st


@pytest.fixture(scope="module")
def served(store: Store) -> Any:
    app = create_app(store, host="192.0.2.7")  # as `assay view --host 192.0.2.7`
    with serving(app) as base:
        yield app, urlsplit(base).port


def request(
    port: int, method: str, path: str, host: str, headers: dict[str, str] | None = None, body: str = ""
) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True)
        conn.putheader("Host", host)
        data = body.encode()
        for k, v in {**(headers or {}), "Content-Length": str(len(data))}.items():
            conn.putheader(k, v)
        conn.endheaders(data)
        resp = conn.getresponse()
        return resp.status, resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


def label_form(token: str | None, labeller: str = "ana") -> str:
    fields = {
        "grader": "actions",  # a grader that graded dep-1#0 (the form refuses others)
        "labeller": labeller,
        "task_id": "dep-1",
        "trial_index": "0",
        "verdict": "pass",
    }
    if token is not None:
        fields["csrf_token"] = token
    return urlencode(fields)


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.evil.example", "", "[::2]:1"])
def test_a_foreign_host_header_is_refused(served: Any, host: str) -> None:
    _, port = served
    status, body = request(port, "GET", "/api/runs", host)
    assert status == 400 and "invalid Host header" in body
    assert request(port, "GET", "/", host)[0] == 400


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "192.0.2.7"])
def test_its_own_addresses_are_served(served: Any, host: str) -> None:
    _, port = served
    status, body = request(port, "GET", "/api/runs", f"{host}:{port}")
    assert status == 200 and "careful" in body


def test_a_cross_origin_post_is_refused_and_stores_nothing(served: Any, store: Store) -> None:
    app, port = served
    before = len(LabelStore(store).list("careful"))
    host = f"127.0.0.1:{port}"
    token = app.state.csrf_token
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": f"http://localhost:{port + 1}"},
        {"Referer": "http://evil.example/page"},
        {},  # no Origin, no Referer, no token header: not a request this viewer's pages make
    ):
        status, body = request(port, "POST", "/label/careful", host, {**FORM, **headers}, label_form(token))
        assert status == 403, (headers, status, body)
    assert len(LabelStore(store).list("careful")) == before


def test_a_same_origin_post_needs_the_forms_token(served: Any, store: Store) -> None:
    app, port = served
    host = f"127.0.0.1:{port}"
    origin = {"Origin": f"http://{host}"}
    status, _ = request(port, "POST", "/label/careful", host, {**FORM, **origin}, label_form(None))
    assert status == 403
    status, _ = request(port, "POST", "/label/careful", host, {**FORM, **origin}, label_form("forged"))
    assert status == 403
    before = len(LabelStore(store).list("careful"))
    status, _ = request(
        port, "POST", "/label/careful", host, {**FORM, **origin}, label_form(app.state.csrf_token)
    )
    assert status == 303
    referer = {"Referer": f"http://{host}/label/careful?grader=judge&labeller=ana"}
    status, _ = request(
        port, "POST", "/label/careful", host, {**FORM, **referer}, label_form(app.state.csrf_token, "bea")
    )
    assert status == 303
    script = {"X-CSRF-Token": app.state.csrf_token}  # a script without a browser's headers
    status, _ = request(
        port, "POST", "/label/careful", host, {**FORM, **script}, label_form(app.state.csrf_token, "cy")
    )
    assert status == 303
    assert len(LabelStore(store).list("careful")) == before + 3


def test_the_label_page_carries_the_token(served: Any, tmp_path: Path) -> None:
    app, _ = served
    from jinja2 import Environment

    env: Environment = app.state.templates
    html = env.get_template("label.html").render(
        nav=[],
        csrf_token="T0KEN",
        run_id="r",
        grader="g",
        labeller="ana",
        saved=0,
        total=1,
        left=1,
        item={"task_id": "t", "trial_index": 0, "conversation": "", "dimensions": []},
    )
    assert 'name="csrf_token" value="T0KEN"' in html


def test_host_names() -> None:
    assert host_name("[::1]:8000") == "::1"
    assert host_name("LocalHost:80") == "localhost"
    assert host_name("::1") == "::1"
    assert host_name("example") == "example"
    assert "0.0.0.0" not in trusted_hosts(None)
    assert {"127.0.0.1", "localhost", "::1"} <= trusted_hosts(None)
    assert "10.1.2.3" in trusted_hosts("10.1.2.3")
    assert "::" not in trusted_hosts(None) and "fe80::1" in trusted_hosts("[fe80::1]")
