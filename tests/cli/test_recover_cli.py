"""`baton recover`: nothing offered on a run that needs no recovery, the ad-hoc agent the run
recorded, new runs linked to the original, the text streamed before the loss."""

from __future__ import annotations

from pathlib import Path

from baton.cli import exit_codes

from .helpers import AGENT, baton, json_lines


def crashed_run(tmp_path: Path) -> str:
    agent = f"{AGENT} --state-dir {tmp_path / 'state'}"
    done = baton(
        tmp_path, "run", "--agent-command", agent, "--json", "echo before the loss; crash 9"
    )
    assert done.returncode == exit_codes.RECOVERY_REQUIRED, done.stderr
    run_id: str = json_lines(done.stdout)[-1]["runId"]
    return run_id


def test_a_completed_run_offers_no_choices(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--json", "echo hi")
    run_id = json_lines(done.stdout)[-1]["runId"]
    shown = baton(tmp_path, "recover", run_id)
    assert shown.returncode == 0
    assert "nothing to recover" in shown.stdout and "--mark-failed" not in shown.stdout
    for action in (["--mark-failed"], ["--attach"], ["--new-prompt", "echo again"]):
        refused = baton(tmp_path, "recover", run_id, *action)
        assert refused.returncode == exit_codes.USAGE
        assert "RUN_NOT_RECOVERABLE" in refused.stderr


def test_the_choices_name_the_real_run_and_the_streamed_text_is_shown(tmp_path: Path) -> None:
    run_id = crashed_run(tmp_path)
    shown = baton(tmp_path, "recover", run_id).stdout
    assert f"baton recover {run_id} --mark-failed" in shown
    assert "| before the loss" in shown


def test_attach_reuses_the_recorded_ad_hoc_agent_and_links_the_runs(tmp_path: Path) -> None:
    run_id = crashed_run(tmp_path)
    looked = baton(tmp_path, "recover", run_id, "--attach")  # no --agent-command needed
    assert looked.returncode == 0, looked.stderr
    assert "stays RECOVERY_REQUIRED" in looked.stdout
    again = baton(tmp_path, "recover", run_id[:12], "--new-prompt", "echo after")
    assert again.returncode == 0, again.stderr
    assert "after" in again.stdout
    view = json_lines(baton(tmp_path, "show", run_id, "--json").stdout)[0]
    assert view["status"] == "RECOVERY_REQUIRED"
    links = [o["payload"]["recovery"] for o in view["observations"] if "recovery" in o["payload"]]
    assert [link["action"] for link in links] == ["attach", "new_prompt"]
    runs = {r["id"]: r for r in json_lines(baton(tmp_path, "runs", "--json").stdout)}
    new = runs[links[1]["runId"]]
    assert new["promptText"] == "echo after"
    assert runs[links[0]["runId"]]["promptText"]  # never an empty prompt
    shown = baton(tmp_path, "show", links[1]["runId"]).stdout
    assert run_id in shown
    assert baton(tmp_path, "recover", run_id, "--new-prompt", "  ").returncode == exit_codes.USAGE
    settled = baton(tmp_path, "recover", run_id, "--mark-failed")
    assert settled.returncode == 0
