#!/usr/bin/env python3
"""One `cuga-flo serve` or `worker` process running many runs at once, measured with the
CLI (docs/performance.md, "One process, many runs"):

  1. parked: one `serve` (stdio) holds N runs of the fixture app `served_waits`, each
     parked at its one-hour timer; RSS of the server before and after (per open run);
  2. cores: N runs of the fixture app `relay` parked at their first timer, then one
     `worker --once` resuming them all, pinned (`taskset`) to 1 core and to every core,
     with as many threads as cores: runs per second, from the worker's start to its exit;
  3. model: one `serve` runs M runs at once whose one task asks a model: a stub
     OpenAI-compatible server here (a fake: answers after --latency seconds), with
     CUGA_FLO_LLM_MAX_CONCURRENCY=16: how many requests it saw at once (at most the
     slots), the wall time, and runs per second against the ideal of slots / latency.

    bench/serve/run.py [--parked N] [--runs N] [--model-runs M] [--latency S] [--bin PATH]

Needs `taskset` (util-linux). Prints one Markdown table. Not run in CI.
"""
import argparse, http.server, json, os, shutil, socketserver, subprocess, sys, tempfile
import threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests/fixtures/apps")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Stdio:
    """A `cuga-flo serve` over stdio: JSON-RPC lines in, replies read by a thread."""

    def __init__(self, bin, apps, app, run_dir, env=None):
        e = dict(os.environ, NO_COLOR="1", **(env or {}))
        e.pop("CUGA_FLO_APPS", None)
        os.makedirs(run_dir, exist_ok=True)
        # The server's log beside its run folder, for when a measurement goes wrong.
        self.log = open(run_dir + ".stderr", "w")
        self.proc = subprocess.Popen(
            [bin, "--apps-dir", apps, "serve", "--stdio", app, "--run-dir", run_dir],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            env=e, cwd=ROOT, text=True, bufsize=1)
        self.replies = {}
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.lock = threading.Lock()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}})
        self.wait([0])
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "id" in msg:
                with self.cond:
                    self.replies[msg["id"]] = msg
                    self.cond.notify_all()

    def send(self, msg):
        with self.lock:
            self.proc.stdin.write(json.dumps(msg) + "\n")
            self.proc.stdin.flush()

    def call(self, id, name, args):
        self.send({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": name, "arguments": args}})

    def wait(self, ids, timeout=600):
        end = time.time() + timeout
        with self.cond:
            while not all(i in self.replies for i in ids):
                if not self.cond.wait(timeout=max(0.0, end - time.time())):
                    sys.exit(f"serve: no reply to {len(ids) - sum(i in self.replies for i in ids)} calls")
        return [self.replies[i] for i in ids]

    def stop(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def status_of(reply):
    r = reply.get("result") or {}
    return (r.get("structuredContent") or {}).get("status") or ("error" if "error" in reply else "?")


def parked(bin, n, base):
    run_dir = os.path.join(base, "parked")
    server = Stdio(bin, FIXTURES, "served_waits", run_dir)
    time.sleep(0.5)
    before = rss_kib(server.proc.pid)
    began = time.perf_counter()
    ids = list(range(1, n + 1))
    for i in ids:
        server.call(i, "run_process", {"process_key": "served_waits_v1", "run_id": f"p{i}",
                                       "variables": {"order_id": f"o{i}", "wait": "PT1H"}})
    replies = server.wait(ids)
    took = time.perf_counter() - began
    statuses = {}
    for r in replies:
        statuses[status_of(r)] = statuses.get(status_of(r), 0) + 1
    time.sleep(0.5)
    after = rss_kib(server.proc.pid)
    server.stop()
    return {"runs": n, "statuses": statuses, "rss_before_mib": before / 1024,
            "rss_after_mib": after / 1024, "kib_per_run": (after - before) / n,
            "opened_per_s": n / took}


def cores(bin, n, base, cpus):
    env = dict(os.environ, NO_COLOR="1")
    run_dir = os.path.join(base, f"cores-{cpus}")
    for i in range(n):
        r = subprocess.run([bin, "--apps-dir", FIXTURES, "start", "relay", "--var",
                            f"amount={100 + i}", "--var", "wait=PT1S", "--max-wait", "0",
                            "--run-dir", run_dir],
                           capture_output=True, text=True, env=env, cwd=ROOT)
        if r.returncode != 3:
            sys.exit(f"start relay: exit {r.returncode}\n{r.stderr}")
    pin = ",".join(str(c) for c in range(cpus))
    began = time.perf_counter()
    r = subprocess.run(["taskset", "-c", pin, bin, "--apps-dir", FIXTURES, "worker", "--once",
                        "--concurrency", str(cpus), "--max-wait", "0", "--run-dir", run_dir],
                       capture_output=True, text=True, cwd=ROOT,
                       env=dict(env, CUGA_FLO_CLOCK_OFFSET="7200"))
    took = time.perf_counter() - began
    if r.returncode != 0:
        sys.exit(f"worker: exit {r.returncode}\n{r.stderr[-2000:]}")
    done = subprocess.run([bin, "runs", "list", "--run-dir", run_dir, "--json"],
                          capture_output=True, text=True, cwd=ROOT, env=env)
    finished = done.stdout.count('"status":"completed"')
    return {"cpus": cpus, "runs": n, "completed": finished, "seconds": took, "runs_per_s": n / took}


class Stub(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that answers every task after `latency` s."""
    latency = 0.1
    lock = threading.Lock()
    now = 0
    most = 0
    seen = 0

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        with Stub.lock:
            Stub.now += 1
            Stub.seen += 1
            Stub.most = max(Stub.most, Stub.now)
        time.sleep(Stub.latency)
        with Stub.lock:
            Stub.now -= 1
        content = json.dumps({"reason": "scored", "outputs": {"score": 7}})
        body = json.dumps({"id": "x", "object": "chat.completion", "model": "stub",
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": content}}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                     "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Threading(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 1024


SCORED_BPMN = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="bench">
<process id="scored" isExecutable="true">
<startEvent id="start"/><task id="Task_Score" name="Score"/><endEvent id="end"/>
<sequenceFlow id="f1" sourceRef="start" targetRef="Task_Score"/>
<sequenceFlow id="f2" sourceRef="Task_Score" targetRef="end"/>
</process></definitions>
"""
SCORED_CONFIG = """flow: {id: scored_v1, name: Scored, bpmn_file: scored.bpmn}
workflow_engine: {type: native}
llm: {base_url: "%s", model: stub, retries: 0, timeout: 120}
variables: {score: 0}
tasks:
  - id: Task_Score
    mode: task_agent
    output_mapping: {score: score}
    agent: {name: scorer, system_instruction: "Score it."}
"""


def model(bin, m, latency, base):
    Stub.latency = latency
    stub = Threading(("127.0.0.1", 0), Stub)
    threading.Thread(target=stub.serve_forever, daemon=True).start()
    apps = os.path.join(base, "apps")
    cfg = os.path.join(apps, "scored", "config")
    os.makedirs(cfg, exist_ok=True)
    with open(os.path.join(cfg, "scored.bpmn"), "w") as f:
        f.write(SCORED_BPMN)
    with open(os.path.join(cfg, "scored_config.yaml"), "w") as f:
        f.write(SCORED_CONFIG % f"http://127.0.0.1:{stub.server_address[1]}/v1")
    server = Stdio(bin, apps, "scored", os.path.join(base, "model-runs"),
                   env={"CUGA_FLO_LLM_MAX_CONCURRENCY": "16"})
    began = time.perf_counter()
    ids = list(range(1, m + 1))
    for i in ids:
        server.call(i, "run_process", {"process_key": "scored_v1", "run_id": f"m{i}",
                                       "variables": {}})
    replies = server.wait(ids)
    took = time.perf_counter() - began
    peak = rss_kib(server.proc.pid)
    server.stop()
    stub.shutdown()
    statuses = {}
    for r in replies:
        statuses[status_of(r)] = statuses.get(status_of(r), 0) + 1
    return {"runs": m, "statuses": statuses, "requests": Stub.seen, "most_at_once": Stub.most,
            "seconds": took, "runs_per_s": m / took, "ideal_per_s": 16 / latency,
            "rss_mib": peak / 1024}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parked", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--model-runs", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--bin", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "cuga-flo"))
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="cuga-flo-bench-serve-")
    try:
        all_cpus = os.cpu_count() or 1
        print(f"machine: {all_cpus} cores, load {os.getloadavg()[0]:.2f}", file=sys.stderr)
        p = parked(args.bin, args.parked, base)
        print(f"parked: {p}", file=sys.stderr)
        c = [cores(args.bin, args.runs, base, n) for n in sorted({1, min(2, all_cpus), all_cpus})]
        for row in c:
            print(f"cores: {row}", file=sys.stderr)
        md = model(args.bin, args.model_runs, args.latency, base)
        print(f"model: {md}", file=sys.stderr)
        print("| measurement | result |\n|---|---|")
        print(f"| {p['runs']:,} runs parked in one `serve` | RSS {p['rss_before_mib']:.1f} → "
              f"{p['rss_after_mib']:.1f} MiB, **{p['kib_per_run']:.1f} KiB per open run**; "
              f"opened at {p['opened_per_s']:.0f}/s; {p['statuses']} |")
        for row in c:
            print(f"| `worker --once` on {row['cpus']} core(s), {row['runs']} runs | "
                  f"**{row['runs_per_s']:.0f} runs/s** ({row['completed']} completed) |")
        print(f"| {md['runs']:,} runs at once on a stub model ({args.latency} s a request, "
              f"16 slots) | {md['seconds']:.1f} s, **{md['runs_per_s']:.0f} runs/s** (ideal "
              f"{md['ideal_per_s']:.0f}); at most {md['most_at_once']} requests at once; "
              f"{md['requests']} requests; RSS {md['rss_mib']:.0f} MiB; {md['statuses']} |")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
