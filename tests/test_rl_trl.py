"""passatk.rl.trl with the real TRL GRPOTrainer: a tiny random Llama, an in-memory tokenizer, CPU.

No download: the model is randomly initialised and the tokenizer is a word-level one built here.
The run is docs/rl.md's TRL recipe, executed as written.
"""

import importlib.util
import math
from pathlib import Path

import pytest

from passatk import rl

torch = pytest.importorskip("torch", reason="TRL needs torch; torch is not installed")
for _name in ("trl", "transformers", "datasets", "accelerate"):
    if importlib.util.find_spec(_name) is None:
        pytest.skip(f"{_name} is not installed (pip install --no-deps trl==1.16.0 ..., see "
                    ".ci/run)", allow_module_level=True)

from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast  # noqa: E402
from trl import GRPOConfig  # noqa: E402

from passatk.rl import trl as passatk_trl  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["<pad>", "<eos>", "<bos>", "<unk>"] + [str(i) for i in range(10)] + list("abcdefgh")


def tiny_model_and_tokenizer():
    torch.manual_seed(0)
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>",
                                        eos_token="<eos>", bos_token="<bos>", unk_token="<unk>")
    config = LlamaConfig(vocab_size=len(WORDS), hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=32, pad_token_id=0, eos_token_id=1,
                         bos_token_id=2)
    return LlamaForCausalLM(config), tokenizer


def docs_block(doc, label):
    text = (ROOT / "docs" / doc).read_text()
    marker = f"<!-- recipe: {label} -->"
    assert marker in text, f"docs/{doc} has no recipe {label!r}"
    return text.split(marker, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


def record_steps(monkeypatch):
    """Keep what each step's _generate_and_score_completions returned, and the rewards."""
    steps = []
    inner = passatk_trl.PassAtKMixin._generate_and_score_completions

    def recorded(self, inputs):
        out = inner(self, inputs)
        steps.append((self.passatk_rewards.clone(), out["advantages"].clone()))
        return out

    monkeypatch.setattr(passatk_trl.PassAtKMixin, "_generate_and_score_completions", recorded)
    return steps


def has_seven(completions, **kwargs):
    """A verifiable 0/1 reward; None (unscorable) for the last completion of every prompt."""
    return [None if i % 4 == 3 else float("7" in c) for i, c in enumerate(completions)]


@pytest.mark.slow
def test_grpo_trainer_logs_passatk_metrics_and_uses_its_advantages(tmp_path, monkeypatch):
    model, tokenizer = tiny_model_and_tokenizer()
    train = Dataset.from_dict({"prompt": [f"{a} {b}" for a in "abcd" for b in "efgh"]})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=8, num_generations=4,
                      max_completion_length=4, max_steps=2, logging_steps=1, report_to=[],
                      use_cpu=True, learning_rate=1e-3, beta=0.0, scale_rewards="none",
                      temperature=2.0, save_strategy="no", seed=0, dataloader_num_workers=0)
    steps = record_steps(monkeypatch)
    ns = {"model": model, "tokenizer": tokenizer, "has_seven": has_seven, "train": train,
          "args": args}
    exec(compile(docs_block("rl.md", "trl-trainer"), "docs/rl.md", "exec"), ns)
    trainer = ns["trainer"]
    assert type(trainer).__mro__[1] is passatk_trl.PassAtKMixin
    logs = [rec for rec in trainer.state.log_history if "passatk/pass@1" in rec]
    assert len(logs) == 2 and len(steps) == 2
    for rec, (rewards, adv) in zip(logs, steps, strict=True):
        assert math.isfinite(rec["grad_norm"]), rec
        assert rewards.shape == (2, 4) and bool(torch.isnan(rewards[:, 3]).all())
        # one unscorable completion per prompt: pass@1 over prompts is TRL's own mean reward
        assert rec["passatk/pass@1"] == pytest.approx(rec["reward"], abs=1e-6)
        res = rl.group_metrics(rewards, k=[1, 2, 4], metrics=["pass@k", "pass^k"],
                               short_groups="exclude")
        for name in ("pass@2", "pass^2"):
            assert rec[f"passatk/{name}"] == pytest.approx(res.mean[name], abs=1e-12)
        assert rec["passatk/pass@4"] is None  # n = 3 scored < 4: NaN, which TRL logs as None
        want = rl.advantages(rewards, k=2, estimator="pkpo-loo1")
        assert bool(torch.isnan(want[:, 3]).all())
        assert torch.equal(adv, torch.nan_to_num(want, nan=0.0).reshape(-1).to(adv.dtype))
        assert bool(torch.isfinite(adv).all()) and bool((adv[3::4] == 0).all())


def test_mixin_checks_its_options_and_trls_methods():
    class NotGRPO(passatk_trl.PassAtKMixin):
        pass

    with pytest.raises(TypeError, match=r"needs trl\.GRPOTrainer\._calculate_rewards"):
        NotGRPO()
    with pytest.raises(ValueError, match="estimator must be one of"):
        passatk_trl.PassAtKGRPOTrainer(model=None, passatk_advantages="grpo")
    with pytest.raises(ValueError, match="k='n' is not possible"):
        passatk_trl.PassAtKGRPOTrainer(model=None, passatk_advantages="pkpo-loo")


def test_docs_advantages_trl_function_gives_finite_advantages():
    ns = {}
    exec(compile(docs_block("advantages.md", "trl-function"), "docs/advantages.md", "exec"), ns)
    rewards = torch.tensor([1.0, 0.0, float("nan"), 0.0, float("nan"), float("nan"), 1.0, 0.0])
    adv = ns["passk_advantages"](rewards, 4, 2)
    assert adv.dtype == torch.float32 and bool(torch.isfinite(adv).all())
    want = rl.advantages(rewards.view(2, 4), k=2)
    assert torch.equal(adv[:2], want[0, :2]) and adv[2] == 0 and adv[4] == 0 and adv[5] == 0
    assert torch.equal(adv[6:], want[1, 2:])


def test_mixin_logging_with_a_threshold_budgets_and_short_groups():
    """_passatk_log on its own: continuous rewards with a threshold, chosen budgets, and the
    fraction of prompts too short for the advantages' k."""
    from collections import defaultdict

    class Holder:
        passatk_k = (1, 3)
        passatk_metrics = ("pass@k",)
        passatk_threshold = 0.5
        passatk_prefix = "p/"
        passatk_advantages = "pkpo-loo1"
        passatk_advantages_k = 3

    nan = float("nan")
    dense = torch.tensor([[0.9, 0.2, 0.6, nan], [0.1, nan, nan, 0.7], [0.4, 0.3, 0.2, 0.1]])
    metrics = defaultdict(list)
    passatk_trl.PassAtKMixin._passatk_log(Holder(), dense, metrics)
    res = rl.group_metrics(dense, k=[1, 3], metrics=["pass@k"], threshold=0.5,
                           short_groups="exclude")
    assert metrics["p/pass@1"] == [res.mean["pass@1"]] and metrics["p/pass@3"] == [
        res.mean["pass@3"]]
    assert metrics["p/short_groups"] == [pytest.approx(1 / 3)]
