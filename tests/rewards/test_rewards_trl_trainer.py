"""A real ``trl.GRPOTrainer`` step on CPU with our reward functions (tiny random model, offline)."""

from __future__ import annotations

import json
import os

import pytest

from crystalbench.encoders import HashEncoder
from crystalbench.rewards import CrystalReward, RewardScorer, trl_reward_funcs

pytestmark = pytest.mark.slow


def tiny_tokenizer():
    """A byte-level tokenizer with no merges (every byte is a token), built offline."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {char: index for index, char in enumerate(sorted(alphabet))}
    for special in ("<|endoftext|>", "<|im_start|>", "<|im_end|>"):
        vocab[special] = len(vocab)
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    return tokenizer


class RecordingReward(CrystalReward):
    """Our reward function, remembering how the trainer called it."""

    calls: list[dict[str, object]]

    def __call__(self, prompts=None, completions=None, completion_ids=None, **kwargs):
        out = super().__call__(prompts, completions, completion_ids, **kwargs)
        self.calls.append(
            {
                "prompts": prompts,
                "completions": completions,
                "ids": completion_ids,
                "kwargs": kwargs,
                "out": out,
            }
        )
        return out


def test_grpo_trainer_step_with_crystal_rewards(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("WANDB_DISABLED", "true")
    from datasets import Dataset
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = tiny_tokenizer()
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    model = Qwen2ForCausalLM(config)
    scorer = RewardScorer(HashEncoder())
    answer_part, step_part = (
        RecordingReward(scorer, kind, log_metrics=(kind == "cpr_answer"))
        for kind in ("cpr_answer", "cpr_reasoning")
    )
    answer_part.calls, step_part.calls = [], []
    dataset = Dataset.from_dict(
        {
            "prompt": ["2 + 2 = ?", "3 + 4 = ?"],
            "answer": ["4", "7"],
            "answer_type": ["numeric", "numeric"],
            "reference_steps": [["Add 2 and 2.", "The sum is 4."], ["Add 3 and 4.", "It is 7."]],
            "source": ["toy", "toy"],
        }
    )
    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        activation_checkpointing=False,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=8,
        max_steps=1,
        learning_rate=0.1,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[answer_part, step_part],
        args=args,
        train_dataset=dataset,
    )
    trainer.train()

    assert answer_part.calls
    assert step_part.calls
    call = answer_part.calls[0]
    assert len(call["completions"]) == 4  # type: ignore[arg-type]
    assert all(isinstance(c, str) for c in call["completions"])  # type: ignore[union-attr]
    kwargs = call["kwargs"]
    assert {"answer", "reference_steps", "source", "trainer_state", "log_metric"} <= set(kwargs)  # type: ignore[arg-type]
    assert all(isinstance(r, float) for r in call["out"])  # type: ignore[union-attr]
    # Random weights write random bytes: nothing parses, every reward is 0, nothing crashes.
    assert call["out"] == [0.0] * 4
    logged = {key for entry in trainer.state.log_history for key in entry}
    assert "rewards/crystal_cpr_answer/mean" in logged
    assert "rewards/crystal_cpr_reasoning/mean" in logged
    assert "crystal/format" in logged
    assert os.environ.get("HF_HUB_OFFLINE") == "1"


def test_trl_reward_funcs_names_are_distinct():
    funcs = trl_reward_funcs(RewardScorer(HashEncoder()), ["format", "answer", "step_f1"])
    assert [f.__name__ for f in funcs] == ["crystal_format", "crystal_answer", "crystal_step_f1"]
    assert json.dumps([f.__name__ for f in funcs])
