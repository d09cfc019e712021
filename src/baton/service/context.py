"""What every route reaches: the one service object of the application."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request

from baton.errors import ApiRequestInvalid
from baton.runtime.permissions.policies import PolicyName
from baton.runtime.runtime import Runtime
from baton.service.answerers import CallerAnswers
from baton.service.asking import ApiAsker
from baton.service.eliciting import ApiElicitor
from baton.service.feeds import FeedBoard
from baton.service.guard import LAUNCH_SCOPE_KEY
from baton.service.launcher import RunLauncher


@dataclass
class ServiceSettings:
    """How `baton serve` was started."""

    #: The permission policy of runs that name none (``--policy``).
    policy: PolicyName = "ask"
    #: Whether runs may name an ad-hoc ``agentCommand`` (``--allow-agent-command``); without
    #: it only profiles run, so a token holder cannot start an arbitrary program by HTTP.
    allow_agent_command: bool = False
    #: Seconds a stop lets running turns finish (``--shutdown-grace``).
    shutdown_grace: float = 10.0


@dataclass
class Service:
    """One service: its runtime and what the API keeps beside it."""

    runtime: Runtime
    feeds: FeedBoard
    launcher: RunLauncher
    asker: ApiAsker
    settings: ServiceSettings
    #: Whether each session prompt's sender answers its questions (issue 30, item 1).
    callers: CallerAnswers
    pid: int
    started_at: str
    #: Answers the elicitations of runs under ``ask`` (docs/api.md).
    elicitor: ApiElicitor

    @property
    def data_dir(self) -> Path:
        """The data directory the service owns."""
        return self.runtime.data_dir


def service_of(request: Request) -> Service:
    """The service serving ``request``."""
    service: Service = request.app.state.service
    return service


def check_agent_command(request: Request, command: str | None) -> None:
    """Refuse an ad-hoc ``agentCommand`` unless the service allows them
    (``--allow-agent-command``) or the request presented the launch key of the owner-only
    runtime file (the user's own CLI: its launch configuration is trusted as it is in-process).
    A browser or another token holder gets :class:`~baton.errors.ApiRequestInvalid`."""
    if command is None or service_of(request).settings.allow_agent_command:
        return
    if request.scope.get(LAUNCH_SCOPE_KEY) is True:
        return
    raise ApiRequestInvalid(
        "agentCommand is refused: start `baton serve --allow-agent-command` to run "
        "ad-hoc agent commands through the API"
    )
