"""The issue-23 readers (tau2-bench Results, Inspect AI logs) against the library floor.

Run:
    python -m pytest bench/test_bench_agent_logs.py -s -p no:randomly

A tau2-bench ``Results`` JSON and an Inspect ``.json`` log of about ``PASSATK_BENCH_AGENT_MB``
(40 by default) with realistic trajectories, and the same Inspect log as ``.eval``: CPU time,
best of 3 interleaved, of ``read_counts`` against (a) a msgspec typed view of the whole file
(``msgspec.json.decode(bytes, type=View)``, the floor the library gives) and (b) ``json.load``
plus a Python walk. No assertion on time: the ratios are printed and recorded in
docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import msgspec
from test_archives_inspect import header, sample, write_eval  # tests/ is on pythonpath
from test_archives_tau2 import results, simulation

from passatk.archives import read_counts

MB = int(os.environ.get("PASSATK_BENCH_AGENT_MB", "40"))


class _Reward(msgspec.Struct):
    reward: float | None = None


class _Sim(msgspec.Struct):
    task_id: str
    reward_info: _Reward | None = None


class _Results(msgspec.Struct):
    simulations: list[_Sim]


class _Score(msgspec.Struct):
    value: str | float | bool | None = None


class _Sample(msgspec.Struct):
    id: str | int
    epoch: int
    scores: dict[str, _Score] | None = None


class _Log(msgspec.Struct):
    samples: list[_Sample]


def _tau2(path: Path) -> None:
    sims, size, t = [], 0, 0
    while size < MB << 20:
        for j in range(4):
            s = simulation(str(t), j, 1.0 if (t + j) % 3 else 0.0, "user_stop")
            s["messages"] = [{"role": "assistant", "content": "word " * 300, "turn_idx": i}
                             for i in range(30)]
            sims.append(s)
        size += 4 * 47_000
        t += 1
    path.write_text(json.dumps(results(sims), indent=2))


def _inspect(path: Path) -> list:
    samples, size, i = [], 0, 0
    while size < MB << 20:
        for e in (1, 2, 3):
            s = sample(i, e, {"match": "C" if (i + e) % 2 else "I"})
            s["messages"] = [{"role": "user", "content": "word " * 300} for _ in range(30)]
            samples.append(s)
        size += 3 * 46_000
        i += 1
    path.write_text(json.dumps({**header(), "samples": samples}, indent=2))
    return samples


def _cpu(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def _tau2_floor(path: Path) -> int:
    r = msgspec.json.decode(path.read_bytes(), type=_Results)
    return sum(1 for s in r.simulations if s.reward_info and abs(s.reward_info.reward - 1) <= 1e-6)


def _tau2_stdlib(path: Path) -> int:
    with open(path) as f:
        doc = json.load(f)
    return sum(1 for s in doc["simulations"] if s["reward_info"]
               and abs(s["reward_info"]["reward"] - 1) <= 1e-6)


def _log_floor(path: Path) -> int:
    return sum(s.scores["match"].value == "C"
               for s in msgspec.json.decode(path.read_bytes(), type=_Log).samples)


def _log_stdlib(path: Path) -> int:
    with open(path) as f:
        return sum(s["scores"]["match"]["value"] == "C" for s in json.load(f)["samples"])


def test_agent_logs_against_the_library_floor(tmp_path):
    tau2, log, zipped = tmp_path / "tau2.json", tmp_path / "log.json", tmp_path / "log.eval"
    _tau2(tau2)
    write_eval(zipped, _inspect(log))
    cases = {
        "tau2-bench Results": (tau2, _tau2_floor, _tau2_stdlib),
        "Inspect .json log": (log, _log_floor, _log_stdlib),
        "Inspect .eval log": (zipped, None, None),
    }
    print()
    for name, (path, floor, stdlib) in cases.items():
        best = {"passatk": [], "floor": [], "stdlib": []}
        for _ in range(3):
            best["passatk"].append(_cpu(lambda p=path: read_counts(p)))
            if floor is not None:
                best["floor"].append(_cpu(lambda p=path, f=floor: f(p)))
                best["stdlib"].append(_cpu(lambda p=path, f=stdlib: f(p)))
        mine = min(best["passatk"])
        line = f"{name}: {path.stat().st_size / 1e6:.0f} MB, read_counts {mine:.2f} s CPU"
        if floor is not None:
            lo, std = min(best["floor"]), min(best["stdlib"])
            line += (f"; msgspec typed view {lo:.2f} s (read_counts / floor {mine / lo:.1f}x);"
                     f" json.load + walk {std:.2f} s (read_counts / stdlib {mine / std:.1f}x)")
        print(line)
