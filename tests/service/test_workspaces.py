"""Workspaces through the API: a run in a worktree, its changes paged, one file's diff, the
patch; the errors before any agent starts; restricted settings refused."""

from __future__ import annotations

from workspace_repos import make_repo

from .conftest import AUTH, Api


async def test_a_worktree_run_and_its_changes(api: Api) -> None:
    repo = make_repo(api.cwd / "repo")
    run_id = await api.start(
        "write a.txt edited\nsilent_write quiet.txt shh\nwrite b.txt bee",
        cwd=str(repo),
        workspace="worktree",
        allowUnattended=True,
        policy="auto-edits",
    )
    view = await api.finish(run_id)
    assert view["status"] == "COMPLETED"
    assert view["workspaceChanges"]["unreported"] == ["quiet.txt"]
    page = (await api.client.get(f"/api/v1/runs/{run_id}/changes?limit=2", headers=AUTH)).json()
    assert page["total"] == 3 and len(page["files"]) == 2 and page["nextOffset"] == 2
    assert all("diff" not in f for f in page["files"])
    rest = await api.client.get(f"/api/v1/runs/{run_id}/changes?offset=2", headers=AUTH)
    assert [f["path"] for f in rest.json()["files"]] == ["quiet.txt"]
    assert rest.json()["counts"]["unreported"] == 1
    one = await api.client.get(
        f"/api/v1/runs/{run_id}/changes/file", params={"path": "a.txt"}, headers=AUTH
    )
    assert one.status_code == 200 and "+edited" in one.json()["diff"]
    missing = await api.client.get(
        f"/api/v1/runs/{run_id}/changes/file", params={"path": "nope"}, headers=AUTH
    )
    assert missing.status_code == 404
    patch = await api.client.get(f"/api/v1/runs/{run_id}/diff?side=base", headers=AUTH)
    assert patch.status_code == 200 and patch.headers["content-type"].startswith("text/x-diff")
    assert patch.text.count("diff --git ") == 3
    assert (
        await api.client.get(f"/api/v1/runs/{run_id}/diff?side=x", headers=AUTH)
    ).status_code == 400
    listed = (await api.client.get("/api/v1/workspaces", headers=AUTH)).json()["workspaces"]
    assert [w["name"] for w in listed] == [run_id]
    shown = (await api.client.get(f"/api/v1/workspaces/{run_id}", headers=AUTH)).json()
    assert shown["runs"] == [run_id] and shown["kind"] == "worktree"
    absent = await api.client.get("/api/v1/workspaces/nope", headers=AUTH)
    assert absent.status_code == 404 and absent.json()["error"]["code"] == "WORKSPACE_NOT_FOUND"


async def test_refusals_before_any_agent_starts(api: Api) -> None:
    body = {"prompt": "echo hi", "agentCommand": "x", "cwd": str(api.cwd)}
    restricted = await api.client.post(
        "/api/v1/runs", json={**body, "workspace": "read-only"}, headers=AUTH
    )
    assert restricted.status_code == 400
    assert restricted.json()["error"]["code"] == "EXECUTION_SETTING_UNSUPPORTED"
    relative = await api.client.post(
        "/api/v1/runs", json={**body, "workspace": "some/dir"}, headers=AUTH
    )
    assert relative.status_code == 400
