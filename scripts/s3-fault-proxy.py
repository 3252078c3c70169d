"""A fault-injecting HTTP proxy in front of the S3 test server, for lakewriter's storage-fault tests.

    python s3-fault-proxy.py UPSTREAM [--port N] [--control-port N]

It forwards every request to UPSTREAM (e.g. http://127.0.0.1:9000) unless a rule says otherwise,
and prints one line when it is ready:

    proxy 127.0.0.1:PORT control 127.0.0.1:CONTROL_PORT

Python standard library only. The control endpoint takes JSON:

    POST /__faults    {"rules": [RULE, ...]}   replaces the rules (and their match counts)
    GET  /__requests  {"requests": [SEEN, ...]} every request the proxy saw, in order
    POST /__reset     no rules, no requests seen
    POST /__gone      {"seconds": T}           the server is gone for T seconds from now
    POST /__back                               the server is back now

A RULE matches a request by
    "method"   exact, optional
    "path"     a regular expression searched in the request target (path and query, %-decoded)
    "headers"  {name: regular expression}, optional; every named header must be there and match
and acts on the matching requests number "nth" (1-based, default 1) to nth + "times" - 1
("times" defaults to 1; 0 means every match from the nth on). Every rule counts its matches;
the first rule that acts on a request decides what happens to it:
    {"action": "status", "status": 503}             answers 503 (an S3 error body), not forwarded
    {"action": "forward_then_status", "status": 500} forwards it (the request lands), answers 500
    {"action": "delay", "seconds": S}               waits S seconds, then forwards it, unless the
                                                    client has gone meanwhile (then it never lands)
    {"action": "delay_answer", "seconds": S}        forwards it (it lands), waits S seconds, answers
    {"action": "drop_request"}                      reads half its body, closes the connection
                                                    (not forwarded)
    {"action": "drop_response"}                     forwards it (it lands), sends half the answer
                                                    (of the body, or of the head where there is no
                                                    body), closes the connection
    {"action": "gone", "seconds": T}                closes the connection (not forwarded) and the
                                                    server is gone for T seconds
While the server is gone its listening socket is closed, so connections are refused, and every
open connection is closed; after T seconds it listens on the same port again.

A SEEN request: {"n", "method", "target", "range" (its Range header, or null), "rule" (index or
null), "action" ("forward" or the rule's action), "landed" (whether the upstream server got it),
"status" (what the client got, or null where the connection was closed)}.
"""

import argparse
import http.client
import json
import random
import re
import select
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "expect",
    "content-length",
}

REASONS = {500: "Internal Server Error", 503: "Service Unavailable"}
CODES = {500: "InternalError", 503: "SlowDown"}


class Faults:
    """The rules, the requests seen and whether the server is gone; shared by every thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []
        self.counts = []
        self.seen = []
        self.gone_until = 0.0
        self.connections = set()
        self.listening = threading.Event()

    def set_rules(self, rules):
        compiled = []
        for rule in rules:
            rule = dict(rule)
            rule["_path"] = re.compile(rule.get("path", ""))
            rule["_headers"] = {k.lower(): re.compile(v) for k, v in rule.get("headers", {}).items()}
            compiled.append(rule)
        with self.lock:
            self.rules = compiled
            self.counts = [0] * len(compiled)

    def reset(self):
        self.set_rules([])
        with self.lock:
            self.seen = []

    def decide(self, method, target, headers):
        """The rule (index, rule) acting on this request, or (None, None); records the request."""
        decoded = urllib.parse.unquote(target)
        with self.lock:
            acting = (None, None)
            for index, rule in enumerate(self.rules):
                if rule.get("method") not in (None, method):
                    continue
                if not rule["_path"].search(decoded):
                    continue
                if any(not (headers.get(k) is not None and p.search(headers.get(k))) for k, p in rule["_headers"].items()):
                    continue
                self.counts[index] += 1
                nth, times = rule.get("nth", 1), rule.get("times", 1)
                count = self.counts[index]
                if acting[0] is None and count >= nth and (times == 0 or count < nth + times):
                    acting = (index, rule)
            record = {
                "n": len(self.seen) + 1,
                "method": method,
                "target": decoded,
                "range": headers.get("range"),
                "rule": acting[0],
                "action": acting[1]["action"] if acting[1] else "forward",
                "landed": False,
                "status": None,
            }
            self.seen.append(record)
        return acting, record

    def go_away(self, seconds):
        with self.lock:
            self.gone_until = max(self.gone_until, time.monotonic() + seconds)
            connections = list(self.connections)
        for connection in connections:
            close(connection)

    def come_back(self):
        """Ends an absence; returns once the server listens again."""
        with self.lock:
            self.gone_until = 0.0
        self.listening.wait(10)

    def gone(self):
        with self.lock:
            return time.monotonic() < self.gone_until


def close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class Closed(Exception):
    """The client closed the connection, or the proxy closed it on purpose."""


class Connection:
    """One client connection: HTTP/1.1 requests read one after another (keep-alive)."""

    def __init__(self, sock, faults, upstream):
        self.sock = sock
        self.faults = faults
        self.upstream = upstream
        self.buffer = b""

    def read_some(self):
        data = self.sock.recv(65536)
        if not data:
            raise Closed()
        self.buffer += data

    def read_line(self):
        while b"\r\n" not in self.buffer:
            self.read_some()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def read_exactly(self, n):
        while len(self.buffer) < n:
            self.read_some()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def read_head(self):
        request_line = self.read_line().decode("latin-1")
        headers = []
        while True:
            line = self.read_line().decode("latin-1")
            if not line:
                break
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
        method, target, _version = request_line.split(" ", 2)
        return method, target, headers

    def read_body(self, headers, limit=None):
        """The request body (de-chunked); with `limit`, only that many bytes of it are read."""
        lookup = {k.lower(): v for k, v in headers}
        if lookup.get("expect", "").lower() == "100-continue":
            self.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        if "chunked" in lookup.get("transfer-encoding", "").lower():
            body = b""
            while True:
                size = int(self.read_line().split(b";")[0], 16)
                if size == 0:
                    while self.read_line():
                        pass
                    return body
                body += self.read_exactly(size)
                self.read_line()
                if limit is not None and len(body) >= limit:
                    return body
        length = int(lookup.get("content-length", "0"))
        return self.read_exactly(length if limit is None else min(limit, length))

    def client_gone(self):
        """Whether the client has closed its side (a timeout on its part)."""
        readable, _, _ = select.select([self.sock], [], [], 0)
        if not readable:
            return False
        try:
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def forward(self, method, target, headers, body):
        """Sends the request upstream, on a connection of its own; (status, reason, headers,
        body) of its answer."""
        parts = urllib.parse.urlsplit(self.upstream)
        origin = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
        try:
            origin.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for name, value in headers:
                if name.lower() not in HOP_BY_HOP:
                    origin.putheader(name, value)
            if body or method in ("PUT", "POST"):
                origin.putheader("Content-Length", str(len(body)))
            origin.endheaders(body if body else None)
            response = origin.getresponse()
            return response.status, response.reason, response.getheaders(), response.read()
        finally:
            origin.close()

    def answer_bytes(self, method, status, reason, headers, body):
        head = f"HTTP/1.1 {status} {reason}\r\n"
        length_given = False
        for name, value in headers:
            lower = name.lower()
            if lower == "content-length" and method == "HEAD":
                length_given = True
                head += f"{name}: {value}\r\n"
            elif lower not in HOP_BY_HOP:
                head += f"{name}: {value}\r\n"
        if not length_given:
            head += f"Content-Length: {len(body)}\r\n"
        head += "\r\n"
        return head.encode("latin-1"), (b"" if method == "HEAD" else body)

    def error_answer(self, status, target):
        code = CODES.get(status, "InternalError")
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Error><Code>{code}</Code><Message>injected fault</Message>"
            f"<Resource>{target}</Resource><RequestId>fault-proxy</RequestId></Error>"
        ).encode()
        return status, REASONS.get(status, "Error"), [("Content-Type", "application/xml")], body

    def serve(self):
        while True:
            if self.faults.gone():
                raise Closed()
            method, target, headers = self.read_head()
            lookup = {k.lower(): v for k, v in headers}
            (index, rule), record = self.faults.decide(method, target, lookup)
            action = rule["action"] if rule else "forward"
            if action == "drop_request":
                lookup_length = int(lookup.get("content-length", "0") or 0)
                self.read_body(headers, limit=lookup_length // 2)
                raise Closed()
            if action == "gone":
                self.faults.go_away(float(rule.get("seconds", 1)))
                raise Closed()
            body = self.read_body(headers)
            if action == "status":
                answer = self.error_answer(int(rule.get("status", 500)), target)
            else:
                if action == "delay":
                    time.sleep(float(rule.get("seconds", 1)))
                    if self.client_gone():
                        raise Closed()
                answer = self.forward(method, target, headers, body)
                record["landed"] = True
                if action == "forward_then_status":
                    answer = self.error_answer(int(rule.get("status", 500)), target)
                elif action == "delay_answer":
                    time.sleep(float(rule.get("seconds", 1)))
            head, payload = self.answer_bytes(method, *answer)
            if action == "drop_response":
                if len(payload) > 1:
                    self.sock.sendall(head + payload[: len(payload) // 2])
                else:
                    self.sock.sendall(head[: len(head) // 2])
                raise Closed()
            self.sock.sendall(head + payload)
            record["status"] = answer[0]
            if lookup.get("connection", "").lower() == "close":
                raise Closed()


class Proxy:
    """The listening socket, closed while the server is gone."""

    def __init__(self, faults, upstream, port):
        self.faults = faults
        self.upstream = upstream
        self.port = port
        self.listener = None
        self.listen()

    def listen(self):
        for _ in range(50):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                # Below the ephemeral range, so that no outgoing connection takes the port while
                # the server is gone.
                port = self.port or random.randint(20000, 32000)
                sock.bind(("127.0.0.1", port))
            except OSError:
                sock.close()
                if self.port:
                    time.sleep(0.1)
                continue
            sock.listen(128)
            sock.settimeout(0.1)
            self.port = port
            self.listener = sock
            self.faults.listening.set()
            return
        raise SystemExit(f"cannot listen on 127.0.0.1:{self.port or 'a free port'}")

    def run(self):
        while True:
            if self.faults.gone():
                if self.listener is not None:
                    self.faults.listening.clear()
                    self.listener.close()
                    self.listener = None
                time.sleep(0.05)
                continue
            if self.listener is None:
                self.listen()
            try:
                sock, _ = self.listener.accept()
            except socket.timeout:
                continue
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self.handle, args=(sock,), daemon=True).start()

    def handle(self, sock):
        with self.faults.lock:
            self.faults.connections.add(sock)
        try:
            Connection(sock, self.faults, self.upstream).serve()
        except (Closed, OSError, ValueError, http.client.HTTPException):
            pass
        finally:
            with self.faults.lock:
                self.faults.connections.discard(sock)
            close(sock)


def control_handler(faults):
    class Control(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, value):
            body = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def json_body(self):
            length = int(self.headers.get("Content-Length", "0"))
            return json.loads(self.rfile.read(length) or b"{}")

        def do_GET(self):
            if self.path == "/__requests":
                with faults.lock:
                    self.reply({"requests": [dict(r) for r in faults.seen]})
            else:
                self.send_error(404)

        def do_POST(self):
            if self.path == "/__faults":
                faults.set_rules(self.json_body().get("rules", []))
                self.reply({"ok": True})
            elif self.path == "/__reset":
                faults.reset()
                self.reply({"ok": True})
            elif self.path == "/__back":
                faults.come_back()
                self.reply({"ok": True})
            elif self.path == "/__gone":
                faults.go_away(float(self.json_body().get("seconds", 1)))
                self.reply({"ok": True})
            else:
                self.send_error(404)

    return Control


def main():
    parser = argparse.ArgumentParser(description="A fault-injecting proxy in front of an S3 server.")
    parser.add_argument("upstream", help="the S3 server, e.g. http://127.0.0.1:9000")
    parser.add_argument("--port", type=int, default=0, help="the proxy's port (default: a free one)")
    parser.add_argument("--control-port", type=int, default=0, help="the control port (default: a free one)")
    args = parser.parse_args()
    faults = Faults()
    proxy = Proxy(faults, args.upstream.rstrip("/"), args.port)
    control = ThreadingHTTPServer(("127.0.0.1", args.control_port), control_handler(faults))
    control.daemon_threads = True
    threading.Thread(target=control.serve_forever, daemon=True).start()
    print(f"proxy 127.0.0.1:{proxy.port} control 127.0.0.1:{control.server_address[1]}", flush=True)
    proxy.run()


if __name__ == "__main__":
    main()
