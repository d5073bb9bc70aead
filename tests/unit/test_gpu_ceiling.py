"""scripts/gpu_ceiling.py: the report's arithmetic on the CPU, and a clear exit without a GPU.

The measurement itself needs a CUDA GPU (scripts/gpu_session.sh runs it there)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from gpulesson import hardware

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_ceiling.py"
_spec = importlib.util.spec_from_file_location("gpu_ceiling", SCRIPT)
ceiling_script = importlib.util.module_from_spec(_spec)
sys.modules["gpu_ceiling"] = ceiling_script
_spec.loader.exec_module(ceiling_script)

H100_BF16 = hardware.gpu("H100 SXM").dense("bf16")  # 989.4 TFLOP/s, NVIDIA datasheet


def _rate(dtype: str, n: int, fraction_of_peak: float, spread: float = 1.1):
    seconds = 2 * n**3 / (H100_BF16 * fraction_of_peak)
    return ceiling_script.ShapeRate(dtype, n, n, n, 10, seconds, seconds * spread)


def test_the_ceiling_is_the_best_sustained_rate_not_the_best_burst() -> None:
    bursty = _rate("bf16", 4096, 0.80, spread=1.5)   # fastest single batch, slow median
    steady = _rate("bf16", 8192, 0.75, spread=1.01)
    other = _rate("fp16", 8192, 0.90)
    top = ceiling_script.ceiling([bursty, steady, other], "bf16")
    assert top is steady
    assert top.best_rate == pytest.approx(0.75 * H100_BF16)


def test_fractions_and_overhead() -> None:
    assert ceiling_script.fraction(0.9 * H100_BF16, H100_BF16) == pytest.approx(0.9)
    assert ceiling_script.overhead(1.03e-3, 1.0e-3) == pytest.approx(0.03)
    with pytest.raises(ValueError, match="positive"):
        ceiling_script.fraction(0.0, H100_BF16)
    with pytest.raises(ValueError, match="no measurement"):
        ceiling_script.ceiling([], "bf16")


def test_without_a_gpu_it_says_so_and_exits_2(tmp_path: Path, capsys) -> None:
    if ceiling_script._torch_backend() or ceiling_script._cupy_backend():
        pytest.skip("a GPU is usable here")
    assert ceiling_script.main(["--out", str(tmp_path / "c.json")]) == 2
    assert "no usable CUDA GPU" in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()
