"""A conservative recognizer for shell commands: the words bash would run, or "opaque".

Baton grants an execute request only when it knows every command it would run. This module
reads a command string the way bash reads it, for a small subset of the shell's syntax where
that reading is certain, and calls everything else opaque. It does not try to understand the
rest: an opaque command is never granted automatically ("execution requests that remain opaque
after correlation fail closed").

The accepted subset (:func:`read_script`):

- **Words** of unquoted characters from :data:`PLAIN_CHARACTERS` (letters, digits and
  ``_ . / : = + , @ % ^ -``, and ``~`` inside a word not after ``=`` or ``:``), single-quoted text (anything but ``'``, taken literally), and
  double-quoted text without ``$``, backquote, backslash or ``!``. Parts concatenate into one
  word, as in bash (``'a'b"c"`` is ``abc``).
- **Separators** ``&&``, ``||``, ``;``, ``|``, ``|&``, ``&`` and newlines, each between two
  commands (a trailing ``;``, ``&`` or newline is allowed).
- **Redirections** ``<``, ``>``, ``>>``, ``&>``, ``&>>``, ``>&``, ``<&``, ``>|`` and the
  here-string ``<<<``, optionally after a file-descriptor number, each followed by a word.

Everything else is opaque: ``$`` in any form (parameters, ``$(...)``, ``$'...'``, ``$"..."``,
arithmetic), backquotes, backslashes (escapes and line continuations), globs (``*``, ``?``,
``[``), braces, ``~`` where bash expands it, ``#``, ``!``, parentheses (subshells, functions, process substitution),
here-documents, ``;;``, ``<>``, control characters, a reserved word in command position
(``if``, ``for``, ``case``, ``function``, ``time``, ``coproc``...), a variable assignment
(``X=1 cmd``, ``X='a b' cmd`` or ``X=1``: it can change what a later word means, e.g. ``PATH``
or ``GIT_CONFIG_*``; any ``=`` in command position counts), and an empty command between
separators.

What a command's words then *do* (``git``, ``sh -c``, ``eval``...) is judged by
:mod:`baton.runtime.permissions.reserved_commands`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: Characters a word may hold outside quotes. Every one of them means itself to bash in any
#: position of a word: no expansion, no quoting, no operator.
PLAIN_CHARACTERS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=+,@%^-"
)

#: Characters that end a word and start an operator.
_OPERATOR_START: Final = frozenset(";&|<>")

#: Operators, longest first so the longest match wins.
_OPERATORS: Final = ("&>>", "<<<", "&&", "||", "|&", ";;", "&>", ">>", ">&", "<&", ">|", "<<", "<>")
_SINGLE_OPERATORS: Final = frozenset(";&|<>")

#: Operators that separate commands.
_SEPARATORS: Final = frozenset({"&&", "||", ";", "|", "|&", "&"})
#: Separators that may end the text (bash accepts ``ls;`` and ``sleep 1 &``).
_TRAILING_SEPARATORS: Final = frozenset({";", "&"})
#: Redirection operators of the subset; each takes the next word as its target.
_REDIRECTIONS: Final = frozenset({"<", ">", ">>", "&>", "&>>", ">&", "<&", ">|", "<<<"})
#: Operators outside the subset: ``;;`` (case), ``<<`` (here-document), ``<>``.
_OPAQUE_OPERATORS: Final = frozenset({";;", "<<", "<>"})

#: Words that are reserved in command position: compound commands, functions, ``time``.
RESERVED_WORDS: Final = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "case",
        "esac",
        "for",
        "select",
        "while",
        "until",
        "do",
        "done",
        "in",
        "function",
        "time",
        "coproc",
        "[[",
        "]]",
        "{",
        "}",
        "!",
    }
)


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command as bash would run it: its words (program first) and the files its
    redirections name (``here_strings`` are the texts fed to it with ``<<<``)."""

    words: tuple[str, ...]
    redirect_targets: tuple[str, ...] = ()
    here_strings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Opaque:
    """A command outside the subset; ``detail`` says what, for people."""

    detail: str


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    quoted: bool  # some part was quoted: not an assignment or a reserved word


@dataclass(frozen=True, slots=True)
class _Operator:
    text: str


def _opaque_character(char: str) -> Opaque:
    return Opaque(f"the shell construct {char!r} is outside the subset Baton reads")


def _tokens(text: str) -> list[_Word | _Operator] | Opaque:
    """The words and operators of ``text``, or why it is outside the subset. Linear."""
    tokens: list[_Word | _Operator] = []
    parts: list[str] = []
    quoted = False
    in_word = False
    index, end = 0, len(text)

    def finish() -> None:
        nonlocal parts, quoted, in_word
        if in_word:
            tokens.append(_Word("".join(parts), quoted))
        parts, quoted, in_word = [], False, False

    while index < end:
        char = text[index]
        if char in PLAIN_CHARACTERS:
            parts.append(char)
            in_word = True
            index += 1
        elif char == "~":
            # Tilde expansion happens at the start of a word and after ``=`` or ``:``.
            if not in_word or text[index - 1] in "=:'\"":
                return _opaque_character(char)
            parts.append(char)
            index += 1
        elif char in (" ", "\t"):
            finish()
            index += 1
        elif char == "\n":
            finish()
            tokens.append(_Operator(";"))
            index += 1
        elif char == "'":
            close = text.find("'", index + 1)
            if close == -1:
                return Opaque("an unclosed single quote")
            parts.append(text[index + 1 : close])
            quoted = in_word = True
            index = close + 1
        elif char == '"':
            close = text.find('"', index + 1)
            if close == -1:
                return Opaque("an unclosed double quote")
            inner = text[index + 1 : close]
            for special in ("$", "`", "\\", "!"):
                if special in inner:
                    return Opaque(f"{special!r} inside double quotes is outside the subset")
            parts.append(inner)
            quoted = in_word = True
            index = close + 1
        elif char in _OPERATOR_START:
            # A file-descriptor number right before a redirection belongs to it (``2>``).
            fd_prefix = in_word and not quoted and "".join(parts).isdigit()
            if fd_prefix and char in "<>":
                parts, in_word = [], False
            else:
                finish()
            operator = next(
                (op for op in _OPERATORS if text.startswith(op, index)),
                char if char in _SINGLE_OPERATORS else "",
            )
            tokens.append(_Operator(operator))
            index += len(operator)
        else:
            return _opaque_character(char)
    finish()
    return tokens


def read_script(text: str) -> tuple[SimpleCommand, ...] | Opaque:
    """The simple commands of a shell command string, in order, or :class:`Opaque` when any part
    of it is outside the subset in the module docstring. Never raises; linear in the text."""
    if "\x00" in text:
        return Opaque("a NUL character (a program would see the text cut there)")
    tokens = _tokens(text)
    if isinstance(tokens, Opaque):
        return tokens
    commands: list[SimpleCommand] = []
    words: list[str] = []
    targets: list[str] = []
    here_strings: list[str] = []
    previous: str | None = None  # the separator before the current command, if any
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if isinstance(token, _Word):
            if not words:
                # ``X='a b' cmd`` assigns although part of the word is quoted: any ``=`` in
                # command position is taken for an assignment.
                if "=" in token.text:
                    return Opaque(f"the variable assignment {token.text[:80]!r}")
                if not token.quoted and token.text in RESERVED_WORDS:
                    return Opaque(f"the shell keyword {token.text!r}")
            words.append(token.text)
            index += 1
            continue
        operator = token.text
        if operator in _OPAQUE_OPERATORS:
            return Opaque(f"the shell operator {operator!r} is outside the subset Baton reads")
        if operator in _REDIRECTIONS:
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            if not isinstance(following, _Word):
                return Opaque(f"the redirection {operator!r} has no target")
            if operator == "<<<":
                here_strings.append(following.text)
            elif not (
                operator in (">&", "<&") and (following.text.isdigit() or following.text == "-")
            ):
                targets.append(following.text)
            index += 2
            continue
        # A separator: it ends a command, which must not be empty.
        if not words:
            if operator == ";" and previous in (None, ";") and not targets and not here_strings:
                index += 1  # blank lines and a newline after ";" are fine
                previous = ";" if previous is not None else None
                continue
            return Opaque(f"an empty command before {operator!r}")
        commands.append(SimpleCommand(tuple(words), tuple(targets), tuple(here_strings)))
        words, targets, here_strings = [], [], []
        previous = operator
        index += 1
    if words:
        commands.append(SimpleCommand(tuple(words), tuple(targets), tuple(here_strings)))
    elif targets or here_strings:
        return Opaque("a redirection without a command")
    elif previous is not None and previous not in _TRAILING_SEPARATORS:
        return Opaque(f"nothing after {previous!r}")
    if not commands:
        return Opaque("no command")
    return tuple(commands)
