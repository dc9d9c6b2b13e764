"""The HTTP side of the web page: the standard library's threading server, one page, JSON in and out.

    GET  /                 the page (index.html, offline: no CDN)
    GET  /api/catalog      chips and systems with headline figures
    GET  /api/models       model presets
    POST /api/predict      a scenario (DESIGN.md contract) -> its prediction
    POST /api/plan/train   {model, chips, hardware, tokens, precision, objective, pricing, ...} -> the ranking
    POST /api/plan/serve   {model, rate | concurrency | offline, input_tokens, output_tokens, slo, hardware,
                            precision, speculative, ...} -> the cheapest fleets, simulated

Bad input answers HTTP 400 with {"error": "<one line: the problem. Fix: ...>"}.
"""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, ClassVar
from urllib.parse import urlsplit

from chipwise.errors import ChipwiseError, long_number
from chipwise.interfaces.web.routes import GET_ROUTES, POST_ROUTES, Settings, jsonable

MAX_BODY_BYTES = 1 << 20


def page() -> bytes:
    """The single HTML page, shipped as package data."""
    return (resources.files("chipwise.interfaces.web") / "index.html").read_bytes()


class ChipwiseServer(ThreadingHTTPServer):
    """A threading HTTP server that knows the catalog settings and the page."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], settings: Settings) -> None:
        super().__init__(address, Handler)
        self.settings = settings
        self.page = page()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = host if isinstance(host, str) else host.decode()
        if shown in ("0.0.0.0", "::", ""):
            shown = "127.0.0.1"
        return f"http://{shown}:{port}/"


class Handler(BaseHTTPRequestHandler):
    server: ChipwiseServer
    server_version = "chipwise"
    protocol_version = "HTTP/1.1"
    quiet: ClassVar[bool] = True

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif path in GET_ROUTES:
            self._answer(lambda: GET_ROUTES[path](self.server.settings))
        elif path in POST_ROUTES:
            self._error(
                HTTPStatus.METHOD_NOT_ALLOWED, f"'{path}' answers POST. Fix: POST a JSON body to it (see docs/web.md)."
            )
        else:
            self._error(HTTPStatus.NOT_FOUND, f"no page '{path}'. Fix: open / or use the /api/... endpoints.")

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path not in POST_ROUTES:
            self._error(HTTPStatus.NOT_FOUND, f"no endpoint 'POST {path}'. Fix: use {' or '.join(POST_ROUTES)}.")
            return
        try:
            body = self._json_body()
        except ChipwiseError as exc:
            self._error(HTTPStatus.BAD_REQUEST, str(exc))
            return
        self._answer(lambda: POST_ROUTES[path](body, self.server.settings))

    def _json_body(self) -> Any:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise ChipwiseError("Content-Length is not a number. Fix: send a JSON body with its length.") from None
        if length <= 0:
            raise ChipwiseError("the request has no body. Fix: send a JSON object.")
        if length > MAX_BODY_BYTES:
            raise ChipwiseError(f"the request body is over {MAX_BODY_BYTES:,} bytes. Fix: send a smaller JSON object.")
        raw = self.rfile.read(length)
        try:
            return json.loads(raw)
        except ValueError as exc:  # bad syntax, not UTF-8, or a number of thousands of digits
            if (long := long_number(exc, "the request body")) is not None:
                raise long from None
            where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
            raise ChipwiseError(f"the request body is not valid JSON{where}. Fix: send a JSON object.") from None

    def _answer(self, compute: Any) -> None:
        try:
            result = compute()
        except ChipwiseError as exc:
            self._error(HTTPStatus.BAD_REQUEST, str(exc))
        except Exception as exc:  # a bug, not bad input: still one line, and the server keeps serving
            self._error(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                f"internal error: {type(exc).__name__}: {exc}. Fix: rerun with the CLI and CHIPWISE_DEBUG=1, "
                "and report it.",
            )
        else:
            self._json(HTTPStatus.OK, result)

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._json(status, {"error": " ".join(message.split())})

    def _json(self, status: HTTPStatus, obj: Any) -> None:
        body = json.dumps(jsonable(obj), allow_nan=False).encode()
        self._send(status, body, "application/json")

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        if not self.quiet:
            super().log_message(format, *args)


def make_server(host: str = "127.0.0.1", port: int = 8765, settings: Settings | None = None) -> ChipwiseServer:
    """A server bound to host:port (port 0: a free one), not yet serving. Raises ChipwiseError if it cannot bind."""
    try:
        return ChipwiseServer((host, port), settings or Settings())
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ChipwiseError(
            f"cannot listen on {host}:{port} ({reason}). Fix: choose another --port (0 picks a free one) or --host."
        ) from None


def serve_in_thread(server: ChipwiseServer) -> threading.Thread:
    """Serve in a daemon thread (tests, notebooks); stop with `server.shutdown()` then `server.server_close()`."""
    thread = threading.Thread(target=server.serve_forever, name="chipwise-web", daemon=True)
    thread.start()
    return thread
