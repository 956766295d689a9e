#!/usr/bin/env python3
"""Throughput and failover of a worker fleet on a Flowable cluster (README "Running at
scale"). Starts a throwaway PostgreSQL (tests/postgres/start-server.sh), two Flowable
nodes of the test build on it (tests/flowable/start-server.sh), then:

  1. N instances of loan_approval started through Flowable's REST API, served by one
     worker, then by two (each run on its own run folder): instances per second, from
     the first start to the last run finished;
  2. failover: two workers, N instances, one worker killed (SIGKILL) once a tenth have
     finished: how long until the killed worker's runs are resumed by the other (kill to
     the first `run_resumed`, kill to the last of them finished).

    bench/fleet/run.py [--instances N] [--concurrency C] [--bin PATH]

Everything it starts is stopped at the end. Prints one Markdown table.
"""
import argparse, base64, glob, json, os, shutil, signal, subprocess, sys, tempfile, time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AUTH = "Basic " + base64.b64encode(b"admin:test").decode()


def sh(*args, env=None):
    return subprocess.run(args, capture_output=True, text=True, env=env, check=True).stdout


def rest(url, body=None):
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"content-type": "application/json", "authorization": AUTH})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


def scenario(name):
    answers, inputs, block = [], {}, None
    for line in open(os.path.join(ROOT, "applications/loan_approval/scenarios", name + ".yaml")):
        if line.startswith("answers:"):
            block = "answers"
        elif line.startswith("inputs:"):
            block = "inputs"
            continue
        elif line.strip() and not line.startswith(" "):
            block = None
        if block == "answers":
            answers.append(line)
        elif block == "inputs" and ":" in line:
            k, v = line.strip().split(":", 1)
            inputs[k] = json.loads(v) if v.strip()[0] in '"0123456789' else v.strip()
    return "".join(answers), inputs


def finished(runs):
    done, ends = 0, []
    for f in glob.glob(os.path.join(runs, "runs", "*", "journal.jsonl")):
        with open(f, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - 4096))
            lines = fh.read().splitlines()
        try:
            r = json.loads(lines[-1])
        except (ValueError, IndexError):
            continue
        if r["event"] == "run_finished":
            done += 1
            ends.append(r["at_ms"])
    return done, ends


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/cuga-flo"))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cuga-flo-fleet-bench.")
    answers, inputs = scenario("approve")
    open(os.path.join(tmp, "answers.yaml"), "w").write(answers)
    variables = [{"name": k, "value": v} for k, v in inputs.items()]
    procs, cleanup = [], []
    try:
        line = sh("bash", os.path.join(ROOT, "tests/postgres/start-server.sh"), "flowable").split()
        url, data = line[1], line[2]
        cleanup.append(["bash", os.path.join(ROOT, "tests/postgres/stop-server.sh"), data])
        user_pw, hostport = url[len("postgres://"):].split("@")[0], url.split("@")[1].split("/")[0]
        env = dict(os.environ,
                   SPRING_DATASOURCE_URL="jdbc:postgresql://%s/flowable" % hostport,
                   SPRING_DATASOURCE_USERNAME="flowable", SPRING_DATASOURCE_PASSWORD=user_pw.split(":")[1],
                   FLOWABLE_PROCESS_ASYNC_EXECUTOR_ASYNC_JOB_LOCK_TIME="PT10S",
                   FLOWABLE_PROCESS_ASYNC_EXECUTOR_RESET_EXPIRED_JOBS_INTERVAL="PT2S")
        nodes = []
        for _ in range(2):
            out = sh("bash", os.path.join(ROOT, "tests/flowable/start-server.sh"), env=env)
            node = [l.split()[1] for l in out.splitlines() if l.startswith("listening ")][0]
            nodes.append(node)
            cleanup.append(["bash", os.path.join(ROOT, "tests/flowable/stop-server.sh"),
                            node.split(":")[2].split("/")[0]])
        wenv = dict(os.environ, FLOWABLE_USER="admin", FLOWABLE_PASSWORD="test", NO_COLOR="1")

        def worker(runs, first, second, log):
            p = subprocess.Popen([a.bin, "worker", "--engine", "flowable", "loan_approval",
                                  "--node", first, "--node", second, "--concurrency", str(a.concurrency),
                                  "--poll", "200ms", "--interval", "1", "--answers",
                                  os.path.join(tmp, "answers.yaml"), "--run-dir", runs],
                                 cwd=ROOT, env=wenv, stdout=open(log + ".out", "w"),
                                 stderr=open(log + ".err", "w"))
            procs.append(p)
            while "serving" not in open(log + ".out").read():
                time.sleep(0.1)
                if p.poll() is not None:
                    sys.exit(open(log + ".err").read())
            return p

        def start_all(n):
            for i in range(n):
                rest(nodes[i % 2] + "/runtime/process-instances",
                     {"processDefinitionKey": "Process_1s3q83l", "variables": variables})

        def wait(runs, n, limit=600):
            t0 = time.time()
            while finished(runs)[0] < n:
                if time.time() - t0 > limit:
                    sys.exit("not all runs finished in %d s" % limit)
                time.sleep(0.1)
            return max(finished(runs)[1]) / 1000.0

        rows = []
        for workers in (1, 2):
            runs = os.path.join(tmp, "runs-%d" % workers)
            ws = [worker(runs, nodes[i % 2], nodes[(i + 1) % 2], os.path.join(tmp, "w%d-%d" % (workers, i)))
                  for i in range(workers)]
            t0 = time.time()
            start_all(a.instances)
            end = wait(runs, a.instances)
            took = end - t0
            rows.append(("%d worker%s × %d" % (workers, "s" if workers > 1 else "", a.concurrency),
                         "%d instances in %.1f s: **%.1f instances/s**" % (a.instances, took, a.instances / took)))
            for w in ws:
                w.send_signal(signal.SIGTERM)
                w.wait(30)
        # failover
        runs = os.path.join(tmp, "runs-failover")
        w1 = worker(runs, nodes[0], nodes[1], os.path.join(tmp, "f1"))
        w2 = worker(runs, nodes[1], nodes[0], os.path.join(tmp, "f2"))
        start_all(a.instances)
        while finished(runs)[0] < a.instances // 10:
            time.sleep(0.05)
        killed = time.time()
        w1.kill()
        w1.wait()
        wait(runs, a.instances)
        resumed, ends = [], []
        for f in glob.glob(os.path.join(runs, "runs", "*", "journal.jsonl")):
            recs = [json.loads(l) for l in open(f)]
            rs = [r["at_ms"] / 1000.0 for r in recs if r["event"] == "run_resumed" and r["at_ms"] / 1000.0 >= killed]
            if rs:
                resumed.append(min(rs))
                ends.append(recs[-1]["at_ms"] / 1000.0)
        if resumed:
            rows.append(("failover (SIGKILL of one of 2 workers)",
                         "%d runs in hand taken over; first resumed %.2f s after the kill, the last of them finished %.2f s after"
                         % (len(resumed), min(resumed) - killed, max(ends) - killed)))
        w2.send_signal(signal.SIGTERM)
        w2.wait(30)
        print("| fleet on 2 Flowable nodes + PostgreSQL | |")
        print("|---|---|")
        for k, v in rows:
            print("| %s | %s |" % (k, v))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for c in reversed(cleanup):
            subprocess.run(c, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
