"""The web server's refusals: other sites (415, 403), bad input as 400 not 500, a client that
leaves, and a missing field's likely typo."""

from __future__ import annotations

import http.client
import json
import socket
import time
from typing import Any

import pytest

from chipwise.interfaces.web.server import ChipwiseServer

JSON = {"Content-Type": "application/json"}
SMALL = {"model": "llama-3.1-8b", "chips": 8, "hardware": ["h100-sxm"], "top": 1}


def _post(srv: ChipwiseServer, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=60)
    try:
        conn.request("POST", path, body=json.dumps(body), headers=headers)
        res = conn.getresponse()
        return res.status, json.loads(res.read())
    finally:
        conn.close()


def test_a_body_not_json_is_refused_415(server: ChipwiseServer) -> None:
    status, answer = _post(server, "/api/plan/train", SMALL, {"Content-Type": "text/plain;charset=UTF-8"})
    assert status == 415
    assert answer["error"].startswith("the request body's Content-Type is text/plain;charset=UTF-8, not application")
    assert _post(server, "/api/plan/train", SMALL, {})[0] == 415


def test_another_sites_host_or_origin_is_refused_403(server: ChipwiseServer) -> None:
    port = server.server_address[1]
    status, answer = _post(server, "/api/plan/train", SMALL, {**JSON, "Host": f"evil.example:{port}"})
    assert status == 403 and answer["error"].startswith(f"the request's Host 'evil.example:{port}' is not")
    status, answer = _post(server, "/api/plan/train", SMALL, {**JSON, "Origin": "http://evil.example"})
    assert status == 403 and "('http://evil.example') is refused" in answer["error"]
    ours = {**JSON, "Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}
    assert _post(server, "/api/plan/train", SMALL, ours)[0] == 200


BAD = [
    (
        "/api/predict",
        {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8, "global_batch_tokens": 1e308},
        "a global batch of 1e+308 tokens is past a thousand times the largest published batch",
    ),
    (
        "/api/plan/train",
        {"model": "llama-3.1-8b", "chips": 8, "hardware": ["h100-sxm"], "global_batch_tokens": 1e308},
        "a global batch of 1e+308 tokens is past",
    ),
    (
        "/api/predict",
        {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8, "region": ""},
        "unknown region ''",
    ),
    (
        "/api/predict",
        {
            "kind": "serve",
            "model": "llama-3.1-8b",
            "hardware": "h100-sxm",
            "chips": 1,
            "input_tokens": "1e400",
            "output_tokens": 64,
            "arrival_rate": 2,
            "requests": 100,
        },
        "'1e400' is not a finite number of tokens",
    ),
    (
        "/api/predict",
        {
            "kind": "serve",
            "model": "llama-3.1-8b",
            "hardware": "h100-sxm",
            "chips": 1,
            "input_tokens": 256,
            "output_tokens": 64,
            "arrival_rate": 2,
            "requests": 100,
            "burstiness": 1e308,
        },
        "burstiness: 1e+308 (the gaps' coefficient of variation) is past where the gamma gaps",
    ),
    ("/api/plan/train", {"model": "llama-3.1-8b", "chip": 64}, "Fix: rename 'chip' to 'chips'"),
]


@pytest.mark.parametrize(("path", "body", "said"), BAD)
def test_bad_input_is_400_with_one_line(server: ChipwiseServer, path: str, body: Any, said: str) -> None:
    status, answer = _post(server, path, body, JSON)
    assert status == 400 and said in answer["error"] and "\n" not in answer["error"]


def test_a_client_that_leaves_prints_no_traceback(server: ChipwiseServer, capfd: pytest.CaptureFixture[str]) -> None:
    body = json.dumps({"model": "llama-3.1-70b", "chips": 4096, "tokens": "15T", "hardware": "all"}).encode()
    port = server.server_address[1]
    head = f"POST /api/plan/train HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    with socket.create_connection(("127.0.0.1", server.server_address[1])) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # reset on close
        sock.sendall(head.encode() + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    _post(server, "/api/plan/train", SMALL, JSON)  # the server still answers
    time.sleep(8)  # the left request finishes and writes to the closed socket
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipe" not in err and "ConnectionReset" not in err
