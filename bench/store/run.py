#!/usr/bin/env python3
"""Native runs on the file store and on PostgreSQL, same machine, same runs (README
"Running at scale"). Starts a throwaway PostgreSQL (tests/postgres/start-server.sh),
migrates it, then, the two stores interleaved round by round:

  1. process view: `cuga-flo start relay` (the fixture app: two timers around a routing
     decision, here due at once) N times, one process each: runs per second;
  2. warm view: N runs parked at their first timer, then one `cuga-flo worker --once`
     resuming them all (the clock an hour on: every timer due) with C threads: runs per
     second, from the worker's start to its exit;
  3. failover on PostgreSQL: a worker (`--interval 0.5`) on one host; on another, a
     worker resuming a run kills itself (SIGKILL) right after its second commit: how
     long from the kill until the first worker resumed the run, and until it finished;
  4. with --journal: `cargo bench --bench journal` on each store (durable events per
     second, group commit against an fsync or a transaction per event).

    bench/store/run.py [--runs N] [--concurrency C] [--rounds R] [--bin PATH] [--journal]

Everything it starts is stopped at the end. Prints one Markdown table.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cuga(bin, store, args, env=None, check=None):
    e = dict(os.environ, NO_COLOR="1", CUGA_FLO_STORE=store, **(env or {}))
    e.pop("CUGA_FLO_APPS", None)
    r = subprocess.run([bin, "--apps-dir", os.path.join(ROOT, "tests/fixtures/apps")] + args,
                       capture_output=True, text=True, env=e, cwd=ROOT)
    if check is not None and r.returncode != check:
        sys.exit(f"{args}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def process_view(bin, store, runs, base):
    began = time.perf_counter()
    for i in range(runs):
        cuga(bin, store, ["start", "relay", "--var", f"amount={100 + i}", "--var", "wait=PT0S",
                          "--run-dir", base], check=0)
    return runs / (time.perf_counter() - began)


def warm_view(bin, store, runs, concurrency, base):
    for i in range(runs):
        cuga(bin, store, ["start", "relay", "--var", f"amount={100 + i}", "--var", "wait=PT1S",
                          "--max-wait", "0", "--run-dir", base], check=3)
    began = time.perf_counter()
    cuga(bin, store, ["worker", "--once", "--concurrency", str(concurrency), "--max-wait", "0",
                      "--run-dir", base], env={"CUGA_FLO_CLOCK_OFFSET": "7200"}, check=0)
    took = time.perf_counter() - began
    listed = cuga(bin, store, ["runs", "list", "--json", "--run-dir", base], check=0).stdout
    if '"status":"waiting"' in listed:
        sys.exit(f"warm view: a run was left waiting")
    return runs / took


def failover(bin, store, scratch, tries=6):
    """Kill → resumed elsewhere, kill → finished, in seconds, for each try."""
    other = subprocess.Popen(
        [bin, "--apps-dir", os.path.join(ROOT, "tests/fixtures/apps"), "worker", "--interval", "0.5",
         "--max-wait", "0", "--run-dir", tempfile.mkdtemp(dir=scratch)],
        cwd=ROOT, env=dict(os.environ, CUGA_FLO_STORE=store, NO_COLOR="1"),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times = []
    try:
        for _ in range(tries):
            host = tempfile.mkdtemp(dir=scratch)
            # Due only for the worker that is killed (its clock two hours on).
            cuga(bin, store, ["start", "relay", "--var", "wait=PT1H", "--max-wait", "0",
                              "--run-dir", host], check=3)
            run = os.listdir(os.path.join(host, "runs"))[0]
            r = cuga(bin, store, ["worker", "--once", "--max-wait", "0", "--run-dir", host],
                     env={"CUGA_FLO_CLOCK_OFFSET": "7200", "CUGA_FLO_CRASH_AT": "store.after_commit#2"})
            killed = time.perf_counter()
            if r.returncode != -9:
                sys.exit(f"failover: the worker was to kill itself, it exited {r.returncode}")
            view = tempfile.mkdtemp(dir=scratch)
            path = os.path.join(view, "runs", run, "journal.jsonl")
            resumed = finished = None
            while finished is None:
                # A third host's look: `runs show` brings the run from the store.
                cuga(bin, store, ["runs", "show", run, "--run-dir", view])
                text = open(path).read() if os.path.exists(path) else ""
                now = time.perf_counter() - killed
                if resumed is None and text.count('"run_resumed"') >= 2:
                    resumed = now
                if '"run_finished"' in text:
                    finished = now
                    resumed = resumed or now
                if now > 60:
                    sys.exit("failover: the run was not resumed within 60 s")
            times.append((resumed, finished))
    finally:
        other.kill()
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release/cuga-flo"))
    ap.add_argument("--journal", action="store_true")
    a = ap.parse_args()
    keeper = subprocess.Popen(["sleep", "100000"])
    env = dict(os.environ, CUGA_FLO_OWNER_PID=str(keeper.pid))
    line = subprocess.run(["bash", os.path.join(ROOT, "tests/postgres/start-server.sh"), "bench"],
                          capture_output=True, text=True, env=env, check=True).stdout
    url, data = line.split()[1], line.split()[2]
    scratch = tempfile.mkdtemp(prefix="cuga-flo-store-bench.")
    try:
        cuga(a.bin, url, ["store", "migrate"], check=0)
        # First, while the store holds only these runs (a new host's first look brings all).
        times = failover(a.bin, url, scratch)
        results = {s: {"process": [], "warm": []} for s in ("files", "postgres")}
        # One run folder per store and view, kept across rounds, as a host keeps its own.
        bases = {(s, v): tempfile.mkdtemp(dir=scratch) for s in results for v in ("p", "w")}
        for _ in range(a.rounds):
            for name, store in (("files", "files"), ("postgres", url)):
                results[name]["process"].append(
                    process_view(a.bin, store, a.runs // 4, bases[(name, "p")]))
                results[name]["warm"].append(
                    warm_view(a.bin, store, a.runs, a.concurrency, bases[(name, "w")]))
        print(f"| store | process view: `start` runs/s | warm view: `worker --once --concurrency {a.concurrency}` runs/s |")
        print("|---|---|---|")
        for name in ("files", "postgres"):
            p, w = results[name]["process"], results[name]["warm"]
            print(f"| {name} | {statistics.median(p):.1f} (of {', '.join(f'{x:.1f}' for x in p)}) "
                  f"| {statistics.median(w):.1f} (of {', '.join(f'{x:.1f}' for x in w)}) |")
        print(f"\nfailover (the other worker at --interval 0.5): kill → resumed "
              f"{', '.join(f'{r:.2f}' for r, _ in times)} s (median "
              f"{statistics.median(r for r, _ in times):.2f} s); kill → finished median "
              f"{statistics.median(f for _, f in times):.2f} s")
        if a.journal:
            for name, store in (("files", ""), ("postgres", url)):
                e = dict(os.environ, CUGA_FLO_STORE=store) if store else {
                    k: v for k, v in os.environ.items() if k != "CUGA_FLO_STORE"}
                print(f"\n### cargo bench --bench journal ({name})\n")
                out = subprocess.run(["cargo", "bench", "--bench", "journal", "--", "events"],
                                     capture_output=True, text=True, env=e, cwd=ROOT)
                print("```\n" + out.stdout.strip() + "\n```")
    finally:
        subprocess.run(["bash", os.path.join(ROOT, "tests/postgres/stop-server.sh"), data])
        keeper.kill()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
