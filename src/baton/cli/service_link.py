"""Finding and talking to the running `baton serve` of a data directory.

A running service holds an exclusive ``flock`` on ``serve.lock`` in its data directory and
has written ``serve.json`` (owner-only, 0600) there with its URL, pid and token: the
service owns that format (:mod:`baton.service.runtime_file`); a CLI verb finds the service
with its :func:`~baton.service.runtime_file.find_service`: the file must be a private regular
file of this user and the lock must be held (a SIGKILLed service leaves the file behind but
releases the lock). Nothing is created while looking.

:class:`ServiceClient` speaks the API with the standard library (``http.client``), so the
CLI's start stays fast: JSON requests and the Server-Sent Events stream of a run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urlsplit

import orjson

from baton.errors import ServiceRefused, ServiceUnreachable
from baton.service.runtime_file import RuntimeInfo, find_service

if TYPE_CHECKING:
    import http.client

#: Seconds a CLI request to the service waits for an answer (SSE streams have no bound: a
#: turn takes as long as it takes; the service bounds it).
CLIENT_REQUEST_TIMEOUT_SECONDS: Final = 30.0
#: Largest SSE line the client accepts (an event's data line): the feed's events are far
#: smaller; a longer line means this is not Baton's service.
MAX_SSE_LINE_BYTES: Final = 32 * 1024 * 1024


def service_for(flag: str | None, *, no_server: bool) -> ServiceClient | None:
    """The client of the running service of the data directory ``--data-dir``/BATON_HOME
    names, or None (``--no-server``, or no service runs there). Creates nothing."""
    if no_server:
        return None
    from baton.store import resolve_data_dir

    info = find_service(resolve_data_dir(flag))
    return ServiceClient(info) if info is not None else None


@dataclass(frozen=True)
class SseEvent:
    """One Server-Sent Event: its id (may be empty), its event name and its JSON data."""

    id: str
    event: str
    data: dict[str, Any]


class ServiceClient:
    """A small synchronous client of the service's API."""

    def __init__(self, info: RuntimeInfo) -> None:
        parts = urlsplit(info.url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.netloc = parts.netloc
        self.token = info.token
        self.launch_key = info.launch_key

    def _connection(self, timeout: float | None) -> http.client.HTTPConnection:
        import http.client  # only when a service answers: a run without one never loads it

        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _headers(self) -> dict[str, str]:
        headers = {
            "Host": self.netloc,
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/json",
        }
        if self.launch_key:
            # The user's own CLI: its ad-hoc agent commands are trusted as in-process.
            headers["X-Baton-Launch-Key"] = self.launch_key
        return headers

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """Send one request; the decoded JSON answer, or :class:`ServiceRefused`."""
        connection = self._connection(CLIENT_REQUEST_TIMEOUT_SECONDS)
        headers = self._headers()
        data = None
        if body is not None:
            data = orjson.dumps(body)
            headers["Content-Type"] = "application/json"
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        except OSError as exc:
            raise ServiceUnreachable(f"the service at {self.netloc} did not answer: {exc}") from exc
        finally:
            connection.close()
        return _decoded(response.status, payload)

    def events(
        self, run_id: str, last_event_id: str | None = None, *, answers: bool = True
    ) -> Iterator[SseEvent]:
        """The run's event stream, until the service ends it (after ``result``);
        ``answers`` False: this client cannot answer the run's questions (``?answers=none``)."""
        connection = self._connection(None)
        headers = {**self._headers(), "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        try:
            query = "" if answers else "?answers=none"
            connection.request(
                "GET", f"/api/v1/runs/{quote(run_id)}/events{query}", headers=headers
            )
            response = connection.getresponse()
            if response.status != 200:
                _decoded(response.status, response.read())
            yield from _parse_sse(response)
        except OSError as exc:
            raise ServiceUnreachable(f"the service at {self.netloc} went away: {exc}") from exc
        finally:
            connection.close()


def _decoded(status: int, payload: bytes) -> Any:
    try:
        value = orjson.loads(payload) if payload else None
    except orjson.JSONDecodeError:
        raise ServiceUnreachable(
            f"the service answered {status} with a body that is not JSON"
        ) from None
    if status >= 400:
        error = value.get("error") if isinstance(value, dict) else None
        if not isinstance(error, dict):
            raise ServiceUnreachable(f"the service answered {status} without an error body")
        fault = error.get("fault")
        raise ServiceRefused(
            str(error.get("code")),
            str(error.get("message")),
            fault if fault in ("agent", "caller", "transport", "budget", "baton") else "baton",
            status,
        )
    return value


def _parse_sse(response: http.client.HTTPResponse) -> Iterator[SseEvent]:
    event_id, name = "", "message"
    data: list[str] = []
    while True:
        line = response.readline(MAX_SSE_LINE_BYTES)
        if not line:
            return
        text = line.decode("utf-8").rstrip("\r\n")
        if text == "":
            if data:
                yield SseEvent(event_id, name, orjson.loads("\n".join(data)))
            name, data = "message", []
            continue
        if text.startswith(":"):
            continue
        field, _, value = text.partition(":")
        value = value.removeprefix(" ")
        if field == "id":
            event_id = value
        elif field == "event":
            name = value
        elif field == "data":
            data.append(value)
