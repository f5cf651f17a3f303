"""tau-bench trial lists and tau2-bench ``Results`` JSON (``tau2 run``), both pass^k over trials,
tau2 counted as its ``agent_metrics.py`` counts (the rules: each SPEC, docs/formats.md)."""

import math
from collections import Counter

import msgspec

from passatk.archives.context import BadRecord, Context, finite_number, group_from, require, task_id
from passatk.archives.errors import ArchiveError, kind
from passatk.archives.harnesses._typed import begin, fatal, whole
from passatk.archives.harnesses._writers import WriteOptions, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.views import view

SUCCESS_TOLERANCE = 1e-6
#: endings tau2-bench leaves out of its metrics (``get_metrics_df``)
EXCLUDED = frozenset({"infrastructure_error"})


def read(file: str, ctx: Context, doc: list) -> None:
    by, pathvals = begin(ctx, file, "pass^k")
    if not isinstance(doc, list) or not doc:
        raise ArchiveError(file, "no trials in the list", path=())
    for i, t in enumerate(doc):
        try:
            if not isinstance(t, dict):
                raise BadRecord(f"trial must be an object, got {kind(t)}")
            task = task_id(require(t, "task_id"))
            reward = finite_number(require(t, "reward"), "reward")
            ctx.add(group_from(by, pathvals, t), task, 1,
                    int(abs(reward - 1.0) <= SUCCESS_TOLERANCE))
        except BadRecord as e:
            ctx.bad(file, e.what, path=(i,))


def write(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    return dump_json(path, [{"task_id": t, "reward": 1.0 if x else 0.0, "trial": j, "info": {},
                             "traj": []} for t, p in zip(tasks, flags, strict=True)
                            for j, x in enumerate(p)])


SPEC = register(FormatSpec(FormatInfo(
    "tau-bench", "tau-bench", "results JSON (list of trials)",
    'JSON list of trials with "task_id" and "reward"',
    "a trial succeeds when |reward - 1| <= 1e-6; n counted per task", "pass^k"),
    kind="document", read=read, write=write,
    probe=lambda doc, file: (isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict)
                             and "reward" in doc[0] and "task_id" in doc[0]),
    aliases=("taubench", "tau_bench"), native_ids=True))


class _Agent(msgspec.Struct):
    llm: str | None = None


class _Environment(msgspec.Struct):
    domain_name: str | None = None


class _Info(msgspec.Struct):
    num_trials: int | None = None
    agent_info: _Agent | None = None
    environment_info: _Environment | None = None


class _Reward(msgspec.Struct):
    reward: float | None = None


class _Trial(msgspec.Struct):
    task_id: str | int
    trial: int | None = None
    termination_reason: str | None = None


class _Simulation(_Trial):
    reward_info: _Reward | None = None


class _IndexEntry(_Trial):  # the "dir" format's ``results.json`` (voice runs)
    reward: float | None = None


class View(msgspec.Struct):  # a whole ``Results`` document; the messages are skipped
    info: _Info
    tasks: msgspec.Raw
    simulations: list[_Simulation] | None = None
    simulation_index: list[_IndexEntry] | None = None


typed_view = whole(View, b'"info"', lambda d: d.simulations is not None
                   or d.simulation_index is not None)


def _trials(doc: dict | View) -> tuple[str, list, type]:
    """Where the trials are: ``simulations``, or the "dir" format's ``simulation_index``."""
    sims, index = (doc.simulations, doc.simulation_index) if isinstance(doc, View) else (
        doc.get("simulations"), doc.get("simulation_index"))
    if isinstance(index, list) and not (isinstance(sims, list) and sims):
        return "simulation_index", index, _IndexEntry
    return "simulations", sims, _Simulation


def _success(sim: _Simulation | _IndexEntry) -> bool:
    reward, where = (sim.reward, ("reward",)) if isinstance(sim, _IndexEntry) else (
        sim.reward_info and sim.reward_info.reward, ("reward_info", "reward"))
    if reward is None:
        return False  # tau2: no reward is no success
    if not math.isfinite(reward):
        raise BadRecord(f"reward must be a finite number, got {reward!r}", where)
    # tau2's is_successful literally: abs(reward - 1) <= 1e-6 differs at 1 - 1e-6 itself
    return (1 - SUCCESS_TOLERANCE) <= reward <= (1 + SUCCESS_TOLERANCE)


def read_tau2(file: str, ctx: Context, doc: dict | View) -> None:
    by, pathvals = begin(ctx, file, "pass^k")
    with fatal(file):
        info = doc.info if isinstance(doc, View) else view(doc["info"], _Info, ("info",))
    extras = (("model", info.agent_info and info.agent_info.llm),
              ("domain", info.environment_info and info.environment_info.domain_name))
    key, trials, typ = _trials(doc)
    endings: Counter = Counter()
    left_out = 0
    for i, raw in enumerate(trials):
        try:
            sim = raw if isinstance(raw, typ) else view(raw, typ)
            if sim.termination_reason in EXCLUDED:
                left_out += 1
                continue
            ok = _success(sim)
            group = group_from(by, pathvals, {"termination_reason": sim.termination_reason,
                                              "trial": sim.trial}, extras, "simulation")
            ctx.add(group, task_id(sim.task_id), 1, int(ok))
            if not ok:
                endings[sim.termination_reason] += 1
        except BadRecord as e:
            ctx.bad(file, e.what, path=(key, i, *(e.path or ())))
    if left_out:
        ctx.notes.append(f"{file}: {left_out} simulation(s) ended infrastructure_error and are "
                         "left out of n, as tau2-bench leaves them out of its metrics")
    if endings:
        shown = ", ".join(f"{r} {k}" for r, k in endings.most_common())
        ctx.notes.append(f"{file}: failed trials by termination_reason: {shown} (by="
                         "termination_reason counts them per group)")


def write_tau2(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    sims = [{"id": f"{t}-{j}", "task_id": str(t), "trial": j, "start_time": "", "end_time": "",
             "duration": 1.0, "termination_reason": "user_stop" if x else "max_steps",
             "reward_info": {"reward": 1.0 if x else 0.0, "reward_basis": ["DB"]}, "messages": []}
            for t, p in zip(tasks, flags, strict=True) for j, x in enumerate(p)]
    return dump_json(path, {"timestamp": "2025-01-01T00:00:00", "info": {
        "git_commit": "0", "num_trials": max((len(p) for p in flags), default=0), "max_steps": 100,
        "max_errors": 10, "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1"},
        "agent_info": {"implementation": "llm_agent", "llm": "model"},
        "environment_info": {"domain_name": "airline"}},
        "tasks": [{"id": str(t)} for t in tasks], "simulations": sims})


TAU2_SPEC = register(FormatSpec(FormatInfo(
    "tau2-bench", "tau2-bench", "results JSON of tau2 run (data/simulations/*.json)",
    'JSON object with "info", "tasks" and a list "simulations" (or "simulation_index")',
    "a trial succeeds when 1 - 1e-6 <= reward_info.reward <= 1 + 1e-6 (none: a failure); "
    "infrastructure_error endings left out of n; groups model, domain", "pass^k"),
    kind="document", read=read_tau2, write=write_tau2, aliases=("tau2", "tau2bench"), priority=1,
    view=typed_view, probe=lambda doc, file: (
        isinstance(doc, dict) and isinstance(doc.get("info"), dict) and "tasks" in doc
        and (isinstance(doc.get("simulations"), list)
             or isinstance(doc.get("simulation_index"), list)))))
