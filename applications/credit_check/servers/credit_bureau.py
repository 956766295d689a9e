#!/usr/bin/env python3
"""A credit bureau as a small HTTP JSON service described by credit_bureau.openapi.yaml
beside this file: a demo and test fixture for cuga-flo's agents that call tools through an
OpenAPI spec. Not a real bureau; Python standard library only.

    python3 credit_bureau.py [PORT]     (0 or nothing = any free port)

Binds 127.0.0.1 and prints one stdout line when ready: `listening http://127.0.0.1:PORT`.
Operations (see the spec): getCreditScore GET /customers/{customer_id}/score, listCustomers
GET /customers?limit=N, createReport POST /reports, deleteReport DELETE /reports/{report_id}.
Scores come from a fixed table keyed like the loan_approval app's applicant ids; 5012 is
deliberately unknown (404), as in its score_unknown scenario. Reports live in memory.

Environment:
  BUREAU_TOKEN     when set, a request without `Authorization: Bearer <token>` gets 401
  BUREAU_CALL_LOG  when set, every request appends one JSON line {"method", "path", "query",
                   "body", "operation", "status", "pid"} to this file (fsynced) before its
                   response is sent, so tests can count calls
Stops cleanly on SIGTERM or SIGINT. Logs go to stderr only.
"""

import hmac
import itertools
import json
import os
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

CUSTOMERS = {  # customer_id -> (name, score)
    "1187": ("Maria Santos", 791),
    "2290": ("Tom Becker", 541),
    "3056": ("Sam Okoro", 655),
    "4321": ("Jordan Avery", 718),
    "6120": ("Ana Lima", 602),
}
TOKEN = os.environ.get("BUREAU_TOKEN") or None
CALL_LOG = os.environ.get("BUREAU_CALL_LOG") or None

reports: dict[str, dict] = {}
report_numbers = itertools.count(1)
lock = threading.Lock()


def band(score: int) -> str:
    return "poor" if score < 580 else "fair" if score < 670 else "good" if score < 740 else "excellent"


def record(entry: dict) -> None:
    if not CALL_LOG:
        return
    fd = os.open(CALL_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(entry) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def get_credit_score(customer_id: str, **_) -> tuple[int, dict]:
    if customer_id not in CUSTOMERS:
        raise ApiError(404, f"no customer {customer_id}; customer ids look like 1187")
    score = CUSTOMERS[customer_id][1]
    return 200, {"customer_id": customer_id, "score": score, "band": band(score)}


def list_customers(query: dict, **_) -> tuple[int, dict]:
    limit = query.get("limit", ["100"])[-1]
    if not re.fullmatch(r"[0-9]{1,3}", limit) or not 1 <= int(limit) <= 100:
        raise ApiError(400, f"limit must be an integer from 1 to 100, not {limit!r}")
    rows = [{"customer_id": cid, "name": name} for cid, (name, _) in sorted(CUSTOMERS.items())]
    return 200, {"customers": rows[: int(limit)], "total": len(rows)}


def create_report(body: object, **_) -> tuple[int, dict]:
    if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in ("customer_id", "summary")):
        raise ApiError(400, "the body must be a JSON object with string fields customer_id and summary")
    if body["customer_id"] not in CUSTOMERS:
        raise ApiError(404, f"no customer {body['customer_id']}; customer ids look like 1187")
    with lock:
        report_id = f"R-{next(report_numbers)}"
        reports[report_id] = {"customer_id": body["customer_id"], "summary": body["summary"]}
    return 201, {"report_id": report_id, "customer_id": body["customer_id"]}


def delete_report(report_id: str, **_) -> tuple[int, dict]:
    with lock:
        if reports.pop(report_id, None) is None:
            raise ApiError(404, f"no report {report_id}")
    return 200, {"report_id": report_id, "deleted": True}


ROUTES = [  # (method, path pattern, operationId, handler)
    ("GET", r"/customers/(?P<customer_id>[^/]+)/score", "getCreditScore", get_credit_score),
    ("GET", r"/customers", "listCustomers", list_customers),
    ("POST", r"/reports", "createReport", create_report),
    ("DELETE", r"/reports/(?P<report_id>[^/]+)", "deleteReport", delete_report),
]


class Handler(BaseHTTPRequestHandler):
    server_version = "credit-bureau/1.0"

    def handle_any(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = None
        operation = None
        try:
            if TOKEN is not None:
                given = self.headers.get("Authorization", "").encode()
                if not hmac.compare_digest(given, f"Bearer {TOKEN}".encode()):
                    raise ApiError(401, "unauthorized: send Authorization: Bearer <token>")
            matches = [(m, op, fn, re.fullmatch(p, url.path)) for m, p, op, fn in ROUTES]
            matches = [(m, op, fn, match) for m, op, fn, match in matches if match]
            if not matches:
                raise ApiError(404, f"no such path {url.path}")
            found = [(op, fn, match) for m, op, fn, match in matches if m == self.command]
            if not found:
                raise ApiError(405, f"{self.command} is not allowed on {url.path}")
            operation, handler, match = found[0]
            params = {k: unquote(v) for k, v in match.groupdict().items()}
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    raise ApiError(400, "the body is not JSON") from None
            status, answer = handler(query=query, body=body, **params)
        except ApiError as e:
            status, answer = e.status, {"error": str(e)}
        record({
            "method": self.command,
            "path": url.path,
            "query": {k: v[-1] for k, v in query.items()},
            "body": body if body is not None else (raw.decode(errors="replace") or None),
            "operation": operation,
            "status": status,
            "pid": os.getpid(),
        })
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 401:
            self.send_header("WWW-Authenticate", "Bearer")
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = handle_any


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True

    def stop(signum, _frame):
        print(f"credit_bureau: {signal.Signals(signum).name}, stopping", file=sys.stderr)
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
    server.server_close()


if __name__ == "__main__":
    main()
