"""A logging proxy between each system and the model server: every request body, as the client
sent it, recorded with the run it belongs to.

A run's client is given the base URL `http://PROXY/<label>/v1`; the proxy strips `/<label>`,
forwards the request to the upstream (a mock-llm or llama-server root) and streams the answer
back (HTTP/1.0, closed at the end, so a server-sent-event stream passes through unbuffered).
Error statuses are passed through unchanged. Only POSTs to a `.../chat/completions` path are
recorded: those are the model turns.
"""

import http.server
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host",
              "accept-encoding", "proxy-connection", "upgrade", "te", "trailer"}


@dataclass
class Turn:
    label: str
    body: bytes
    status: int


class LoggingProxy:
    """`start()`s a threaded server on a free local port; `turns(label)` are that run's."""

    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self._turns: list[Turn] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args):
                pass

            def _forward(self):
                label, _, rest = self.path.lstrip("/").partition("/")
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                request = urllib.request.Request(
                    f"{proxy.upstream}/{rest}", data=body, headers=headers, method=self.command
                )
                try:
                    answer = urllib.request.urlopen(request, timeout=600)
                except urllib.error.HTTPError as e:
                    answer = e
                except OSError as e:
                    answer = None
                    self.send_error(502, f"the upstream {proxy.upstream} did not answer: {e}")
                status = answer.status if answer is not None else 502
                if self.command == "POST" and rest.endswith("chat/completions"):
                    with proxy._lock:
                        proxy._turns.append(Turn(label, body or b"", status))
                if answer is None:
                    return
                self.send_response(status)
                for k, v in answer.headers.items():
                    if k.lower() not in HOP_BY_HOP:
                        self.send_header(k, v)
                self.send_header("Connection", "close")
                self.end_headers()
                read = getattr(answer, "read1", answer.read)
                while chunk := read(65536):
                    self.wfile.write(chunk)
                    self.wfile.flush()

            do_GET = do_POST = _forward

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True

    def start(self) -> "LoggingProxy":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def base_url(self, label: str) -> str:
        """The OpenAI base URL a run labelled `label` is given."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/{label}/v1"

    def turns(self, label: str) -> list[Turn]:
        with self._lock:
            return [t for t in self._turns if t.label == label]

    def stop(self):
        self._server.shutdown()
