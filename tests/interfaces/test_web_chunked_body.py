"""A POST body sent chunked (Transfer-Encoding: chunked, as curl sends one it reads from a pipe) is read, at most
MAX_BODY_BYTES as a sized one: it had been refused ('the request body has no Content-Length')."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any

from chipwise.interfaces.web.server import MAX_BODY_BYTES, ChipwiseServer

SMALL = {"model": "llama-3.1-8b", "chips": 8, "hardware": ["h100-sxm"], "top": 1}


def _chunks(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _post_chunked(server: ChipwiseServer, body: Any, size: int = 7) -> tuple[int, dict[str, Any]]:
    """`body` as JSON in chunks of `size` bytes (http.client frames them)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=60)
    data = json.dumps(body).encode()
    conn.request(
        "POST", "/api/plan/train", _chunks(data, size), {"Content-Type": "application/json"}, encode_chunked=True
    )
    resp = conn.getresponse()
    answer = json.loads(resp.read())
    conn.close()
    return resp.status, answer


def _raw(server: ChipwiseServer, framed: bytes, coding: str = "chunked") -> tuple[int, dict[str, Any]]:
    """A POST with the body framed as given, its Transfer-Encoding `coding`; the status and the JSON answer."""
    port = server.server_address[1]
    head = (
        f"POST /api/plan/train HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Transfer-Encoding: {coding}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head + framed)
        reply = sock.makefile("rb")
        status = int(reply.readline().split()[1])
        length = 0
        while (line := reply.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            length = int(value) if name.lower() == "content-length" else length
        return status, json.loads(reply.read(length))


def test_a_chunked_body_is_read(server: ChipwiseServer) -> None:
    status, answer = _post_chunked(server, SMALL)
    assert status == 200, answer
    assert [r["hardware"] for r in answer["results"]] == ["h100-sxm"]


def test_a_chunked_body_is_checked_as_any_other(server: ChipwiseServer) -> None:
    status, answer = _post_chunked(server, {"model": "llama-3.1-8b", "chip": 64}, size=3)
    assert status == 400 and "Fix: rename 'chip' to 'chips'" in answer["error"]


def test_a_chunked_body_over_the_limit_is_413(server: ChipwiseServer) -> None:
    """1 MiB + 1 byte in chunks of 64 KiB: refused once past MAX_BODY_BYTES, as a Content-Length past it is."""
    chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
    framed = chunk * (MAX_BODY_BYTES // 0x10000) + b"1\r\n \r\n0\r\n\r\n"
    status, answer = _raw(server, framed)
    assert status == 413 and answer["error"].startswith("the request body is over 1,048,576 bytes")


def test_bad_framing_and_other_codings_are_one_line(server: ChipwiseServer) -> None:
    status, answer = _raw(server, b"zz\r\n{}\r\n0\r\n\r\n")
    assert status == 400
    assert answer["error"] == (
        "a chunk's size 'zz' is not a hexadecimal number. Fix: send the body chunked as HTTP/1.1 frames it, or "
        "with a Content-Length."
    )
    status, answer = _raw(server, b"2\r\n{}x\r\n0\r\n\r\n")  # 3 bytes where 2 are announced
    assert status == 400 and answer["error"].startswith("a chunk is not the size its line announces (2 bytes)")
    status, answer = _raw(server, b"0\r\n\r\n")
    assert status == 400 and answer["error"] == "the request has no body. Fix: send a JSON object."
    status, answer = _raw(server, b"{}", coding="gzip")
    assert status == 400 and answer["error"].startswith("the request body's Transfer-Encoding 'gzip' is not read.")
