"""The benchmark client's driver reads a level's /metrics within one deadline for the whole page: the server is the
recipe's image, and one that trickles its answer must not hold a level."""

from __future__ import annotations

import socket
import threading
import time

from runner.scripts.driver import metrics_lines

LINE = b'vllm:time_to_first_token_seconds_sum{engine="0"} 1.5\n'


def trickling_server(stop_after_s: float) -> tuple[int, threading.Event]:
    """A server that answers 200 at once, then one byte of its page every 0.2 s (closing after `stop_after_s`)."""
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
            started = time.monotonic()
            for byte in LINE * 1000:
                if time.monotonic() - started > stop_after_s or done.is_set():
                    break
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    break
                time.sleep(0.2)
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], done


def test_a_trickling_server_cannot_hold_a_level_past_the_deadline():
    """Each byte comes well within a per-read timeout, so a read timed per socket call went on for as long as the
    server liked (here 6 s, then it closes); one deadline for the whole read gives up after it (1 s here)."""
    port, done = trickling_server(stop_after_s=6.0)
    started = time.monotonic()
    found = metrics_lines(f"http://127.0.0.1:{port}/metrics", deadline_s=1.0)
    took = time.monotonic() - started
    done.set()
    assert found is None and took < 2.0, took


def test_a_page_read_in_time_keeps_its_lines():
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (len(LINE) + 6) + LINE + b"other\n")
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    assert metrics_lines(f"http://127.0.0.1:{listener.getsockname()[1]}/metrics") == LINE.decode()


def test_a_chunked_page_is_read_whole():
    """uvicorn may send a page in chunks (Transfer-Encoding: chunked), as vLLM's API server can."""
    listener = socket.create_server(("127.0.0.1", 0))
    body = LINE + b"other\n"

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for part in (body[:10], body[10:]):
                conn.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
            conn.sendall(b"0\r\n\r\n")
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    assert metrics_lines(f"http://127.0.0.1:{listener.getsockname()[1]}/metrics") == LINE.decode()
