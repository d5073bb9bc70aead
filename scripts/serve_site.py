"""Serve the built site on 127.0.0.1 with the MIME types its calculators need (``make serve``).

Python's ``http.server`` guesses types from the system's tables, which on some machines
lack ``.mjs`` and ``.wasm``: Pyodide then fails to load (a module script must be served as
JavaScript, WebAssembly as ``application/wasm``). This server names them explicitly.
Opening the HTML files straight from disk (``file://``) shows every page, but browsers do
not let a file start the live calculators; serve the folder instead.

Usage: ``python scripts/serve_site.py [--host 127.0.0.1] [--port 8000] [--directory
_build/html]``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import socketserver
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

_Server = TypeVar("_Server", bound=socketserver.BaseServer)

#: Types a static host must get right for this site (any other host: configure the same).
MIME_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".zip": "application/zip",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".ipynb": "application/x-ipynb+json",
}


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """``SimpleHTTPRequestHandler`` with :data:`MIME_TYPES` on top of the system's table."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}


class SiteHTTPServer(http.server.ThreadingHTTPServer):
    """A threading server that takes a browser dropping a connection in stride.

    A reader who leaves a page while it still loads (Pyodide's 13 MB, a snapshot) closes
    the connection mid-reply; ``socketserver`` would print that as a traceback headed
    "Exception occurred during processing of request". Every other error still prints.
    """

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # reset, broken pipe, aborted
            return
        super().handle_error(request, client_address)


@contextlib.contextmanager
def in_background(server: _Server, name: str | None = None) -> Iterator[_Server]:
    """``server`` answering on a daemon thread for the ``with`` block, then shut down and
    closed (the browser tests' servers and the site benchmark's)."""
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--directory", type=Path, default=Path("_build/html"))
    args = parser.parse_args(argv)
    if not (args.directory / "index.html").is_file():
        print(f"No site in {args.directory}: run 'make book' first.", file=sys.stderr)
        return 1
    handler = functools.partial(SiteHandler, directory=str(args.directory))
    with SiteHTTPServer((args.host, args.port), handler) as server:
        print(f"Serving {args.directory} on http://{args.host}:{args.port}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
