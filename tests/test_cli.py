"""The command line: the interface other tools rely on, and messages for bad input."""
import csv
import json
import re
from pathlib import Path

import pytest

from solverspace.cli import main

TINY = ["--set", "device=tiny"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("backend", ["c", "reference"])
def test_count_json_last_line(capsys, backend):
    code, out, _ = run(capsys, "count", "gemm", *TINY, "--set", "precision=single", "--json", "--backend", backend)
    assert code == 0
    result = json.loads(out.strip().splitlines()[-1])
    assert result["count"] == 2000 and result["undefined"] == 51 and result["backend"] == backend


def test_count_defaults_to_auto_which_uses_a_built_module(capsys):
    assert run(capsys, "count", "gemm", *TINY, "--backend", "c")[0] == 0     # builds the module
    code, out, _ = run(capsys, "count", "gemm", *TINY, "--json")
    assert code == 0 and json.loads(out.strip().splitlines()[-1])["backend"] == "c"


def test_count_text_reports_undefined(capsys):
    code, out, _ = run(capsys, "count", "gemm", *TINY, "--set", "precision=single")
    assert code == 0 and out.startswith("2000 valid configurations")
    assert "51 candidates were invalid because of an undefined operation" in out and "low_fmas" in out


@pytest.mark.parametrize("backend", ["c", "reference"])
def test_strict_mode_turns_undefined_into_an_error(capsys, backend):
    code, _, err = run(capsys, "count", "gemm", *TINY, "--set", "precision=single", "--strict", "--backend", backend)
    assert code == 2 and "division or modulo by zero" in err and "fmas_per_block / loads_per_block" in err


def test_enumerate_writes_header_and_rows(tmp_path, capsys):
    target = tmp_path / "gemm.csv"
    code, out, err = run(capsys, "enumerate", "gemm", *TINY, "-o", str(target), "--derived", "threads_per_block")
    assert code == 0 and "wrote 336 configurations" in err and out == ""   # the answer is the file
    rows = list(csv.reader(target.open()))
    assert rows[0][:3] == ["dim_m", "dim_n", "blk_m"] and rows[0][-1] == "threads_per_block"
    assert len(rows) == 337
    assert all(int(r[0]) * int(r[1]) == int(r[-1]) for r in rows[1:])
    assert not list(tmp_path.glob("*.partial"))


def test_enumerate_leaves_no_file_on_error(tmp_path, capsys):
    target = tmp_path / "out.csv"
    code, _, err = run(capsys, "enumerate", "gemm", *TINY, "--set", "precision=single", "--strict", "-o", str(target))
    assert code == 2 and not target.exists() and not list(tmp_path.iterdir())


def test_explain_and_settings(capsys):
    code, out, _ = run(capsys, "explain", "gemm")
    assert code == 0 and "parameters (15" in out and "constraints (12)" in out and "L2: parameters" in out
    code, out, _ = run(capsys, "settings", "gemm")
    assert code == 0 and re.search(r"precision = 'double' +\(allowed: 'single', 'double'", out)


def test_check_full_assignment_lists_every_rejecting_rule(capsys):
    values = dict(dim_m=4, dim_n=4, blk_m=8, blk_n=4, blk_k=8, dim_vec=1, vec_mul=0, dim_m_a=8, dim_n_a=2,
                  dim_m_b=4, dim_n_b=4, tex_a=0, tex_b=0, shmem_l1=0, shmem_banks=0)
    code, out, _ = run(capsys, "check", "gemm", *TINY, *(f"{k}={v}" for k, v in values.items()))
    assert code == 1
    assert "low_occupancy_regs" in out and "max_threads_by_regs=128" in out
    assert "low_fmas" in out and "fmas_per_block=256, loads_per_block=384" in out


def test_check_valid_configuration_and_partial_completion(capsys):
    code, out, _ = run(capsys, "check", "gemm", *TINY, "dim_m=4")
    assert code == 0 and out.startswith("valid completion: dim_m=4")
    completion = dict(pair.split("=") for pair in out.split(":", 1)[1].split())
    code, out, _ = run(capsys, "check", "gemm", *TINY, *(f"{k}={v}" for k, v in completion.items()))
    assert code == 0 and out.strip() == "valid"
    code, out, _ = run(capsys, "check", "gemm", *TINY, "dim_m=3")
    assert code == 1 and "no valid configuration" in out


@pytest.mark.parametrize("argv, fragment", [
    (["count", "no/such/space.py"], "does not exist"),
    (["count", "gemm", "--set", "precision=half"], "not one of the allowed values ['single', 'double']"),
    (["count", "gemm", "--set", "devise=tiny"], "did you mean 'device'"),
    (["count", "gemm", "--set", "trans_a=x"], "expected an integer"),
    (["count", "gemm", "--set", "precision"], "expected NAME=VALUE"),
    (["count", "gemm", *TINY, "--backend", "fortran"], "invalid choice: 'fortran'"),
    (["check", "gemm", *TINY, "dimm=3"], "did you mean 'dim_m'"),
    (["enumerate", "gemm", *TINY, "-o", "x.csv", "--derived", "thread_per_block"], "did you mean 'threads_per_block'"),
])
def test_bad_input_gets_a_message_not_a_traceback(capsys, argv, fragment):
    try:
        code, out, err = run(capsys, *argv)
    except SystemExit as exc:  # argparse's usage errors (a --backend not offered)
        code, (out, err) = exc.code, capsys.readouterr()
    assert code == 2 and fragment in err and "Traceback" not in err


def test_space_file_errors_name_file_and_line(tmp_path, capsys):
    space = tmp_path / "bad.py"
    space.write_text("x = range(1, 10)\ny = range(x, z)\n")
    code, _, err = run(capsys, "count", str(space))
    assert code == 2 and f"{space}:2" in err and "unknown name" in err


def test_readme_quick_start_matches_ci():
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(quick) == 2
    ci = (Path(__file__).parents[1] / ".ci" / "run").read_text()
    install, test_command = quick[1].split(" && ")
    assert install in ci and test_command in ci
