"""gpulesson.exercises.mistakes: the common mistakes, ready to declare on an exercise."""

from __future__ import annotations

import pytest

from gpulesson import inference
from gpulesson.exercises import CodeExercise, Mistake
from gpulesson.exercises.mistakes import (
    counted_macs,
    forgot_training_state,
    gib_as_gb,
    hidden_instead_of_kv,
    inverted_ratio,
    used_sparse_peak,
)
from gpulesson.transformer import TransformerConfig


@pytest.mark.parametrize("factory, key, words", [
    (counted_macs, "counted_macs", "MACs"),
    (gib_as_gb, "gib_as_gb", "GiB"),
    (hidden_instead_of_kv, "hidden_instead_of_kv", "KV heads"),
    (forgot_training_state, "forgot_training_state", "16 bytes per parameter"),
    (used_sparse_peak, "used_sparse_peak", "sparse"),
])
def test_each_factory_names_its_mistake(factory, key, words):
    def value(p):
        return p["x"] / 2

    mistake = factory(value)
    assert isinstance(mistake, Mistake) and mistake.key == key and mistake.value is value
    assert words in mistake.hint
    assert factory(value, hint="In this lesson's words.").hint == "In this lesson's words."


def test_an_inverted_ratio_needs_its_own_hint():
    assert inverted_ratio(lambda p: 1, hint="Seconds per token.").key == "inverted_ratio"
    with pytest.raises(TypeError):
        inverted_ratio(lambda p: 1)  # type: ignore[call-arg]


def test_a_kv_cache_code_exercise_built_from_the_library():
    """A ``kv_cache_bytes(...)`` code exercise checked against :mod:`gpulesson.inference`,
    whose declared mistakes (the hidden size instead of KV heads x head_dim; keys only)
    each name themselves. Llama 3 8B's shapes (config.json): 32 layers, 32 query heads, 8
    KV heads of 128, so 128 KiB per token in BF16 and 1 GiB for 8,192 tokens."""

    def reference(layers, heads, kv_heads, head_dim, seq_len, batch):
        cfg = TransformerConfig(hidden=heads * head_dim, layers=layers, heads=heads,
                                vocab=1000, kv_heads=kv_heads, head_dim=head_dim)
        return inference.kv_cache_bytes(cfg, seq_len=seq_len, batch=batch)

    def with_hidden(i):
        cfg = TransformerConfig(hidden=i["heads"] * i["head_dim"], layers=i["layers"],
                                heads=i["heads"], vocab=1000, head_dim=i["head_dim"])
        return inference.kv_cache_bytes(cfg, seq_len=i["seq_len"], batch=i["batch"])

    def sample(rng):
        heads = rng.choice([8, 16, 32, 64])
        return {"layers": rng.randint(1, 80), "heads": heads,
                "kv_heads": rng.choice([k for k in (1, 2, 4, 8) if k < heads]),
                "head_dim": rng.choice([64, 128]), "seq_len": rng.randint(1, 8192),
                "batch": rng.randint(1, 16)}

    ex = CodeExercise(
        lesson="demo", number=7, title="KV cache", question="Write kv_cache_bytes.",
        solution="s", function_name="kv_cache_bytes",
        signature="layers, heads, kv_heads, head_dim, seq_len, batch", reference=reference,
        sample_input=sample,
        examples=({"layers": 32, "heads": 32, "kv_heads": 8, "head_dim": 128,
                   "seq_len": 8192, "batch": 1},),
        mistakes=(hidden_instead_of_kv(with_hidden),
                  Mistake("keys_only", "Store values as well as keys: the factor 2.",
                          lambda i: reference(**i) / 2)),
        model_solution=lambda layers, heads, kv_heads, head_dim, seq_len, batch:
            2 * layers * kv_heads * head_dim * seq_len * batch * 2,
        rtol=0.0,
    )
    assert ex.problems() == []
    assert reference(32, 32, 8, 128, 8192, 1) == 2**30

    def mha(layers, heads, kv_heads, head_dim, seq_len, batch):
        return 2 * layers * heads * head_dim * seq_len * batch * 2

    feedback = ex.check(mha)
    assert feedback.mistake == "hidden_instead_of_kv" and "KV heads" in feedback.message
    assert ex.check(ex.mistake_function("keys_only")).mistake == "keys_only"
    assert ex.check(ex.model_solution).correct
