"""tau2-bench Results JSON, written as ``tau2 run`` writes it, against a plain recount."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
from collections import defaultdict

import pytest

from passatk.archives import ArchiveError, detect_format, read_counts

ENDINGS = ["user_stop", "agent_stop", "max_steps", "too_many_errors", "infrastructure_error"]
REWARDS = [1.0, 0.0, 0.5, 1 - 1e-7, 1 + 2e-6, 0.999998, None]


def simulation(task: str, trial: int, reward, ending: str) -> dict:
    """One ``SimulationRun`` as pydantic dumps it (every field tau2 writes, most unread)."""
    reward_info = None if reward is None else {
        "reward": reward, "db_check": {"db_match": reward == 1.0, "db_reward": reward},
        "env_assertions": None, "action_checks": [], "nl_assertions": None,
        "communicate_checks": None, "reward_basis": ["DB", "COMMUNICATE"],
        "reward_breakdown": {"DB": reward}, "info": None}
    return {"id": f"sim-{task}-{trial}", "task_id": task, "timestamp": "2025-06-01T10:00:00",
            "start_time": "2025-06-01T10:00:00", "end_time": "2025-06-01T10:01:00",
            "duration": 60.0, "termination_reason": ending, "agent_cost": 0.01,
            "user_cost": 0.002, "reward_info": reward_info,
            "messages": [{"role": "assistant", "content": "Hello, how can I help?",
                          "tool_calls": None, "turn_idx": 0,
                          "timestamp": "2025-06-01T10:00:01"}],
            "trial": trial, "seed": 300 + trial, "mode": "half_duplex"}


def results(sims: list, llm: str = "gpt-4.1", domain: str = "airline", trials: int = 4) -> dict:
    return {"timestamp": "2025-06-01T10:00:00",
            "info": {"git_commit": "abc123", "num_trials": trials, "max_steps": 200,
                     "max_errors": 10,
                     "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1",
                                   "llm_args": {"temperature": 0.0}},
                     "agent_info": {"implementation": "llm_agent", "llm": llm,
                                    "llm_args": {"temperature": 0.0}},
                     "environment_info": {"domain_name": domain, "policy": "...",
                                          "tool_defs": {}},
                     "seed": 300},
            "tasks": [{"id": t, "description": None, "user_scenario": {}}
                      for t in sorted({str(s["task_id"]) for s in sims})],
            "simulations": sims}


def random_run(seed: int, tasks: int = 6, trials: int = 4) -> list:
    rng = random.Random(seed)
    return [simulation(str(t), j, rng.choice(REWARDS), rng.choice(ENDINGS))
            for t in range(tasks) for j in range(trials) if rng.random() < 0.9]


def recount(sims: list, by_ending: bool = False) -> dict:
    """tau2's rule as a plain loop: infrastructure errors out, success = |reward - 1| <= 1e-6."""
    out: dict = defaultdict(lambda: [0, 0])
    for s in sims:
        if s["termination_reason"] == "infrastructure_error":
            continue
        reward = (s["reward_info"] or {}).get("reward")
        key = (s["termination_reason"], s["task_id"]) if by_ending else s["task_id"]
        out[key][0] += 1
        out[key][1] += reward is not None and 1 - 1e-6 <= reward <= 1 + 1e-6
    return {k: tuple(v) for k, v in out.items()}


def rows(counts, field: str | None = None) -> dict:
    out = {}
    for g, t, n, c in zip(counts.group, counts.task, counts.n, counts.c, strict=True):
        group = dict(counts.groups[g])
        out[(group[field], t) if field else t] = (int(n), int(c))
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("style", ["indent", "one-line", "gzip"])
def test_counts_are_tau2s(tmp_path, seed, style):
    sims = random_run(seed)
    doc = results(sims)
    path = tmp_path / ("r.json.gz" if style == "gzip" else "r.json")
    text = json.dumps(doc, indent=2 if style == "indent" else None)
    if style == "gzip":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    assert detect_format(path) == "tau2-bench"
    counts = read_counts(path)
    assert counts.metric == "pass^k"
    assert counts.groups == ((("model", "gpt-4.1"), ("domain", "airline")),)
    assert rows(counts) == recount(sims)
    by = read_counts(path, by=["termination_reason"])
    assert rows(by, "termination_reason") == recount(sims, by_ending=True)


def test_notes_name_the_endings_and_the_left_out(tmp_path):
    sims = [simulation("0", 0, 1.0, "user_stop"), simulation("0", 1, 0.0, "max_steps"),
            simulation("0", 2, None, "too_many_errors"),
            simulation("0", 3, None, "infrastructure_error")]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results(sims)))
    counts = read_counts(path)
    assert (counts.n.tolist(), counts.c.tolist()) == ([3], [1])
    notes = " ".join(counts.notes)
    assert "1 simulation(s) ended infrastructure_error and are left out of n" in notes
    assert "failed trials by termination_reason: max_steps 1, too_many_errors 1" in notes


def test_runs_of_models_never_pool(tmp_path):
    a = random_run(1)
    b = random_run(2)
    rerun = [simulation("0", 4, 1.0, "user_stop"), simulation("1", 4, 0.0, "max_steps")]
    (tmp_path / "a.json").write_text(json.dumps(results(a, llm="model-a")))
    (tmp_path / "b.json").write_text(json.dumps(results(b, llm="model-b")))
    (tmp_path / "a_rerun.json").write_text(json.dumps(results(rerun, llm="model-a")))
    apart = read_counts(tmp_path)
    assert {dict(g)["path"] for g in apart.groups} == {"a.json", "b.json", "a_rerun.json"}
    merged = read_counts(tmp_path, merge=True)
    assert rows(merged, "model") == {
        **{("model-a", t): v for t, v in recount(a + rerun).items()},
        **{("model-b", t): v for t, v in recount(b).items()}}


def test_bad_reward_is_located(tmp_path):
    sims = random_run(0)
    sims[3]["reward_info"] = {"reward": "1.0"}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results(sims)))
    with pytest.raises(ArchiveError) as info:
        read_counts(path)
    assert str(info.value) == (f"{path}: $.simulations[3].reward_info.reward: expected a "
                               "number or null, got a string")
    skipped = read_counts(path, skip_bad=True)
    assert skipped.skipped.count == 1
    assert rows(skipped) == recount(sims[:3] + sims[4:])


def test_nan_reward_and_bad_task_id(tmp_path):
    sims = [simulation("0", 0, 1.0, "user_stop"), simulation("0", 1, 1.0, "user_stop")]
    sims[1]["reward_info"]["reward"] = float("nan")
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results(sims)))
    with pytest.raises(ArchiveError, match=r"\$\.simulations\[1\]\.reward_info\.reward: reward "
                                           "must be a finite number"):
        read_counts(path)
    sims[1] = {**simulation("0", 1, 1.0, "user_stop"), "task_id": [1]}
    path.write_text(json.dumps(results(sims)))
    with pytest.raises(ArchiveError, match=r"\$\.simulations\[1\]\.task_id: expected an integer or "
                                           "a string, got a list"):
        read_counts(path)


def test_cli_scores_pass_hat_k(tmp_path):
    sims = [simulation(str(t), j, 1.0 if (t + j) % 3 else 0.0, "user_stop")
            for t in range(3) for j in range(3)]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results(sims), indent=2))
    out = subprocess.run([sys.executable, "-m", "passatk", "score", str(path), "-k", "1,2",
                          "--format", "json"], capture_output=True, text=True, check=True)
    rows_out = json.loads(out.stdout)["rows"]
    values = {r["k"]: r["value"] for r in rows_out}
    # per task c of 3: task 0: trials 1,2 pass; task 1: 0,1; task 2: 0,2 -> c = 2 each
    assert values[1] == pytest.approx(2 / 3, abs=1e-15)
    assert values[2] == pytest.approx(1 / 3, abs=1e-15)


def test_simulations_past_the_record_cap_are_streamed(tmp_path, monkeypatch):
    """A Results file far larger than the record-length cap reads one simulation at a time."""
    sims = random_run(5, tasks=40)
    for s in sims:
        s["messages"] = [{"role": "user", "content": "y" * 500, "turn_idx": i} for i in range(20)]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results(sims), indent=2))
    monkeypatch.setenv("PASSATK_MAX_RECORD_BYTES", "64K")
    assert path.stat().st_size > 20 * 65536
    assert rows(read_counts(path)) == recount(sims)


def test_rewards_at_the_bounds_follow_tau2_to_the_ulp(tmp_path):
    """tau2's ``is_successful`` is ``(1 - 1e-6) <= reward <= (1 + 1e-6)``; the floats next to
    both bounds (and the bounds) are read as it reads them."""
    import math

    grid = []
    for bound in (1 - 1e-6, 1 + 1e-6, 1.0):
        x = bound
        for _ in range(3):
            x = math.nextafter(x, 0)
        for _ in range(7):
            grid.append(x)
            x = math.nextafter(x, 2)
    sims = [simulation(str(i), 0, r, "user_stop") for i, r in enumerate(grid)]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results(sims)))  # repr round-trips every float
    want = {str(i): (1, int((1 - 1e-6) <= r <= (1 + 1e-6))) for i, r in enumerate(grid)}
    assert rows(read_counts(path)) == want
    assert want["3"] == (1, 1) and abs(grid[3] - 1) > 1e-6  # where abs(r - 1) <= 1e-6 differs
