#!/usr/bin/env python3
"""Create (once) and reuse the virtualenv the interop checks run in; print its python.

The venv lives at ${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}/interop-venv-<hash>, where
<hash> is taken from requirements.txt beside this file, so editing the pins makes a new
venv and an unchanged file reuses the old one (a warm call costs one `python -c` run).
Only the standard library is used here. Concurrent callers are serialised by a lock file.

Another venv (e.g. pm4py for the XES export test) is made from another requirements file:
`setup_venv.py REQUIREMENTS NAME MODULE` keeps it at <cache>/NAME-<hash> and checks that
MODULE's distribution is installed.

Exit status: 0 with the venv's python path as the only stdout line; 2 when venv or pip
is unavailable or the install fails (the reason is on stderr).
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import NoReturn

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements.txt"
NAME = "interop-venv"
MODULE = "mcp"
MIN_PYTHON = (3, 10)  # what the pinned SDK requires
READY = ".cuga-flo-ready"  # written last: a venv without it is half-built
NO_DEPS = "# setup_venv: --no-deps"  # a requirements file's line: install exactly its pins


def fail(message: str) -> NoReturn:
    print(f"setup_venv: {message}", file=sys.stderr)
    sys.exit(2)


def cache_root() -> Path:
    root = os.environ.get("CUGA_FLO_CACHE")
    if root:
        return Path(root)
    return Path(os.path.expanduser("~")) / ".cache" / "cuga-flo"


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def usable(venv: Path) -> bool:
    """The venv is complete and its interpreter still runs (the base python may be gone)."""
    if not (venv / READY).is_file():
        return False
    try:
        out = subprocess.run(
            [str(venv_python(venv)), "-c", f"import importlib.metadata as m; m.version('{MODULE}')"],
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0


def run(cmd: list, what: str, timeout: float) -> None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail(f"{what} took more than {timeout:.0f}s: {' '.join(cmd)}")
    except OSError as e:
        fail(f"{what} could not start ({e}): {' '.join(cmd)}")
    if out.returncode != 0:
        fail(
            f"{what} failed (exit {out.returncode}): {' '.join(cmd)}\n"
            f"--- stdout ---\n{out.stdout}\n--- stderr ---\n{out.stderr}"
        )


def create(venv: Path) -> None:
    try:
        import venv as _venv  # noqa: F401
        import ensurepip  # noqa: F401
    except ImportError as e:
        fail(
            f"this python ({sys.executable}) has no venv/ensurepip module ({e}); "
            "install it (Debian: apt-get install python3-venv)"
        )
    if venv.exists():
        shutil.rmtree(venv)
    run([sys.executable, "-m", "venv", str(venv)], "python3 -m venv", 300)
    # A requirements file that pins every package it needs says so, and is installed
    # without the packages' own (heavier) dependency lists.
    no_deps = ["--no-deps"] if NO_DEPS in REQUIREMENTS.read_text() else []
    run(
        [
            str(venv_python(venv)),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--quiet",
            *no_deps,
            "-r",
            str(REQUIREMENTS),
        ],
        "pip install -r requirements.txt",
        900,
    )
    (venv / READY).write_text(REQUIREMENTS.read_text())


def main() -> None:
    global REQUIREMENTS, NAME, MODULE
    if len(sys.argv) == 4:
        REQUIREMENTS, NAME, MODULE = Path(sys.argv[1]).resolve(), sys.argv[2], sys.argv[3]
    elif len(sys.argv) != 1:
        fail("usage: setup_venv.py [REQUIREMENTS NAME MODULE]")
    if sys.version_info < MIN_PYTHON:
        fail(
            f"python {'.'.join(map(str, MIN_PYTHON))}+ is needed for the MCP SDK; "
            f"{sys.executable} is {sys.version.split()[0]}"
        )
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]
    root = cache_root()
    venv = root / f"{NAME}-{digest}"
    if not usable(venv):
        root.mkdir(parents=True, exist_ok=True)
        with open(root / f"{NAME}-{digest}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not usable(venv):  # another caller may have built it meanwhile
                started = time.monotonic()
                create(venv)
                if not usable(venv):
                    fail(f"the new venv at {venv} has no {MODULE} package")
                print(
                    f"setup_venv: created {venv} in {time.monotonic() - started:.1f}s",
                    file=sys.stderr,
                )
    print(venv_python(venv))


if __name__ == "__main__":
    main()
