"""A Bahn webhook receiver for the Tavern flows, doing what the driver's `bahn.awaitWebhook` listener does.

One per pytest process (each xdist worker has its own), on a loopback port. It checks every delivery before
parsing it, as docs/protocols/bahn.md decides: `Bn-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw
body>")>`, within 300 s either way; it drops repeats by event id (every registered target gets every event, so
the same event can arrive here once per target), keeps the events by intent, and answers 200, or 400 with why.
The process registers one webhook target pointing here (conftest.py), as the driver registers one for a batch.
"""

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import emulator_credentials as creds

SIGNATURE_TOLERANCE = 300


def signature_problem(body: bytes, header: str | None, secret: str, now: float) -> str | None:
    """None when the delivery's signature holds, else why not."""
    if not header:
        return "missing Bn-Signature header"
    timestamp, candidates = None, []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t" and value.isdigit():
            timestamp = int(value)
        elif name == "v1":
            candidates.append(value.lower())
    if timestamp is None or not candidates:
        return "malformed Bn-Signature header"
    if abs(now - timestamp) > SIGNATURE_TOLERANCE:
        return f"signature timestamp {timestamp} is outside the {SIGNATURE_TOLERANCE} s tolerance"
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, candidate) for candidate in candidates):
        return "signature does not match"
    return None


class Inbox:
    def __init__(self, secret: str):
        self.secret = secret
        self._seen: set[str] = set()
        self._by_intent: dict[str, list[dict]] = {}
        self._arrived = threading.Condition()
        inbox = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                problem = signature_problem(body, self.headers.get("Bn-Signature"), inbox.secret, time.time())
                if problem is None:
                    try:
                        event = json.loads(body)
                        intent = event["data"]["payment_intent"]["id"]
                        inbox._add(event["id"], intent, event)
                    except (ValueError, KeyError, TypeError):
                        problem = "body is not a Bahn event"
                status, answer = (400, {"error": problem}) if problem else (200, {"received": True})
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_):  # quiet: pytest's output stays the test summary
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.url = self.base_url + "/webhooks/bahn"
        threading.Thread(target=self._server.serve_forever, name="bahn-webhook-inbox", daemon=True).start()

    def _add(self, event_id: str, intent: str, event: dict) -> None:
        with self._arrived:
            if event_id in self._seen:
                return
            self._seen.add(event_id)
            self._by_intent.setdefault(intent, []).append(event)
            self._arrived.notify_all()

    def wait(self, event_type: str, intent: str, timeout: float) -> dict | None:
        """The first event of that type for that intent, waiting up to `timeout` seconds for it."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                for event in self._by_intent.get(intent, []):
                    if event.get("type") == event_type:
                        return event
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._arrived.wait(left)


_inbox: Inbox | None = None
_inbox_lock = threading.Lock()


def inbox() -> Inbox:
    """This process's inbox, started on first use."""
    global _inbox
    with _inbox_lock:
        if _inbox is None:
            _inbox = Inbox(creds.BAHN_WEBHOOK_SECRET)
        return _inbox
