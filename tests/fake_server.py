"""Fault injection only: a server that is never healthy, or healthy but fails every request.

Usage: python fake_server.py PORT MODE   (MODE: unhealthy | failing)
"""

from __future__ import annotations

import http.server
import json
import sys


def handler(mode: str) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/health":
                self.send_response(503 if mode == "unhealthy" else 200)
                self.end_headers()
            elif self.path == "/version":
                body = json.dumps({"version": "fault-injection"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_error(404)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_error(500, "injected failure")

        def log_message(self, format: str, *args) -> None:
            pass

    return Handler


if __name__ == "__main__":
    http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler(sys.argv[2])).serve_forever()
