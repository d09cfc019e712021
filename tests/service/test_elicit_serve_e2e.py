"""Elicitations through a real `baton serve` (a subprocess on a loopback port) and the scripted
agent's ``elicit`` and ``offered`` commands: the agent gets exactly the answer given over HTTP,
an invalid form answer is 422 and leaves the question open, an unattended run is offered no
elicitation, and a question nobody answers within ``--elicitation-wait`` is declined."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from .test_serve_e2e import Served, launch, served, stop, wait_for

__all__ = ["served"]  # the fixture, shared with test_serve_e2e


def agent_lines(view: dict[str, Any], prefix: str) -> list[Any]:
    """The JSON the scripted agent reported after ``prefix`` in its text, in order."""
    text = "".join(i["content"].get("text", "") for i in view["items"] if i["kind"] == "text")
    return [
        orjson.loads(line[len(prefix) :]) for line in text.splitlines() if line.startswith(prefix)
    ]


def finished(served: Served, run_id: str) -> dict[str, Any]:
    served.events(run_id)  # the stream ends with the run
    return served.show(run_id)


def test_a_form_answer_over_http_reaches_the_agent(served: Served) -> None:
    run_id = served.start("offered; elicit form; elicit url")
    with served.client() as client:

        def waiting() -> list[dict[str, Any]]:
            found = client.get(f"/api/v1/elicitations?runId={run_id}").json()["elicitations"]
            return [q for q in found if q["mode"] == "form"]

        [question] = wait_for(waiting, "a pending form")
        path = f"/api/v1/elicitations/{question['id']}/answer"
        invalid = client.post(path, json={"action": "accept", "content": {"name": ""}})
        assert invalid.status_code == 422
        assert invalid.json()["error"]["code"] == "ELICITATION_ANSWER_INVALID"
        content = {"name": "api", "replicas": 5, "region": "eu"}
        assert client.post(path, json={"action": "accept", "content": content}).is_success
        assert client.post(path, json={"action": "cancel"}).status_code == 409

        def url_question() -> list[dict[str, Any]]:
            found = client.get(f"/api/v1/elicitations?runId={run_id}").json()["elicitations"]
            return [q for q in found if q["mode"] == "url"]

        [link] = wait_for(url_question, "a pending URL question")
        assert link["url"] == "https://127.0.0.1:9/scripted-sign-in"
        answer = client.post(
            f"/api/v1/elicitations/{link['id']}/answer", json={"action": "decline"}
        )
        assert answer.is_success
    view = finished(served, run_id)
    assert view["status"] == "COMPLETED"
    [capabilities] = agent_lines(view, "client capabilities: ")
    assert capabilities["elicitation"] == {"form": {}, "url": {}}
    assert agent_lines(view, "elicitation answer: ") == [
        {"action": "accept", "content": content},
        {"action": "decline"},
    ]


def test_unattended_runs_are_not_offered_and_nobody_answering_declines(tmp_path: Path) -> None:
    served = launch(tmp_path, "--elicitation-wait", "0.5")
    try:
        unattended = served.start("offered; elicit form", policy="full", allowUnattended=True)
        view = finished(served, unattended)
        [capabilities] = agent_lines(view, "client capabilities: ")
        assert "elicitation" not in capabilities  # the process this run started
        [record] = [i["content"] for i in view["items"] if i["kind"] == "elicitation"]
        assert record["reasonCode"] == "mode_not_offered" and record["chosenBy"] == "baton"
        assert agent_lines(view, "elicitation answer: ") == [{"action": "decline"}]
        # An ask run replaces the idle process that offered nothing, and is asked; nobody
        # answers within --elicitation-wait: declined, no user available.
        asked = served.start("offered; elicit form")
        view = finished(served, asked)
        [capabilities] = agent_lines(view, "client capabilities: ")
        assert capabilities["elicitation"] == {"form": {}, "url": {}}
        [record] = [i["content"] for i in view["items"] if i["kind"] == "elicitation"]
        assert record["reasonCode"] == "no_user" and record["chosenBy"] == "baton"
        assert agent_lines(view, "elicitation answer: ") == [{"action": "decline"}]
    finally:
        stop(served)
