"""gpulesson.traffic: the bytes every parallel dimension moves."""

from __future__ import annotations

import pytest

from gpulesson import traffic


def test_source_korthikanti_four_allreduces_per_layer() -> None:
    """Korthikanti et al. 2022, section 4.2.2: tensor parallelism needs "four all-reduce
    operations in a single forward and backward pass" per layer, each of b*s*h values;
    sequence parallelism moves the same bytes as reduce-scatters and all-gathers."""
    t = traffic.tensor_parallel_traffic(micro_batch=1, seq_len=2048, hidden=12288, layers=1,
                                        tp=8, sequence_parallel=False)
    assert (t.count, t.size_bytes, t.group) == (4, 2048 * 12288 * 2, 8)
    assert t.bytes_per_rank == pytest.approx(4 * 2 * 7 / 8 * 2048 * 12288 * 2)
    sp = traffic.tensor_parallel_traffic(micro_batch=1, seq_len=2048, hidden=12288, layers=1,
                                         tp=8)
    assert sp.bytes_per_rank == t.bytes_per_rank
    full = traffic.tensor_parallel_traffic(micro_batch=1, seq_len=2048, hidden=12288,
                                           layers=1, tp=8, recompute="full")
    assert full.count == 6


def test_source_narayanan_scatter_gather_divides_p2p_by_tp() -> None:
    """Narayanan et al. 2021, section 4.1: the scatter/gather optimisation sends b*s*h/t
    per GPU across a stage boundary; interleaving multiplies the transfers by v."""
    p = traffic.pipeline_traffic(micro_batch=1, seq_len=2048, hidden=25600, tp=8, pp=64)
    assert p.size_bytes == 2048 * 25600 * 2 / 8 and p.count == 2
    assert traffic.pipeline_traffic(micro_batch=1, seq_len=2048, hidden=25600, tp=8,
                                    interleave=2, pp=64).count == 4
    assert traffic.pipeline_traffic(micro_batch=1, seq_len=2048, hidden=256, pp=1).time(
        bandwidth=1e9) == 0


def test_context_parallel_gathers_kv_of_the_whole_sequence() -> None:
    """Llama 3 (Dubey et al. 2024, section 3.3.2) all-gathers K and V: for 128K tokens of
    8 KV heads of 128 in BF16, 2 x 131,072 x 1,024 x 2 bytes per layer, split over tp."""
    c = traffic.context_parallel_traffic(micro_batch=1, seq_len=131072, kv_dim=1024,
                                         layers=1, cp=16, tp=8)
    assert c.size_bytes == 2 * 131072 * 1024 * 2 / 8
    assert c.bytes_per_rank == pytest.approx(2 * 15 / 16 * c.size_bytes)


def test_source_deepseek_v3_fp8_dispatch_bf16_combine() -> None:
    """DeepSeek-V3 (section 3.3.2): tokens are dispatched in FP8 and combined in BF16.
    Each token sends its h = 7,168 values to 8 experts: 8 x 7,168 bytes forward out,
    twice that back; the backward pass moves the same again in BF16."""
    e = traffic.expert_parallel_traffic(tokens=1, hidden=7168, experts_per_token=8,
                                        moe_layers=1, ep=64, dispatch_bytes_per_value=1)
    total = e.count * e.size_bytes  # buffers, before the (ep-1)/ep that leaves the GPU
    assert total == pytest.approx(8 * 7168 * (1 + 2) * 2)
    bf16 = traffic.expert_parallel_traffic(tokens=1, hidden=7168, experts_per_token=8,
                                           moe_layers=1, ep=64)
    assert bf16.count == 4


def test_source_deepseek_v3_node_limited_dispatch() -> None:
    """DeepSeek-V3 (section 3.2.2): each token goes to at most M = 4 nodes, crossing
    InfiniBand once per node and reaching that node's experts over NVLink, so of its 8
    routed copies at most 4 travel on the network: half the bytes of sending all 8."""
    kw = dict(tokens=4096, hidden=7168, experts_per_token=8, moe_layers=1, ep=64,
              dispatch_bytes_per_value=1)
    every = traffic.expert_parallel_traffic(**kw)
    limited = traffic.expert_parallel_traffic(**kw, node_limit=4)
    assert limited.bytes_per_rank == pytest.approx(every.bytes_per_rank / 2)
    assert traffic.expert_parallel_traffic(**kw, node_limit=16).bytes_per_rank == \
        pytest.approx(every.bytes_per_rank)       # a limit above k changes nothing
    with pytest.raises(ValueError, match="node_limit"):
        traffic.expert_parallel_traffic(**kw, node_limit=0)


def test_source_group_limited_routing_bounds_the_nodes_a_token_reaches() -> None:
    """DeepSeek-V3's config (n_group 8, topk_group 4; report section 2.1.2): 256 experts in 8
    groups of 32, 4 groups per token. On its 64 expert-parallel GPUs, 8 a node (section
    3.2), a group is one node's 8 x 4 experts: at most 4 of the 8 nodes. On 128 GPUs a
    group spans 2 nodes (8 of 16, no tighter than k = 8); on 32 GPUs two groups share a
    node and the 4 nodes bound it; on one GPU per node a group is 8 nodes. No groups, or
    every group picked (GLM-4.5's 1 of 1), is no limit (Megatron-LM's
    moe_router_num_groups and moe_router_group_topk mean the same)."""
    def limit(**kw: int) -> int | None:
        return traffic.routed_node_limit(**{"experts": 256, "routing_groups": 8,
                                            "routing_group_topk": 4, **kw})
    assert limit(ep=64, ranks_per_node=8) == 4
    assert limit(ep=128, ranks_per_node=8) == 8
    assert limit(ep=32, ranks_per_node=8) == 4
    assert limit(ep=16, ranks_per_node=8) == 2
    assert limit(ep=64, ranks_per_node=1) == 32
    assert limit(ep=64, ranks_per_node=8, routing_group_topk=2) == 2
    assert limit(ep=64, ranks_per_node=8, routing_groups=0, routing_group_topk=0) is None
    assert limit(ep=64, ranks_per_node=8, routing_groups=1, routing_group_topk=1) is None
    # groups that straddle nodes: 5 ranks a node, the group of ranks 24-31 spans 3 nodes
    # (4-6), so 4 x 3 = 12 of the 13 nodes; 6 a node, every group spans at most 2
    assert limit(ep=64, ranks_per_node=5) == 12
    assert limit(ep=64, ranks_per_node=6) == 8
    for bad, match in (({"ep": 48}, "ep"), ({"routing_groups": 3}, "routing_groups"),
                       ({"routing_group_topk": 9}, "routing_group_topk"),
                       ({"routing_group_topk": 0}, "routing_group_topk"),
                       ({"ranks_per_node": 0}, "ranks_per_node")):
        with pytest.raises(ValueError, match=match):
            limit(**{"ep": 64, "ranks_per_node": 8, **bad})


def test_source_zero_data_parallel_volumes() -> None:
    """Rajbhandari et al. 2020, section 7: ZeRO-1/2 move 2 Psi (reduce-scatter + all-gather,
    like one all-reduce), ZeRO-3 3 Psi."""
    one = traffic.data_parallel_traffic(1e9, dp=64, zero_stage=1)
    zero = traffic.data_parallel_traffic(1e9, dp=64, zero_stage=0)
    three = traffic.data_parallel_traffic(1e9, dp=64, zero_stage=3)
    per = [sum(t.bytes_per_rank for t in x) for x in (zero, one, three)]
    assert per[0] == pytest.approx(per[1]) and per[2] == pytest.approx(1.5 * per[1])
    fp32 = traffic.data_parallel_traffic(1e9, dp=64, zero_stage=1, grad_bytes=4)
    assert fp32[0].size_bytes == 4e9 and fp32[1].size_bytes == 2e9


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="micro_batch"):
        traffic.tensor_parallel_traffic(micro_batch=0, seq_len=1, hidden=1, layers=1, tp=1)
    with pytest.raises(ValueError, match="zero_stage"):
        traffic.data_parallel_traffic(1.0, dp=2, zero_stage=4)
