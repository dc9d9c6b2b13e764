"""The web server's refusals of bad requests: tokens past MAX_TRAIN_TOKENS on /api/plan/train, the standard library's
own refusals with a fix of their own, a body not an object told a JSON example, /api/sensitivity's fields each with
a fix, and an IPv6 host listened on."""

from __future__ import annotations

import json
import socket
import urllib.request
from typing import Any

import pytest

from chipwise.interfaces.web.routes import POST_ROUTES, PlanServeRequest, PlanTrainRequest, Settings
from chipwise.interfaces.web.server import METHODS_FIX, ChipwiseServer, make_server, serve_in_thread

from .test_web import _post

JSON = {"Content-Type": "application/json"}
SCENARIO = {"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "arrival_rate": 2,
            "requests": 50, "input_tokens": 512, "output_tokens": 128}  # fmt: skip


def _raw(srv: ChipwiseServer, request: bytes) -> tuple[int | None, str]:
    """The status and error line the server answers a request written byte for byte (no status: the standard
    library answers a version it cannot read as HTTP/0.9, the body alone)."""
    with socket.create_connection(("127.0.0.1", srv.server_address[1]), timeout=30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(1 << 16):
            answer += chunk
    if not answer.startswith(b"HTTP/"):
        return None, json.loads(answer)["error"]
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)["error"]


TOO_MANY = "tokens 1e+40 tokens is more than a million chips train on in a year (at most 1e+18; the largest published "
TOO_MANY += "runs train on tens of trillions). Fix: give the tokens of one training run, e.g. 15T."


@pytest.mark.parametrize(("tokens", "says"), [(1e40, TOO_MANY), ("2e18", TOO_MANY.replace("1e+40", "2e+18", 1))])
def test_plan_train_refuses_tokens_past_a_runs_most(server: ChipwiseServer, tokens: Any, says: str) -> None:
    """1e40 tokens had answered 200, a run of 2.09e+34 s costing $2.55e+33; the CLI, the Python API and
    /api/predict refuse it."""
    body = {"model": "llama-3.1-8b", "chips": 64, "hardware": "h100-sxm", "tokens": tokens}
    assert _post(server, "/api/plan/train", body) == (400, {"error": says})


def test_plan_train_takes_tokens_up_to_the_most(server: ChipwiseServer) -> None:
    body = {"model": "llama-3.1-8b", "chips": 64, "hardware": "h100-sxm", "tokens": 1e18, "top": 1}
    status, report = _post(server, "/api/plan/train", body)
    assert status == 200 and report["tokens"] == 1e18


@pytest.mark.parametrize(
    ("request_bytes", "status", "says"),
    [
        (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414,
         "Request-URI Too Long. Fix: shorten the URL: send the inputs in a JSON body POSTed to /api/..."),
        (b"GET / HTTP/1.1\r\n" + b"X-Hi: v\r\n" * 120 + b"\r\n", 431,
         "Too many headers. Fix: send fewer headers, each under 64 KiB."),
        (b"GET / HTTP/9.9\r\n\r\n", None, "Invalid HTTP version (9.9). Fix: speak HTTP/1.1 (or HTTP/1.0)."),
        (b"GET / HTTP/x.y\r\n\r\n", None,
         "Bad request version ('HTTP/x.y'). Fix: send a request line 'METHOD /path HTTP/1.1'"),
        (b"BREW / HTTP/1.0\r\n\r\n", 501, f"Unsupported method ('BREW'). Fix: {METHODS_FIX}."),
    ],
)  # fmt: skip
def test_the_standard_librarys_refusals_name_their_own_fix(
    server: ChipwiseServer, request_bytes: bytes, status: int | None, says: str
) -> None:
    """A URL too long, too many headers or another HTTP version had each been told to GET the page or POST JSON."""
    got, error = _raw(server, request_bytes)
    assert got == status and error.startswith(says), error
    assert "\n" not in error and (status == 501 or "GET the page" not in error)


@pytest.mark.parametrize("path", ["/api/plan/train", "/api/plan/serve", "/api/sensitivity"])
def test_a_body_not_an_object_is_shown_a_json_example(server: ChipwiseServer, path: str) -> None:
    """The example had been a Python dict ({'model': ..., 'chips': ...}): sent as it read, it was not JSON."""
    status, answer = _post(server, path, [])
    assert status == 400
    head, example = answer["error"].split("Fix: send e.g. ")
    assert head == "the request body must be a JSON object. "
    parsed = json.loads(example.removesuffix("."))
    if path == "/api/plan/train":
        assert PlanTrainRequest.model_validate(parsed).chips == 64
    elif path == "/api/plan/serve":
        assert PlanServeRequest.model_validate(parsed).rate == 5
    else:  # accepted as it reads: a serve scenario and a metric of its kind
        result = POST_ROUTES[path](parsed, Settings())
        assert result["metric"] == parsed["metric"] == "tpot_p50"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"figures": ["hbm_bandwidth"]},
         'scenario: Field required. Fix: give a scenario object as /api/predict takes it, e.g. {"kind": "serve"'),
        ({"scenario": SCENARIO, "figures": "hbm_bandwidth"},
         'figures: Input should be a valid list. Fix: give a list of texts a figure\'s name holds, e.g. '
         '["hbm_bandwidth"]'),
        ({"scenario": SCENARIO, "step": "abc"}, "step: Input should be a valid number, unable to parse string as a "
         "number. Fix: give a fraction in (0, 0.5), e.g. 0.1"),
        ({"scenario": SCENARIO, "metric": 5}, "metric: Input should be a valid string. Fix: give one of the "
         "scenario kind's metrics as text (train: step_time, time_to_train, cost, energy, co2e; serve: e2e_p50,"),
        ({"scenario": SCENARIO, "replan": "yes"}, "replan: 'yes' is not true or false. Fix: give true or false"),
    ],
)  # fmt: skip
def test_sensitivity_fields_name_their_own_fix(server: ChipwiseServer, body: Any, says: str) -> None:
    """Each had ended 'give a value of the kind the endpoint's table names', and figures said 'valid tuple'."""
    status, answer = _post(server, "/api/sensitivity", body)
    assert status == 400
    assert answer["error"].startswith(f"sensitivity request: {says}"), answer["error"]
    assert "tuple" not in answer["error"] and "the endpoint's table" not in answer["error"]


def _has_ipv6_loopback() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")
def test_an_ipv6_host_is_listened_on() -> None:
    """--host ::1 had been refused 'Address family for hostname not supported. Fix: choose another --port'."""
    srv = make_server("::1", 0)
    serve_in_thread(srv)
    try:
        assert srv.url == f"http://[::1]:{srv.server_address[1]}/"
        with urllib.request.urlopen(srv.url + "api/models", timeout=30) as res:
            assert res.status == 200 and json.loads(res.read())["models"]
    finally:
        srv.shutdown()
        srv.server_close()
