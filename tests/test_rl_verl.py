"""passatk.rl.verl against the real, installed verl (``pip install --no-deps verl``).

verl's package imports ray at module level (``verl.protocol``) but the functions used here never
call it, so a stand-in ``ray`` module goes into ``sys.modules`` when ray is absent (and onto the
path of the fresh interpreters). ``compute_advantage`` (ray_trainer.py) and
``_val_metrics_update`` (v1/trainer_base.py) need torchdata/ray to import, so they are taken
verbatim from the installed source with ``ast`` and run with verl's own ``DataProto``,
``core_algos`` and config types.
"""

import ast
import importlib.util
import os
import subprocess
import sys
import textwrap
import types
import uuid
from pathlib import Path

import numpy as np
import pytest
import tomllib

from passatk import rl

torch = pytest.importorskip("torch", reason="verl needs torch; torch is not installed")
for _name in ("verl", "omegaconf", "tensordict", "codetiming", "transformers"):
    if importlib.util.find_spec(_name) is None:
        pytest.skip(f"{_name} is not installed (pip install --no-deps verl==0.9.1 and the "
                    "packages it imports, see .ci/run)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
RAY_STANDIN = '''\
"""A stand-in for ray: verl.protocol imports it; nothing used here calls it."""
class ObjectRef:
    pass
def _absent(*args, **kwargs):
    raise RuntimeError("ray is not installed; this is the tests' stand-in")
get = put = remote = init = wait = _absent
def is_initialized():
    return False
'''


REAL_RAY = "ray" in sys.modules or importlib.util.find_spec("ray") is not None


def _install_ray_standin():
    if REAL_RAY:
        return
    ray = types.ModuleType("ray")
    exec(RAY_STANDIN, ray.__dict__)
    sys.modules["ray"] = ray


_install_ray_standin()
import verl  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.trainer.config import AlgoConfig  # noqa: E402
from verl.trainer.ppo import core_algos  # noqa: E402
from verl.utils.config import omega_conf_to_dataclass  # noqa: E402

VERL = Path(verl.__file__).parent


def verl_source_functions(relpath, names, namespace):
    """Functions ``names`` of the installed verl file ``relpath``, verbatim, in ``namespace``."""
    path = VERL / relpath
    tree = ast.parse(path.read_text())
    found = [node for node in ast.walk(tree)
             if isinstance(node, ast.FunctionDef) and node.name in names]
    assert sorted({f.name for f in found}) == sorted(names), f"{relpath} changed"
    exec(compile(ast.Module(body=found, type_ignores=[]), str(path), "exec"), namespace)
    return [namespace[name] for name in names]


_NS = {"DataProto": DataProto, "AdvantageEstimator": core_algos.AdvantageEstimator,
       "core_algos": core_algos, "Optional": __import__("typing").Optional,
       "AlgoConfig": AlgoConfig, "torch": torch, "np": np}
compute_advantage, compute_response_mask = verl_source_functions(
    "trainer/ppo/ray_trainer.py", ["compute_advantage", "compute_response_mask"], _NS)
ALGO = OmegaConf.load(VERL / "trainer" / "config" / "_generated_ppo_trainer.yaml").algorithm


@pytest.fixture(scope="module", autouse=True)
def registered():
    """passatk's defaults in verl's registry, as the plugin leaves it; restored afterwards."""
    registry = core_algos.ADV_ESTIMATOR_REGISTRY
    saved = dict(registry)
    for name in [n for n in registry if n.startswith(("passatk_", "mine_", "my_"))]:
        del registry[name]
    yield rl.verl.register()
    registry.clear()
    registry.update(saved)


def verl_batch(sizes=(4,) * 8, length=24, seed=0, shuffle=True, kind="binary"):
    """A verl rollout batch: the score on each rollout's last valid token, uuid uids."""
    rng = np.random.default_rng(seed)
    bs = sum(sizes)
    lengths = rng.integers(1, length + 1, bs)
    mask = torch.tensor((np.arange(length)[None] < lengths[:, None]).astype(np.int64))
    score = rng.random(bs) if kind == "continuous" else (rng.random(bs) < 0.4).astype(float)
    rewards = torch.zeros(bs, length)
    rewards[torch.arange(bs), torch.tensor(lengths - 1)] = torch.tensor(score, dtype=torch.float32)
    uid = np.repeat(np.array([str(uuid.uuid4()) for _ in sizes], dtype=object), sizes)
    perm = rng.permutation(bs) if shuffle else np.arange(bs)
    return DataProto.from_dict(
        tensors={"token_level_rewards": rewards[perm], "response_mask": mask[perm]},
        non_tensors={"uid": uid[perm]})


def run_verl(data, name, config=ALGO, num_repeat=4):
    """verl's compute_advantage, as the trainer calls it."""
    cfg = OmegaConf.merge(config, {"adv_estimator": name}) if isinstance(config, type(ALGO)) \
        else config
    out = compute_advantage(data, adv_estimator=name, gamma=1.0, lam=1.0, num_repeat=num_repeat,
                            norm_adv_by_std_in_grpo=cfg.get("norm_adv_by_std_in_grpo", True),
                            config=cfg)
    return out.batch["advantages"], out.batch["returns"], out.batch["response_mask"]


def per_rollout(data, k, estimator, **options):
    scores = data.batch["token_level_rewards"].sum(-1)
    return rl.advantages(scores, data.non_tensor_batch["uid"], k=k, estimator=estimator,
                         **options)


@pytest.mark.parametrize("estimator", sorted(rl.verl.ESTIMATORS))
def test_every_estimator_through_verls_compute_advantage(estimator):
    base = "passatk_" + estimator.replace("-", "_")
    names = [base + "_k3"] if estimator == "pkpo-loo" else [base, base + "_k2", base + "_k4"]
    for name in names:
        data = verl_batch(seed=len(name))
        adv, ret, mask = run_verl(data, name)
        k = int(name.rpartition("_k")[2]) if "_k" in name else "n"
        want = per_rollout(data, k, estimator)
        assert adv.dtype == torch.float32 and adv.shape == mask.shape and ret is adv
        assert torch.equal(adv, want[:, None] * mask)
        assert bool((adv[mask == 0] == 0).all())


def test_grpo_passk_agrees_with_verls_function_on_ragged_shuffled_groups():
    """Ragged groups (multi-turn agent loops): each group at its own n, as verl's grpo_passk."""
    for seed, kind in ((1, "binary"), (2, "continuous"), (3, "binary")):
        for std in (True, False):
            config = OmegaConf.merge(ALGO, {"norm_adv_by_std_in_grpo": std})
            data = verl_batch(sizes=(8, 7, 5, 2, 16, 3), seed=seed, kind=kind)
            ours, _, _ = run_verl(data.select_idxs(np.arange(len(data))), "passatk_grpo_passk",
                                  config, num_repeat=8)
            theirs, _, _ = run_verl(data, "grpo_passk", config, num_repeat=8)
            if std:  # verl's float32 arithmetic rounds off by 1 ulp in places
                np.testing.assert_array_max_ulp(ours.numpy(), theirs.numpy(), maxulp=1)
            else:
                assert torch.equal(ours, theirs)


def test_with_verls_typed_algo_config():
    config = omega_conf_to_dataclass(OmegaConf.merge(ALGO, {"adv_estimator": "grpo_passk"}))
    assert isinstance(config, AlgoConfig)
    data = verl_batch(seed=5)
    ours, _, _ = run_verl(data.select_idxs(np.arange(len(data))), "passatk_grpo_passk", config)
    theirs, _, _ = run_verl(data, "grpo_passk", config)
    np.testing.assert_array_max_ulp(ours.numpy(), theirs.numpy(), maxulp=1)
    adv, _, mask = run_verl(data, "passatk_pkpo_loo1_k2", config)
    assert torch.equal(adv, per_rollout(data, 2, "pkpo-loo1")[:, None] * mask)


def test_options_from_verls_algorithm_passatk_section():
    data = verl_batch(sizes=(4, 4, 1), seed=6, shuffle=False)
    data.batch["token_level_rewards"][2, 0] = float("nan")
    config = OmegaConf.merge(ALGO, {"passatk": {"k": 2, "nan": "drop", "short_groups": "zero",
                                                "normalize": "group-std"}})
    adv, _, mask = run_verl(data, "passatk_maxk_training", config)
    want = per_rollout(data, 2, "maxk-training", nan="drop", short_groups="zero",
                       normalize="group-std")
    assert torch.isnan(want[2]) and not torch.isnan(adv).any()
    assert torch.equal(adv, torch.nan_to_num(want, nan=0.0)[:, None] * mask)
    assert bool((adv[8] == 0).all())  # the group of one: short_groups="zero"
    with pytest.raises(ValueError, match=r"scores\[2\] is NaN.*algorithm.passatk.nan=drop"):
        run_verl(data, "passatk_maxk_training")
    with pytest.raises(ValueError, match=r"k=4 bound .* algorithm\.passatk\.k is 2"):
        run_verl(data, "passatk_maxk_training_k4", config)
    with pytest.raises(ValueError, match=r"k='n' is not possible.*\+algorithm\.passatk\.k"):
        run_verl(data, "passatk_pkpo_loo")
    with pytest.raises(ValueError, match=r"has n=1 .*short_groups=zero\)$"):
        run_verl(verl_batch(sizes=(4, 1), seed=6), "passatk_pkpo_loo1_k2")
    bad = OmegaConf.merge(ALGO, {"passatk": {"normalise": "group-std"}})
    with pytest.raises(ValueError, match=r"algorithm\.passatk\.normalise is not an option"):
        run_verl(data, "passatk_pkpo", bad)


def test_unknown_keyword_arguments_are_errors():
    data = verl_batch(seed=7)
    fn = core_algos.get_adv_estimator_fn("passatk_pkpo_loo1")
    args = {"token_level_rewards": data.batch["token_level_rewards"],
            "response_mask": data.batch["response_mask"], "index": data.non_tensor_batch["uid"]}
    with pytest.raises(TypeError, match="normalise"):
        fn(**args, normalise="group-std")
    adv, _ = fn(**args, reward_baselines=torch.zeros(len(data)))  # verl may pass it: ignored
    assert torch.equal(adv, fn(**args)[0])
    with pytest.raises(ValueError, match="nan must be one of"):
        rl.verl.make_estimator("pkpo", nan="zero")


def test_empty_batch_and_k_n():
    data = verl_batch(sizes=(), seed=8)
    adv, _, _ = run_verl(data, "passatk_grpo_passk")
    assert adv.shape == (0, 24) and adv.dtype == torch.float32
    theirs, _, _ = run_verl(verl_batch(sizes=(), seed=8), "grpo_passk")
    assert theirs.shape == adv.shape


def test_registration_is_idempotent_and_refuses_a_different_function(registered):
    assert "passatk_pkpo_loo1_k4" in registered and "passatk_grpo_passk" in registered
    assert rl.verl.register() == registered
    import passatk.rl.verl_plugin as plugin

    assert list(plugin.REGISTERED) == registered
    before = dict(core_algos.ADV_ESTIMATOR_REGISTRY)
    with pytest.raises(ValueError, match="already has an advantage estimator named "
                                         "'passatk_pkpo'"):
        rl.verl.register(k=4)
    assert core_algos.ADV_ESTIMATOR_REGISTRY == before  # nothing half-registered
    assert rl.verl.register(k=4, prefix="mine_", estimators=["pkpo"]) == ["mine_pkpo"]
    assert core_algos.get_adv_estimator_fn("mine_pkpo").k == 4


def _fresh_interpreter(tmp_path, env_extra):
    (tmp_path / "ray.py").write_text(RAY_STANDIN)
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tmp_path), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    code = ("from verl.trainer.ppo import core_algos as ca\n"
            "names = sorted(n for n in ca.ADV_ESTIMATOR_REGISTRY if n.startswith('passatk_'))\n"
            "print(len(names), *names[:3], ca.get_adv_estimator_fn('passatk_pkpo_loo1_k4').k)")
    if REAL_RAY:
        (tmp_path / "ray.py").unlink()  # the real ray is there: use it
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def _expected():
    names = sorted(rl.verl.names())
    return [str(len(names)), *names[:3], "4"]


@pytest.mark.slow
def test_a_fresh_interpreter_sees_the_estimators_through_the_entry_point(tmp_path):
    """The entry point exactly as pyproject.toml declares it, installed as metadata."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    plugins = project["entry-points"]["verl.plugins"]
    assert plugins == {"passatk": "passatk.rl.verl_plugin"}
    info = tmp_path / "passatk_entry_point_probe-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: passatk-entry-point-probe\n"
                                   "Version: 0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in plugins.items())
    (info / "entry_points.txt").write_text("[verl.plugins]\n" + lines)
    env = {"VERL_USE_EXTERNAL_MODULES": "", "VERL_USE_EXTERNAL_PLUGINS": "auto"}
    assert _fresh_interpreter(tmp_path, env) == _expected()


@pytest.mark.slow
def test_a_fresh_interpreter_sees_the_estimators_through_verl_use_external_modules(tmp_path):
    env = {"VERL_USE_EXTERNAL_MODULES": "passatk.rl.verl_plugin",
           "VERL_USE_EXTERNAL_PLUGINS": "none"}
    assert _fresh_interpreter(tmp_path, env) == _expected()


def test_docs_recipe_plugin_module(tmp_path):
    """docs/advantages.md's one-line plugin module for a k of one's own."""
    code = textwrap.dedent(_docs_block("advantages.md", "verl-own-plugin"))
    ns = {}
    exec(compile(code, "docs/advantages.md", "exec"), ns)
    fn = core_algos.get_adv_estimator_fn("my_pkpo_loo1")
    assert fn.k == 6 and fn.normalize == "group-std"


def _docs_block(doc, label):
    """The fenced block after ``<!-- recipe: label -->`` in docs/<doc>."""
    text = (ROOT / "docs" / doc).read_text()
    marker = f"<!-- recipe: {label} -->"
    assert marker in text, f"docs/{doc} has no recipe {label!r}"
    block = text.split(marker, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    return block
