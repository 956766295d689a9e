#!/usr/bin/env python3
"""A stand-in for the Goose CLI in tests (Goose cannot be installed here).

It follows the contract cuga-flo's command agents rely on:
    goose run --recipe FILE [--params key=value]...
prints the answer on stdout (JSON, possibly inside a ```json fence, with chatter around
it) and exits 0; anything else is a failure.

What it answers comes from the environment, so a test can drive every path:
  GOOSE_STAND_IN_MODE    ok (default): print the answer as plain JSON
                         fenced: the answer inside a ```json fence, with chatter around
                         exit: complain on stderr and exit 3
                         hang: start a grandchild that sleeps, then sleep (the caller's
                               timeout must kill the whole process group)
                         garbage: print prose without any JSON object
                         schema: print JSON that violates the recipe's schema
  GOOSE_STAND_IN_ANSWER  the answer (a JSON object); default: a classification made from
                         the `request` parameter (HIGH when it mentions fraud or an
                         outage, else LOW)
  GOOSE_STAND_IN_LOG     a file to append this invocation's argv to (one JSON line)
  GOOSE_STAND_IN_PIDS    a file to write the grandchild's pid to (mode hang)
"""
import json
import os
import subprocess
import sys
import time


def main(argv):
    log = os.environ.get("GOOSE_STAND_IN_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(argv) + "\n")
    if len(argv) < 1 or argv[0] != "run":
        print("usage: goose run --recipe FILE [--params k=v]...", file=sys.stderr)
        return 2
    recipe, params, i = None, {}, 1
    while i < len(argv):
        if argv[i] == "--recipe" and i + 1 < len(argv):
            recipe = argv[i + 1]
            i += 2
        elif argv[i] == "--params" and i + 1 < len(argv):
            key, _, value = argv[i + 1].partition("=")
            params[key] = value
            i += 2
        else:
            print(f"unexpected argument {argv[i]!r}", file=sys.stderr)
            return 2
    if not recipe or not os.path.isfile(recipe):
        print(f"recipe not found: {recipe}", file=sys.stderr)
        return 2
    mode = os.environ.get("GOOSE_STAND_IN_MODE", "ok")
    print("starting session | provider: stand-in", file=sys.stderr)
    if "GOOSE_STAND_IN_ANSWER" in os.environ:
        answer = json.loads(os.environ["GOOSE_STAND_IN_ANSWER"])
    else:
        text = params.get("request", "").lower()
        severity = "HIGH" if ("fraud" in text or "outage" in text) else "LOW"
        answer = {"severity": severity, "summary": f"{params.get('customer', '?')}: {params.get('request', '')}"}
    if mode == "ok":
        print(json.dumps(answer))
    elif mode == "fenced":
        print("Here is the classification you asked for:\n")
        print("```json\n" + json.dumps(answer, indent=2) + "\n```")
        print("\nLet me know if you need anything else.")
    elif mode == "exit":
        print("error: the provider refused the request (quota exceeded)", file=sys.stderr)
        return 3
    elif mode == "hang":
        child = subprocess.Popen(["sleep", "60"])
        pids = os.environ.get("GOOSE_STAND_IN_PIDS")
        if pids:
            with open(pids, "w", encoding="utf-8") as f:
                f.write(str(child.pid))
        print("thinking...", file=sys.stderr, flush=True)
        time.sleep(60)
    elif mode == "garbage":
        print("I could not decide on a severity for this one, sorry.")
    elif mode == "schema":
        print(json.dumps({"severity": "SEVERE", "summary": 42}))
    else:
        print(f"unknown GOOSE_STAND_IN_MODE {mode!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
