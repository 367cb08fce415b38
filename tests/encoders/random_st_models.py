"""Randomly initialised sentence-transformers folders built offline, for tests and benchmarks.

The model hub is unreachable here, so the paper's encoder (``all-distilroberta-v1``: a
6-layer RoBERTa, mean pooling, L2 normalisation) cannot be downloaded. This builds a folder
of the same architecture with random weights: a byte-level BPE tokenizer trained on the
given texts (``tokenizers``; RoBERTa's special tokens and post-processor, no
``token_type_ids``, pad id 1), a ``RobertaModel`` from a config, and the modules
``Transformer -> Pooling(mean) -> Normalize``. Its vectors mean nothing, but every code
path (tokenisation, the RoBERTa position ids, padding, ONNX export, the torch-free run path)
is the real model's.

``build_random_roberta(folder, texts, size="distilroberta")`` is the full-size copy (82 M
parameters, for start-up and speed measurements); ``size="small"`` (2 layers of width 64)
keeps tests fast. Building needs torch, transformers and sentence-transformers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

SPECIAL = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")

SIZES: dict[str, dict[str, int]] = {
    # all-distilroberta-v1's transformer (distilroberta-base).
    "distilroberta": {
        "hidden_size": 768,
        "num_hidden_layers": 6,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "vocab_size": 50265,
    },
    "small": {
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 128,
        "vocab_size": 2000,
    },
}
MAX_SEQ_LENGTH = 512
"""all-distilroberta-v1's ``max_seq_length``."""


def build_random_roberta(
    folder: str | Path, texts: Iterable[str], *, size: str = "small", seed: int = 0
) -> Path:
    """Write a random-weight RoBERTa sentence-transformers model into ``folder``.

    Args:
        folder: Created (or overwritten) with the model's files.
        texts: Corpus for the tokenizer's BPE merges (a few thousand sentences suffice).
        size: ``"distilroberta"`` (all-distilroberta-v1's shape) or ``"small"``.
        seed: Seed of the weights (the same seed gives the same vectors).

    Returns:
        The folder.
    """
    import torch
    from sentence_transformers import SentenceTransformer, models
    from tokenizers import Tokenizer, decoders, pre_tokenizers, processors, trainers
    from tokenizers import models as tok_models
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizerFast

    shape = SIZES[size]
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    backend = Tokenizer(tok_models.BPE(unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=min(shape["vocab_size"], 8000),
        special_tokens=list(SPECIAL),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(list(texts), trainer=trainer)
    backend.post_processor = processors.RobertaProcessing(
        ("</s>", backend.token_to_id("</s>")), ("<s>", backend.token_to_id("<s>"))
    )
    tokenizer = RobertaTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        model_max_length=MAX_SEQ_LENGTH,
    )
    config = RobertaConfig(
        **shape,
        max_position_embeddings=MAX_SEQ_LENGTH + 2,
        type_vocab_size=1,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
    )
    torch.manual_seed(seed)
    hf_folder = folder / "_hf"
    RobertaModel(config).eval().save_pretrained(str(hf_folder))
    tokenizer.save_pretrained(str(hf_folder))
    transformer = models.Transformer(str(hf_folder), max_seq_length=MAX_SEQ_LENGTH)
    pooling = models.Pooling(shape["hidden_size"], pooling_mode="mean")
    model = SentenceTransformer(modules=[transformer, pooling, models.Normalize()], device="cpu")
    model.save(str(folder))
    for path in sorted(hf_folder.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    hf_folder.rmdir()
    (folder / "crystalbench-random-model.json").write_text(
        json.dumps({"architecture": "RobertaModel", "size": size, "seed": seed}, indent=2),
        encoding="utf-8",
    )
    return folder
