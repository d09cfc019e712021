"""The interactive permission prompt: an :class:`~baton.runtime.permissions.ask.Asker` on a TTY.

It shows the tool call (kind, title, paths or command, a +N -M diff summary), the options
Baton offers numbered under the agent's own labels (remembered ones marked), and reads a
choice. Ctrl-C, Ctrl-D, end of input or ``c`` answer cancelled. Everything the agent wrote is
shown with control characters escaped and lengths bounded, so a label cannot move the cursor,
recolour the screen or hide another option.

On a terminal the prompt switches the input to non-canonical mode without signals for the
duration of one question, so Ctrl-C arrives as a keystroke (it cancels this request, not the
whole run) and the terminal settings are restored afterwards, also when the wait is cancelled.
Input is read through the event loop (``add_reader``), never by a blocking call on the loop.
One question is on screen at a time: concurrent requests wait their turn.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import termios
from collections.abc import Iterator, Mapping
from typing import IO, Any, Final

from baton.cli.terminal import Screen, visible
from baton.cli.tty_input import read_available
from baton.connection.core import cancelled_by_agent
from baton.runtime.permissions.ask import AskAnswer, Asker, AskPrompt, NoUserAsker
from baton.runtime.permissions.policies import note_for
from baton.wire.toolcalls import (
    tool_command,
    tool_cwd,
    tool_diff_stats,
    tool_kind,
    tool_name,
    tool_network_target,
    tool_paths,
)

#: Characters of one piece of agent text shown (a title, a label, a path, a command).
MAX_DISPLAY_CHARS: Final = 300
#: Paths (and diff summaries) listed for one tool call; the rest are counted.
MAX_DISPLAY_PATHS: Final = 10
#: Lines of a proposed edit's diff shown under its path (the text it would write, escaped); the
#: rest are counted. Bounds the screen a prompt can fill, not what the user may inspect elsewhere.
MAX_DIFF_PREVIEW_LINES: Final = 12
#: Characters shown of one diff line.
MAX_DIFF_LINE_CHARS: Final = 160
#: Lines of old plus new text compared for the preview; past it only the first new lines show
#: (a line-by-line match of huge files would stall the prompt).
MAX_PREVIEW_COMPARED_LINES: Final = 2_000
#: Characters kept of one typed answer; the rest are ignored (an answer is a number or ``c``).
MAX_ANSWER_CHARS: Final = 16
#: Unreadable answers accepted before the prompt gives up and answers cancelled.
MAX_INVALID_ANSWERS: Final = 5
#: Bytes read from the terminal at a time.
READ_CHUNK_BYTES: Final = 1024

#: What the prompt prints when the agent cancels its own request while it is on screen.
AGENT_WITHDREW_LINE: Final = "\n(the agent withdrew this permission request)\n"
#: The cancellation message of a prompt whose question someone else answered first (the
#: inspector, the API: a turn run by `baton serve`), and what the prompt then prints.
ANSWERED_ELSEWHERE: Final = "baton: answered elsewhere"
ANSWERED_ELSEWHERE_LINE: Final = "\n(answered elsewhere: in the inspector or through the API)\n"

CANCEL_WORDS: Final = frozenset({"c", "cancel", "q", "quit"})
_CTRL_C: Final = "\x03"
_CTRL_D: Final = "\x04"
_ERASE: Final = frozenset({"\x7f", "\x08"})
_ENTER: Final = frozenset({"\r", "\n"})


def sanitize(text: str, limit: int = MAX_DISPLAY_CHARS) -> str:
    """``text`` safe to print: the terminal layer's one sanitizer
    (:func:`baton.cli.terminal.visible`), cut to ``limit`` characters with an ellipsis."""
    return visible(text, limit)


def diff_preview(tool_call: Mapping[str, Any]) -> list[str]:
    """What a proposed edit would write: the changed lines of its first ``diff`` item (v1
    ``oldText``/``newText``) as ``+``/``-`` lines, escaped and bounded
    (:data:`MAX_DIFF_PREVIEW_LINES` lines of :data:`MAX_DIFF_LINE_CHARS` characters)."""
    items = tool_call.get("content")
    if not isinstance(items, list):
        return []
    for item in items:
        if not isinstance(item, dict) or item.get("type") != "diff":
            continue
        new_text, old_text = item.get("newText"), item.get("oldText")
        if not isinstance(new_text, str):
            continue
        old = old_text.splitlines() if isinstance(old_text, str) else []
        new = new_text.splitlines()
        if len(old) + len(new) > MAX_PREVIEW_COMPARED_LINES:
            changed = [f"+{line}" for line in new]  # too large to match: the text it writes
        else:
            changed = [
                line
                for line in _unified_diff(old, new)
                if line[:1] in "+-" and not line.startswith(("+++", "---"))
            ]
        shown = [f"    {sanitize(line, MAX_DIFF_LINE_CHARS)}" for line in changed]
        if len(shown) > MAX_DIFF_PREVIEW_LINES:
            rest = len(changed) - MAX_DIFF_PREVIEW_LINES
            shown = [*shown[:MAX_DIFF_PREVIEW_LINES], f"    ... {rest} more lines"]
        return shown
    return []


def describe(prompt: AskPrompt) -> list[str]:
    """The lines shown before the choices (no trailing newline)."""
    tool_call: Mapping[str, Any] = prompt.tool_call
    kind = tool_kind(tool_call)
    name = tool_name(tool_call)
    named = f", tool: {sanitize(name, 60)}" if name is not None else ""
    lines = [f"The agent asks permission (tool kind: {sanitize(kind, 40)}{named}):"]
    title = tool_call.get("title")
    if isinstance(title, str) and title:
        lines.append(f"  {sanitize(title)}")
    command = tool_command(tool_call)
    if command is not None:
        lines.append(f"  command: {sanitize(command)}")
    cwd = tool_cwd(tool_call)
    if cwd is not None:
        lines.append(f"  in: {sanitize(cwd)}")
    target = tool_network_target(tool_call)
    if target is not None:
        lines.append(f"  target: {sanitize(target)}")
    stats = {stat.path: stat for stat in tool_diff_stats(tool_call)}
    paths = tool_paths(tool_call)
    for path in paths[:MAX_DISPLAY_PATHS]:
        stat = stats.get(path)
        if stat is None:
            lines.append(f"  path: {sanitize(path)}")
        else:
            bound = "" if stat.exact else " (at most)"
            lines.append(f"  path: {sanitize(path)}  +{stat.added} -{stat.removed} lines{bound}")
    if len(paths) > MAX_DISPLAY_PATHS:
        lines.append(f"  ... and {len(paths) - MAX_DISPLAY_PATHS} more paths")
    lines += diff_preview(tool_call)
    if not prompt.local.permits_allow:
        lines.append(
            f"  Baton's local policy forbids allowing this: {sanitize(prompt.local.detail)}"
        )
    return lines


def choices(prompt: AskPrompt) -> list[str]:
    """The numbered choices, then cancel."""
    lines = []
    for number, option in enumerate(prompt.offered, start=1):
        note = note_for(option)
        suffix = f"  ({note})" if note is not None else ""
        lines.append(f"  {number}) {sanitize(option.name)}{suffix}")
    lines.append("  c) Cancel (answer the request cancelled)")
    return lines


def question(prompt: AskPrompt) -> str:
    """The line that asks for the answer."""
    count = len(prompt.offered)
    if count == 0:
        return "No option can be chosen here. Press Enter or c to cancel: "
    span = "1" if count == 1 else f"1-{count}"
    return f"Choose {span}, or c to cancel (Ctrl-C cancels): "


class TtyAsker(Asker):
    """Asks on a terminal: reads ``stdin`` and writes to ``output`` (the CLI passes its standard
    input and standard error, so standard output stays clean for ``--json``). With a
    ``screen``, the screen is held while a question is open: its spinner does not draw over the
    question or the answer being typed."""

    def __init__(self, stdin: IO[Any], output: IO[str], screen: Screen | None = None) -> None:
        self._fd = stdin.fileno()
        self._output = output
        self._screen = screen
        self._turn = asyncio.Lock()

    @property
    def question_lock(self) -> asyncio.Lock:
        """Held while a question is on screen; other prompts (elicitation) share it."""
        return self._turn

    async def ask(self, prompt: AskPrompt) -> AskAnswer:
        """Show ``prompt`` and read the answer (see the module docstring). Cancellation-safe:
        a cancelled wait restores the terminal and releases the screen."""
        async with self._turn:
            with self._screen.hold() if self._screen is not None else contextlib.nullcontext():
                self._write("\n" + "\n".join([*describe(prompt), *choices(prompt)]) + "\n")
                try:
                    with self._keystrokes():
                        return await self._read_answer(prompt)
                except asyncio.CancelledError as exc:
                    if ANSWERED_ELSEWHERE in exc.args:
                        self._write(ANSWERED_ELSEWHERE_LINE)
                    else:
                        self._write(
                            AGENT_WITHDREW_LINE
                            if cancelled_by_agent(exc)
                            else "\n(no answer in time: the request is answered cancelled)\n"
                        )
                    raise

    def _write(self, text: str) -> None:
        self._output.write(text)
        self._output.flush()

    @contextlib.contextmanager
    def _keystrokes(self) -> Iterator[None]:
        """Non-canonical, no echo, no signals, for as long as the question is open."""
        if not os.isatty(self._fd):
            yield
            return
        saved = termios.tcgetattr(self._fd)
        raw = termios.tcgetattr(self._fd)
        raw[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG)
        raw[6][termios.VMIN] = 1
        raw[6][termios.VTIME] = 0
        termios.tcsetattr(self._fd, termios.TCSANOW, raw)
        try:
            yield
        finally:
            termios.tcsetattr(self._fd, termios.TCSANOW, saved)

    async def _read_answer(self, prompt: AskPrompt) -> AskAnswer:
        echo = os.isatty(self._fd)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        invalid = 0
        self._write(question(prompt))
        typed = ""
        while True:
            chunk = await self._read_chunk()
            if not chunk:
                self._write("\n(end of input: cancelled)\n")
                return AskAnswer.user_cancelled("end of input")
            for char in decoder.decode(chunk):
                if char == _CTRL_C:
                    self._write("^C\n(cancelled)\n")
                    return AskAnswer.user_cancelled("Ctrl-C")
                if char == _CTRL_D and not typed:
                    self._write("\n(end of input: cancelled)\n")
                    return AskAnswer.user_cancelled("end of input")
                if char in _ERASE:
                    if typed:
                        typed = typed[:-1]
                        if echo:
                            self._write("\b \b")
                    continue
                if char not in _ENTER:
                    if char.isprintable() and len(typed) < MAX_ANSWER_CHARS:
                        typed += char
                        if echo:
                            self._write(char)
                    continue
                if echo:
                    self._write("\n")
                answer = _interpret(typed, prompt)
                if answer is not None:
                    return answer
                invalid += 1
                if invalid >= MAX_INVALID_ANSWERS:
                    self._write("(no valid choice: cancelled)\n")
                    return AskAnswer.user_cancelled(f"{MAX_INVALID_ANSWERS} unreadable answers")
                self._write(f"Not a choice: {sanitize(typed, MAX_ANSWER_CHARS)!r}. ")
                self._write(question(prompt))
                typed = ""

    async def _read_chunk(self) -> bytes:
        return await read_available(self._fd, READ_CHUNK_BYTES)


def _interpret(typed: str, prompt: AskPrompt) -> AskAnswer | None:
    """The answer ``typed`` means, or None when it is not one."""
    word = typed.strip().lower()
    if word in CANCEL_WORDS or (not word and not prompt.offered):
        return AskAnswer.user_cancelled("the user chose cancel")
    if word.isdigit() and 1 <= int(word) <= len(prompt.offered):
        option = prompt.offered[int(word) - 1]
        return AskAnswer.selected(option.option_id, f"the user chose {option.name!r}")
    return None


def terminal_asker(stdin: IO[Any], output: IO[str], screen: Screen | None = None) -> Asker:
    """A :class:`TtyAsker` when both streams are terminals, else a
    :class:`~baton.runtime.permissions.ask.NoUserAsker` (CI, pipes: cancelled, "no user
    available")."""
    try:
        interactive = os.isatty(stdin.fileno()) and os.isatty(output.fileno())
    except (OSError, ValueError):
        interactive = False
    return TtyAsker(stdin, output, screen) if interactive else NoUserAsker()


def _unified_diff(old: list[str], new: list[str]) -> list[str]:
    """The edit's lines as a unified diff without context (difflib imported only when a
    permission prompt shows an edit: a plain run never pays for it)."""
    import difflib

    return list(difflib.unified_diff(old, new, lineterm="", n=0))
