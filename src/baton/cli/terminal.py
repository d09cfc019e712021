"""The terminal layer: the one owner of what `baton` draws for people.

- :func:`visible` is the one sanitizer every piece of agent-supplied text goes through before it
  reaches a terminal (titles, paths, plan entries, commands, thoughts, option labels, stderr,
  and the reply itself when standard output is a terminal). Control characters (C0, ESC, BEL,
  DEL, C1), format characters (bidi overrides, zero-width joiners) and line separators are
  shown as escapes (``\\x1b``, ``\\u202e``), so an agent cannot retitle the window, clear the
  screen, move the cursor or reorder a line.
- :class:`Screen` owns standard error on a terminal: the spinner, notes and the status line. The
  spinner pauses while anything else writes there (:meth:`Screen.hold`: the permission prompt
  holds it for as long as it asks), so a question is never overdrawn.
- Colour only on a terminal, never when ``NO_COLOR`` is set (https://no-color.org) or
  ``TERM=dumb``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Iterator, Mapping
from typing import IO, Final

#: Characters of one piece of agent text shown on one line (a title, a label, a path, a
#: command); longer text is cut with an ellipsis. Keeps one tool line one line.
MAX_VISIBLE_CHARS: Final = 300
#: Seconds between two spinner frames.
SPINNER_INTERVAL_SECONDS: Final = 0.1
SPINNER_FRAMES: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
#: The spinner's words while Baton waits on the agent.
WAITING_LABEL: Final = "waiting for the agent (Ctrl-C interrupts)"

_ANSI: Final = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


def _escape(char: str) -> str:
    code = ord(char)
    if code == 0:
        return "\\0"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def error_line(exc: BaseException) -> str:
    """The ``baton: CODE: message`` line for an error that stops a command: redacted (an error
    can quote what an agent or a config file said, and stderr lands in CI logs) and made
    safe for a terminal by :func:`visible`."""
    from baton.redaction import redact_text  # lazy: only a failing command pays its import

    return f"baton: {visible(redact_text(str(exc)), limit=None)}"


def visible(text: str, limit: int | None = MAX_VISIBLE_CHARS, *, newlines: bool = False) -> str:
    """``text`` safe to print on a terminal: every character that is not printable (control
    and format characters, escape sequences, bidi overrides, line separators) shown as an
    escape; with ``newlines``, line feeds and tabs are kept (multi-line text: a reply, a
    thought). Cut to ``limit`` characters with an ellipsis (``None``: no limit)."""
    # The common case costs C-level scans only (a streamed reply is mostly printable lines).
    clean = (
        text.replace("\n", "").replace("\t", "").isprintable() if newlines else text.isprintable()
    )
    if not clean:
        keep = "\n\t" if newlines else ""
        text = "".join(c if c.isprintable() or c in keep else _escape(c) for c in text)
    if limit is not None and len(text) > limit:
        return text[: limit - 1] + "…"
    return text


def color_enabled(stream: IO[str], environ: Mapping[str, str] | None = None) -> bool:
    """Whether to colour ``stream``: a terminal, ``NO_COLOR`` unset (or empty), not ``TERM=dumb``."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


class Screen:
    """Standard output (the reply) and standard error (everything else), drawn for a person.

    On a terminal a spinner shows while Baton waits; it pauses while the screen is held or a
    reply line is open. Every write clears the spinner's line first.
    """

    def __init__(
        self, out: IO[str], err: IO[str], *, environ: Mapping[str, str] | None = None
    ) -> None:
        self.out = out
        self.err = err
        try:
            self.tty = err.isatty()
        except (OSError, ValueError):
            self.tty = False
        try:
            self.out_tty = out.isatty()
        except (OSError, ValueError):
            self.out_tty = False
        self.color = color_enabled(err, environ)
        self.label = WAITING_LABEL
        self._spinner: asyncio.Task[None] | None = None
        self._spinning = False
        self._held = 0
        self._mid_line = False

    # --- styling ----------------------------------------------------------------------------

    def style(self, text: str, *styles: str) -> str:
        """``text`` in ``styles`` (``bold``, ``dim``, ``red``, ``green``, ``yellow``, ``cyan``)
        when colour is on, else as it is."""
        if not self.color or not styles:
            return text
        codes = ";".join(_ANSI[s] for s in styles)
        return f"\033[{codes}m{text}\033[0m"

    # --- the spinner ------------------------------------------------------------------------

    def start_spinner(self) -> None:
        """Start drawing the spinner (a terminal only; call inside the event loop)."""
        if self.tty and self._spinner is None:
            self._spinner = asyncio.ensure_future(self._spin())

    def set_status(self, label: str) -> None:
        """The spinner's words from now on."""
        self.label = label

    async def _spin(self) -> None:
        index = 0
        while True:
            await asyncio.sleep(SPINNER_INTERVAL_SECONDS)
            if self._held or self._mid_line:
                continue
            frame = SPINNER_FRAMES[index % len(SPINNER_FRAMES)]
            self.err.write(f"\r\033[K{self.style(frame, 'cyan')} {self.label}")
            self.err.flush()
            self._spinning = True
            index += 1

    def _clear_spinner(self) -> None:
        if self._spinning:
            self.err.write("\r\033[K")
            self.err.flush()
            self._spinning = False

    def stop(self) -> None:
        """Stop the spinner and clear its line."""
        if self._spinner is not None:
            self._spinner.cancel()
            self._spinner = None
        self._clear_spinner()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Own standard error for a while (a permission question): the spinner's line is
        cleared, an open reply line ended, and nothing is drawn until the block ends."""
        self._held += 1
        try:
            self._clear_spinner()
            self._end_reply_line()
            yield
        finally:
            self._held -= 1

    # --- writing ----------------------------------------------------------------------------

    def _end_reply_line(self) -> None:
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False

    def note(self, text: str) -> None:
        """One line on standard error (already sanitized by the caller)."""
        self._clear_spinner()
        self._end_reply_line()
        self.err.write(text + "\n")
        self.err.flush()

    def reply(self, text: str) -> None:
        """Reply text on standard output, as it streams (sanitized when it is a terminal)."""
        if not text:
            return
        self._clear_spinner()
        if self.out_tty:
            text = visible(text, None, newlines=True)
        self.out.write(text)
        self.out.flush()
        self._mid_line = not text.endswith("\n")

    def end(self) -> None:
        """Stop the spinner and end an open reply line (before the summary)."""
        self.stop()
        self._end_reply_line()


def plain_help(docstring: str) -> str:
    """A module docstring as ``--help`` text: reST's literal and emphasis markup (````x````,
    ``*x*``) as the plain backquotes and words a terminal reader expects."""
    text = docstring.replace("``", "`")
    return re.sub(r"(?<![*\w])\*([^*\s][^*]*?)\*(?![*\w])", r"\1", text)
