"""rl.verl.validation_metrics against the installed verl: its own _val_metrics_update and
process_validation_metrics (bootstrap) agree with the drop-in."""

import importlib.util
import sys
import types

import numpy as np
import pytest

from passatk import rl

pytest.importorskip("torch", reason="verl needs torch; torch is not installed")
for _name in ("verl", "omegaconf", "tensordict", "codetiming", "transformers"):
    if importlib.util.find_spec(_name) is None:
        pytest.skip(f"{_name} is not installed (pip install --no-deps verl==0.9.1 and the "
                    "packages it imports, see .ci/run)", allow_module_level=True)

import test_rl_verl as V  # noqa: E402 (the ray stand-in and the verbatim-source helper)
from verl.trainer.ppo import metric_utils  # noqa: E402


def val_update_with(pvm):
    """verl 0.9's trainer method, verbatim from the installed source, with ``pvm`` inside."""
    ns = {"np": np, "process_validation_metrics": pvm}
    (fn,) = V.verl_source_functions("trainer/ppo/v1/trainer_base.py", ["_val_metrics_update"], ns)
    return fn


def batch(prompts=12, n=8, seed=0, kind="binary", sources=("math", "code"), holes=False):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.4, 0.6, prompts)
    data_sources, uids, acc, score, pred = [], [], [], [], []
    for q in range(prompts):
        for _ in range(n if not holes else int(rng.integers(1, n + 1))):
            data_sources.append(sources[q % len(sources)])
            uids.append(f"uid-{q}")
            hit = bool(rng.random() < p[q])
            acc.append(float(hit) if kind == "binary" else float(rng.random()))
            score.append(float(hit) - (rng.random() < 0.1))  # a format penalty now and then
            pred.append("right" if hit else str(int(rng.integers(0, 3))))
    return data_sources, uids, {"acc": acc, "score": score, "pred": pred}


@pytest.mark.parametrize("holes", [False, True])
def test_drop_in_passes_through_verls_val_metrics_update(holes):
    ds, uids, infos = batch(seed=1, holes=holes)
    theirs = val_update_with(metric_utils.process_validation_metrics)(None, ds, uids, infos, [])
    ours = val_update_with(rl.verl.validation_metrics)(None, ds, uids, infos, [])
    assert list(ours) == list(theirs) or sorted(ours) == sorted(theirs)
    assert any(key.startswith("val-core/math/acc/best@") for key in ours)
    for key, value in ours.items():
        if "mean@" in key or "std@" in key:
            assert value == pytest.approx(theirs[key], rel=1e-13, abs=1e-15), key


def test_agrees_with_the_bootstrap_within_its_error():
    """z over verl's 1,000 draws, bounded with the exact per-prompt bootstrap std (the same
    seed for every prompt makes the errors correlated; the mean of the stds bounds that)."""
    for kind, n in (("binary", 4), ("binary", 16), ("continuous", 8)):
        ds, uids, infos = batch(prompts=10, n=n, seed=n, kind=kind, sources=("s",))
        theirs = metric_utils.process_validation_metrics(ds, uids, infos)["s"]
        ours = rl.verl.validation_metrics(ds, uids, infos)["s"]
        assert sorted(ours) == sorted(theirs)
        for var in ours:
            assert sorted(ours[var]) == sorted(theirs[var]), var
            for key, value in ours[var].items():
                if key.endswith("/mean"):
                    spread = ours[var][key.replace("/mean", "/std")] / np.sqrt(1000)
                    assert abs(value - theirs[var][key]) <= 4.5 * spread + 1e-12, (kind, var, key)
                elif key.endswith("/std"):
                    assert abs(value - theirs[var][key]) <= 0.15 * value + 1e-12, (var, key)
                else:
                    assert value == pytest.approx(theirs[var][key], rel=1e-13, abs=1e-15)


def test_none_answers_follow_verl_09_by_default():
    """The audit's example: q1 has one None pred, so verl 0.9.1 gives it no maj@k."""
    ds = ["d"] * 8
    uids = ["q1"] * 4 + ["q2"] * 4
    infos = {"acc": [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
             "pred": ["7", None, "5", "5", "12", "3", "3", "3"]}
    theirs = metric_utils.process_validation_metrics(ds, uids, infos)["d"]["acc"]
    ours = rl.verl.validation_metrics(ds, uids, infos)["d"]["acc"]
    assert sorted(ours) == sorted(theirs)
    assert ours["maj@4/mean"] == rl.group_metrics(
        [1, 0, 0, 0], k=4, metrics=["maj@k"], answers=["12", "3", "3", "3"],
        estimator="verl").values["maj@4"][0]
    old = rl.verl.validation_metrics(ds, uids, infos, none_answers="vote")["d"]["acc"]
    vote = rl.group_metrics(infos["acc"], uids, k=4, metrics=["maj@k"], answers=infos["pred"],
                            estimator="verl", none_answers="vote")
    assert old["maj@4/mean"] == pytest.approx(vote.mean["maj@4"], abs=1e-15)
    unbiased = rl.verl.validation_metrics(ds, uids, infos, estimator="unbiased")["d"]["acc"]
    assert "best@4/std" not in unbiased and unbiased["best@4/mean"] == 1.0


def test_expected_acc_counts_and_bad_input():
    ds, uids, infos = ["d"] * 3, ["a", "a", "b"], {"acc": [1.0, None, 1.0]}
    expected = {("d", "a"): 3, ("d", "b"): 2}
    theirs = metric_utils.process_validation_metrics(ds, uids, infos, expected_acc_counts=expected)
    ours = rl.verl.validation_metrics(ds, uids, infos, expected_acc_counts=expected)
    assert sorted(ours["d"]) == sorted(theirs["d"]) == ["acc", "acc_success_only"]
    for var in ours["d"]:
        for key, value in ours["d"][var].items():
            if "/" not in key:
                assert value == pytest.approx(theirs["d"][var][key], abs=1e-15), (var, key)
    with pytest.raises(ValueError, match=r"infos_dict\['acc'\] has 2 values"):
        rl.verl.validation_metrics(ds, uids, {"acc": [1.0, 0.0]})
    with pytest.raises(TypeError, match=r"infos_dict\['acc'\] of data source 'd'"):
        rl.verl.validation_metrics(ds, uids, {"acc": [1.0, [0.0], 1.0]})


def test_no_global_rng_is_touched():
    ds, uids, infos = batch(seed=4)
    state = np.random.get_state()[1].copy()  # noqa: NPY002 (the global RNG)
    rl.verl.validation_metrics(ds, uids, infos)
    assert np.array_equal(np.random.get_state()[1], state)  # noqa: NPY002


def test_docs_recipe_validate_in_verl(monkeypatch):
    """docs/rl.md's recipe rebinds the function verl's trainer module calls. The trainer
    module needs ray and torchdata, so a stand-in holds verl's verbatim _val_metrics_update
    in its own globals, as the real module does."""
    trainer_base = types.ModuleType("verl.trainer.ppo.v1.trainer_base")
    trainer_base.np = np
    trainer_base.process_validation_metrics = metric_utils.process_validation_metrics
    V.verl_source_functions("trainer/ppo/v1/trainer_base.py", ["_val_metrics_update"],
                            trainer_base.__dict__)
    v1 = types.ModuleType("verl.trainer.ppo.v1")  # the real package imports ray and torchdata
    v1.trainer_base = trainer_base
    monkeypatch.setitem(sys.modules, "verl.trainer.ppo.v1", v1)
    monkeypatch.setitem(sys.modules, "verl.trainer.ppo.v1.trainer_base", trainer_base)
    exec(compile(V._docs_block("rl.md", "verl-validation"), "docs/rl.md", "exec"), {})
    ds, uids, infos = batch(seed=5)
    state = np.random.get_state()[1].copy()  # noqa: NPY002 (the global RNG)
    got = trainer_base._val_metrics_update(None, ds, uids, infos, [])
    assert np.array_equal(np.random.get_state()[1], state)  # noqa: NPY002 (verl reseeds)
    direct = val_update_with(rl.verl.validation_metrics)(None, ds, uids, infos, [])
    assert got == direct and "val-core/math/acc/best@8/mean" in got


def test_verls_rules_for_none_values_strings_and_sources():
    """The same keys as verl, source by source and variable by variable: None values left out
    (a prompt can lose its maj@k), string variables skipped, prompts of different sizes."""
    rng = np.random.default_rng(12)
    ds, uids, infos = batch(prompts=9, n=6, seed=12, sources=("a", "b", "c"), holes=True)
    size = len(ds)
    infos["acc"] = [None if rng.random() < 0.1 else v for v in infos["acc"]]
    infos["pred"] = [None if rng.random() < 0.05 else v for v in infos["pred"]]
    infos["note"] = ["text"] * size  # a string variable: no metrics
    infos["flag"] = [bool(v) for v in rng.random(size) < 0.5]
    theirs = metric_utils.process_validation_metrics(ds, uids, infos)
    ours = rl.verl.validation_metrics(ds, uids, infos)
    assert list(ours) == list(theirs)
    for source in ours:
        assert sorted(ours[source]) == sorted(theirs[source]), source
        assert "note" not in ours[source]
        for var in ours[source]:
            assert sorted(ours[source][var]) == sorted(theirs[source][var]), (source, var)
            for key, value in ours[source][var].items():
                if "/" not in key:
                    assert value == pytest.approx(theirs[source][var][key], rel=1e-13,
                                                  abs=1e-15), (source, var, key)
