"""Drive `cuga-flo start trip_planner` (or the arguments given after the run folder) in a
pseudo-terminal: wait for the person's prompt, press Ctrl-C, and report the exit code,
whether the prompt appeared, and the screen as JSON on stdout. When the command ends
without prompting, it is not interrupted.

Used by tests/suite/durable.rs (ctrl_c_at_a_prompt_parks_the_question_and_exits_130): a real
terminal, so the run asks the person at the terminal, and Ctrl-C reaches it as SIGINT
from the terminal's line discipline, as it does for a user.
"""
import json
import os
import pty
import select
import sys
import time

binary, run_dir = sys.argv[1], sys.argv[2]
args = sys.argv[3:] or ["start", "trip_planner", "--no-model"]
pid, fd = pty.fork()
if pid == 0:
    os.environ["NO_COLOR"] = "1"
    os.environ.pop("CUGA_FLO_APPS", None)
    os.execv(binary, [binary, *args, "--run-dir", run_dir])

screen = b""


def read_for(seconds, until=None):
    global screen
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return False
        if not chunk:
            return False
        screen += chunk
        if until is not None and until(screen):
            return True
    return False


def at_prompt(text):
    # `  planning_preference (a string)> `: the output's name, maybe its type, the prompt.
    at = text.rfind(b"planning_preference")
    return at >= 0 and b">" in text[at:]


prompted = read_for(30, at_prompt)
if prompted:
    time.sleep(0.3)
    os.write(fd, b"\x03")  # Ctrl-C, as typed
    read_for(15)
# Never wait for ever: a command still running now is killed (the test then fails).
deadline = time.time() + 15
while True:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    if time.time() > deadline:
        os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        break
    time.sleep(0.1)
exit_code = os.waitstatus_to_exitcode(status)
print(json.dumps({
    "prompted": prompted,
    "exit": exit_code,
    "screen": screen.decode("utf-8", "replace"),
}))
