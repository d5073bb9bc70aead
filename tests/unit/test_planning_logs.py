"""Reading real logs: vLLM start-up memory lines and nccl-tests tables (tests/data/logs/,
each file names its public issue thread)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulesson.planning import reconcile_nccl_tests, reconcile_vllm_log
from gpulesson.planning.logs import alpha_beta_fit, parse_nccl_tests, parse_vllm_log

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"


def _read(name: str) -> str:
    return (LOGS / name).read_text()


def test_parse_vllm_v0_memory_line() -> None:
    """vLLM issue #10517 (20k): every figure of the V0 "Memory profiling results" line."""
    got = parse_vllm_log(_read("vllm-10517-rtx3090-llama3.1-8b-20k.log"))
    assert got["weights"] == pytest.approx(14.9888 * 2**30)
    assert got["activation_peak"] == pytest.approx((17.06 - 14.9888) * 2**30)
    assert (got["blocks"], got["max_model_len"], got["max_concurrency"]) == (1952, 20000, 1.56)


def test_parse_vllm_early_v1_weights_line_in_gb() -> None:
    """Early V1 (vllm/v1/worker/gpu_model_runner.py, ``load_model``) printed its weights
    as "Model loading took %.4f GB and %.6f seconds", the bytes over 2**30 under a "GB"
    label, as V0's "Loading model weights took" line does; later releases print "GiB".
    Both read as GiB."""
    line = ("INFO 02-20 10:00:00 gpu_model_runner.py:1099] Model loading took 14.9889 GB "
            "and 5.123456 seconds")
    assert parse_vllm_log(line)["weights"] == pytest.approx(14.9889 * 2**30)
    later = line.replace("14.9889 GB", "14.9889 GiB")
    assert parse_vllm_log(later)["weights"] == pytest.approx(14.9889 * 2**30)


def test_parse_vllm_v07_worker_lines() -> None:
    """vLLM issue #13882: the 'model weights take ...; the rest ... is -1.05GiB' spelling."""
    got = parse_vllm_log(_read("vllm-13882-rtx4060-qwen2.5-7b-awq.log"))
    assert got["kv_cache"] == pytest.approx(-1.05 * 2**30)
    assert got["activation_peak"] == pytest.approx(1.42 * 2**30)
    assert got["total_memory"] == pytest.approx(8 * 2**30) and got["utilization"] == 0.70


def test_parse_vllm_upper_case_cuda_blocks() -> None:
    """vLLM issue #15815 (0.7.1): "# CUDA blocks: 3947" in capitals, beside the worker
    lines."""
    got = parse_vllm_log(_read("vllm-15815-2xl40s-qwen2.5-32b-tp2.log"))
    assert got["blocks"] == 3947 and got["kv_cache"] == pytest.approx(7.71 * 2**30)
    assert got["total_memory"] == pytest.approx(44.42 * 2**30) and got["utilization"] == 0.90


#: Start-up summaries that give every memory term in GiB: (log, terms in GiB, utilisation).
GIB_SUMMARIES = [
    # vLLM pull request #10511 (0.6.5): "Memory profiling results:" then one figure a line,
    # name and value apart by spaces.
    ("vllm-10511-h100-llama3-8b.log",
     {"total_memory": 79.22, "weights": 14.96, "non_torch": 1.79, "activation_peak": 1.26,
      "kv_cache": 53.29}, 0.90),
    # vLLM 0.11's start-up summary (as llm-d-benchmark's empirical results quote it): the
    # device total from "Free memory on device (free/total GiB)", the utilisation from
    # "Desired GPU memory utilization is (u, ...)", and the "... GiB for peak activation /
    # for non-torch memory" parts.
    ("vllm-llmd-2xh100-llama3.3-70b-fp8-tp2.log",
     {"total_memory": 79.18, "weights": 33.88, "non_torch": 0.55, "activation_peak": 4.84,
      "kv_cache": 32.0}, 0.9),
]


@pytest.mark.parametrize(("log", "gib", "utilization"), GIB_SUMMARIES,
                         ids=["one-figure-per-line-0.6.5", "usage-line-0.11"])
def test_parse_vllm_gib_summary(log: str, gib: dict[str, float], utilization: float) -> None:
    """Every memory term of the summary, in GiB, and the utilisation it was started with."""
    got = parse_vllm_log(_read(log))
    assert {k: got[k] / 2**30 for k in gib} == pytest.approx(gib)
    assert got["utilization"] == utilization


def test_reconcile_vllm_terms_add_up() -> None:
    """Term by term: the KV difference is what the weight and activation differences leave."""
    r = reconcile_vllm_log(_read("vllm-10517-rtx3090-llama3.1-8b-29k.log"), "llama-3-8b",
                           max_num_batched_tokens=29000, max_num_seqs=256)
    rows = {row.term: row for row in r.rows}
    kv, w, a = rows["KV cache memory"], rows["model weights"], rows["activation peak"]
    assert kv.difference == pytest.approx(-(w.difference + a.difference), abs=0.011 * 2**30)
    assert abs(rows["maximum concurrency"].relative) < 0.10
    assert "KV cache tokens" in r.table()


def test_parse_vllm_v1_cuda_graph_and_refusal() -> None:
    """V1's CUDA graph estimate (LMCache issue #3430) and its refusal line (vLLM #15871)."""
    graph = parse_vllm_log(_read("vllm-lmcache-3430-qwen3-8b-cudagraph.log"))
    assert graph["cuda_graph"] == pytest.approx(0.52 * 2**30)
    assert graph["kv_cache_tokens"] == 46_368 and graph["max_model_len"] == 16_384
    refusal = parse_vllm_log(_read("vllm-15871-deepseek-v2-lite-mla-needed.log"))
    assert refusal["kv_needed"] == pytest.approx(0.95 * 2**30)


def test_unknown_log_format_is_refused() -> None:
    with pytest.raises(ValueError, match="text"):
        parse_vllm_log("hello world")
    with pytest.raises(ValueError, match="text"):
        parse_nccl_tests("no table here")


def test_source_nccl_tests_44_2080ti_bridge_runs_at_half_its_links() -> None:
    """nccl-tests issue #44: two RTX 2080 Ti over an NVLink bridge reach about 21 GB/s of
    bus bandwidth. Two NVLink 2 links (25 GB/s each way) predict 41 GB/s achievable: the
    fit says half, as a bridge making contact on some links only would (the diagnosis of
    NVIDIA/nccl issue #557 for this log)."""
    r = reconcile_nccl_tests(_read("nccl-tests-44-rtx2080ti-nvlink.txt"), line_rate=50e9,
                             collective="all_reduce", n_ranks=2)
    assert r.beta == pytest.approx(21e9, rel=0.05)
    assert 5e-6 < r.alpha < 30e-6
    assert 0.4 < r.ratio < 0.6 and "fewer links" in r.explanation


def test_source_nccl_tests_194_h100_pcie_pair() -> None:
    """nccl-tests issue #194: two H100 PCIe over NVLink bridges, 116 GB/s bus bandwidth at
    1-4 GiB, below half of what 600 GB/s of bridges (300 each way) should give."""
    collective, rows = parse_nccl_tests(_read("nccl-tests-194-h100pcie-nvlink.txt"))
    assert collective == "all_reduce" and len(rows) == 3
    r = reconcile_nccl_tests(_read("nccl-tests-194-h100pcie-nvlink.txt"), line_rate=300e9)
    assert r.n_ranks == 2
    assert r.beta == pytest.approx(116e9, rel=0.02)
    assert r.ratio < 0.6


def test_alpha_beta_fit_recovers_a_line() -> None:
    sizes = [2.0**k for k in range(10, 30, 2)]
    times = [20e-6 + 2 * 7 / 8 * s / 300e9 for s in sizes]
    alpha, beta = alpha_beta_fit(sizes, times, n_ranks=8)
    assert alpha == pytest.approx(20e-6, rel=1e-6) and beta == pytest.approx(300e9, rel=1e-6)
    with pytest.raises(ValueError, match="sizes_bytes"):
        alpha_beta_fit([1.0], [1.0], n_ranks=2)


def test_reconcile_nccl_refuses_bad_line_rate() -> None:
    with pytest.raises(ValueError, match="line_rate"):
        reconcile_nccl_tests(_read("nccl-tests-44-rtx2080ti-nvlink.txt"), line_rate=-5.0)


def test_reconcile_nccl_multinode_uses_every_nic() -> None:
    """Two OCI BM.GPU4.8 servers (oracle-quickstart/oci-hpc-oke README: 8 A100 and 16 x 100
    Gb/s NICs each, 25 GB/s per GPU) reach 190 GB/s of bus bandwidth. One NIC per node
    predicted 23.5 GB/s (issue 31); the node's eight GPUs' NICs together predict 188."""
    got = reconcile_nccl_tests(_read("nccl-tests-oci-a100-2x8.txt"), line_rate=25e9,
                               tier="network", n_ranks=16, gpus_per_node=8,
                               nvlink_line_rate=300e9)
    assert got.predicted_busbw == pytest.approx(8 * 25e9 * 47 / 50)
    assert got.ratio == pytest.approx(1.0, abs=0.05)


def test_reconcile_nccl_names_what_beats_a_ring_across_nodes() -> None:
    """A largest size above what a ring can carry across the nodes is not "as the topology
    predicts": on two nodes NCCL's tree beats the ring; on more, in-network reduction or a
    tree. The OCI log (two nodes, 190 GB/s) read against a quarter of its NICs' rate, and
    the same rows as if on three nodes of 8 (the busbw/algbw ratio read as 24 ranks)."""
    rows = _read("nccl-tests-oci-a100-2x8.txt")
    two = reconcile_nccl_tests(rows, line_rate=25e9 / 4, tier="network", n_ranks=16,
                               gpus_per_node=8)
    assert two.peak_busbw > 3 * two.predicted_busbw
    assert "on exactly two nodes NCCL's tree" in two.explanation
    three = reconcile_nccl_tests(rows, line_rate=25e9 / 4, tier="network", n_ranks=24,
                                 gpus_per_node=8)
    assert "SHARP" in three.explanation and "two nodes" not in three.explanation
    fair = reconcile_nccl_tests(rows, line_rate=25e9, tier="network", n_ranks=16,
                                gpus_per_node=8)
    assert fair.explanation.endswith("as the topology predicts")


def test_reconcile_nccl_quotes_the_rows_when_the_fit_runs_above_them() -> None:
    """nccl-tests issue #322: a ring of 1,024 H100s (128 nodes of 8, 400 Gb/s NIC per GPU)
    whose largest size reaches 367 GB/s, 99 % of the 370 GB/s a ring can carry across the
    nodes. The straight line through its sizes fits a beta of 499 GB/s, above every row;
    the reading used to call that "135% of the achievable 370.00 GB/s: as the topology
    predicts". It now quotes the largest size and says the fit overstates it."""
    got = reconcile_nccl_tests(_read("nccl-tests-322-h100-128x8-ring.txt"), line_rate=50e9,
                               tier="network", n_ranks=1024, gpus_per_node=8,
                               nvlink_line_rate=450e9)
    assert got.beta > 1.3 * got.predicted_busbw > got.peak_busbw > 0.95 * got.predicted_busbw
    assert got.explanation.startswith(
        f"the largest size reaches {got.peak_busbw / got.predicted_busbw:.0%} of the "
        "achievable 370.00 GB/s"), got.explanation
    assert "as the topology predicts" in got.explanation
    assert "fitted beta, 498.66 GB/s, is above what any row reached" in got.explanation
    assert "135%" not in got.explanation


def test_reconcile_nccl_reads_gpus_per_node_from_rank_lines() -> None:
    rows = _read("nccl-tests-oci-a100-2x8.txt")
    ranks = "\n".join(f"#  Rank {i:2d} Group  0 Pid  {100 + i} on host{i // 8} device  {i % 8} "
                      "[0x0f] NVIDIA A100-SXM4-40GB" for i in range(16))
    got = reconcile_nccl_tests(ranks + "\n" + rows, line_rate=25e9, tier="network")
    assert got.n_ranks == 16 and got.predicted_busbw == pytest.approx(188e9)


# --------------------------------------------------------------------------- hostile logs
# Issue 35, item 7: the parsers are linear, need nccl-tests' header, refuse rows that are
# not rows, and refuse impossible arguments by name.

HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong"
          "     time   algbw   busbw #wrong\n")
ROW = ("  1073741824     268435456     float     sum      -1    10776   99.64  186.83      0"
       "    10781   99.60  186.75      0\n")


def _timed(call, *args, **kwargs) -> float:
    """The CPU seconds ``call`` takes (not wall time, which a loaded machine stretches)."""
    import time
    start = time.process_time()
    try:
        call(*args, **kwargs)
    except ValueError:
        pass
    return time.process_time() - start


def test_nccl_parser_is_linear_in_blank_lines() -> None:
    """100,000 blank lines took more than 30 s (``^\\s*`` under re.M spans newlines)."""
    assert _timed(parse_nccl_tests, HEADER + "\n" * 100_000 + ROW) < 2.0
    assert _timed(parse_nccl_tests, HEADER + " \t" * 100_000 + "\n" + ROW) < 2.0
    _, rows = parse_nccl_tests(HEADER + "\n" * 100_000 + ROW)
    assert len(rows) == 1


def test_nccl_parser_needs_the_column_header() -> None:
    with pytest.raises(ValueError, match="column header"):
        parse_nccl_tests(ROW * 3)


def test_nccl_parser_refuses_lines_that_only_look_like_rows() -> None:
    """A fake line whose busbw is more than 2x its algbw implies no rank count; one whose
    algbw is not size / time is not a measurement."""
    fake = "  1073741824     268435456     float     sum      -1    10776   99.64  250.00  0\n"
    with pytest.raises(ValueError, match="line 3"):
        parse_nccl_tests(HEADER + ROW + fake)
    wrong_time = "  1073741824  268435456     float     sum      -1       10   99.64  186.83  0\n"
    with pytest.raises(ValueError, match="algbw"):
        parse_nccl_tests(HEADER + wrong_time)
    with pytest.raises(ValueError, match="type"):
        parse_nccl_tests(HEADER + ROW.replace("float", "bogus"))


def test_nccl_rank_count_too_large_to_infer_is_asked_for() -> None:
    """busbw/algbw = 1.9999 cannot tell 20,000 ranks from 2,000: give n_ranks."""
    row = "  1073741824     268435456     float     sum      -1    10776   99.64  199.27      0\n"
    with pytest.raises(ValueError, match="n_ranks"):
        reconcile_nccl_tests(HEADER + row, line_rate=50e9)


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"n_ranks": 0}, "n_ranks"), ({"n_ranks": -3}, "n_ranks"),
    ({"min_size": -1}, "min_size"), ({"min_size": 10**12}, "min_size"),
    ({"gpus_per_node": 0, "tier": "network"}, "gpus_per_node"),
])
def test_reconcile_nccl_refuses_impossible_arguments(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        reconcile_nccl_tests(_read("nccl-tests-oci-a100-2x8.txt"), line_rate=25e9, **kwargs)


def test_vllm_parser_is_linear_on_a_huge_number() -> None:
    """A 50,000-digit number took 17 s and would be read as a figure: now skipped."""
    huge = "9" * 50_000
    text = (f"Maximum concurrency for 4096 tokens per request: {huge}x\n"
            f"GPU KV cache size: {huge} tokens\nLoading model weights took {huge} GB\n"
            "# GPU blocks: 1952\n")
    assert _timed(parse_vllm_log, text) < 2.0
    got = parse_vllm_log(text)
    assert got == {"blocks": 1952.0, "max_model_len": 4096.0}


def test_reconcile_nccl_reads_a_launchers_line_tags() -> None:
    """aws-samples/awsome-distributed-training's README shows its nccl-tests run on two
    p4de.24xlarge instances (16 A100s) as ``srun -l`` printed it: every line starts with
    the task label ``0: ``, and the parser used to call it "not an nccl-tests output". The
    label is left out: 2 GiB at 78.33 GB/s of bus bandwidth, 16 ranks from the busbw/algbw
    ratio; Open MPI's ``--tag-output`` tags read the same."""
    text = _read("nccl-tests-awsome-a100-p4de-2x8-srun.txt")
    _, rows = parse_nccl_tests(text)
    largest = max(rows, key=lambda r: r.size_bytes)
    assert largest.size_bytes == 2**31 and largest.busbw == pytest.approx(78.33e9)
    got = reconcile_nccl_tests(text, line_rate=6.25e9, tier="network", gpus_per_node=8)
    assert got.n_ranks == 16
    # NCCL's default on two nodes is a tree, above the ring's network bound (4 x 100 Gb/s
    # EFA a node, 8 NICs' worth of 6.25 GB/s): the reading says so, not "as predicted"
    assert got.ratio > 1.3 and "on exactly two nodes NCCL's tree" in got.explanation
    mpi = text.replace("\n0: ", "\n[1,0]<stdout>: ")
    assert "[1,0]<stdout>:" in mpi and parse_nccl_tests(mpi)[1] == rows
