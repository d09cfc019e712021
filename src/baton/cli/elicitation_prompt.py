"""The interactive elicitation prompt: an :class:`~baton.runtime.permissions.elicitations.
Elicitor` on a TTY, for `baton run` under the ``ask`` policy.

It shows the agent's message, then either the form's fields or the URL, and asks first whether
to answer at all (``y`` fill in / accept, ``n`` decline, ``c`` dismiss). A form is filled field
by field: booleans take y/n, numbers and integers a number, a choice its number or value, a
multi-select comma-separated numbers or values; an empty line skips an optional field. An answer
that breaks the form's rules is said and that field asked again (at most
:data:`MAX_INVALID_ANSWERS` times, then the form is declined). A URL is shown, never opened:
the person opens it and says when they are done. End of input declines; Ctrl-C interrupts the
run, and an interrupted turn (Ctrl-C, its budget) withdraws an open question: the prompt stops
reading, says so on a line of its own, and the agent is answered ``cancel``.

Everything the agent wrote is shown through the terminal layer's sanitizer. Lines are read in
the terminal's normal (canonical) mode through the event loop, never by a blocking call on it.
One question is on screen at a time: the permission prompt's lock is shared.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from typing import IO, Any, Final

from baton.cli.permission_prompt import ANSWERED_ELSEWHERE, ANSWERED_ELSEWHERE_LINE
from baton.cli.terminal import Screen, visible
from baton.cli.tty_input import read_available
from baton.connection.core import cancelled_by_agent
from baton.errors import ElicitationAnswerInvalid
from baton.runtime.permissions.elicitations import ElicitationPrompt, ElicitationReply, Elicitor
from baton.wire.capabilities import ElicitationOffer
from baton.wire.elicitation import URL, ElicitationRequest, FormField, validate_form_answer

#: Characters of one piece of agent text shown (the message, a label, a choice, the URL).
MAX_DISPLAY_CHARS: Final = 500
#: Characters kept of one typed line (a form value: the longest answer a field takes).
MAX_LINE_CHARS: Final = 64 * 1024
#: Unreadable or invalid answers to one field before the form is declined.
MAX_INVALID_ANSWERS: Final = 5
#: Bytes read from the terminal at a time.
READ_CHUNK_BYTES: Final = 4096

#: What the terminal says when the turn stops while a question is open.
WITHDRAWN_LINE: Final = "\n(the agent's question was withdrawn: the turn was interrupted)\n"
#: What the prompt prints when the agent itself cancels the question (``$/cancel_request``).
AGENT_WITHDREW_LINE: Final = "\n(the agent withdrew its question)\n"

_YES: Final = frozenset({"y", "yes"})
_NO: Final = frozenset({"n", "no"})
_DISMISS: Final = frozenset({"c", "cancel"})


class _EndOfInput(Exception):
    """The terminal closed (Ctrl-D on an empty line, end of file)."""


class TtyElicitor:
    """Asks elicitations on a terminal (``stdin`` read, ``output`` written: the CLI passes
    standard error so standard output stays clean)."""

    def __init__(
        self,
        stdin: IO[Any],
        output: IO[str],
        screen: Screen | None = None,
        lock: asyncio.Lock | None = None,
    ) -> None:
        self._fd = stdin.fileno()
        self._output = output
        self._screen = screen
        self._lock = lock or asyncio.Lock()
        self._pending = b""

    @property
    def offer(self) -> ElicitationOffer:
        """Form and URL: a person at this terminal can answer both."""
        return ElicitationOffer(form=True, url=True)

    async def ask(self, prompt: ElicitationPrompt) -> ElicitationReply:
        """Show the prompt's request and read the answer (see the module docstring). Cancellation-safe:
        a cancelled wait (the turn was interrupted: Ctrl-C, the turn budget, a lost agent)
        stops reading, says the question was withdrawn, and releases the screen and the lock;
        the turn then answers the agent ``cancel``."""
        async with self._lock:
            with self._screen.hold() if self._screen is not None else contextlib.nullcontext():
                try:
                    return await self._ask(prompt.request)
                except _EndOfInput:
                    self._write("\n(end of input: declined)\n")
                    return ElicitationReply("decline")
                except asyncio.CancelledError as exc:
                    # Whatever was typed for this question belongs to no later one.
                    self._pending = b""
                    if ANSWERED_ELSEWHERE in exc.args:
                        self._write(ANSWERED_ELSEWHERE_LINE)
                    else:
                        self._write(
                            AGENT_WITHDREW_LINE if cancelled_by_agent(exc) else WITHDRAWN_LINE
                        )
                    raise

    async def _ask(self, request: ElicitationRequest) -> ElicitationReply:
        self._write(f"\nThe agent asks: {visible(request.message, MAX_DISPLAY_CHARS)}\n")
        if request.mode == URL:
            self._write(
                f"  Open this URL yourself (Baton does not open it):\n"
                f"  {visible(request.url or '', MAX_DISPLAY_CHARS)}\n"
            )
            choice = await self._choose("Done? y = finished, n = decline, c = dismiss: ")
            return ElicitationReply({"y": "accept", "n": "decline"}.get(choice, "cancel"))
        for form_field in request.fields:
            required = ", required" if form_field.required else ""
            self._write(f"  {visible(form_field.label, 80)} ({form_field.type}{required})\n")
        choice = await self._choose("Answer? y = fill in, n = decline, c = dismiss: ")
        if choice != "y":
            return ElicitationReply("decline" if choice == "n" else "cancel")
        content: dict[str, Any] = {}
        for form_field in request.fields:
            value = await self._field(request, form_field, content)
            if value is _DECLINED:
                self._write("(too many invalid answers: declined)\n")
                return ElicitationReply("decline")
            if value is not _SKIPPED:
                content[form_field.name] = value
        return ElicitationReply("accept", content)

    async def _choose(self, question: str) -> str:
        for _attempt in range(MAX_INVALID_ANSWERS):
            self._write(question)
            word = (await self._line()).strip().lower()
            if word in _YES:
                return "y"
            if word in _NO:
                return "n"
            if word in _DISMISS:
                return "c"
        return "n"

    async def _field(
        self, request: ElicitationRequest, form_field: FormField, content: dict[str, Any]
    ) -> object:
        for _attempt in range(MAX_INVALID_ANSWERS):
            for number, choice in enumerate(form_field.choices, start=1):
                self._write(f"    {number}) {visible(choice.title, 80)}\n")
            self._write(f"  {visible(form_field.label, 80)}{_hint(form_field)}: ")
            typed = await self._line()
            if not typed.strip() and not form_field.required:
                return _SKIPPED
            value = _parse(form_field, typed.strip())
            try:
                validate_form_answer(_only(request, form_field), {form_field.name: value})
            except ElicitationAnswerInvalid as exc:
                self._write(f"  {visible(exc.message, 200)}\n")
                continue
            return value
        return _DECLINED

    def _write(self, text: str) -> None:
        self._output.write(text)
        self._output.flush()

    async def _line(self) -> str:
        """One line typed (without its newline), bounded; raises :class:`_EndOfInput`."""
        while b"\n" not in self._pending:
            chunk = await self._read_chunk()
            if not chunk:
                raise _EndOfInput
            self._pending += chunk
            if len(self._pending) > MAX_LINE_CHARS * 4:
                self._pending = self._pending[-MAX_LINE_CHARS * 4 :]
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode("utf-8", errors="replace")[:MAX_LINE_CHARS]

    async def _read_chunk(self) -> bytes:
        return await read_available(self._fd, READ_CHUNK_BYTES)


_SKIPPED: Final = object()
_DECLINED: Final = object()


def _hint(form_field: FormField) -> str:
    if form_field.type == "boolean":
        return " [y/n]"
    if form_field.type == "array":
        return " (numbers or values, comma-separated)"
    if form_field.choices:
        return " (number or value)"
    return ""


def _only(request: ElicitationRequest, form_field: FormField) -> ElicitationRequest:
    """The request reduced to one (optional) field, to check one answer on its own."""
    single = dataclasses.replace(form_field, required=False)
    return ElicitationRequest(request.mode, request.message, fields=(single,))


def _choice(form_field: FormField, word: str) -> str:
    if word.isdigit() and 1 <= int(word) <= len(form_field.choices):
        return form_field.choices[int(word) - 1].value
    return word


def _parse(form_field: FormField, typed: str) -> object:
    """``typed`` as the field's type (left as text when it does not read: the check says why)."""
    if form_field.type == "boolean":
        word = typed.lower()
        if word in ("y", "yes", "true"):
            return True
        if word in ("n", "no", "false"):
            return False
        return typed
    if form_field.type == "integer":
        with contextlib.suppress(ValueError):
            return int(typed)
        return typed
    if form_field.type == "number":
        with contextlib.suppress(ValueError):
            return float(typed)
        return typed
    if form_field.type == "array":
        return [_choice(form_field, part.strip()) for part in typed.split(",") if part.strip()]
    return _choice(form_field, typed) if form_field.choices else typed


def terminal_elicitor(
    stdin: IO[Any], output: IO[str], screen: Screen | None = None, lock: asyncio.Lock | None = None
) -> Elicitor | None:
    """A :class:`TtyElicitor` when both streams are terminals, else None (nobody can answer:
    elicitation is not advertised)."""
    try:
        interactive = os.isatty(stdin.fileno()) and os.isatty(output.fileno())
    except (OSError, ValueError):
        interactive = False
    return TtyElicitor(stdin, output, screen, lock) if interactive else None
