"""gpulesson.kernelcheck.gpu_timing and the kernel step of ``make gpu-check``: the model
kernels compiled by Numba from the checker's sources, their results checked, their time
beside the traffic prediction. No GPU here: the same path runs in Numba's CUDA simulator on
the first shape of each task (Numba's simulator has no warp shuffles, so the three shuffle
kernels run on a GPU only)."""

from __future__ import annotations

import importlib.util

import pytest

from gpulesson.device import cpu_device
from gpulesson.exercises.bank import inside_the_gpu
from gpulesson.kernelcheck import catalogue, gpu_timing

if importlib.util.find_spec("numba") is None:  # not imported: numba_cuda() picks the target
    pytest.skip("numba is not installed", allow_module_level=True)
SIMULATED = ("vector_add", "add_bias", "histogram", "stencil_1d", "matmul_naive",
             "sum_kernel")


@pytest.fixture(scope="module")
def simulator():
    from gpulesson import kernelcheck

    cuda = kernelcheck.numba_cuda()
    if not kernelcheck.simulated():
        pytest.skip("Numba runs on a real GPU here: scripts/gpu_check.py times the kernels")
    return cuda


def test_every_timed_task_has_a_model_and_a_prediction() -> None:
    models = {ex.task for ex in inside_the_gpu.EXERCISES if hasattr(ex, "task")}
    assert set(gpu_timing.TIMED) <= models
    for name, sizes in gpu_timing.TIMED.items():
        t = catalogue.task(name)
        if not name.startswith("matmul"):  # memory-bound: 4 MiB or more, past the caches
            assert t.predicted_bytes(sizes) >= 4 * 2**20, name
        grid, block = t.launch(sizes)
        assert grid and block


def test_the_models_run_right_in_numbas_simulator_and_are_timed(simulator) -> None:
    sizes = {name: gpu_timing.TINY[name] for name in SIMULATED}
    timings = gpu_timing.kernel_timings(cpu_device(), simulator, bandwidth=3.35e12,
                                        models=gpu_timing.models_of(inside_the_gpu.EXERCISES),
                                        sizes=sizes, repeats=1)
    assert [k.task for k in timings] == list(SIMULATED)
    for k in timings:
        assert k.correct, k.task
        assert k.measured_seconds > 0
        assert k.predicted_seconds == pytest.approx(
            catalogue.task(k.task).predicted_bytes(k.sizes) / 3.35e12)
    table = gpu_timing.markdown_table(timings)
    assert table.count("| right |") == len(SIMULATED)


def test_a_wrong_result_on_the_device_is_an_error_of_the_report(simulator,
                                                                monkeypatch) -> None:
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "gpu_check.py"
    spec = importlib.util.spec_from_file_location("gpu_check_kernels", script)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_check_kernels"] = module
    spec.loader.exec_module(module)
    monkeypatch.setattr(gpu_timing, "TINY", {"vector_add": gpu_timing.TINY["vector_add"]})
    rows, errors, notes = module.collect_kernels(cpu_device(), 1e12, quick=True,
                                                 cuda=simulator)
    assert [r["task"] for r in rows] == ["vector_add"] and errors == notes == []
    wrong = catalogue.task("vector_add")
    monkeypatch.setattr(catalogue, "task", lambda name: type(wrong)(**{
        **wrong.__dict__, "expected": lambda a: {"out": [0.0] * a["out"].size}}))
    monkeypatch.setattr(gpu_timing, "task", catalogue.task)
    rows, errors, _ = module.collect_kernels(cpu_device(), 1e12, quick=True, cuda=simulator)
    assert errors == ["vector_add: the GPU's result differs from the expected one"]
    _, errors, notes = module.collect_kernels(cpu_device(), 1e12, quick=True)
    assert errors == [] and "kernel timings skipped" in notes[0]  # no GPU: said, not failed
