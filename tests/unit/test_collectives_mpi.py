"""The MPI worker's command line (``python -m gpulesson.collectives``, run by every rank
under ``mpiexec``): a bad argument ends every rank with exit status 2 and one message on
rank 0's standard error naming the argument, the value and what is allowed; never a
traceback, never a run with a nonsense value. A host list is checked before it reaches
``mpirun -H`` (one that starts with ``-`` would be read as an option).

The measurements themselves are tested in test_collectives.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpulesson.collectives import mpi as M

#: argv -> what the one message must name (argument, value, allowed range).
BAD_ARGUMENTS = {
    "--repeats 0": ("--repeats", "'0'", "[1, 1000]"),
    "--repeats 1001": ("--repeats", "'1001'", "[1, 1000]"),
    "--iterations 0": ("--iterations", "'0'", "[1, 100000]"),
    "--iterations abc": ("--iterations", "'abc'", "[1, 100000]"),
    "--warmup -1": ("--warmup", "'-1'", "[0, 100000]"),
    "--sizes abc": ("--sizes", "'abc'", "[1, 1073741824]"),
    "--sizes 0": ("--sizes", "'0'", "[1, 1073741824]"),
    "--sizes 4096,-8": ("--sizes", "'-8'", "[1, 1073741824]"),
    "--sizes 3": ("--sizes", "got 3", "multiple of the element size"),
    "--sizes 4 --dtype float64": ("--sizes", "got 4", "(8 B)"),
    "--min-seconds-per-size nan": ("--min-seconds-per-size", "'nan'", "[0, 3600]"),
    "--min-seconds-per-size inf": ("--min-seconds-per-size", "'inf'", "[0, 3600]"),
    "--max-seconds-per-size -1": ("--max-seconds-per-size", "'-1'", "[0, 3600]"),
    "--output /no/such/folder/result.json": ("--output", "'/no/such/folder'",
                                             "does not exist"),
    "--output .": ("--output", "'.'", "a file"),
    "--in-place --passes both": ("--in-place", "--passes both", "in-place"),
    "--output r.json --json": ("--json", "--output", "not allowed"),
}


@pytest.mark.parametrize("argv", BAD_ARGUMENTS)
def test_a_bad_argument_is_one_message_and_exit_status_2(
        argv: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in M._RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    words = argv.split()
    if words[0] != "--sizes":
        words = ["--sizes", "4096", *words]
    with pytest.raises(SystemExit) as ended:
        M.worker_arguments(words)
    assert ended.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1, errors
    for part in BAD_ARGUMENTS[argv]:
        assert part in errors[0], (part, errors[0])


def test_only_rank_0_prints(capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(M, "_QUIET_RANK_DELAY_S", 0.0)
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    with pytest.raises(SystemExit):
        M.worker_arguments(["--sizes", "abc"])
    assert capsys.readouterr().err == ""


def test_good_arguments_read_as_the_launcher_writes_them() -> None:
    command = M.allreduce_command(2, [4096, 8192], iterations=7, warmup=0, repeats=3,
                                  passes="in-place", min_seconds_per_size=0.5)
    args = M.worker_arguments(command[command.index("gpulesson.collectives") + 1:])
    assert (args.sizes, args.iterations, args.warmup, args.repeats, args.passes,
            args.min_seconds_per_size, args.output) == (
        [4096, 8192], 7, 0, 3, "in-place", 0.5, "result.json")
    assert M.worker_arguments(["--sizes", "8", "--in-place"]).passes == "in-place"
    assert M.worker_arguments(["--sizes", "8"]).passes == "both"


@pytest.mark.parametrize("hosts", ["-x", "--mca", "node1,-oversubscribe", "node1:0",
                                   "node1 node2", "node1:4,,node2", "", "node1:4;rm"])
def test_a_host_list_that_is_not_one_is_refused(hosts: str) -> None:
    with pytest.raises(ValueError, match=r"hosts must be an mpirun -H list .* got"):
        M.allreduce_command(2, [4096], hosts=hosts)
    with pytest.raises(ValueError, match="hosts must be"):
        M.run_allreduce_benchmark(2, [4096], hosts=hosts)


def test_host_lists_mpirun_takes_are_kept() -> None:
    for hosts in ("node1:4,node2:4", "10.0.0.1:2,10.0.0.2:2", "gpu-node_7"):
        command = M.allreduce_command(2, [4096], hosts=hosts)
        assert command[command.index("-H") + 1] == hosts


@pytest.mark.parametrize("name", ["min_seconds_per_size", "max_seconds_per_size"])
def test_the_launcher_refuses_what_the_worker_would(name: str) -> None:
    with pytest.raises(ValueError, match=rf"{name} must be a number of seconds in \[0, 3600\]"):
        M.run_allreduce_benchmark(2, [4096], **{name: 1e6})


@pytest.mark.skipif(not M.mpi_available(), reason="needs mpi4py and mpiexec (the dist extra)")
@pytest.mark.parametrize("argv", [["--repeats", "0"], ["--sizes", "abc"],
                                  ["--output", "/no/such/folder/r.json"]])
def test_under_mpiexec_one_message_and_no_traceback(argv: list[str]) -> None:
    command = [M.find_mpiexec(), "-n", "2", "--oversubscribe", "--mca", "pml", "ob1",
               "--mca", "btl", "self,sm", sys.executable, "-m", "gpulesson.collectives"]
    if argv[0] != "--sizes":
        argv = ["--sizes", "4096", *argv]
    proc = subprocess.run(command + argv, capture_output=True, text=True, timeout=120,
                          env=M._subprocess_env())
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stderr.count("python -m gpulesson.collectives: error:") == 1, proc.stderr
    assert argv[-2] in proc.stderr
