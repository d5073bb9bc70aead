"""pytest plugin: run the notebooks (nbval) on the numpy-backed CuPy stand-in.

Load it and switch it on with ``-p tests.gpu_standin.plugin --gpu-standin`` (from the
repository root, as ``make test`` runs pytest). For every notebook that nbval runs, the
kernel then starts with

* ``GPULESSON_DEVICE=gpu``: ``gpulesson.device`` must find a GPU or fail, and
* ``tests/gpu_standin`` first on ``PYTHONPATH``: ``import cupy`` finds the stand-in
  (``tests/gpu_standin/cupy``), which reports one small, usable GPU, and
* ``GPULESSON_TIMING=smoke``: every ``gpulesson.bench.benchmark`` makes at most two timed
  calls (the book build, in the same session, does the real timings),

so every lesson's and exercise's GPU branch runs, with CuPy's API rules enforced (see the
stand-in's docstring: no implicit host copies, no clock read with queued work, finite
memory). The book build, which runs in the same pytest session, keeps the CPU path: the
environment is changed only while nbval starts a notebook's kernel.

Without ``--gpu-standin`` the plugin does nothing. The report header says it is on; the
summary lists how many notebooks imported the stand-in (a notebook that never asks for a
device has no GPU branch to run).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

STANDIN = Path(__file__).resolve().parent
REPO = STANDIN.parents[1]
#: Set by the plugin for each kernel; the stand-in appends a line to it when imported.
LOG_VAR = "GPULESSON_STANDIN_LOG"


def standin_environment(base: dict[str, str] | None = None, log: Path | None = None
                        ) -> dict[str, str]:
    """``base`` (default ``os.environ``) with the stand-in first on ``PYTHONPATH``, the
    repository after it, and ``GPULESSON_DEVICE=gpu``."""
    env = dict(os.environ if base is None else base)
    paths = [str(STANDIN), str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                         if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["GPULESSON_DEVICE"] = "gpu"
    env["GPULESSON_TIMING"] = "smoke"  # code paths, not timings: the book build times
    if log is not None:
        env[LOG_VAR] = str(log)
    return env


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("gpulesson").addoption(
        "--gpu-standin", action="store_true", default=False,
        help="run notebooks (nbval) with GPULESSON_DEVICE=gpu against the numpy-backed "
             "CuPy stand-in of tests/gpu_standin",
    )


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("gpu_standin", default=False))


def _notebook_of(item: pytest.Item) -> Path | None:
    """The notebook of an nbval cell item (``None`` for any other test)."""
    if getattr(item, "cell", None) is None:
        return None
    path = Path(str(item.path))
    return path if path.suffix == ".ipynb" else None


def pytest_report_header(config: pytest.Config) -> str | None:
    if _enabled(config):
        return (f"gpu stand-in: notebooks run with GPULESSON_DEVICE=gpu on "
                f"{STANDIN.relative_to(REPO)}/cupy (numpy on the CPU)")
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.gl_standin_notebooks = {}  # notebook -> its kernel's import log
    config.gl_standin_workers = {}  # pytest-xdist controller: the workers' notebooks
    config.gl_standin_logs = Path(tempfile.mkdtemp(prefix="gpulesson-standin-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(getattr(config, "gl_standin_logs", ""), ignore_errors=True)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item):
    """Start each notebook's kernel (in the setup of its first cell) on the stand-in."""
    notebook = _notebook_of(item)
    if not _enabled(item.config) or notebook is None:
        yield
        return
    logs = item.config.gl_standin_notebooks
    if notebook not in logs:
        logs[notebook] = (item.config.gl_standin_logs
                          / f"{notebook.parent.name}-{notebook.stem}.log")
    saved = {key: os.environ.get(key)
             for key in ("PYTHONPATH", "GPULESSON_DEVICE", "GPULESSON_TIMING", LOG_VAR)}
    os.environ.update(standin_environment(log=logs[notebook]))
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _notebooks_run(config: pytest.Config) -> dict[str, bool]:
    """Notebooks whose kernels this process started: path -> imported the stand-in."""
    return {str(nb.relative_to(REPO)): log.is_file()
            for nb, log in config.gl_standin_notebooks.items()}


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: hand the notebooks it ran to the controller."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None and _enabled(session.config):
        output["gl_standin"] = _notebooks_run(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """In the pytest-xdist controller: gather the workers' notebooks for the summary."""
    node.config.gl_standin_workers.update(getattr(node, "workeroutput", {}).get("gl_standin", {}))


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    if not _enabled(config):
        return
    runs = {**config.gl_standin_workers, **_notebooks_run(config)}
    used = sorted(nb for nb, imported in runs.items() if imported)
    unused = sorted(nb for nb, imported in runs.items() if not imported)
    terminalreporter.write_sep("-", "gpu stand-in")
    terminalreporter.write_line(
        f"{len(used)} of {len(runs)} notebooks ran their GPU branches on the stand-in"
        + (f"; never asked for a device: {', '.join(unused)}" if unused else ""))
