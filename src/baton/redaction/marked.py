"""Text that carries the mark of the redaction it went through, so later sinks need not scan
it again (issue 34: each byte of agent text is redacted once on its way to every sink).

A :class:`RedactedText` is a ``str`` that one redaction pass produced: the text rules of this
Baton (module constants, the same in every sink) and an exact-secret set as it stood then. A
sink that redacts with the same set (the same object, not grown since) or with none can take
the text as it is; any other sink redacts it as usual. Every operation on the text (slicing,
joining, formatting) gives a plain ``str``, which carries no mark: only the code that redacted
a text, or that joins the outputs of one stream redactor in order (their concatenation is the
redaction of the whole stream: docs/redaction.md), marks it.
"""

from __future__ import annotations

from baton.redaction.secret_values import SecretValues


class RedactedText(str):
    """A ``str`` already redacted by the text rules and ``secrets`` (as of ``snapshot``)."""

    secrets: SecretValues | None
    snapshot: object

    @classmethod
    def of(cls, text: str, secrets: SecretValues | None, snapshot: object) -> RedactedText:
        """Mark ``text``, which the caller redacted with ``secrets`` as they stood at
        ``snapshot`` (:attr:`SecretValues.snapshot`, read before the redaction began; None
        without secrets)."""
        marked = cls(text)
        marked.secrets = secrets
        marked.snapshot = snapshot
        return marked

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        # A pickled or copied text is a plain str: the mark (and the secret set it points to)
        # never leaves the process or outlives the object it was made for.
        return (str, (str(self),))

    def trusted_by(self, secrets: SecretValues | None) -> bool:
        """Whether a sink redacting with ``secrets`` may keep this text as it is: it has no
        exact values to add, or it is the set this text was redacted with, unchanged since."""
        if not secrets:
            return True
        return self.secrets is secrets and self.snapshot is secrets.snapshot


def is_trusted(value: str, secrets: SecretValues | None) -> bool:
    """True when ``value`` is marked text that a sink redacting with ``secrets`` may keep."""
    return type(value) is RedactedText and value.trusted_by(secrets)
