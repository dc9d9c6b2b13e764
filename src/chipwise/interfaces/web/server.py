"""The HTTP side of the web page: the standard library's threading server, one page, JSON in and out.

    GET  /                 the page (index.html, offline: no CDN)
    GET  /api/catalog      chips and systems with headline figures
    GET  /api/models       model presets
    POST /api/predict      a scenario (DESIGN.md contract) -> its prediction
    POST /api/plan/train   {model, chips, hardware, tokens, precision, objective, pricing, ...} -> the ranking
    POST /api/plan/serve   {model, rate | concurrency | offline, input_tokens, output_tokens, slo, hardware,
                            precision, speculative, ...} -> the cheapest fleets, simulated

HEAD answers as GET without the body; a POST body comes with its Content-Length or chunked (Transfer-Encoding:
chunked, as curl sends a body it reads from a pipe), at most MAX_BODY_BYTES either way. Bad input answers HTTP 400
with {"error": "<one line: the problem. Fix: ...>"}; a body too large 413, one that stops arriving 408, another
method 405 (with an Allow header): JSON all the same.

Other web sites are refused: a POST whose body is not `application/json` 415 (a `text/plain` or form POST is one a
page on any site may send without asking), and a request whose Host is not the server's address, or whose Origin is
another site's, 403 (a name that an attacker's DNS points at 127.0.0.1 would let their page read the answers).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Sequence
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, ClassVar
from urllib.parse import urlsplit

from chipwise.catalog.strict_yaml import RepeatedKeyError, load_json
from chipwise.errors import ChipwiseError, long_number
from chipwise.interfaces.format import jsonable
from chipwise.interfaces.web.routes import GET_ROUTES, POST_ROUTES, Settings

MAX_BODY_BYTES = 1 << 20
#: seconds a request's socket may wait for its next bytes (or for the client to take the answer) before the server
#: drops it: a body shorter than its Content-Length held a thread forever
READ_TIMEOUT_S = 30.0
#: the most bytes of a body answered unread (too large, a wrong path) that are read and dropped: left unread they
#: were read as the next request, and a socket closed on them resets the connection before the client reads the answer
MAX_SKIPPED_BYTES = 16 * MAX_BODY_BYTES
_SKIP_CHUNK = 1 << 16
#: the longest line of a chunked body's framing read (a chunk's size with its extensions, a trailer)
MAX_CHUNK_LINE = 1 << 12
#: what a chunked body whose framing cannot be read is told
CHUNKED_FIX = "Fix: send the body chunked as HTTP/1.1 frames it, or with a Content-Length."
PAGES = ("/", "/index.html")
#: what a request in another method is told (405, and 501 for a method the standard library has no name for)
METHODS_FIX = "GET the page or /api/catalog and /api/models, POST a JSON body to the other /api/... (see docs/web.md)"
#: the fix of each other refusal of the standard library's, by status: a URL too long had been told METHODS_FIX
LIBRARY_FIXES = {
    HTTPStatus.REQUEST_URI_TOO_LONG: "shorten the URL: send the inputs in a JSON body POSTed to /api/... (see "
    "docs/web.md)",
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: "send fewer headers, each under 64 KiB",
    HTTPStatus.BAD_REQUEST: "send a request line 'METHOD /path HTTP/1.1' and headers as HTTP/1.1 writes them",
    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: "speak HTTP/1.1 (or HTTP/1.0)",
}
#: the names a browser on this machine reaches a loopback server by; a server bound to every interface (--host
#: 0.0.0.0) is reached by names this one cannot know, and checks the Origin only
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
TOO_DEEP = "the request body is nested too deeply to read. Fix: send a JSON object a few levels deep (see docs/web.md)."


class RequestError(ChipwiseError):
    """A request refused with an HTTP status other than 400 Bad Request (a body too large, or that stalls)."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def allowed_methods(path: str) -> str | None:
    """The methods `path` answers, as an Allow header lists them; None for no such path."""
    if path in PAGES or path in GET_ROUTES:
        return "GET, HEAD"
    if path in POST_ROUTES:
        return "POST"
    return None


def chunked(headers: Message) -> bool:
    """Whether a request's body comes in chunks (Transfer-Encoding: chunked, and no other coding)."""
    return (headers.get("Transfer-Encoding") or "").strip().lower() == "chunked"


def declared_length(headers: Message) -> int | None:
    """The body length a request's headers announce (0 for none); None where it cannot be known (chunked, or a
    Content-Length that is not a number)."""
    if headers.get("Transfer-Encoding") is not None:
        return None
    try:
        return int(headers.get("Content-Length") or 0)
    except ValueError:
        return None


def page() -> bytes:
    """The single HTML page, shipped as package data."""
    return (resources.files("chipwise.interfaces.web") / "index.html").read_bytes()


class ChipwiseServer(ThreadingHTTPServer):
    """A threading HTTP server that knows the catalog settings and the page."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], settings: Settings) -> None:
        # an IPv6 address ('::1', '::') listens on IPv6: the IPv4 socket had refused it as 'Address family for
        # hostname not supported', with a fix to change the port
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, Handler)
        self.settings = settings
        self.page = page()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = host if isinstance(host, str) else host.decode()
        if shown in WILDCARD_HOSTS:
            shown = "::1" if self.address_family == socket.AF_INET6 else "127.0.0.1"
        return f"http://[{shown}]:{port}/" if ":" in shown else f"http://{shown}:{port}/"


class Handler(BaseHTTPRequestHandler):
    server: ChipwiseServer
    server_version = "chipwise"
    protocol_version = "HTTP/1.1"
    quiet: ClassVar[bool] = True
    timeout = READ_TIMEOUT_S  # StreamRequestHandler.setup sets it on the socket
    #: the request announced a body that nothing has read yet (read or dropped before the answer)
    body_unread = False

    def parse_request(self) -> bool:
        self.body_unread = False
        if not super().parse_request():
            return False
        self.body_unread = declared_length(self.headers) != 0
        foreign = self._foreign_site()
        if foreign is not None:
            self._error(HTTPStatus.FORBIDDEN, foreign)
            return False
        return True

    def handle(self) -> None:
        """A client that leaves mid-answer (a reloaded page, a closed tab) ends its connection quietly: the
        standard library printed a traceback for each."""
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _foreign_site(self) -> str | None:
        """Why a request from another site is refused (its Host is not this server's address, or its Origin is
        another site than its Host), or None."""
        host = (self.headers.get("Host") or "").lower()
        bound, port = self.server.server_address[:2]
        bound = bound if isinstance(bound, str) else bound.decode()
        try:
            named = urlsplit(f"//{host}")
            ours = named.hostname in (*LOOPBACK_NAMES, bound.lower()) and (named.port or 80) == port
        except ValueError:  # a port that is not a number
            ours = False
        if host and bound not in WILDCARD_HOSTS and not ours:
            return (
                f"the request's Host '{host}' is not this server's address. Fix: open {self.server.url} (or "
                f"localhost:{port}) itself."
            )
        origin = self.headers.get("Origin")
        if origin is not None and urlsplit(origin.lower()).netloc != host:
            return (
                f"a request from the page of another site ('{origin}') is refused. Fix: use the page at "
                f"{self.server.url}, or send no Origin header from a script."
            )
        return None

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path in PAGES:
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8")
        elif path in GET_ROUTES:
            self._answer(lambda: GET_ROUTES[path](self.server.settings))
        else:
            self._refuse_method(path)

    def do_HEAD(self) -> None:
        """As GET: `_send` leaves the body out."""
        self.do_GET()

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path not in POST_ROUTES:
            self._refuse_method(path)
            return
        if self.headers.get_content_type() != "application/json":
            given = self.headers.get("Content-Type") or "none"
            self._error(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                f"the request body's Content-Type is {given}, not application/json. Fix: send the header "
                "'Content-Type: application/json' (curl: -H 'Content-Type: application/json').",
            )
            return
        try:
            body = self._json_body()
        except ChipwiseError as exc:
            self._error(exc.status if isinstance(exc, RequestError) else HTTPStatus.BAD_REQUEST, str(exc))
            return
        self._answer(lambda: POST_ROUTES[path](body, self.server.settings))

    def do_PUT(self) -> None:
        self._refuse_method(urlsplit(self.path).path)

    def do_DELETE(self) -> None:
        self._refuse_method(urlsplit(self.path).path)

    def do_PATCH(self) -> None:
        self._refuse_method(urlsplit(self.path).path)

    def do_OPTIONS(self) -> None:
        """405 with the Allow header, as for any method a path does not answer (the standard library said 501)."""
        self._refuse_method(urlsplit(self.path).path)

    def do_TRACE(self) -> None:
        self._refuse_method(urlsplit(self.path).path)

    def _refuse_method(self, path: str) -> None:
        """405 with the methods `path` answers, or 404 for a path that answers none."""
        allowed = allowed_methods(path)
        if allowed is None and self.command == "POST":
            self._error(HTTPStatus.NOT_FOUND, f"no endpoint 'POST {path}'. Fix: use {' or '.join(POST_ROUTES)}.")
        elif allowed is None:
            self._error(HTTPStatus.NOT_FOUND, f"no page '{path}'. Fix: open / or use the /api/... endpoints.")
        elif allowed == "POST":
            self._error(
                HTTPStatus.METHOD_NOT_ALLOWED,
                f"'{path}' answers POST. Fix: POST a JSON body to it (see docs/web.md).",
                allow=allowed,
            )
        else:
            self._error(
                HTTPStatus.METHOD_NOT_ALLOWED, f"'{path}' answers GET, not {self.command}. Fix: GET it.", allow=allowed
            )

    def _json_body(self) -> Any:
        raw = self._read_chunked() if chunked(self.headers) else self._read_sized()
        try:
            return load_json(raw)  # a key given twice refused (json keeps the last silently), as the CLI refuses it
        except RepeatedKeyError as exc:
            raise ChipwiseError(f"the request body gives the key '{exc.key}' twice. Fix: give each key once.") from None
        except RecursionError:  # '[' * 100000: the parser's recursion dropped the connection without an answer
            raise ChipwiseError(TOO_DEEP) from None
        except ValueError as exc:  # bad syntax, not UTF-8, or a number of thousands of digits
            if (long := long_number(exc, "the request body")) is not None:
                raise long from None
            where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
            raise ChipwiseError(f"the request body is not valid JSON{where}. Fix: send a JSON object.") from None

    def _read_sized(self) -> bytes:
        """The body its Content-Length announces; one line where it has none that can be read, none, or too much."""
        length = declared_length(self.headers)
        if length is None:
            coding = self.headers.get("Transfer-Encoding")
            self.close_connection = coding is not None  # its bytes cannot be skipped: the connection ends
            raise ChipwiseError(
                f"the request body's Transfer-Encoding '{coding}' is not read. Fix: send the body with a "
                "Content-Length, or chunked."
                if coding is not None
                else "the request body has no Content-Length that is a number. Fix: send a JSON body with its length."
            )
        if length <= 0:
            raise ChipwiseError("the request has no body. Fix: send a JSON object.")
        if length > MAX_BODY_BYTES:
            raise self._too_large()
        return self._read_body(length)

    def _too_large(self) -> RequestError:
        """A body over MAX_BODY_BYTES: 413, and the connection ends (the rest is not read)."""
        self.close_connection = True
        return RequestError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"the request body is over {MAX_BODY_BYTES:,} bytes. Fix: send a smaller JSON object.",
        )

    def _read_chunked(self) -> bytes:
        """A chunked body (Transfer-Encoding: chunked, RFC 9112 7.1): each chunk's hexadecimal size line, its bytes
        and CRLF, to a chunk of size 0 and the trailer's blank line; at most MAX_BODY_BYTES in all (413 past it).
        Framing that cannot be read, or that stops, ends the connection, its bytes out of step with the requests.
        It had been refused ('the request body has no Content-Length')."""
        self.body_unread = False
        self.close_connection = True  # until the last chunk is read: a refusal leaves the rest unread
        parts: list[bytes] = []
        size = 0
        try:
            while (n := self._chunk_size()) > 0:
                size += n
                if size > MAX_BODY_BYTES:
                    raise self._too_large()
                parts.append(self._chunk_bytes(n))
            while self._chunk_line() not in (b"", b"\r\n", b"\n"):  # the trailer's fields, to its blank line
                pass
        except TimeoutError:
            raise RequestError(
                HTTPStatus.REQUEST_TIMEOUT,
                f"the chunked request body stopped arriving for {self.timeout:g} s before its last chunk. Fix: send "
                "the whole body, ending with a chunk of size 0.",
            ) from None
        self.close_connection = False
        if size == 0:
            raise ChipwiseError("the request has no body. Fix: send a JSON object.")
        return b"".join(parts)

    def _chunk_line(self) -> bytes:
        """One line of a chunked body's framing, with its line end; one line where it stops or runs too long."""
        line = self.rfile.readline(MAX_CHUNK_LINE + 1)
        if not line.endswith(b"\n"):
            what = (
                "a line of its framing is too long" if len(line) > MAX_CHUNK_LINE else "it ended before its last chunk"
            )
            raise ChipwiseError(f"the chunked request body cannot be read: {what}. {CHUNKED_FIX}")
        return line

    def _chunk_size(self) -> int:
        """The size of the next chunk, its extensions (';name=value') dropped."""
        text = self._chunk_line().split(b";")[0].strip()
        try:
            n = int(text, 16)
        except ValueError:
            n = -1
        if n < 0 or not text.isalnum():
            shown = text[:20].decode("ascii", "replace")
            raise ChipwiseError(f"a chunk's size '{shown}' is not a hexadecimal number. {CHUNKED_FIX}")
        return n

    def _chunk_bytes(self, n: int) -> bytes:
        """A chunk's `n` bytes and the line end after them."""
        data = self.rfile.read(n)
        if len(data) < n or self._chunk_line().strip():
            raise ChipwiseError(f"a chunk is not the size its line announces ({n:,} bytes). {CHUNKED_FIX}")
        return data

    def _read_body(self, length: int) -> bytes:
        """The body's `length` bytes; a body that stops short (it stalls past the timeout, or the client stops
        sending) ends the connection, its bytes out of step with the requests."""
        self.body_unread = False
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            self.close_connection = True
            raise RequestError(
                HTTPStatus.REQUEST_TIMEOUT,
                f"the request body stopped arriving for {self.timeout:g} s before its {length:,} bytes. "
                "Fix: send the whole body its Content-Length announces.",
            ) from None
        if len(raw) < length:
            self.close_connection = True
            raise ChipwiseError(
                f"the request body ended after {len(raw):,} of its {length:,} bytes. "
                "Fix: send the whole body its Content-Length announces."
            )
        return raw

    def _answer(self, compute: Callable[[], Any]) -> None:
        try:
            result = compute()
        except ChipwiseError as exc:
            self._error(HTTPStatus.BAD_REQUEST, str(exc))
        except RecursionError:  # a body that parsed, nested too deeply for what reads it next
            self._error(HTTPStatus.BAD_REQUEST, TOO_DEEP)
        except Exception as exc:  # a bug, not bad input: still one line, and the server keeps serving
            self._error(
                HTTPStatus.INTERNAL_SERVER_ERROR,
                f"internal error: {type(exc).__name__}: {exc}. Fix: rerun with the CLI and CHIPWISE_DEBUG=1, "
                "and report it.",
            )
        else:
            self._json(HTTPStatus.OK, result)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (an unknown method, a request line or headers it cannot read) in
        JSON as the rest, not its HTML page; the connection ends, as it ends it."""
        self.log_error("code %d, message %s", code, message)
        self.close_connection = True
        status = HTTPStatus(code)
        self._error(status, f"{message or status.phrase}. Fix: {LIBRARY_FIXES.get(status, METHODS_FIX)}.")

    def _error(self, status: HTTPStatus, message: str, allow: str | None = None) -> None:
        headers = [("Allow", allow)] if allow is not None else []
        self._json(status, {"error": " ".join(message.split())}, headers)

    def _json(self, status: HTTPStatus, obj: Any, headers: Sequence[tuple[str, str]] = ()) -> None:
        body = json.dumps(jsonable(obj), allow_nan=False).encode()
        self._send(status, body, "application/json", headers)

    def _send(
        self, status: HTTPStatus, body: bytes, content_type: str, headers: Sequence[tuple[str, str]] = ()
    ) -> None:
        self._skip_unread_body()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in headers:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _skip_unread_body(self) -> None:
        """Read and drop a body the answer did not read, so that its bytes are not read as the next request and the
        client, still sending, gets the answer; a body that cannot be skipped (no length, over MAX_SKIPPED_BYTES,
        stalled or cut short) ends the connection."""
        if not self.body_unread:
            return
        self.body_unread = False
        left = declared_length(self.headers)
        if left is None or left > MAX_SKIPPED_BYTES:
            self.close_connection = True
            return
        try:
            while left > 0:
                chunk = self.rfile.read(min(left, _SKIP_CHUNK))
                if not chunk:
                    break
                left -= len(chunk)
        except OSError:  # TimeoutError included
            pass
        if left > 0:
            self.close_connection = True

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
