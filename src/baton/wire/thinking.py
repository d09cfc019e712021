"""Reasoning effort and model selection, matched against what a session advertised.

Normalization is for *matching only* (decisions.md item 6). :data:`PORTABLE_LEVELS` is a
vocabulary for comparing spellings, not an enum of what may be chosen: an adapter that
advertises ``max`` or ``ultra`` keeps them selectable by their exact spelling, and the value
Baton sends back is always the adapter's own.

Two places carry an effort in real adapter output:

- a select config option of category ``thought_level`` (Codex's ``reasoning_effort``) or the
  non-standard ``thinking`` category, or one whose id is an effort key;
- parameterized model ids such as ``model[thinking=true,effort=high]`` (Cursor's picker), read
  with a fixed key precedence whatever order the attributes come in.

Models are matched exactly: a bare name valid for one adapter can mean nothing to another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from baton.errors import ChoiceNotAdvertised
from baton.wire.session_state import SELECT, ConfigOption, SessionState

#: The portable levels, weakest first. For matching spellings only.
PORTABLE_LEVELS: Final[tuple[str, ...]] = ("off", "low", "medium", "high", "xhigh")

#: Attribute keys that carry a level in parameterized model ids, in precedence order.
#: ``thinking`` is the weakest: often it only says reasoning happens (``thinking=true``).
EFFORT_ATTRIBUTE_KEYS: Final[tuple[str, ...]] = (
    "effort",
    "reasoning_effort",
    "variant",
    "thinking",
)

#: The key that marks reasoning without (necessarily) a level.
WEAK_EFFORT_KEY: Final = "thinking"

#: Config option categories that carry a reasoning effort: the schema's and the non-standard
#: one real adapters use. Preferred in this order.
EFFORT_CATEGORIES: Final[tuple[str, ...]] = ("thought_level", "thinking")

#: The config option category that carries the model (schema ``model``).
MODEL_CATEGORY: Final = "model"

# Spellings (case-folded, separators removed) that name a portable level.
_SYNONYMS: Final[dict[str, str]] = {
    "off": "off",
    "none": "off",
    "disabled": "off",
    "disable": "off",
    "no": "off",
    "low": "low",
    "lo": "low",
    "medium": "medium",
    "med": "medium",
    "mid": "medium",
    "high": "high",
    "hi": "high",
    "xhigh": "xhigh",
    "xhi": "xhigh",
    "extrahigh": "xhigh",
    "veryhigh": "xhigh",
}
_SEPARATORS: Final = str.maketrans("", "", "-_ .")
_TRUE: Final = frozenset({"true", "on", "yes", "1", "enabled"})
_FALSE: Final = frozenset({"false", "off", "no", "0", "disabled", "none"})

MatchKind = Literal["exact", "casefold", "normalized"]
_TIERS: Final[tuple[MatchKind, ...]] = ("exact", "casefold", "normalized")


def normalize_effort(value: str) -> str | None:
    """The portable level ``value`` spells (``"X-High"`` -> ``"xhigh"``, ``"none"`` ->
    ``"off"``), or None when it names none (``max``, ``ultra``, ``minimal``)."""
    return _SYNONYMS.get(value.strip().casefold().translate(_SEPARATORS))


def effort_matches(requested: str, advertised: str) -> bool:
    """Whether ``advertised`` satisfies ``requested``: exact first, then by normalization."""
    return _match_kind(requested, advertised) is not None


def _match_kind(requested: str, advertised: str) -> MatchKind | None:
    if requested == advertised:
        return "exact"
    if requested.casefold() == advertised.casefold():
        return "casefold"
    level = normalize_effort(requested)
    if level is not None and level == normalize_effort(advertised):
        return "normalized"
    return None


def _best_matches(requested: str, values: tuple[str, ...]) -> tuple[list[str], MatchKind | None]:
    """Values matching ``requested`` at the strongest tier that has any."""
    for tier in _TIERS:
        found = [v for v in values if _match_kind(requested, v) == tier]
        if found:
            return list(dict.fromkeys(found)), tier
    return [], None


def _split_model_id(model_id: str) -> tuple[str, dict[str, str]] | None:
    """``name[k=v,...]`` -> (name, {folded key: value}); None unless well formed and keyed."""
    if not model_id.endswith("]"):
        return None
    open_at = model_id.find("[")
    if open_at <= 0:
        return None
    base, body = model_id[:open_at], model_id[open_at + 1 : -1]
    if "[" in body or "]" in body or not body.strip():
        return None
    attrs: dict[str, str] = {}
    for part in body.split(","):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value or "=" in value:
            return None
        folded = key.casefold()
        if folded in attrs:
            return None  # a repeated key is ambiguous, not a guess
        attrs[folded] = value
    return base, attrs


def model_id_base(model_id: str) -> str:
    """The name part of a parameterized id (``model[effort=high]`` -> ``model``). An id without
    a well-formed keyed bracket is its own base (``sonnet[1m]`` stays ``sonnet[1m]``)."""
    split = _split_model_id(model_id)
    return model_id if split is None else split[0]


def model_id_attrs(model_id: str) -> dict[str, str]:
    """The attributes of a parameterized id, keys case-folded, values verbatim. Empty for an id
    without brackets and for a malformed or keyless bracket (never a partial guess)."""
    split = _split_model_id(model_id)
    return {} if split is None else dict(split[1])


def advertised_effort(model_id: str) -> str | None:
    """The effort a parameterized id advertises, in the adapter's spelling.

    Keys are read in :data:`EFFORT_ATTRIBUTE_KEYS` order whatever order the id lists them;
    ``thinking`` counts only when its value names a level (``thinking=true`` says reasoning
    happens, not how much: see :func:`thinking_marker`).
    """
    attrs = model_id_attrs(model_id)
    for key in EFFORT_ATTRIBUTE_KEYS:
        value = attrs.get(key)
        if value is None:
            continue
        if key == WEAK_EFFORT_KEY and normalize_effort(value) is None:
            return None
        return value
    return None


def thinking_marker(model_id: str) -> bool | None:
    """Whether a parameterized id says reasoning happens: True, False, or None when it says
    nothing readable."""
    attrs = model_id_attrs(model_id)
    for key in EFFORT_ATTRIBUTE_KEYS:
        value = attrs.get(key)
        if value is None:
            continue
        folded = value.casefold()
        if folded in _FALSE or normalize_effort(value) == "off":
            return False
        if key == WEAK_EFFORT_KEY:
            return True if folded in _TRUE or normalize_effort(value) is not None else None
        return True
    return None


Method = Literal["session/set_config_option", "session/set_model"]


@dataclass(frozen=True, slots=True)
class NativeSelection:
    """How to apply a resolved choice: ``method`` with ``value`` (the adapter's spelling) for
    ``config_id`` (None for ``session/set_model``). ``already_current`` says the session
    already reports that value."""

    method: Method
    config_id: str | None
    value: str
    matched_by: MatchKind
    already_current: bool


def effort_options(state: SessionState) -> tuple[ConfigOption, ...]:
    """Select options that carry a reasoning effort, preferred first."""
    ranked: list[tuple[int, int, ConfigOption]] = []
    for index, option in enumerate(state.config_options):
        if option.type != SELECT:
            continue
        if option.category in EFFORT_CATEGORIES:
            rank = EFFORT_CATEGORIES.index(option.category)
        elif option.id.casefold() in EFFORT_ATTRIBUTE_KEYS and option.category in (None, "other"):
            rank = len(EFFORT_CATEGORIES)
        else:
            continue
        ranked.append((rank, index, option))
    return tuple(option for _rank, _index, option in sorted(ranked, key=lambda r: r[:2]))


def _model_source(state: SessionState) -> tuple[ConfigOption | None, tuple[str, ...], str | None]:
    """(model config option or None, candidate ids, current id)."""
    for option in state.options_in_category(MODEL_CATEGORY):
        if option.type == SELECT:
            return option, option.values(), str(option.current_value)
    if state.models is not None:
        return None, state.models.ids(), state.models.current_model_id
    return None, (), None


def _other_attrs(model_id: str) -> dict[str, str]:
    return {k: v for k, v in model_id_attrs(model_id).items() if k not in EFFORT_ATTRIBUTE_KEYS}


def resolve_effort(state: SessionState, requested: str) -> NativeSelection:
    """Find how this session can take reasoning effort ``requested``.

    A select effort option is preferred; else a parameterized sibling of the current model.
    Raises :class:`ChoiceNotAdvertised` listing what was advertised when nothing matches or
    when several advertised values match equally well.
    """
    advertised: list[str] = []
    for option in effort_options(state):
        values = option.values()
        advertised.extend(values)
        found, tier = _best_matches(requested, values)
        if len(found) > 1:
            raise ChoiceNotAdvertised("reasoning effort (ambiguous)", requested, tuple(found))
        if found and tier is not None:
            return NativeSelection(
                "session/set_config_option",
                option.id,
                found[0],
                tier,
                option.current_value == found[0],
            )
    model_option, candidates, current = _model_source(state)
    if current is not None:
        base, rest = model_id_base(current), _other_attrs(current)
        siblings = [
            c for c in candidates if model_id_base(c) == base and advertised_effort(c) is not None
        ]
        efforts = tuple(dict.fromkeys(advertised_effort(c) or "" for c in siblings))
        advertised.extend(efforts)
        found, tier = _best_matches(requested, efforts)
        if len(found) > 1:
            raise ChoiceNotAdvertised("reasoning effort (ambiguous)", requested, tuple(found))
        if found and tier is not None:
            matching = [c for c in siblings if advertised_effort(c) == found[0]]
            closest = [c for c in matching if _other_attrs(c) == rest]
            chosen = closest if len(closest) == 1 else matching
            if len(chosen) > 1:
                raise ChoiceNotAdvertised("reasoning effort (ambiguous)", requested, tuple(chosen))
            return NativeSelection(
                "session/set_config_option" if model_option else "session/set_model",
                model_option.id if model_option else None,
                chosen[0],
                tier,
                chosen[0] == current,
            )
    raise ChoiceNotAdvertised("reasoning effort", requested, tuple(dict.fromkeys(advertised)))


def resolve_model(state: SessionState, requested: str) -> NativeSelection:
    """Find how this session can switch to model ``requested``, matched exactly.

    The ``model`` config option is preferred; else the legacy ``models`` object (applied with
    ``session/set_model``, which the caller must opt into). Raises
    :class:`ChoiceNotAdvertised` listing every advertised model when none is ``requested``.
    """
    advertised: list[str] = []
    for option in state.options_in_category(MODEL_CATEGORY):
        if option.type != SELECT:
            continue
        advertised.extend(option.values())
        if requested in option.values():
            return NativeSelection(
                "session/set_config_option",
                option.id,
                requested,
                "exact",
                option.current_value == requested,
            )
    if state.models is not None:
        advertised.extend(state.models.ids())
        if requested in state.models.ids():
            return NativeSelection(
                "session/set_model",
                None,
                requested,
                "exact",
                state.models.current_model_id == requested,
            )
    raise ChoiceNotAdvertised("model", requested, tuple(dict.fromkeys(advertised)))
