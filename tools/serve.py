"""`make serve`: the built book on localhost, with a local Jupyter server for its live code.

    python -m tools.serve [--html _build/html] [--root .] [--port 8000] [--kernel-port 8888]

Two servers, both bound to 127.0.0.1 only:

* the book (static files from `--html`), which also answers `_static/local-kernel.json`
  with the Jupyter server's address and this run's token: `book/_static/live-code.js`
  reads it when a student presses "Run the code here";
* a Jupyter server rooted at the course folder (`--root`), with a fresh random token and
  cross-origin requests allowed from localhost pages only. A page's kernel starts in the
  page's folder (`book/` for the chapters), so `from course import ...` works.

Port 0 picks a free port. `LocalBook` is the same thing as an object, for the browser tests.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.1"
ORIGINS = r"^https?://(localhost|127\.0\.0\.1)(:\d+)?$"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class _BookHandler(SimpleHTTPRequestHandler):
    kernel_settings: dict = {}

    def log_message(self, format, *args):  # noqa: A002 - quiet unless an error
        if args and str(args[1] if len(args) > 1 else "").startswith(("4", "5")):
            sys.stderr.write("book: " + format % args + "\n")

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_GET(self):
        if self.path.split("?")[0].endswith("/_static/local-kernel.json"):
            body = json.dumps(self.kernel_settings).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


class LocalBook:
    """The book on http://127.0.0.1:<port>/ plus a Jupyter server for live code."""

    def __init__(self, html: Path, root: Path, port: int = 8000, kernel_port: int = 8888, kernel: bool = True):
        self.html, self.root = Path(html).resolve(), Path(root).resolve()
        self.port = port  # 0: the HTTP server binds a free port itself in start() (no race with other servers)
        self.kernel_port = kernel_port or free_port()
        self.kernel = kernel
        self.token = secrets.token_hex(24)
        self.jupyter: subprocess.Popen | None = None
        self.httpd: ThreadingHTTPServer | None = None
        self.log = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    @property
    def jupyter_url(self) -> str:
        return f"http://{HOST}:{self.kernel_port}/"

    def start(self, timeout: float = 120) -> "LocalBook":
        if not (self.html / "index.html").is_file():
            raise SystemExit(f"no built book in {self.html}: run `make book` first")
        if self.kernel:
            self._start_jupyter(timeout)
        handler = type("Handler", (_BookHandler,), {"kernel_settings": self.settings() if self.kernel else {}})
        self.httpd = ThreadingHTTPServer((HOST, self.port), functools.partial(handler, directory=str(self.html)))
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def settings(self) -> dict:
        return {"baseUrl": self.jupyter_url, "token": self.token, "kernelName": "python3", "pathPrefix": ""}

    def _start_jupyter(self, timeout: float) -> None:
        args = [
            sys.executable, "-m", "jupyter_server", "--no-browser",
            f"--ServerApp.ip={HOST}", f"--ServerApp.port={self.kernel_port}", "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={self.root}", f"--IdentityProvider.token={self.token}",
            f"--ServerApp.allow_origin_pat={ORIGINS}",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.append("--allow-root")  # containers and CI run as root
        env = dict(os.environ)
        env.pop("MPLBACKEND", None)  # kernels keep matplotlib's inline backend
        self.log_path = self.html.parent / "jupyter-serve.log"  # _build/jupyter-serve.log
        self.log = open(self.log_path, "w")
        # Its own session: Ctrl-C in the terminal reaches only us (Jupyter would ask to confirm),
        # and we stop it with SIGTERM, which shuts its kernels down.
        self.jupyter = subprocess.Popen(
            args, cwd=self.root, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.jupyter.poll() is not None:
                raise RuntimeError(f"the Jupyter server stopped (exit {self.jupyter.returncode}); see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.jupyter_url}api/status?token={self.token}", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError("the Jupyter server did not answer in time")

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None
        if self.jupyter is not None and self.jupyter.poll() is None:
            self.jupyter.terminate()
            try:
                self.jupyter.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.jupyter.kill()
                self.jupyter.wait()
        self.jupyter = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", default="_build/html", help="the built book (default: _build/html)")
    parser.add_argument("--root", default=".", help="the course folder, where kernels start (default: .)")
    parser.add_argument("--port", type=int, default=8000, help="port of the book (0: any free port)")
    parser.add_argument("--kernel-port", type=int, default=8888, help="port of the Jupyter server (0: any free port)")
    parser.add_argument("--no-kernel", action="store_true", help="serve the book only, without live code")
    args = parser.parse_args(argv)
    book = LocalBook(Path(args.html), Path(args.root), args.port, args.kernel_port, kernel=not args.no_kernel)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)  # also when started with SIGINT ignored
    signal.signal(signal.SIGTERM, interrupt)
    book.start()
    print(f"The book:       {book.url}", flush=True)
    if book.kernel:
        print(f"Live code:      a Jupyter server on {book.jupyter_url} (token in {book.url}_static/local-kernel.json)")
        print("                press 'Run the code here' under a page's title to run its cells")
    print("Ctrl-C stops both.", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        book.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
