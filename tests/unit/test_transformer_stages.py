"""gpulesson.transformer.stages: exact parameters per pipeline stage, and the balanced split.

Published layout: Dubey et al. 2024 (The Llama 3 Herd of Models), section 3.3.2: Llama 3
405B's 126 layers on 16 pipeline stages, one layer fewer on the first and the last stage,
which also hold the embedding and the output layer with the loss.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import transformer
from gpulesson.transformer import param_count, preset

from .strategies import configs


def test_source_llama3_405b_balanced_layout() -> None:
    """Dubey et al. 2024, section 3.3.2: with 126 layers on 16 stages "we reduce one
    Transformer layer each from the first and the last stages": 7, fourteen 8s, 7. The
    split that makes the heaviest stage lightest, the embedding (2.1B) on the first stage
    and the output layer (2.1B) on the last, is exactly that one."""
    cfg = preset("llama-3.1-405b")
    layout = transformer.balanced_stage_layers(cfg, 16)
    assert layout == [7] + [8] * 14 + [7]
    stages = transformer.pipeline_stage_params(cfg, layout)
    assert sum(stages) == param_count(cfg)
    layer = transformer.layer_params(cfg, 0)
    head = cfg.vocab * cfg.hidden
    assert stages[1] == 8 * layer == max(stages)
    assert stages[0] == 7 * layer + head
    assert stages[-1] == 7 * layer + head + cfg.hidden  # the output layer and final norm
    # spreading the layers as evenly as possible instead puts 8 layers on an end stage,
    # which then outweighs every middle stage by the embedding
    even = transformer.pipeline_stage_params(cfg, [8] * 14 + [7, 7])
    assert max(even) == even[0] == 8 * layer + head > max(stages)


def test_tied_embeddings_are_held_by_both_ends() -> None:
    """Narayanan et al. 2021, section 2.2: with tied embeddings the last stage keeps its
    own copy of the embedding matrix; the stages then hold V x d more than the model."""
    cfg = preset("gpt2")
    stages = transformer.pipeline_stage_params(cfg, [6, 6])
    assert sum(stages) == param_count(cfg) + cfg.vocab * cfg.hidden
    assert transformer.pipeline_stage_params(cfg, [12]) == [param_count(cfg)]


def test_interleaved_moe_layers_weigh_differently() -> None:
    """Llama 4 Maverick alternates dense and MoE layers: layer 1 holds 128 experts of
    3 x 5,120 x 8,192, a shared one and a router; layer 0 a dense MLP of 16,384."""
    from .test_transformer_hf import hf

    cfg = hf("llama4__Llama-4-Maverick-17B-128E.json")
    dense, moe = transformer.layer_params(cfg, 0), transformer.layer_params(cfg, 1)
    assert moe - dense == 129 * 3 * 5120 * 8192 + 5120 * 128 - 3 * 5120 * 16384
    assert sum(transformer.pipeline_stage_params(cfg, [24, 24])) == param_count(cfg)


@given(cfg=configs(), data=st.data())
def test_stages_add_up_to_the_model(cfg: transformer.TransformerConfig,
                                    data: st.DataObject) -> None:
    pp = data.draw(st.integers(1, min(cfg.layers, 8)))
    layout = transformer.balanced_stage_layers(cfg, pp)
    assert len(layout) == pp and sum(layout) == cfg.layers and min(layout) >= 1
    stages = transformer.pipeline_stage_params(cfg, layout)
    copy = cfg.vocab * cfg.embedding_dim if cfg.tied_embeddings and pp > 1 else 0
    assert sum(stages) == param_count(cfg) + copy


@pytest.mark.parametrize(("layout", "match"), [
    ([6, 5], r"add up to the model's 12, got 2 stages with 11 layers"),
    ([12, 0], r"layers_per_stage must be a positive integer, got 0"),
    ([], r"layers_per_stage must be 1 to 4096 stages"),
])
def test_a_split_must_cover_every_layer(layout: list[int], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        transformer.pipeline_stage_params(preset("gpt2"), layout)


def test_more_stages_than_layers_is_refused() -> None:
    with pytest.raises(ValueError, match=r"pp must be at most the model's 12 layers"):
        transformer.balanced_stage_layers(preset("gpt2"), 13)
