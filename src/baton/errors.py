"""One exception hierarchy that says whose fault a failure is.

Every Baton error carries a stable ``code`` string that surfaces (the CLI, the run store, the
inspector) show verbatim, and a ``fault`` naming who must act:

- ``agent``: the agent broke the protocol or answered with an error (:class:`AgentError`).
- ``caller``: the caller misused Baton or configured it wrongly (:class:`UsageError`).
- ``transport``: the byte stream to the agent closed (:class:`TransportClosed`).
- ``budget``: a time bound elapsed (:class:`BudgetExpired`).
- ``baton``: Baton itself has a bug (:class:`InternalError`).

Codes are part of Baton's public contract: they are never renamed, only added.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Final, Literal

Fault = Literal["agent", "caller", "transport", "budget", "baton"]

#: The longest run of non-space characters an error message keeps whole; a longer one (a
#: 100 KB run id or session name a caller typed, echoed by "no run '…'") keeps its head and
#: says how much was left out. Paths, URLs and ids are far shorter. Protects every surface that
#: shows an error (one stderr line, one JSON error, a stored diagnostic) from a flood.
MAX_ECHOED_TOKEN_CHARS: Final = 256
#: Characters of such a run that are kept.
ECHOED_TOKEN_HEAD_CHARS: Final = 64
#: The longest error message at all (an agent's quoted stderr lines included).
MAX_ERROR_MESSAGE_CHARS: Final = 8 * 1024

#: A run of characters that are neither spaces nor quotes (so the quotes around an echoed
#: value stay): bounded, so the scan is linear.
_LONG_TOKEN: Final = re.compile(rf"[^\s'\"]{{{MAX_ECHOED_TOKEN_CHARS + 1},}}")


def bounded_message(text: str) -> str:
    """``text`` with every run of more than :data:`MAX_ECHOED_TOKEN_CHARS` characters other
    than spaces and quotes cut to its head and a count (``'rrrr…[+99,936 chars]'``), and the whole cut to
    :data:`MAX_ERROR_MESSAGE_CHARS`. One pass, linear in the text's length."""

    def cut(match: re.Match[str]) -> str:
        token = match.group()
        return (
            f"{token[:ECHOED_TOKEN_HEAD_CHARS]}…[+{len(token) - ECHOED_TOKEN_HEAD_CHARS:,} chars]"
        )

    if len(text) > MAX_ECHOED_TOKEN_CHARS:
        text = _LONG_TOKEN.sub(cut, text)
    if len(text) > MAX_ERROR_MESSAGE_CHARS:
        text = text[: MAX_ERROR_MESSAGE_CHARS - 1] + "…"
    return text


class BatonError(Exception):
    """Base of every error Baton raises on purpose."""

    code: ClassVar[str] = "BATON_ERROR"
    fault: ClassVar[Fault] = "baton"

    def __init__(self, message: str) -> None:
        message = bounded_message(message)
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


# --- the agent's fault ---------------------------------------------------------------------


class AgentError(BatonError):
    """The agent misbehaved: broke the protocol or answered a request with an error."""

    code = "AGENT_ERROR"
    fault = "agent"


class SessionMutationAmbiguous(AgentError):
    """A session-control update did not confirm (or its outcome is unknown)."""

    code = "ACP_SESSION_MUTATION_AMBIGUOUS"


class ProtocolError(AgentError):
    """The agent sent something the protocol forbids."""

    code = "AGENT_PROTOCOL_ERROR"


class FrameTooLarge(ProtocolError):
    """An inbound frame crossed the per-frame byte cap before its newline arrived."""

    code = "AGENT_FRAME_TOO_LARGE"

    def __init__(self, cap: int, seen: int) -> None:
        super().__init__(
            f"inbound frame exceeds the {cap}-byte cap ({seen} bytes seen, no newline)"
        )
        self.cap = cap
        self.seen = seen


class ProtocolViolation(ProtocolError):
    """A well-formed JSON-RPC message that breaks the protocol (unknown id, duplicate answer...)."""

    code = "AGENT_PROTOCOL_VIOLATION"

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class AgentRequestError(AgentError):
    """The agent answered one of Baton's requests with a JSON-RPC error object.

    ``rpc_code`` is the agent's numeric code; the agent's message is untrusted text and is kept
    bounded (see :data:`MAX_AGENT_MESSAGE_CHARS`).
    """

    code = "AGENT_REQUEST_FAILED"

    def __init__(self, method: str, rpc_code: int, agent_message: str, data: object = None) -> None:
        bounded = agent_message[:MAX_AGENT_MESSAGE_CHARS]
        super().__init__(f"{method} failed with agent error {rpc_code}: {bounded}")
        self.method = method
        self.rpc_code = rpc_code
        self.agent_message = bounded
        self.data = data


#: Agent-provided error text is untrusted; keep at most this many characters of it.
MAX_AGENT_MESSAGE_CHARS = 512


class AuthenticationRequired(AgentRequestError):
    """The agent answered -32000: the provider wants a sign-in before it works."""

    code = "AUTHENTICATION_REQUIRED"


class NotAnAcpAgent(AgentError):
    """The program named as the agent ended without ever answering ``initialize`` and exited
    with status 0: it ran, but it is not an ACP agent (``echo``, ``ls``, a wrapper that
    forgot ``--acp``). Exit 5, as for an agent that is not installed."""

    code = "NOT_AN_ACP_AGENT"


class IncompatibleProtocolVersion(AgentError):
    """The agent answered ``initialize`` with a protocol version Baton does not implement."""

    code = "INCOMPATIBLE_PROTOCOL_VERSION"

    def __init__(
        self,
        offered: int,
        answered: object,
        implemented: tuple[int, ...],
        *,
        hint: str | None = None,
    ) -> None:
        shown = repr(answered)[:MAX_AGENT_MESSAGE_CHARS]
        versions = ", ".join(str(v) for v in implemented)
        super().__init__(
            f"Baton offered protocol version {offered} and the agent answered {shown}; "
            f"Baton accepts {versions}" + (f" ({hint})" if hint else "")
        )
        self.offered = offered
        self.answered = answered


class ProtocolVersionMislabelled(IncompatibleProtocolVersion):
    """The agent answered ``initialize`` with protocol version 2 in the v1 layout (neither
    v2's ``info`` nor its ``capabilities``): it echoes the offered number without
    speaking the v2 draft. The message names the fix (``--protocol 1``)."""

    code = "AGENT_PROTOCOL_MISLABELLED"

    def __init__(self, offered: int, fix: str) -> None:
        BatonError.__init__(
            self,
            f"Baton offered protocol version {offered} and the agent answered 2 in the v1 "
            f"layout (no info, no capabilities): it labels a v1 answer 2 (it "
            f"echoes the offered number) and does not speak the v2 draft; {fix}",
        )
        self.offered = offered
        self.answered = 2


class MalformedResult(ProtocolError):
    """A result the agent sent lacks a field the protocol requires (a sessionId, a
    stopReason...)."""

    code = "AGENT_MALFORMED_RESULT"


class InvalidPermissionRequest(ProtocolError):
    """A ``session/request_permission`` request Baton cannot answer safely as sent."""

    code = "AGENT_INVALID_PERMISSION_REQUEST"


class InvalidElicitationRequest(ProtocolError):
    """An ``elicitation/create`` request Baton cannot present as sent (no message, mode or
    scope, a form without a schema, a URL request without a usable url or elicitationId)."""

    code = "AGENT_INVALID_ELICITATION_REQUEST"


class ExtensionPayloadInvalid(ProtocolError):
    """A profile-gated extension payload (Grok's model catalog or its ``_x.ai/models/update``,
    Cursor's ``cursor/list_available_models`` answer) breaks its versioned contract. The caller
    quarantines the process generation rather than guess at the catalog."""

    code = "AGENT_EXTENSION_INVALID"


class SessionSetupFailed(AgentError):
    """Creating a conversation's provider session failed (the agent could not start, sign-in
    is needed, session/new failed...). ``result`` is the setup run's outcome (a
    :class:`baton.RunResult`, typed loosely here: the hierarchy sits below the runtime), whose
    ``error_code`` names the cause; no conversation was recorded."""

    code = "SESSION_SETUP_FAILED"

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result: Any = result


class SandboxNotApplied(AgentError):
    """Grok reported that its read-only sandbox was not applied; the lane did not start."""

    code = "GROK_SANDBOX_NOT_APPLIED"


# --- the caller's fault --------------------------------------------------------------------


class UsageError(BatonError):
    """The caller asked Baton for something it cannot do as asked."""

    code = "USAGE_ERROR"
    fault = "caller"


class ConfigurationError(UsageError):
    """A configuration value (flag, file, environment) is invalid."""

    code = "CONFIG_ERROR"


class ConfigFileError(ConfigurationError):
    """The user's config file (profiles, executable overrides) is invalid or unreadable.
    ``sub_code`` says how (a stable ``CONFIG_*`` string); ``where`` names the file and key."""

    code = "CONFIG_FILE_INVALID"

    def __init__(self, sub_code: str, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.sub_code = sub_code
        self.where = where

    def __str__(self) -> str:
        return f"{self.code} ({self.sub_code}): {self.message}"


class CapabilityNotAdvertised(UsageError):
    """A request needs a capability the agent did not advertise; nothing was sent."""

    code = "CAPABILITY_NOT_ADVERTISED"

    def __init__(self, capability: str, what: str) -> None:
        super().__init__(
            f"{what} needs the agent capability {capability}, which it did not advertise"
        )
        self.capability = capability


class SessionForkNotAdvertised(CapabilityNotAdvertised):
    """`baton session fork` against an agent that does not advertise
    ``sessionCapabilities.fork`` (unstable ACP); nothing was sent. The message names the next
    step."""

    code = "SESSION_FORK_NOT_ADVERTISED"

    def __init__(self, detail: str = "") -> None:
        UsageError.__init__(
            self,
            "forking a session needs the agent capability sessionCapabilities.fork (unstable "
            f"ACP), which {detail or 'the agent'} did not advertise; nothing was sent. Next: "
            "start a new session instead (`baton session new NAME --agent ...`), or use an "
            "agent that advertises session/fork",
        )
        self.capability = "sessionCapabilities.fork"


class SessionForkAtTurnUnsupported(CapabilityNotAdvertised):
    """`baton session fork --at-turn N` against an agent without Baton's fork extension
    (``sessionCapabilities.fork._meta["baton.forkAtTurn"]``, baton.wire.fork), or N beyond
    the parent's turns; nothing was sent. The message names the next step."""

    code = "SESSION_FORK_AT_TURN_UNSUPPORTED"

    def __init__(self, message: str) -> None:
        UsageError.__init__(self, message)
        self.capability = 'sessionCapabilities.fork._meta["baton.forkAtTurn"]'


class ChoiceNotAdvertised(UsageError):
    """A requested value (mode, model, effort, config value, auth method) is not among what the
    session or agent advertised; nothing was sent. ``advertised`` lists what was offered."""

    code = "CHOICE_NOT_ADVERTISED"

    def __init__(self, what: str, requested: object, advertised: tuple[str, ...]) -> None:
        offered = ", ".join(advertised) if advertised else "nothing"
        super().__init__(f"{what} {requested!r} is not advertised; advertised: {offered}")
        self.what = what
        self.requested = requested
        self.advertised = advertised


class TerminalAuthMethod(UsageError):
    """An auth method of type ``terminal`` is run by the user in a terminal, never through
    ``authenticate``; nothing was sent."""

    code = "AUTH_METHOD_TERMINAL"


class LegacyMethodDisabled(UsageError):
    """A legacy method (``session/set_model``) was asked for without the opt-in it needs."""

    code = "LEGACY_METHOD_DISABLED"


class UnsupportedExecutionSetting(UsageError):
    """A run asked for a restricted workspace, read-only access, disabled network or an
    automated reviewer. ACP attests no sandbox for the agent process, so Baton refuses the run
    rather than silently downgrading the setting. ``setting`` names it, ``value`` is the ask."""

    code = "EXECUTION_SETTING_UNSUPPORTED"

    def __init__(self, setting: str, value: str, message: str) -> None:
        super().__init__(message)
        self.setting = setting
        self.value = value


class PolicyNotAvailable(UsageError):
    """The permission policy asked for is not exposed by the agent's profile (or, for an
    ad-hoc ``--agent-command`` agent, needs ``--allow-unattended``)."""

    code = "POLICY_NOT_AVAILABLE"


class ModeActsWithoutAsking(UsageError):
    """The session starts in a native mode its profile declares acts on its own, the policy
    asks, no mode was chosen explicitly and the agent offers no mode that asks: the run is
    refused before any prompt (choose a mode with ``--mode``, or another policy)."""

    code = "MODE_ACTS_WITHOUT_ASKING"


class InvalidArgument(UsageError):
    """An argument to a protocol call is malformed (a relative cwd, an unknown content block
    type...); nothing was sent."""

    code = "INVALID_ARGUMENT"


class AdditionalDirectoryInvalid(UsageError):
    """An additional workspace root (``--add-dir``) is not an existing directory, or is the
    working directory itself or inside it; nothing was started. ``path`` is the directory as
    resolved."""

    code = "ADD_DIR_INVALID"

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"additional directory {path!r} {why}")
        self.path = path


class ElicitationAnswerInvalid(UsageError):
    """An answer to an elicitation form breaks the request's schema (a wrong type, a value out
    of range or not among the choices, a missing required field, an unknown field); nothing
    was sent, and the person may answer again. ``field`` names the field."""

    code = "ELICITATION_ANSWER_INVALID"

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"field {field!r} {why}" if field else why)
        self.field = field


class ClientStateError(UsageError):
    """The ACP client was used out of order: before ``initialize``, or for a session it does
    not hold."""

    code = "ACP_CLIENT_STATE"


class ToolDeclarationError(ConfigurationError):
    """The trusted tool declarations file is invalid. ``sub_code`` says how (a stable
    ``TOOLS_*`` string); the message never echoes the file's contents or values."""

    code = "TOOLS_INVALID"

    def __init__(self, sub_code: str, message: str) -> None:
        super().__init__(message)
        self.sub_code = sub_code

    def __str__(self) -> str:
        return f"{self.code} ({self.sub_code}): {self.message}"


class OutboundFrameTooLarge(UsageError):
    """Baton was asked to send a frame over the connection's cap; nothing was written."""

    code = "OUTBOUND_FRAME_TOO_LARGE"

    def __init__(self, cap: int, size: int) -> None:
        super().__init__(f"outbound frame of {size} bytes exceeds the {cap}-byte cap")
        self.cap = cap
        self.size = size


class AgentLaunchFailed(UsageError):
    """The agent's executable could not be started: missing, not executable, not a program, a
    relative path, or an unusable working directory. Nothing ran, so the fault is the
    configuration's (install the agent or fix its path), not the agent's. ``errno`` is the
    operating system's error number when there was one."""

    code = "AGENT_LAUNCH_FAILED"

    def __init__(self, executable: str, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.executable = executable
        self.errno = errno


class ControlRejected(UsageError):
    """A session control change (``{controlId, value, revision}``) was refused before anything
    was sent. Subclasses say why; ``control_id`` names the control asked for."""

    code = "CONTROL_REJECTED"

    def __init__(self, control_id: str, message: str) -> None:
        super().__init__(message)
        self.control_id = control_id


class ControlRevisionStale(ControlRejected):
    """The revision sent is not the revision of the session's current control catalog."""

    code = "CONTROL_REVISION_STALE"


class ControlUnknown(ControlRejected):
    """No control of the session's catalog has this id."""

    code = "CONTROL_UNKNOWN"


class ControlNotMutable(ControlRejected):
    """The control is shown for information only; no safe method changes it."""

    code = "CONTROL_NOT_MUTABLE"


class ControlWrongType(ControlRejected):
    """The value's JSON type does not fit the control (a BOOLEAN takes true or false, a SELECT
    takes a string)."""

    code = "CONTROL_WRONG_TYPE"


class ControlChoiceNotAdvertised(ControlRejected):
    """The value is not one of the choices the provider advertised for the control."""

    code = "CONTROL_CHOICE_NOT_ADVERTISED"


class ControlBusy(ControlRejected):
    """Controls cannot change while a run is active or requires recovery."""

    code = "CONTROL_BUSY"


class AgentNotInstalled(UsageError):
    """No candidate executable of the profile passed discovery."""

    code = "AGENT_NOT_INSTALLED"


class BadFlag(UsageError):
    """A command-line flag's value is malformed (`baton run`); the message names the flag."""

    code = "USAGE_ERROR"


class ScriptError(UsageError):
    """A prompt script is malformed. ``reason`` is a stable machine-readable word."""

    code: ClassVar[str] = "SCRIPT_ERROR"

    def __init__(self, line: int, command: str, reason: str, detail: str) -> None:
        where = f"line {line}" + (f", {command}" if command else "")
        super().__init__(f"{where}: {detail}")
        self.line = line
        self.command = command
        self.reason = reason


class StoreUrlInvalid(UsageError):
    """A ``--store``, ``BATON_STORE`` or config-file store URL that is not a PostgreSQL URL, or
    one that cannot be parsed (an unclosed ``[`` host, a port that is no number, a space, an
    unknown parameter); the message never holds the password."""

    code = "STORE_URL_INVALID"


class ExportExists(UsageError):
    """`session export` would overwrite an existing file."""

    code = "EXPORT_FILE_EXISTS"


class TurnBoundInvalid(ConfigurationError):
    """A configured turn bound is neither a positive, finite number of seconds nor ``off``."""

    code = "TURN_BOUND_INVALID"


class ReviewRootWritable(ConfigurationError):
    """The repository root overlaps a location the read-only sandbox lets Grok write."""

    code = "REVIEW_ROOT_WRITABLE"


class AttachmentRefused(ConfigurationError):
    """An attachment cannot be sent to this agent; nothing was submitted."""

    code = "ATTACHMENT_REFUSED"


# --- the transport -------------------------------------------------------------------------


class TransportClosed(BatonError):
    """The connection to the agent closed (EOF, a write to a closed pipe, or an explicit close)."""

    code = "TRANSPORT_CLOSED"
    fault = "transport"


class TapFailed(TransportClosed):
    """The durability tap failed; the connection was closed so no unrecorded frame gets through."""

    code = "TAP_FAILED"


class LaneLost(TransportClosed):
    """The lane lost the generation a run was using; ``cause`` says why. A TransportClosed (its
    code stays TRANSPORT_CLOSED), so every path that handles a closed transport handles it.
    ``cause`` is a ``baton.runtime.lanes.loss.LossCause`` (typed loosely here: the hierarchy
    sits below the runtime)."""

    def __init__(self, cause: Any) -> None:
        super().__init__(cause.describe())
        self.cause: Any = cause


# --- Baton's durable records (journal, store, data directory) ------------------------------


class UnsafePath(ConfigurationError):
    """A path Baton must own (the data directory, a journal file, the store) is a symlink, not a
    regular file or directory, owned by another user, or open to other users. Nothing was read
    or written through it."""

    code = "UNSAFE_PATH"

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class RecordNotFound(UsageError):
    """The caller named a run, session, server instance or journal that Baton has no record of."""

    code = "RECORD_NOT_FOUND"


class RunNotFound(RecordNotFound):
    """No run has this id or starts with this prefix."""

    code = "RUN_NOT_FOUND"


class RunNotCancellable(UsageError):
    """`baton cancel`: the run cannot be stopped from here: it ended already, or the process
    running it is on another host or is not a Baton command line (the message says where to
    stop it)."""

    code = "RUN_NOT_CANCELLABLE"


class AmbiguousRunId(UsageError):
    """A run id prefix matches more than one run; the message lists the candidates."""

    code = "RUN_ID_AMBIGUOUS"


class JournalOnOtherHost(RecordNotFound):
    """The run ran on another host of a shared store (docs/fleet.md): its journal is on that
    host's disk, which the message names."""

    code = "JOURNAL_ON_OTHER_HOST"


class RunNotRecoverable(UsageError):
    """A recovery choice was asked for on a run that is not RECOVERY_REQUIRED."""

    code = "RUN_NOT_RECOVERABLE"


class NoProviderSession(UsageError):
    """The run never had a provider session to attach."""

    code = "NO_PROVIDER_SESSION"


class AgentRequired(UsageError):
    """The run's agent cannot be started again from what was recorded."""

    code = "AGENT_REQUIRED"


class SessionNotFound(RecordNotFound):
    """No conversation (named session) of this data directory has this name."""

    code = "SESSION_NOT_FOUND"


class SessionNameInvalid(UsageError):
    """A conversation name breaks the name rules (1-64 characters: letters, digits, ``.``,
    ``_`` and ``-``, starting with a letter or digit); SESSION_NAME_TAKEN, a subclass, when
    another conversation has it."""

    code = "SESSION_NAME_INVALID"


class SessionNameTaken(SessionNameInvalid):
    """Another conversation of this data directory already has this name."""

    code = "SESSION_NAME_TAKEN"


class SessionBusy(UsageError):
    """The conversation has a turn running (in this process or another) and the caller chose
    not to wait (``--no-wait``), or the wait bound elapsed, or too many prompts already wait."""

    code = "SESSION_BUSY"


class SessionRecoveryRequired(UsageError):
    """A run of the conversation is RECOVERY_REQUIRED: its prompt's outcome is unknown, so no
    new prompt is sent (and the ambiguous one is never replayed) until `baton recover` settles
    that run."""

    code = "SESSION_RECOVERY_REQUIRED"


class SessionClosed(UsageError):
    """The conversation is CLOSED: it takes no more prompts."""

    code = "SESSION_CLOSED"


class SessionOnOtherHost(UsageError):
    """On a shared store, the conversation is held by another host (its agent process and
    provider session are there): a prompt, close, removal or control change from this host is
    refused, naming the holding host; run it there (sessions never cross hosts silently)."""

    code = "SESSION_ON_OTHER_HOST"


class SessionNotResumable(UsageError):
    """The conversation's provider session is not attached in this process and the agent
    advertises neither ``sessionCapabilities.resume`` nor ``loadSession``, or it answered
    resume/load that it does not know the session (-32002 or "not found"): Baton refuses to
    guess (it never starts a fresh provider session in its place); the message names the next
    step."""

    code = "SESSION_NOT_RESUMABLE"


# --- the local service (`baton serve`) -------------------------------------------------------


class RuntimeNotOpen(UsageError):
    """The runtime's store or journal was read before ``Runtime.open()`` (or after
    ``close()``)."""

    code = "RUNTIME_NOT_OPEN"


class RunEventsUnavailable(UsageError):
    """A run's event stream cannot be opened: another reader has it, or the run was started
    with an ``on_event`` callback (its events went there)."""

    code = "RUN_EVENTS_UNAVAILABLE"


class ServiceError(UsageError):
    """A request to Baton's local HTTP service (`baton serve`) was refused; the API answers it
    with the HTTP status docs/api.md gives for the code."""

    code = "SERVICE_ERROR"


class ServeAddressRefused(ServiceError):
    """`baton serve` was asked to listen on an address that is not loopback (127.0.0.1, ::1);
    remote use goes through an SSH tunnel."""

    code = "SERVE_ADDRESS_NOT_LOOPBACK"


class ServiceAlreadyRunning(ServiceError):
    """Another `baton serve` holds the data directory's service lock."""

    code = "SERVICE_ALREADY_RUNNING"


class ServiceUnreachable(ServiceError):
    """The data directory's runtime file names a service that does not answer (or answers
    something that is not Baton's API)."""

    code = "SERVICE_UNREACHABLE"


class ApiUnauthorized(ServiceError):
    """The request carried no valid token (Bearer header or the session cookie)."""

    code = "API_UNAUTHORIZED"


class ApiHostRefused(ServiceError):
    """The request's Host header is not the service's loopback name and port (DNS
    rebinding protection)."""

    code = "API_HOST_REFUSED"


class ApiOriginRefused(ServiceError):
    """A state-changing request came from a foreign Origin (or from a browser without one)."""

    code = "API_ORIGIN_REFUSED"


class ApiBodyTooLarge(ServiceError):
    """The request body is larger than the API accepts."""

    code = "API_BODY_TOO_LARGE"


class ApiRequestInvalid(ServiceError):
    """The request body or query is not what the route accepts (not JSON, a missing or
    mistyped field)."""

    code = "API_REQUEST_INVALID"


class ApiRouteNotFound(ServiceError):
    """No route of the API has this path (or this method at this path)."""

    code = "API_NOT_FOUND"


class PermissionNotPending(ServiceError):
    """The permission request was already answered (by someone, the budget or the end of its
    turn); an answer to it changes nothing."""

    code = "PERMISSION_NOT_PENDING"


class ServiceStopping(ServiceError):
    """The service is shutting down and accepts no new prompt."""

    code = "SERVICE_STOPPING"


class StorageError(BatonError):
    """Baton could not keep or read back one of its own durable records. The fault is on Baton's
    side of the boundary (its disk, its files), never the agent's."""

    code = "STORAGE_ERROR"


class JournalCorrupt(StorageError):
    """A journal record failed validation: a field, its place in the file, the sequence chain or
    its SHA-256. ``record`` names the first bad record (server, segment, sequence, byte offset)."""

    code = "JOURNAL_CORRUPT"

    def __init__(self, record: str, problem: str) -> None:
        super().__init__(f"journal record {record}: {problem}")
        self.record = record
        self.problem = problem


class JournalEntryPruned(StorageError):
    """A journal reference points into a segment removed by the per-server retention bound."""

    code = "JOURNAL_ENTRY_PRUNED"


class JournalEntryTooLarge(StorageError):
    """A message exceeds the journal's entry bound; it was not journaled and consumed no
    sequence number."""

    code = "JOURNAL_ENTRY_TOO_LARGE"

    def __init__(self, limit: int, size: int) -> None:
        super().__init__(f"a {size}-byte message exceeds the journal entry bound of {limit} bytes")
        self.limit = limit
        self.size = size


class JournalSyncFailed(StorageError):
    """Writing or syncing a journal segment failed. The failure is sticky: every later append
    to that server's journal fails with it, so no record is acknowledged that may not be
    durable."""

    code = "JOURNAL_SYNC_FAILED"


class JournalRetentionExhausted(JournalSyncFailed):
    """The journal's disk budget is full of records it must keep (records at or after the
    oldest one the run store cites, which include every record of an unfinished run) and its
    file system is down to its reserve (``MIN_FREE_DISK_BYTES``), so it can neither prune nor
    keep growing. Nothing it must keep was deleted; like any write failure of the journal it is
    sticky, and the run that needed the room fails."""

    code = "JOURNAL_RETENTION_EXHAUSTED"


class StoreConflict(StorageError):
    """A compare-and-set write found the record in another state than the caller expected;
    nothing was written."""

    code = "STORE_CONFLICT"


class RunClaimLost(StoreConflict):
    """A worker's write for a run carried a claim (the run's owner and epoch) that is no
    longer current: another worker settled or adopted the run while this one was paused or
    cut off from the store (docs/fleet.md, "Fencing"). Nothing was written; the stale worker
    stops its lanes and exits (``baton worker`` exit code 10). A subclass of
    ``STORE_CONFLICT``."""

    code = "RUN_CLAIM_LOST"


class StoreSchemaTooNew(StorageError):
    """The run store was written by a newer Baton (its schema version is above the newest this
    Baton knows); it is left untouched."""

    code = "STORE_SCHEMA_TOO_NEW"


class EngineSchemaTooNew(StorageError):
    """The fleet's job engine schema (procrastinate's, in the shared store) was migrated by a
    newer procrastinate than this host has; it is left untouched. Upgrade this host's
    procrastinate (the message names the release)."""

    code = "ENGINE_SCHEMA_TOO_NEW"
    fault = "caller"


class EngineSchemaUnknown(StorageError):
    """The fleet's job engine schema was installed by a Baton that did not record which
    procrastinate release installed it, so it cannot be migrated safely on its own. Start one
    worker with ``baton worker --engine-schema-from RELEASE`` naming that release."""

    code = "ENGINE_SCHEMA_UNKNOWN"
    fault = "caller"


class RunStatusTransitionInvalid(StoreConflict):
    """A write asked for a run status change the transition table
    (:data:`baton.store.run_status.RUN_STATUS_TRANSITIONS`) does not allow, such as leaving a
    final status; nothing was written. A compare-and-set conflict of its own kind: the stored
    status does not permit the change, whoever wrote it."""

    code = "RUN_STATUS_TRANSITION_INVALID"


class SessionStatusTransitionInvalid(StoreConflict):
    """A write asked for a conversation status change the transition table
    (:data:`baton.store.conversation_status.SESSION_STATUS_TRANSITIONS`) does not allow, such
    as leaving CLOSED; nothing was written. A subclass of ``STORE_CONFLICT``."""

    code = "SESSION_STATUS_TRANSITION_INVALID"


class StoreBusy(StorageError):
    """The run store stayed locked by other processes longer than opening it waits
    (``STORE_OPEN_WAIT_SECONDS``): many processes creating or migrating one store at the same
    moment. Nothing was changed by this process; try again."""

    code = "STORE_BUSY"


class StoreUnavailable(StorageError):
    """The run store's database server cannot be reached or did not answer in time (a
    PostgreSQL store: the server restarted, the network dropped, a lock was held too long).
    A write cut off this way has an unknown outcome; Baton never replays it blindly."""

    code = "STORE_UNAVAILABLE"


class StoreCorrupt(StorageError):
    """The run store's file is not a readable SQLite database (its header or pages were
    overwritten). Baton leaves it untouched; restore it from a backup or move it aside."""

    code = "STORE_CORRUPT"
    fault = "caller"


class StorageFull(StorageError):
    """The file system holding Baton's data directory has no space left (ENOSPC, SQLITE_FULL).
    Nothing further was recorded; free space and retry."""

    code = "STORAGE_FULL"
    fault = "caller"


class StorageReadOnly(StorageError):
    """Baton needed to write to its data directory but cannot: a read-only file system, or a
    directory or file this user may not write. Read-only verbs (``runs``, ``show``,
    ``journal verify``) still work on such a directory."""

    code = "STORAGE_READ_ONLY"
    fault = "caller"


class DataDirNotFound(StorageError):
    """A read-only verb was pointed at a data directory that does not exist; nothing was
    created."""

    code = "DATA_DIR_NOT_FOUND"
    fault = "caller"


class PromptNotFound(RecordNotFound):
    """The session has no prompt of this id (or it is no longer remembered)."""

    code = "PROMPT_NOT_FOUND"


class PermissionNotFound(ServiceError):
    """No permission request of this service ever had this id."""

    code = "PERMISSION_NOT_FOUND"


class PermissionOptionNotOffered(ServiceError):
    """The answer names an optionId Baton did not offer for this request."""

    code = "PERMISSION_OPTION_NOT_OFFERED"


class ElicitationNotFound(ServiceError):
    """No elicitation of this service ever had this id."""

    code = "ELICITATION_NOT_FOUND"


class ElicitationNotPending(ServiceError):
    """The elicitation was already answered (by someone, the service's wait, or the end of its
    turn); an answer to it changes nothing."""

    code = "ELICITATION_NOT_PENDING"


class RunNotActive(ServiceError):
    """The run is not running in this service (it ended, or another process ran it)."""

    code = "RUN_NOT_ACTIVE"


class SessionQueueFull(ServiceError):
    """The session already has the most prompts waiting behind its running turn."""

    code = "SESSION_QUEUE_FULL"


class ApiMethodNotAllowed(ServiceError):
    """The path exists but not with this method."""

    code = "API_METHOD_NOT_ALLOWED"


class ServiceRefused(BatonError):
    """The service answered a request with an error: its code, message and fault, as sent."""

    def __init__(self, code: str, message: str, fault: Fault, status: int) -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]  # the service's stable code, passed through
        self.fault = fault  # type: ignore[misc]
        self.status = status


class MigrationInvalid(StorageError):
    """A migration step does not fit the database (a bug in a migration, or a database
    changed by hand): nothing of the migration is applied."""

    code = "STORE_MIGRATION_INVALID"


class DialectUnsupported(StorageError):
    """A store statement uses a SQLite construct that has no PostgreSQL rendering (a bug in a
    new migration or query, found by the PostgreSQL tests)."""

    code = "STORE_DIALECT_UNSUPPORTED"


# --- time bounds ---------------------------------------------------------------------------

BoundName = Literal["idle", "absolute", "request"]


class BudgetExpired(BatonError):
    """A time bound elapsed. ``bound`` says which one, ``elapsed`` after how many seconds."""

    code = "BUDGET_EXPIRED"
    fault = "budget"

    def __init__(self, bound: BoundName, limit: float, elapsed: float, what: str = "") -> None:
        label = {"idle": "idle bound", "absolute": "absolute bound", "request": "request limit"}
        suffix = f" waiting for {what}" if what else ""
        super().__init__(f"the {label[bound]} of {limit:g}s elapsed after {elapsed:.3f}s{suffix}")
        self.bound: BoundName = bound
        self.limit = limit
        self.elapsed = elapsed


# --- Baton's own fault ---------------------------------------------------------------------


class InternalError(BatonError):
    """Baton broke one of its own invariants. Please report it."""

    code = "BATON_BUG"


class TurnPhaseInvalid(InternalError):
    """A turn was asked to change phase in a way its transition table does not allow."""

    code = "TURN_PHASE_INVALID"


class LaneFenced(BatonError):
    """The lane latched a safety fence (a failed drain, or a child that survived SIGKILL):
    no replacement process starts until Baton restarts."""

    code = "RUNTIME_SAFETY_FENCED"
    fault = "baton"


# --- workspaces (issue 31) -----------------------------------------------------------------


class WorkspaceError(UsageError):
    """A workspace (``--workspace``) cannot be created, used or removed as asked; nothing was
    started or deleted. ``workspace`` names it when one is known."""

    code = "WORKSPACE_ERROR"

    def __init__(self, message: str, *, workspace: str | None = None) -> None:
        super().__init__(message)
        self.workspace = workspace


class WorkspaceNotGitRepository(WorkspaceError):
    """``--workspace worktree`` was asked in a directory that is not inside a git work tree;
    no agent was started."""

    code = "WORKSPACE_NOT_GIT_REPOSITORY"


class WorkspaceBaseDirty(WorkspaceError):
    """A clean base was asked for (``--require-clean``) and the repository's checkout has
    uncommitted or untracked changes; no agent was started."""

    code = "WORKSPACE_BASE_DIRTY"


class WorkspaceBaseNotFound(WorkspaceError):
    """``--base REF`` names no commit of the repository; no agent was started."""

    code = "WORKSPACE_BASE_NOT_FOUND"


class WorkspaceNotFound(WorkspaceError):
    """No recorded workspace has this name (``baton workspace``, ``baton diff``)."""

    code = "WORKSPACE_NOT_FOUND"


class WorkspaceInUse(WorkspaceError):
    """The workspace is used by a running or RECOVERY_REQUIRED run, or belongs to another
    session: it is neither removed nor shared (concurrent runs never share a worktree unless
    they share a session). ``--force`` removes a workspace anyway."""

    code = "WORKSPACE_IN_USE"


class WorkspaceUnrecordedChanges(WorkspaceError):
    """The workspace holds changes that no turn recorded (made after the last comparison):
    it is not removed unless forced, so nothing is deleted silently."""

    code = "WORKSPACE_UNRECORDED_CHANGES"


class WorkspaceGitFailed(WorkspaceError):
    """A git command Baton ran for a workspace failed (its exit status and last stderr line
    are in the message)."""

    code = "WORKSPACE_GIT_FAILED"


class WorkspaceDiffIncomplete(WorkspaceError):
    """The recorded changes were cut by a bound (files compared, diff bytes), so the patch
    would not be the whole change; ``baton diff`` prints it only with ``--partial``."""

    code = "WORKSPACE_DIFF_INCOMPLETE"


# --- batches (docs/batches.md) -------------------------------------------------------------


class BatchError(UsageError):
    """A batch (many tasks across many agents) cannot be run, resumed or read as asked."""

    code = "BATCH_ERROR"


class BatchSpecInvalid(BatchError):
    """A batch spec file (TOML or JSONL) is not what docs/batches.md describes; the message
    names the file, the line (JSONL) or the field."""

    code = "BATCH_SPEC_INVALID"


class BatchNotFound(RecordNotFound):
    """No batch of the store has this id (or unique prefix)."""

    code = "BATCH_NOT_FOUND"


class BatchBusy(BatchError):
    """Another live Baton process is running this batch (resume it once that one ended)."""

    code = "BATCH_BUSY"


class BatchStateInvalid(StoreConflict):
    """A write asked for a batch or cell state change its transition table
    (:mod:`baton.store.batch_states`) does not allow; nothing was written."""

    code = "BATCH_STATE_INVALID"


class SessionMaxCostReached(UsageError):
    """The session's reported cost reached the cap it was created with (``session new
    --max-cost``): its next prompt is refused before anything is sent (a running turn is
    never stopped by it)."""

    code = "SESSION_MAX_COST_REACHED"
