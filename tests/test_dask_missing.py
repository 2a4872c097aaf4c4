"""Without Dask, `--engine dask` names the extra to install (exit 2, no traceback), and the
local engine never imports Dask."""
from __future__ import annotations

import sys

import pytest

from solverspace.cli import main


@pytest.mark.parametrize("command", [["count"], ["sample", "-n", "2"], ["enumerate", "-o", "shards"]])
def test_engine_dask_without_dask_names_the_extra(monkeypatch, capsys, tmp_path, command):
    monkeypatch.setitem(sys.modules, "distributed", None)   # import distributed -> ImportError
    monkeypatch.chdir(tmp_path)
    assert main([command[0], "gemm", "--set", "device=tiny", "--engine", "dask", *command[1:]]) == 2
    err = capsys.readouterr().err
    assert 'pip install ".[dask]"' in err and "Traceback" not in err
    assert "solverspace[dask]" not in err   # not on PyPI: the extra installs from a checkout
    assert not (tmp_path / "shards").exists()


def test_dask_options_need_the_dask_engine(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["count", "gemm", "--scheduler", "tcp://127.0.0.1:8786"])
    assert exit_.value.code == 2 and "--scheduler is an option of --engine dask" in capsys.readouterr().err
