"""The peer benchmark: every engine on every generated model, one markdown table.

Run through run.sh, which prepares the peers' cache and the release build and then calls
this with the venv's Python. See README.md in this folder.
"""

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402


# Why a peer fails or is killed on a shape, each proved by a small script in repro/ (see
# README.md, "Where the peers fail"): appended to the note of a failure or a timeout.
KNOWN_CAUSES = {
    ("spiff", "linear"): "SpiffWorkflow keeps a run as a task tree (each task the child of the one before it) "
    "and its tree walks stop at depth 1,000, so a path longer than that reports complete with its deeper "
    "tasks never run (repro/spiff_max_depth.py)",
    ("spiff", "par"): "SpiffWorkflow predicts the whole task tree when the workflow is created, with a copy of "
    "each join and of everything after it under each branch of a split: 2^blocks tasks before the first one "
    "runs (repro/spiff_parallel_predict.py)",
    ("bpmn-engine", "xor"): "bpmn-engine discards every untaken flow down the rest of the model, and an "
    "exclusive merge passes on the discard from its untaken branch as well as the take from the other: the "
    "discards double with every block (repro/bpmn_engine_discards.cjs)",
    ("langgraph", "xor"): "each conditional edge reads the state fresh, which copies every channel of the "
    "graph (one per node): O(nodes) per exclusive split, O(n^2) for the chain "
    "(repro/langgraph_conditional_edge.py)",
}
KNOWN_CAUSES[("spiff", "xor")] = KNOWN_CAUSES[("spiff", "linear")]
KNOWN_CAUSES[("langgraph-mem", "xor")] = KNOWN_CAUSES[("langgraph", "xor")]


def known_cause(engine, shape):
    cause = KNOWN_CAUSES.get((engine.key, shape))
    return f" (known cause: {cause})" if cause else ""


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--cuga-flo", required=True, help="the release binary")
    p.add_argument("--node-dir", required=True, help="folder holding node_modules/bpmn-engine")
    p.add_argument("--work", required=True, help="scratch folder on disk (models, durable journals)")
    p.add_argument("--out", default=os.path.join(HERE, "results.md"))
    p.add_argument("--sizes", default="10,100,1000,10000")
    p.add_argument("--shapes", default=",".join(models.SHAPES))
    p.add_argument("--engines", default="all", help="comma-separated engine keys, or all")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--cap", type=float, default=120.0, help="seconds before a run is killed")
    p.add_argument(
        "--budget",
        type=float,
        default=40.0,
        help="stop repeating one measurement once its runs took this many seconds (at least 1 run)",
    )
    return p.parse_args()


class Engine:
    def __init__(self, key, label, kind, **opts):
        self.key, self.label, self.kind, self.opts = key, label, kind, opts


def engines(args):
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    return [
        Engine("cuga-flo", "cuga-flo `start` (durable: batch)", "cuga", durability="batch", run_root=args.work),
        Engine(
            "cuga-flo-mem",
            "cuga-flo `start` (in memory: off, journal on tmpfs)",
            "cuga",
            durability="off",
            run_root=shm or args.work,
        ),
        Engine("spiff", "SpiffWorkflow " + version("SpiffWorkflow"), "spiff"),
        Engine("langgraph", "LangGraph " + version("langgraph"), "langgraph", saver="none"),
        Engine("langgraph-mem", "LangGraph " + version("langgraph") + " + InMemorySaver", "langgraph", saver="memory"),
        Engine("bpmn-engine", "bpmn-engine " + npm_version(args.node_dir), "bpmn-engine"),
    ]


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def npm_version(node_dir):
    try:
        with open(os.path.join(node_dir, "node_modules", "bpmn-engine", "package.json")) as f:
            return json.load(f)["version"]
    except OSError:
        return "?"


# The models this run wrote. Each model is written on its first use in a run (so a changed
# generator takes effect) and only the shapes and sizes the run measures are: the models of
# the others stay as an earlier run left them.
WRITTEN = set()


def write_once(path, text):
    if path in WRITTEN:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    WRITTEN.add(path)


def model_file(args, engine, shape, n):
    """Write (once per run) the model for an engine; return what its command needs."""
    base = os.path.join(args.work, "models")
    if engine.kind == "cuga":
        app = os.path.join(base, "cuga-flo", f"{shape}-{n}", "bench")
        config = os.path.join(app, "config")
        write_once(os.path.join(config, "model.bpmn"), models.bpmn(shape, n, "cuga-flo"))
        write_once(os.path.join(config, "bench_config.yaml"), models.CUGA_FLO_CONFIG)
        return app
    if engine.kind in ("spiff", "bpmn-engine"):
        path = os.path.join(base, engine.kind, f"{shape}-{n}.bpmn")
        write_once(path, models.bpmn(shape, n, engine.kind))
        return path
    return None


def command(args, engine, shape, n, run_dir):
    target = model_file(args, engine, shape, n)
    if engine.kind == "cuga":
        return [
            args.cuga_flo, "start", target, "--engine", "native", "--run-dir", run_dir,
            "--durability", engine.opts["durability"], "--no-model", "--no-park",
            "--step-budget", str(4 * n + 100), "--json",
        ]
    if engine.kind == "spiff":
        return [sys.executable, os.path.join(HERE, "spiff_driver.py"), target]
    if engine.kind == "langgraph":
        return [sys.executable, os.path.join(HERE, "langgraph_driver.py"), shape, str(n), engine.opts["saver"]]
    return ["node", os.path.join(HERE, "bpmn_engine_driver.cjs"), target]


def run_once(args, engine, shape, n):
    """One process: wall, CPU and peak RSS from wait4; the engine's own run time."""
    run_dir = None
    if engine.kind == "cuga":
        run_dir = tempfile.mkdtemp(prefix="cuga-flo-peers-", dir=engine.opts["run_root"])
    cmd = command(args, engine, shape, n, run_dir)
    env = dict(os.environ, BPMN_ENGINE_DIR=args.node_dir, NO_COLOR="1")
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    killed = threading.Event()

    def kill():
        killed.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(args.cap, kill)
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    try:
        if killed.is_set():
            return {"timeout": True}
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
        if proc.returncode != 0:
            tail = (stderr.strip() or stdout.strip())[-600:]
            raise RuntimeError(f"{engine.key} {shape} {n}: exit {proc.returncode}: {tail}")
        result = {
            "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime,
            "rss_kib": usage.ru_maxrss,
        }
        if engine.kind == "cuga":
            result.update(cuga_run(run_dir, stdout))
        else:
            report = json.loads(stdout.strip().splitlines()[-1])
            result["engine"] = report["run_s"]
            result["tasks"] = report["tasks"]
        return result
    finally:
        out.close()
        err.close()
        if run_dir:
            shutil.rmtree(run_dir, ignore_errors=True)


def cuga_run(run_dir, stdout):
    """The run's span from its journal (run_started to run_finished, ms) and its status."""
    runs = os.path.join(run_dir, "runs")
    (run_id,) = os.listdir(runs)
    first = last = None
    tasks = 0
    with open(os.path.join(runs, run_id, "journal.jsonl")) as f:
        for line in f:
            record = json.loads(line)
            if record["event"] == "run_started":
                first = record["at_ms"]
            elif record["event"] == "task_finished":
                tasks += 1
            elif record["event"] == "run_finished":
                last = record["at_ms"]
                if record.get("status") not in (None, "completed"):
                    raise RuntimeError(f"cuga-flo run {run_id} ended {record.get('status')}")
    if first is None or last is None:
        raise RuntimeError(f"cuga-flo run {run_id}: no run_finished in its journal")
    return {"engine": (last - first) / 1000.0, "tasks": tasks}


def check_tasks(r, shape, n):
    expected = models.tasks_run(shape, n)
    if r["tasks"] != expected:
        raise RuntimeError(f"ran {r['tasks']} of the model's {expected} tasks on the taken path, then reported the run complete")


def summarize(runs):
    med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu", "rss_kib", "engine")}
    med["runs"] = len(runs)
    med["tasks"] = runs[0]["tasks"]
    return med


def slope(points):
    """The least-squares slope of (x, y) points: the cost of one more node, fitted over
    every size measured rather than read off the difference with the smallest one."""
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    den = sum((x - mx) ** 2 for x, _ in points)
    if den == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / den


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        cpu = platform.processor() or "?"
    ram = "?"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {cpu}, {ram} RAM, {platform.system()} {platform.release()}"


def fmt(x, digits=1):
    if x is None:
        return ""
    if x <= 0:
        return "≈0 (noise)"
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}f}" if x >= 1 else f"{x:.2f}"


def main():
    args = parse_args()
    os.makedirs(args.work, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    all_engines = engines(args)
    chosen = all_engines if args.engines == "all" else [e for e in all_engines if e.key in args.engines.split(",")]
    results = {}
    notes = []
    loads = {}
    began = time.time()
    load_before = os.getloadavg()
    # Every engine on a model before the next model, and within a model the engines
    # interleaved repetition by repetition: a slow spell of the shared machine falls on all
    # of them alike, not on whichever engine ran then.
    for shape in shapes:
        previous = {}  # engine key -> (result, n) at the last size measured
        for n in sizes:
            loads[(shape, n)] = os.getloadavg()[0]
            active = []
            for engine in chosen:
                key = (shape, n, engine.key)
                prev = previous.get(engine.key)
                if prev is not None and (prev[0].get("timeout") or prev[0].get("error")):
                    results[key] = dict(prev[0], skipped=True)
                    previous[engine.key] = (results[key], n)
                    continue
                if prev is not None and "wall" in prev[0]:
                    # Start-up (imports, model load) is paid once: only the engine's own run
                    # time grows with the model.
                    r0, n0 = prev
                    engine_s = min(max(r0.get("engine") or 0.0, 0.0), r0["wall"])
                    estimate = r0["wall"] - engine_s + engine_s * n / n0
                    if estimate > args.cap:
                        results[key] = {"timeout": True, "estimate": estimate}
                        notes.append(
                            f"{engine.label}, {shape} {n:,}: not run, its {n0:,}-node run took "
                            f"{r0['wall']:.1f} s ({engine_s:.2f} s of it in the engine), so at least "
                            f"~{estimate:.0f} s (> the {args.cap:.0f} s cap) at linear cost"
                        )
                        previous[engine.key] = (results[key], n)
                        continue
                active.append(engine)
            runs = {e.key: [] for e in active}
            spent = {e.key: 0.0 for e in active}
            ended = {}
            for rep in range(args.repeats):
                for engine in active:
                    if engine.key in ended or (rep > 0 and spent[engine.key] > args.budget):
                        continue
                    print(
                        f"[{time.time() - began:6.0f}s] {shape:6} {n:>6} {engine.key} #{rep + 1}",
                        file=sys.stderr,
                        flush=True,
                    )
                    try:
                        r = run_once(args, engine, shape, n)
                        if r.get("timeout"):
                            ended[engine.key] = {"timeout": True}
                            notes.append(f"{engine.label}, {shape} {n:,}: killed after {args.cap:.0f} s" + known_cause(engine, shape))
                            continue
                        check_tasks(r, shape, n)
                    except RuntimeError as e:
                        ended[engine.key] = {"error": True}
                        notes.append(
                            f"{engine.label}, {shape} {n:,}: failed: {' '.join(str(e).split())[-400:]}"
                            + known_cause(engine, shape)
                        )
                        print(f"  failed: {e}", file=sys.stderr, flush=True)
                        continue
                    runs[engine.key].append(r)
                    spent[engine.key] += r["wall"]
            for engine in active:
                r = ended.get(engine.key) or summarize(runs[engine.key])
                results[(shape, n, engine.key)] = r
                previous[engine.key] = (r, n)
            with open(args.out, "w") as f:  # what is measured so far, in case the run is cut short
                f.write(render(args, sizes, shapes, chosen, results, notes, time.time() - began, loads))
    notes.append(
        "load average (1, 5, 15 min) before the benchmark {}, after it {} (the machine is shared)".format(
            ", ".join(f"{x:.1f}" for x in load_before), ", ".join(f"{x:.1f}" for x in os.getloadavg())
        )
    )
    table = render(args, sizes, shapes, chosen, results, notes, time.time() - began, loads)
    print(table)
    with open(args.out, "w") as f:
        f.write(table)


def render(args, sizes, shapes, chosen, results, notes, elapsed, loads):
    smallest = sizes[0]
    lines = []
    lines.append("# cuga-flo peer benchmark")
    lines.append("")
    lines.append(f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
    lines.append(f"- machine: {machine()}")
    lines.append(
        f"- software: Python {platform.python_version()}, Node {node_version()}, cuga-flo {cuga_version(args)}; "
        f"each cell the median of up to {args.repeats} runs (fewer when one measurement's runs passed "
        f"{args.budget:.0f} s; the count is in `runs`), the engines interleaved run by run on each model, "
        f"a run killed after {args.cap:.0f} s; the whole benchmark took {elapsed / 60:.1f} min"
    )
    lines.append("")
    lines.append(
        "Per node = per flow node the run visits (tasks and gateways; start and end events not counted). "
        "**wall**: the whole process (start-up, imports, parsing the model, the run, exit) / nodes. "
        "**marginal**: the least-squares slope of wall time over every size measured up to this one, "
        "the cost of one more node once the process is up (process view). "
        "**in-engine**: the run alone (after imports and model load: the peers' run loop timed inside their loaded "
        "interpreter; for cuga-flo the journal's run_started → run_finished, ms resolution) / nodes (warm view); "
        "**in-engine marginal**: its least-squares slope. "
        "**CPU**: user + system time of the process / nodes. **RSS**: the process's peak resident set. "
        "**× fastest**: wall (and in-engine) over the fastest engine's for the same model. "
        "**load**: the machine's 1-minute load average when the model's measurements began."
    )
    lines.append("")
    lines.append(
        "| shape | nodes | engine | wall µs/node | marginal µs/node | in-engine µs/node | in-engine marginal µs/node | CPU µs/node | peak RSS MiB | × fastest (wall) | × fastest (in-engine) | runs | load |"
    )
    lines.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for shape in shapes:
        for n in sizes:
            rows = []
            for engine in chosen:
                r = results.get((shape, n, engine.key))
                if r is None:
                    continue
                measured = [
                    (m, results[(shape, m, engine.key)])
                    for m in sizes
                    if m <= n and "wall" in results.get((shape, m, engine.key), {})
                ]
                marginal = slope([(m, x["wall"]) for m, x in measured])
                engine_marginal = slope([(m, x["engine"]) for m, x in measured])
                rows.append((engine, r, marginal, engine_marginal))
            walls = [r["wall"] for _, r, _, _ in rows if "wall" in r]
            engines_s = [r["engine"] for _, r, _, _ in rows if "wall" in r and r["engine"] > 0]
            fastest = min(walls) if walls else None
            fastest_e = min(engines_s) if engines_s else None
            load = loads.get((shape, n))
            for engine, r, marginal, engine_marginal in rows:
                if "wall" not in r:
                    what = "failed" if r.get("error") else "timeout (est.)" if "estimate" in r else "timeout"
                    if r.get("skipped"):
                        what += " (smaller size)"
                    lines.append(f"| {shape} | {n:,} | {engine.label} | {what} | | | | | | | | | |")
                    continue
                us = lambda s: fmt(s * 1e6) if s is not None else ""  # noqa: E731
                lines.append(
                    "| {} | {:,} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                        shape,
                        n,
                        engine.label,
                        fmt(r["wall"] / n * 1e6),
                        us(marginal),
                        fmt(r["engine"] / n * 1e6),
                        us(engine_marginal),
                        fmt(r["cpu"] / n * 1e6),
                        f"{r['rss_kib'] / 1024:.0f}",
                        f"{r['wall'] / fastest:.1f}",
                        f"{r['engine'] / fastest_e:.1f}" if fastest_e and r["engine"] > 0 else "",
                        r["runs"],
                        f"{load:.1f}" if load is not None else "",
                    )
                )
    lines.append("")
    lines.append("What each engine runs (every task a no-op control point):")
    lines.append("")
    lines.append(
        "- cuga-flo: the release binary, `cuga-flo start <app> --engine native --no-model --no-park --json` "
        "(stream to a file), a generated app whose tasks are not in the flow config (each a pass-through "
        "`execute_task` on the harness) and whose exclusive splits are decided by their conditions; "
        "durable = `--durability batch` with the run folder on disk, in memory = `--durability off` with it on /dev/shm."
    )
    lines.append(
        "- SpiffWorkflow: `bpmn:task` (manual in SpiffWorkflow): the driver runs `do_engine_steps()` and completes every ready manual task; conditions are Python expressions."
    )
    lines.append(
        "- LangGraph: a StateGraph whose nodes are the tasks (no-op functions), a conditional edge per exclusive split, a fan-out and a waiting edge per parallel block; gateways are edges, not nodes, so it executes fewer nodes than the BPMN engines for the same model; `invoke` with and without `InMemorySaver`."
    )
    lines.append(
        "- bpmn-engine: each task a `serviceTask` whose implementation is a JavaScript function calling back on the next event-loop turn (`setImmediate`; calling back synchronously overflows the stack at 1,000 tasks); bpmn-engine parses the XML when it executes, so its in-engine time includes the parse."
    )
    if notes:
        lines.append("")
        lines.append("Notes:")
        lines.append("")
        for note in notes:
            lines.append(f"- {note}")
    lines.append("")
    return "\n".join(lines)


def node_version():
    try:
        return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def cuga_version(args):
    try:
        v = subprocess.run([args.cuga_flo, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        v = "?"
    try:
        rev = subprocess.run(
            ["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        if rev:
            v += f" ({rev}, release build)"
    except OSError:
        pass
    return v


if __name__ == "__main__":
    main()
