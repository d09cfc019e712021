"""`baton run`'s text output: the run's events as a person reads them (the reply on stdout,
everything else compact on stderr through the terminal layer, every agent string sanitized),
the summary line, and the next step a failed run suggests. The JSON output is the events
themselves (docs/events.md); this is only the human rendering.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from baton.cli import exit_codes
from baton.cli.terminal import Screen, visible
from baton.cli.usage_view import usage_text
from baton.cli.workspace_view import counts_line, unreported_lines
from baton.runtime.permissions.elicitations import TURN_CANCELLED
from baton.runtime.result import permission_counts
from baton.runtime.runtime import RunResult
from baton.runtime.turns.events import RunEvent

#: Characters of a thought shown on its line (the whole thought is in --json and the store).
MAX_THOUGHT_CHARS: Final = 200
#: Plan entries shown on the plan line; the rest are counted.
MAX_PLAN_ENTRIES: Final = 8


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 event``, ``2 events``."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def warning_line(screen: Screen, data: Mapping[str, Any]) -> str:
    """A ``warning`` event as the one stderr line both output formats print."""
    return screen.style(
        f"! {visible(str(data.get('code')), 60)}: {visible(str(data.get('message')))}", "yellow"
    )


#: Notice severity -> its mark and colour in text output (other severities: the info mark).
NOTICE_MARKS: Final = {"info": ("ℹ", "dim"), "warning": ("!", "yellow"), "error": ("✗", "red")}


class TextPrinter:
    """Human output: the reply on stdout, everything else compact on stderr, through the
    terminal layer (every agent string sanitized)."""

    def __init__(self, screen: Screen) -> None:
        self.screen = screen
        # toolCallId -> the status last printed for it ("" while nothing was printed).
        self._tools: dict[str, str] = {}
        # compactionId -> the status last printed for it.
        self._compactions: dict[str, str] = {}
        self.usage: dict[str, Any] | None = None
        self._thought = ""
        #: An agent's question (elicitation) was still open when the turn stopped: a person
        #: was asked and had not answered (see :func:`question_left_open`).
        self.question_left_open = False

    def _note(self, text: str) -> None:
        self.screen.note(text)

    def flush_thought(self) -> None:
        """The thought streamed so far, as one line (cut to :data:`MAX_THOUGHT_CHARS`)."""
        if self._thought.strip():
            text = visible(self._thought.strip(), MAX_THOUGHT_CHARS)
            self._note(self.screen.style(f"· thinking: {text}", "dim"))
        self._thought = ""

    def __call__(self, event: RunEvent) -> None:
        data = event.data
        kind = event.type
        self.question_left_open |= question_left_open(event)
        if kind == "thought":
            # A thought streams in parts: shown as one line when something else comes.
            self._thought += str(data.get("text", ""))
            return
        self.flush_thought()
        if kind == "text":
            self.screen.reply(str(data.get("text", "")))
        elif kind == "tool_call":
            self._tool(data)
        elif kind == "plan":
            entries = data.get("entries") or []
            shown = "; ".join(
                f"[{visible(str(e.get('status')), 20)}] {visible(str(e.get('content')))}"
                for e in entries[:MAX_PLAN_ENTRIES]
            )
            more = len(entries) - MAX_PLAN_ENTRIES
            self._note(f"☰ plan: {shown}" + (f" (+{more} more)" if more > 0 else ""))
        elif kind == "permission":
            self._permission(data)
        elif kind == "usage":
            self.usage = dict(data)
        elif kind == "notice":
            self._notice(data)
        elif kind == "compaction":
            self._compaction(data)
        elif kind == "steer":
            reason = f" ({visible(str(data.get('reason')), 120)})" if data.get("reason") else ""
            self._note(
                f"↪ steered ({visible(str(data.get('outcome')), 32)}{reason}): "
                f"{visible(str(data.get('text')), 200)}"
            )
        elif kind == "warning":
            self._note(warning_line(self.screen, data))

    def _tool(self, data: dict[str, Any]) -> None:
        """One line when a tool call first has a title, and one when it ends; the updates in
        between (an empty first title, in_progress, content) print nothing."""
        call_id = str(data.get("toolCallId") or "")
        status = str(data.get("status") or "pending")
        title = str(data.get("title") or "")
        printed = self._tools.get(call_id, "")
        ended = status in ("completed", "failed")
        if printed == status or (printed and not ended) or (not title and not ended):
            self._tools.setdefault(call_id, printed)
            return
        self._tools[call_id] = status
        tool_kind = str(data.get("kind") or "tool")
        target = data.get("command") or ", ".join(str(p) for p in data.get("paths") or [])
        shown = visible(title or tool_kind)
        name = str(data.get("name") or "")
        if name and name not in title:
            shown += f" ({visible(name, 60)})"
        nested = "  ↳ " if data.get("parentToolCallId") else ""
        line = f"{nested}⚙ {visible(tool_kind, 20)} {shown}"
        if target and str(target) not in title:
            line += f" {visible(str(target))}"
        diff = data.get("diff")
        if isinstance(diff, dict) and ("added" in diff or "removed" in diff):
            line += f" +{diff.get('added', 0)} -{diff.get('removed', 0)}"
        mark = {"completed": ("green",), "failed": ("red",)}.get(status, ("dim",))
        self._note(f"{line} {self.screen.style(f'[{visible(status, 20)}]', *mark)}")

    def _notice(self, data: dict[str, Any]) -> None:
        """One line per notice: severity mark, title, and the description after a dash."""
        severity = str(data.get("severity") or "info")
        mark, colour = NOTICE_MARKS.get(severity, NOTICE_MARKS["info"])
        label = "" if severity in NOTICE_MARKS else f"[{visible(severity, 32)}] "
        text = f"{mark} notice: {label}{visible(str(data.get('title') or ''))}"
        description = data.get("description")
        if description:
            text += f" — {visible(str(description))}"
        self._note(self.screen.style(text, colour))

    def _compaction(self, data: dict[str, Any]) -> None:
        """One line when a compaction starts or changes status (chunks print nothing)."""
        compaction_id = str(data.get("compactionId") or "")
        status = str(data.get("status") or "")
        if self._compactions.get(compaction_id) == status:
            return
        self._compactions[compaction_id] = status
        line = f"⟲ context compaction [{visible(status, 20)}]"
        error = data.get("error")
        if error:
            line += f": {visible(str(error))}"
        elif status == "completed" and data.get("summary"):
            line += f": {visible(str(data['summary']).replace(chr(10), ' '), MAX_THOUGHT_CHARS)}"
        self._note(self.screen.style(line, "dim"))

    def _permission(self, data: dict[str, Any]) -> None:
        by = visible(str(data.get("chosenBy")), 20)
        if data.get("outcome") == "selected":
            kinds = {o.get("optionId"): o.get("kind") for o in data.get("options") or []}
            option = str(data.get("optionId"))
            allowed = str(kinds.get(option) or "").startswith("allow")
            mark = self.screen.style("✓", "green") if allowed else self.screen.style("✗", "red")
            self._note(f"{mark} permission: {visible(option, 80)} (chosen by {by})")
        else:
            reason = visible(str(data.get("reason") or data.get("reasonCode") or ""), 120)
            self._note(f"{self.screen.style('✗', 'red')} permission: cancelled ({reason})")

    def summary(
        self,
        result: RunResult,
        exit_code: int,
        fail_on_denied: bool,
        session: str | None = None,
    ) -> None:
        """The run's last lines on stderr: how it ended, counts, usage, time, its id (and the
        named session it was a turn of), then the error and what to do next."""
        self.flush_thought()
        self.screen.end()
        counts = permission_counts(result.permissions)
        parts = [
            result.stop_reason or result.status.lower(),
            plural(result.tool_calls, "tool call"),
        ]
        if result.permissions:
            parts.append(
                f"permissions {counts['granted']} granted, {counts['denied']} denied, "
                f"{counts['cancelled']} cancelled"
            )
        usage = usage_text(self.usage)
        if usage:
            parts.append(usage)
        parts += [f"{result.duration_ms / 1000:.1f}s", f"run {result.run_id}"]
        if session is not None:
            parts.append(f"session {visible(session, 64)}")
        if result.workspace_changes is not None:
            self._note(counts_line(result.workspace_changes))
            for line in unreported_lines(result.workspace_changes):
                self._note(self.screen.style(line, "yellow"))
        self._note("— " + " · ".join(parts))
        unanswered = counts["denied"] + counts["cancelled"]
        if result.status == "COMPLETED" and unanswered and not fail_on_denied:
            self._note(
                f"! {plural(unanswered, 'permission request')} not granted; "
                f"--fail-on-denied makes that exit {exit_codes.PERMISSION_NOT_GRANTED}"
            )
        if exit_code != 0 and result.error_code:
            self._note(
                self.screen.style(
                    f"{result.error_code}: {visible(result.message or result.status, None, newlines=True)}",
                    "red",
                )
            )
        hint = next_step(result, exit_code, question_left_open=self.question_left_open)
        if hint:
            self._note(f"next: {hint}")


def question_left_open(event: RunEvent) -> bool:
    """Whether ``event`` records an agent's question (``elicitation``) withdrawn because its
    turn stopped while it was open: nobody had answered it (a question nobody could answer is
    declined at once, "no user available", and never left open)."""
    return event.type == "elicitation" and event.data.get("reasonCode") == TURN_CANCELLED


def next_step(result: RunResult, exit_code: int, *, question_left_open: bool = False) -> str | None:
    """What the user should do next after ``result``, with the real run id.
    ``question_left_open``: an agent's question was open, unanswered, when the turn stopped."""
    run_id = result.run_id
    if exit_code == exit_codes.RECOVERY_REQUIRED or result.status == "RECOVERY_REQUIRED":
        return (
            "the outcome is ambiguous and will not be replayed: inspect and settle it with "
            f"`baton recover {run_id}`"
        )
    if exit_code == exit_codes.PERMISSION_NOT_GRANTED:
        return (
            "nobody allowed the agent's request: answer it on a terminal (--policy ask), use a "
            "policy the profile exposes, or the agent's own edit mode (e.g. --mode acceptEdits "
            "for claude)"
        )
    if exit_code == exit_codes.BUDGET and any(
        view.get("reasonCode") == "budget_elapsed" for view in result.permissions
    ):
        return (
            "the turn budget elapsed while a person was asked for permission and nobody "
            "answered: answer at the terminal or in the inspector sooner, raise --timeout, or "
            "run with a policy that does not ask"
        )
    if exit_code == exit_codes.BUDGET and question_left_open:
        return (
            "the turn budget elapsed while a person was asked the agent's question and nobody "
            "answered: answer at the terminal or in the inspector sooner, or raise --timeout"
        )
    if exit_code == exit_codes.BUDGET and result.status == "CANCELLED":
        return (
            "no worker started the queued run within its --timeout: start one "
            "(`baton worker --queue Q`; `baton workers` lists them) or raise --timeout"
        )
    if exit_code == exit_codes.BUDGET:
        return (
            "a turn budget elapsed: raise --idle-timeout/--timeout, or check the agent with "
            "`baton doctor --live`"
        )
    if exit_code == exit_codes.AUTH_REQUIRED:
        return "sign in with the agent's own command, then run again (`baton doctor --live` shows its methods)"
    if result.error_code == "NOT_AN_ACP_AGENT":
        return (
            "the command ran but does not speak ACP: name an ACP adapter (or its ACP flag); "
            "`baton doctor` lists the agents it found"
        )
    if exit_code == exit_codes.NOT_INSTALLED:
        return (
            "install the agent or point BATON_*_ACP_BIN at it; `baton doctor` shows what was found"
        )
    if result.error_code in ("TRANSPORT_CLOSED", "AGENT_PROTOCOL_ERROR") and not result.session_id:
        return (
            "the agent stopped before a session opened: run its command yourself to see why, "
            f"or add -v to watch its stderr; `baton show {run_id}` keeps this diagnostic"
        )
    return None
