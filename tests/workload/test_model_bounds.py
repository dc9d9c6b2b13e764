"""A config.json's sizes within reason: a model of 10**12 layers is refused at once, not read layer by layer."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.workload import from_hf_config, load_model

LLAMA = {
    "model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
    "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 8192,
}  # fmt: skip


@contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail, rather than hang, where the block takes longer than `seconds`."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(
    ("model_type", "key"),
    [("llama", "num_hidden_layers"), ("gpt2", "n_layer"), ("mpt", "n_layers"), ("deepseek_v3", "num_hidden_layers")],
)
def test_a_config_of_a_trillion_layers_is_refused_at_once(model_type: str, key: str) -> None:
    cfg = {**LLAMA, "d_model": 256, "n_heads": 4, "model_type": model_type, key: 10**12}
    start = time.perf_counter()
    with within(10), pytest.raises(ChipwiseError, match=rf"'{key}' is 1,000,000,000,000, past the 10,000 layers"):
        from_hf_config(cfg, "huge")
    assert time.perf_counter() - start < 5


def test_the_layer_bound_is_past_every_real_model_and_holds_at_it() -> None:
    from chipwise.workload.hf_config import MAX_LAYERS

    assert from_hf_config({**LLAMA, "num_hidden_layers": MAX_LAYERS}, "deep").layers == MAX_LAYERS
    with pytest.raises(ChipwiseError, match="Fix: give the model's real layer count"):
        from_hf_config({**LLAMA, "num_hidden_layers": MAX_LAYERS + 1}, "deeper")


def test_an_infinite_layer_count_is_one_line(tmp_path: Path, catalog: Catalog) -> None:
    """JSON's Infinity had reached int() and its OverflowError, a traceback."""
    path = tmp_path / "inf.json"
    path.write_text(json.dumps({**LLAMA, "num_hidden_layers": float("inf")}), encoding="utf-8")
    with pytest.raises(ChipwiseError, match="'num_hidden_layers' must be a non-negative integer, got inf"):
        load_model(catalog, str(path))


def test_a_sequence_past_the_context_is_refused() -> None:
    spec = from_hf_config({**LLAMA, "num_hidden_layers": 2}, "small")
    spec.check_seq_len(8192)
    with pytest.raises(ChipwiseError, match=r"--seq-len 8,193 is longer than small's context of 8,192 tokens"):
        spec.check_seq_len(8193, "--seq-len")


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        # 8192.5 had been read as 8192 without a word
        ("hidden_size", 8192.5, r"'hidden_size' must be a non-negative integer, got 8192\.5\. Fix: correct it\."),
        ("vocab_size", 1000.25, "'vocab_size' must be a non-negative integer, got 1000.25"),
        # 1e30 had printed nonillions of parameters
        ("hidden_size", 1e30, r"'hidden_size' is 1e\+30, past the 10,000,000 chipwise reads .* Fix: give the model's"),
        ("vocab_size", 10**8, "'vocab_size' is 100,000,000, past the 10,000,000"),
    ],
)
def test_a_size_that_is_not_whole_or_past_any_model_is_refused(key: str, value: float, needle: str) -> None:
    with pytest.raises(ChipwiseError, match=needle):
        from_hf_config({**LLAMA, "num_hidden_layers": 2, key: value}, "odd")


def test_a_whole_float_and_the_size_bound_are_read() -> None:
    from chipwise.workload.hf_config import MAX_SIZE

    assert from_hf_config({**LLAMA, "num_hidden_layers": 2, "hidden_size": 256.0}, "ok").hidden == 256
    assert from_hf_config({**LLAMA, "num_hidden_layers": 2, "vocab_size": MAX_SIZE}, "ok").vocab == MAX_SIZE
