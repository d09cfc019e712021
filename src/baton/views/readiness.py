"""Each profile's readiness as `baton doctor` reports it and ``/api/v1/readiness`` answers:
the profiles asked for, discovery for each, and the live checks on request. Each result's
document is :meth:`~baton.runtime.agents.readiness.Readiness.to_json` (docs/profiles.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from baton.errors import UsageError
from baton.runtime.agents.config_file import UserConfig
from baton.runtime.agents.discovery import discover
from baton.runtime.agents.environment import sensitive_values
from baton.runtime.agents.live_check import live_check
from baton.runtime.agents.profiles import Profile
from baton.runtime.agents.readiness import Readiness, readiness_from_discovery
from baton.wire.budget import TurnBudget


def select_profiles(config: UserConfig, names: Sequence[str]) -> list[Profile]:
    """The profiles to check: all of them, or the named ones (in the order named)."""
    available = config.all_profiles()
    if not names:
        return list(available.values())
    unknown = [n for n in names if n not in available]
    if unknown:
        raise UsageError(
            f"unknown profile {', '.join(unknown)}; known profiles: {', '.join(available)}"
        )
    return [available[n] for n in dict.fromkeys(names)]


async def check_profiles(
    profiles: Sequence[Profile],
    config: UserConfig,
    *,
    parent_env: Mapping[str, str],
    live: bool = False,
    budget: TurnBudget | None = None,
) -> list[Readiness]:
    """Discovery for every profile (concurrently), then the live checks (one at a time: each
    starts a real agent).

    Cancellation: safe; a cancelled discovery or live check ends its child processes (their
    own cancellation paths), and nothing is recorded."""

    async def one(profile: Profile) -> Readiness:
        result = await discover(
            profile,
            parent_env=parent_env,
            config_override=config.executable_override(profile.id),
            secrets=sensitive_values(profile, parent_env),
        )
        return readiness_from_discovery(profile, result)

    results = list(await asyncio.gather(*(one(p) for p in profiles)))
    if live:
        for index, profile in enumerate(profiles):
            results[index] = await live_check(
                profile, results[index], parent_env=parent_env, budget=budget
            )
    return results
