#!/usr/bin/env python3
"""An HR database as an MCP server over stdio: a demo and test fixture for cuga-flo's
agents that call tools (the hr_offboarding app). Not a real HR system.

Written with the official MCP Python SDK (`pip install mcp==2.3.0`; in mcp 2.x FastMCP
is `mcp.server.MCPServer`). Five tools, each with its ToolAnnotations: lookup_employee and
list_employees read; revoke_access (destructive, idempotent), send_notice (additive, not
idempotent) and record_return (additive, idempotent) write. An unknown employee id is a
tool error (isError=true), not a protocol error.

Environment:
  HR_DB        the JSON database; default hr_db.json beside this file. A missing file is
               seeded from SEED below (the server is one file, so that a copy of it, as
               `graph export` carries it, runs alone). Writes are atomic (temp + rename)
               and serialised by a lock file (HR_DB + ".lock") across server processes.
  HR_CALL_LOG  when set, every tools/call appends one JSON line {"tool", "arguments", "pid"}
               to this file before it runs (flushed and fsynced), so tests can count calls.

Logs go to stderr only; stdout carries the protocol.
"""

import fcntl
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

HERE = Path(__file__).resolve().parent
DB = Path(os.environ.get("HR_DB") or HERE / "hr_db.json")
SEED: dict = {
    "employees": {
        "E100": {
            "name": "Priya Natarajan",
            "department": "Engineering",
            "manager": "E103",
            "status": "active",
            "has_laptop": True,
            "access": [
                "github",
                "aws-prod",
                "vpn",
                "jira"
            ]
        },
        "E101": {
            "name": "Marcus Olsen",
            "department": "Finance",
            "manager": "E104",
            "status": "active",
            "has_laptop": True,
            "access": [
                "sap",
                "vpn",
                "expenses-admin"
            ]
        },
        "E102": {
            "name": "Lena Brandt",
            "department": "Sales",
            "manager": "E104",
            "status": "active",
            "has_laptop": False,
            "access": [
                "salesforce",
                "email"
            ]
        },
        "E103": {
            "name": "Tomás Ruiz",
            "department": "Engineering",
            "manager": "E104",
            "status": "active",
            "has_laptop": True,
            "access": [
                "github",
                "aws-prod",
                "aws-billing",
                "vpn",
                "pagerduty"
            ]
        },
        "E104": {
            "name": "Grace Okafor",
            "department": "Operations",
            "manager": None,
            "status": "active",
            "has_laptop": True,
            "access": [
                "email",
                "vpn",
                "hr-portal",
                "payroll"
            ]
        }
    }
}

EmployeeId = Annotated[str, Field(description="The employee's id, e.g. E100.")]


def record_call(tool: Any, arguments: Any) -> None:
    path = os.environ.get("HR_CALL_LOG")
    if not path:
        return
    line = json.dumps({"tool": tool, "arguments": arguments, "pid": os.getpid()}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


async def log_calls(ctx, call_next):
    """Server middleware: sees every request before validation, so even a rejected call is logged."""
    if ctx.method == "tools/call":
        params = ctx.params if isinstance(ctx.params, dict) else {}
        record_call(params.get("name"), params.get("arguments") or {})
    return await call_next(ctx)


def save(db: dict) -> None:
    DB.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=DB.parent, prefix=f".{DB.name}.", delete=False) as tmp:
        json.dump(db, tmp, indent=2)
        tmp.flush()
        os.fsync(tmp.fileno())
    os.replace(tmp.name, DB)


@contextmanager
def database(write: bool = False):
    """The database, under an exclusive lock; saved atomically afterwards when `write`."""
    DB.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{DB}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not DB.exists():
            save(SEED)
        db = json.loads(DB.read_text())
        yield db
        if write:
            save(db)


def employee(db: dict, employee_id: str) -> dict:
    found = db["employees"].get(employee_id)
    if found is None:
        known = sorted(db["employees"]) or ["E100"]
        raise ToolError(f"no employee {employee_id}; known ids look like {known[0]} (list_employees lists them)")
    found.setdefault("notices", [])
    found.setdefault("returned", [])
    return found


def view(employee_id: str, record: dict) -> dict[str, Any]:
    return {"employee_id": employee_id, **record}


def hints(read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,  # a closed world: this one database
    )


server = MCPServer("hr-offboarding", version="1.0.0", middleware=[log_calls])


@server.tool(title="Look up an employee", annotations=hints(True, False, True))
def lookup_employee(employee_id: EmployeeId) -> dict[str, Any]:
    """One employee's record: name, department, manager (an employee id), status, has_laptop,
    access (the systems they can use), notices sent and items returned."""
    with database() as db:
        return view(employee_id, employee(db, employee_id))


@server.tool(title="List employees", annotations=hints(True, False, True))
def list_employees(
    department: Annotated[
        str | None, Field(description="Only this department (case-insensitive), e.g. Engineering; all when omitted.")
    ] = None,
) -> dict[str, Any]:
    """Employees with their id, name, department and status, optionally of one department."""
    with database() as db:
        rows = [
            {"employee_id": eid, "name": e["name"], "department": e["department"], "status": e["status"]}
            for eid, e in sorted(db["employees"].items())
            if department is None or e["department"].casefold() == department.casefold()
        ]
    return {"employees": rows}


@server.tool(title="Revoke all access", annotations=hints(False, True, True))
def revoke_access(
    employee_id: EmployeeId,
    reason: Annotated[str, Field(description="Why access is revoked; kept on the record.")],
) -> dict[str, Any]:
    """Revoke every access the employee has and mark them "revoked". Repeating it revokes nothing more."""
    with database(write=True) as db:
        e = employee(db, employee_id)
        revoked, e["access"] = e["access"], []
        e["status"] = "revoked"
        e["revoked_reason"] = reason
    return {"employee_id": employee_id, "status": "revoked", "revoked": revoked, "reason": reason}


@server.tool(title="Send a notice", annotations=hints(False, False, False))
def send_notice(
    employee_id: EmployeeId,
    message: Annotated[str, Field(description="The notice's text.")],
) -> dict[str, Any]:
    """Send the employee a notice (appended to their notices; sending twice sends two)."""
    with database(write=True) as db:
        notices = employee(db, employee_id)["notices"]
        notices.append({"number": len(notices) + 1, "message": message})
    return {"employee_id": employee_id, "notice_number": len(notices)}


@server.tool(title="Record a returned item", annotations=hints(False, False, True))
def record_return(
    employee_id: EmployeeId,
    item: Annotated[str, Field(description='The item handed back, e.g. "laptop" or "badge".')],
) -> dict[str, Any]:
    """Record that the employee returned an item (recording it again changes nothing).
    Returning "laptop" clears has_laptop."""
    with database(write=True) as db:
        e = employee(db, employee_id)
        already = item in e["returned"]
        if not already:
            e["returned"].append(item)
        if item.casefold() == "laptop":
            e["has_laptop"] = False
    return {
        "employee_id": employee_id,
        "item": item,
        "already_recorded": already,
        "returned": e["returned"],
        "has_laptop": e["has_laptop"],
    }


if __name__ == "__main__":
    server.run()
