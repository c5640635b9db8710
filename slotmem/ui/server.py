"""`slotmem ui`'s web server: the standard library's, no dependency. Requests are served on
threads; every Store call runs on one worker thread, so the Store sees a single caller.

Who may do what: the server answers on the address it is bound to (127.0.0.1 by default). A
page that changes nothing is open to whoever reaches that address, except on a non-loopback
bind, where every request needs the token (``?token=`` once, then a cookie). A change is a POST
that needs ``--write``, a file this process can write (a memory on PostgreSQL: not opened
read-only), and the token in the form (each page's
forms carry it: a page of another site cannot read it, so it cannot post for you). Anything else
is refused and changes nothing. On loopback the Host header must name the server, which stops
a site that rebinds its DNS name to 127.0.0.1 from reading the pages."""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import secrets
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from ..errors import SlotmemError
from . import actions, api, overview, pages
from .html import notice, page

log = logging.getLogger(__name__)
MAX_FORM_BYTES = 1 << 20
COOKIE = "slotmem_ui_token"
ROUTES = {
    "/": pages.facts,
    "/fact": pages.fact,
    "/forget": pages.forget,
    "/search": pages.search,
    "/context": pages.context,
    "/history": pages.changes,
    "/undo": pages.undo,
    "/map": overview.overview,
}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class UI:
    """The memory at ``path`` (a file, or a ``postgresql://`` URL) served on ``host``:``port`` (0: any free port). ``write``
    offers changes; ``token`` (default: a random one) guards them, and every request on a
    non-loopback bind."""

    def __init__(
        self,
        path,
        *,
        host: str = "127.0.0.1",
        port: int = 8765,
        write: bool = False,
        token: str | None = None,
        readonly: bool | None = None,
    ):
        from ..store import Store

        self.worker = ThreadPoolExecutor(1, thread_name_prefix="slotmem-ui-store")
        try:
            self.store = self.worker.submit(Store, path, readonly=readonly).result()
        except BaseException:
            self.worker.shutdown()
            raise
        self.writable = bool(write) and not self.store.readonly
        self.on_file = getattr(self.store, "target", None) is None  # else a PostgreSQL memory
        self.token = token or secrets.token_urlsafe(18)
        self.loopback = is_loopback(host)
        try:
            self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        except OSError as e:
            self.close()
            raise SlotmemError(f"cannot serve on {host}:{port}: {e.strerror or e}") from e
        self.httpd.daemon_threads = True
        self.host, self.port = host, self.httpd.server_address[1]

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        base = f"http://{host}:{self.port}/"
        return base if self.loopback else f"{base}?token={self.token}"

    def call(self, function, *args):
        """``function(store, *args)`` on the Store's thread."""
        return self.worker.submit(function, self.store, *args).result()

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def shutdown(self) -> None:
        """Stop serve_forever (from another thread)."""
        self.httpd.shutdown()

    def close(self) -> None:
        if hasattr(self, "httpd"):
            self.httpd.server_close()
        self.worker.submit(self.store.close).result()
        self.worker.shutdown()

    def hosts(self) -> set[str]:
        """The Host headers a loopback server answers."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        names = {host, "localhost", "127.0.0.1", "[::1]"}
        return {f"{name}:{self.port}" for name in names} | (names if self.port == 80 else set())


def _handler(ui: UI):
    class Handler(BaseHTTPRequestHandler):
        server_version = "slotmem-ui"

        def log_message(self, format, *args):
            log.info("%s " + format, self.address_string(), *args)

        # -- the gate every request passes ------------------------------------------------
        def admitted(self, params: dict) -> bool:
            if ui.loopback and self.headers.get("Host", "") not in ui.hosts():
                self.send_page(HTTPStatus.FORBIDDEN, "Refused", "This address is not served.")
                return False
            if ui.loopback:
                return True
            given = params.get("token") or self.cookie()
            if given and hmac.compare_digest(given.encode(), ui.token.encode()):
                return True
            self.send_page(
                HTTPStatus.UNAUTHORIZED,
                "Token needed",
                "This memory is served beyond this machine: open the address with the token "
                "that slotmem ui printed.",
            )
            return False

        def cookie(self) -> str:
            for part in self.headers.get("Cookie", "").split(";"):
                name, _, value = part.strip().partition("=")
                if name == COOKIE:
                    return value
            return ""

        # -- GET: pages that read -------------------------------------------------------------
        def do_GET(self):
            split = urlsplit(self.path)
            params = dict(parse_qsl(split.query))
            if not self.admitted(params):
                return
            if split.path == "/favicon.ico":
                self.send_response(HTTPStatus.NO_CONTENT)
                self.end_headers()
                return
            if split.path in api.ROUTES:
                self.send_api(api.ROUTES[split.path], params)
                return
            route = ROUTES.get(split.path)
            if route is None:
                self.send_page(HTTPStatus.NOT_FOUND, "Not found", f"No page {split.path}.")
                return
            view = pages.View(ui.writable, ui.token)
            try:
                title, body = ui.call(route, params, view)
            except SlotmemError as e:
                self.send_page(HTTPStatus.BAD_REQUEST, "Cannot show this", str(e))
                return
            except Exception:
                log.exception("slotmem ui: %s", self.path)
                self.send_page(HTTPStatus.INTERNAL_SERVER_ERROR, "Error", "Something broke.")
                return
            done = params.get("done", "")
            self.send_html(
                HTTPStatus.OK,
                page(
                    title, body, path=str(ui.store.path), writable=ui.writable, notice=notice(done)
                ),
                token_cookie="token" in params,
            )

        # -- POST: changes ----------------------------------------------------------------
        def do_POST(self):
            split = urlsplit(self.path)
            if not self.admitted(dict(parse_qsl(split.query))):
                return
            length = int(self.headers.get("Content-Length") or 0)
            if split.path != "/act" or length > MAX_FORM_BYTES:
                self.send_page(HTTPStatus.BAD_REQUEST, "Refused", "Not a change this page makes.")
                return
            form = dict(parse_qsl(self.rfile.read(length).decode("utf-8", "replace")))
            if not ui.writable:
                why = "start it with --write"
                if ui.store.readonly:  # a file this process cannot write, or opened so
                    why = "the file is read-only" if ui.on_file else "it was opened read-only"
                self.send_page(
                    HTTPStatus.FORBIDDEN, "Read-only", f"This memory is open read-only: {why}."
                )
                return
            given = form.get("token", "")
            if not hmac.compare_digest(given.encode(), ui.token.encode()):
                self.send_page(
                    HTTPStatus.FORBIDDEN, "Refused", "This change lacks the page's token."
                )
                return
            try:
                where, done = ui.call(actions.apply, form)
            except SlotmemError as e:
                self.send_page(HTTPStatus.BAD_REQUEST, "Not changed", str(e))
                return
            except Exception:
                log.exception("slotmem ui: %s", form.get("action"))
                self.send_page(HTTPStatus.INTERNAL_SERVER_ERROR, "Error", "Something broke.")
                return
            joiner = "&" if "?" in where else "?"
            self.send_response(HTTPStatus.SEE_OTHER)
            self.send_header("Location", f"{where}{joiner}{_query(done=done)}")
            self.end_headers()

        # -- answers ----------------------------------------------------------------------
        def send_api(self, route, params: dict) -> None:
            try:
                status, data = HTTPStatus.OK, ui.call(route, params)
            except SlotmemError as e:
                status, data = HTTPStatus.BAD_REQUEST, {"error": str(e)}
            except Exception:
                log.exception("slotmem ui: %s", self.path)
                status, data = HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "something broke"}
            body = json.dumps(data, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def send_page(self, status: HTTPStatus, title: str, text: str) -> None:
            html = page(
                title,
                notice(text, error=True),
                path=str(ui.store.path),
                writable=ui.writable,
            )
            self.send_html(status, html)

        def send_html(self, status: HTTPStatus, html: str, *, token_cookie: bool = False):
            data = html.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Frame-Options", "DENY")  # no clicking its buttons from a frame
            self.send_header("Referrer-Policy", "no-referrer")  # the token stays here
            if token_cookie and not ui.loopback:
                self.send_header(
                    "Set-Cookie", f"{COOKIE}={ui.token}; HttpOnly; SameSite=Strict; Path=/"
                )
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _query(**params) -> str:
    from urllib.parse import urlencode

    return urlencode(params)
