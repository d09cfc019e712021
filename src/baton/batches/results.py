"""A batch's results: each cell's fields (from its run's result, or from the store's record of
a run whose result this process never saw), the text table, and the JSONL and CSV exports.

What an agent did not report is ``"unknown"``, never 0: usage, tokens and cost are taken
from the agent's own reports only (docs/usage.md), and a run without a compared workspace has
unknown changes. The fields are listed once, in :data:`EXPORT_FIELDS`, in the order the CSV
header and the table use.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson

from baton.runtime.result import permission_counts
from baton.runtime.runtime import RunResult
from baton.store.batches import BatchCell
from baton.store.models import Run as RunRecord

#: What a field the agent did not report reads as, in every output.
UNKNOWN: Final = "unknown"

#: The longest message kept on a cell (a failure's message; the run keeps the whole).
MAX_CELL_MESSAGE_CHARS: Final = 500

#: The export's columns, in order (JSONL objects have these keys, CSV this header).
EXPORT_FIELDS: Final = (
    "batch",
    "cell",
    "task",
    "agent",
    "repeat",
    "state",
    "reason",
    "runId",
    "runs",
    "status",
    "stopReason",
    "exitCode",
    "errorCode",
    "wallMs",
    "firstOutputMs",
    "toolCalls",
    "permissionsGranted",
    "permissionsDenied",
    "permissionsCancelled",
    "tokens",
    "contextUsed",
    "cost",
    "currency",
    "filesChanged",
    "linesAdded",
    "linesRemoved",
    "unreportedChanges",
    "workspace",
    "show",
    "diff",
    "reply",
)

#: The most characters of a run's reply kept on its cell (the run's items keep the whole).
MAX_CELL_REPLY_CHARS: Final = 500


def reported_cost(usage: Mapping[str, Any] | None) -> tuple[float, str] | None:
    """(amount, currency) of a run's reported cost, or None when the agent sent none."""
    cost = (usage or {}).get("cost")
    amount = cost.get("amount") if isinstance(cost, Mapping) else None
    if isinstance(amount, int | float) and not isinstance(amount, bool):
        assert isinstance(cost, Mapping)
        return float(amount), str(cost.get("currency") or "USD")
    return None


def fields_of_result(
    result: RunResult, *, wall_ms: int, first_output_ms: int | None
) -> dict[str, Any]:
    """A cell's result fields from its run's :class:`RunResult`."""
    usage = result.usage or {}
    cost = reported_cost(usage)
    turn = usage.get("turn") if isinstance(usage.get("turn"), Mapping) else {}
    tokens = turn.get("totalTokens") if isinstance(turn, Mapping) else None
    used = usage.get("used")
    counts = permission_counts(result.permissions)
    changes = result.workspace_changes
    change_counts = (changes or {}).get("counts") if changes else None
    message = result.message
    return {
        "status": result.status,
        "stopReason": result.stop_reason,
        "exitCode": result.exit_code,
        "errorCode": result.error_code,
        "message": message[:MAX_CELL_MESSAGE_CHARS] if message else None,
        "wallMs": wall_ms,
        "firstOutputMs": first_output_ms if first_output_ms is not None else UNKNOWN,
        "toolCalls": result.tool_calls,
        "permissionsGranted": counts["granted"],
        "permissionsDenied": counts["denied"],
        "permissionsCancelled": counts["cancelled"],
        "tokens": tokens if isinstance(tokens, int) else UNKNOWN,
        "contextUsed": used if isinstance(used, int) and not isinstance(used, bool) else UNKNOWN,
        "cost": cost[0] if cost is not None else UNKNOWN,
        "currency": cost[1] if cost is not None else UNKNOWN,
        "filesChanged": change_counts.get("files", 0) if change_counts else UNKNOWN,
        "linesAdded": change_counts.get("linesAdded", 0) if change_counts else UNKNOWN,
        "linesRemoved": change_counts.get("linesRemoved", 0) if change_counts else UNKNOWN,
        "unreportedChanges": change_counts.get("unreported", 0) if change_counts else UNKNOWN,
        "workspace": (result.workspace or {}).get("name") if result.workspace else None,
        "reply": result.text[:MAX_CELL_REPLY_CHARS],
    }


def fields_of_record(run: RunRecord) -> dict[str, Any]:
    """A cell's result fields from the store's record of its run, for a run whose result
    the batch process never saw (it was killed): what the record holds, the rest unknown."""
    return {
        "status": run.status,
        "stopReason": run.stop_reason,
        "exitCode": UNKNOWN,
        "errorCode": run.error_code,
        "message": (run.diagnostic or "")[:MAX_CELL_MESSAGE_CHARS] or None,
        "wallMs": UNKNOWN,
        "firstOutputMs": UNKNOWN,
        "toolCalls": UNKNOWN,
        "permissionsGranted": UNKNOWN,
        "permissionsDenied": UNKNOWN,
        "permissionsCancelled": UNKNOWN,
        "tokens": UNKNOWN,
        "contextUsed": UNKNOWN,
        "cost": UNKNOWN,
        "currency": UNKNOWN,
        "filesChanged": UNKNOWN,
        "linesAdded": UNKNOWN,
        "linesRemoved": UNKNOWN,
        "unreportedChanges": UNKNOWN,
        "workspace": None,
        "reply": None,
    }


def cell_row(cell: BatchCell) -> dict[str, Any]:
    """One cell as an export row (:data:`EXPORT_FIELDS`), with the commands that show its run
    and its workspace's changes."""
    result = cell.result or {}
    row: dict[str, Any] = {
        "batch": cell.batch_id,
        "cell": cell.index,
        "task": cell.task,
        "agent": cell.agent,
        "repeat": cell.repeat,
        "state": cell.state,
        "reason": cell.reason,
        "runId": cell.run_id,
        "runs": list(cell.runs),
    }
    for name in EXPORT_FIELDS[len(row) :]:
        row[name] = result.get(name)
    if cell.run_id is not None:
        row["show"] = f"baton show {cell.run_id}"
        row["diff"] = f"baton diff {cell.run_id}" if result.get("workspace") else None
    else:
        row["show"] = row["diff"] = None
    row["message"] = result.get("message")
    return row


def cost_totals(cells: Sequence[BatchCell]) -> dict[str, float]:
    """The reported cost of a batch's cells so far, by currency (unreported costs are not
    guessed: a cell without one adds nothing, and says so in its row)."""
    totals: dict[str, float] = {}
    for cell in cells:
        result = cell.result or {}
        amount, currency = result.get("cost"), result.get("currency")
        if isinstance(amount, int | float) and isinstance(currency, str):
            totals[currency] = totals.get(currency, 0.0) + float(amount)
    return totals


def export_jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    """One JSON object per cell."""
    return "".join(orjson.dumps(dict(row)).decode() + "\n" for row in rows)


def export_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """A CSV with :data:`EXPORT_FIELDS` as its header; lists are ``;``-joined, absent
    values empty, unreported ones ``unknown``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(EXPORT_FIELDS)
    for row in rows:
        writer.writerow([_csv_value(row.get(name)) for name in EXPORT_FIELDS])
    return out.getvalue()


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


#: The text table's columns: (header, field, width).
TABLE_COLUMNS: Final = (
    ("cell", "cell", 4),
    ("task", "task", 14),
    ("agent", "agent", 12),
    ("rep", "repeat", 3),
    ("state", "state", 17),
    ("stop", "stopReason", 10),
    ("exit", "exitCode", 4),
    ("wall", "wallMs", 7),
    ("tools", "toolCalls", 5),
    ("perm +/-", "permissions", 8),
    ("cost", "cost", 9),
    ("files +/-", "changes", 12),
    ("run", "runId", 22),
)


def table_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """The results as a fixed-width text table (one line per cell)."""
    lines = ["  ".join(header.ljust(width) for header, _f, width in TABLE_COLUMNS).rstrip()]
    for row in rows:
        cells = []
        for _header, name, width in TABLE_COLUMNS:
            cells.append(_table_value(row, name)[:width].ljust(width))
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _table_value(row: Mapping[str, Any], name: str) -> str:
    if name == "permissions":
        granted, denied = row.get("permissionsGranted"), row.get("permissionsDenied")
        return "" if granted is None else f"{granted}/{denied}"
    if name == "changes":
        files = row.get("filesChanged")
        if files is None:
            return ""
        if files == UNKNOWN:
            return UNKNOWN
        unreported = row.get("unreportedChanges")
        mark = f" !{unreported}" if isinstance(unreported, int) and unreported else ""
        return f"{files} +{row.get('linesAdded')}/-{row.get('linesRemoved')}{mark}"
    if name == "wallMs":
        value = row.get(name)
        return f"{value / 1000:.1f}s" if isinstance(value, int) else str(value or "")
    if name == "cost":
        value = row.get(name)
        if isinstance(value, int | float):
            currency = row.get("currency")
            return f"${value:.4f}" if currency == "USD" else f"{value:.4f}{currency}"
        return str(value or "")
    value = row.get(name)
    return "" if value is None else str(value)
