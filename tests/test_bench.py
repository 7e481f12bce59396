"""tools/bench.py: discovery of the tasks' benchmark() functions and the table (a tiny run)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dldna.tasks.base import BenchResult

ROOT = Path(__file__).resolve().parents[1]


def load_bench():
    spec = importlib.util.spec_from_file_location("bench", ROOT / "tools" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_task_module_with_a_benchmark_is_found():
    bench = load_bench()
    found = bench.discover()
    assert {"copy", "addition", "parsing"} <= set(found)
    assert "base" not in found


def test_quick_run_and_table(capsys):
    bench = load_bench()
    rows = bench.run(["copy", "addition"], device="cpu", quick=True)
    assert sorted(r.task for r in rows) == ["copia", "suma (cifra mayor primero)", "suma (unidades primero)"]
    assert all(isinstance(r, BenchResult) and r.steps == 5 and r.device == "cpu" for r in rows)
    assert all(0.0 <= r.accuracy <= 1.0 and r.wall_s > 0 for r in rows)
    text = bench.table(rows)
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["tarea", "dispositivo"] and set(lines[1]) <= {"-", " "}
    assert len(lines) == 2 + len(rows)


def test_main_prints_the_table(capsys):
    bench = load_bench()
    assert bench.main(["parsing", "--quick", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "análisis sintáctico" in out and "exactitud" in out


def test_quick_skips_benchmarks_without_a_quick_mode(monkeypatch, capsys):
    bench = load_bench()
    calls = []

    def slow(device=None):
        calls.append(device)
        return BenchResult("lenta", "cpu", 1, 1.0, 1.0)

    monkeypatch.setattr(bench, "discover", lambda names=None: {"lenta": slow})
    assert bench.run(quick=True) == [] and calls == []
    assert "se omite" in capsys.readouterr().out
    assert bench.run(device="cpu")[0].task == "lenta" and calls == ["cpu"]


def test_unknown_task_is_reported():
    bench = load_bench()
    with pytest.raises(SystemExit, match="Sin función benchmark"):
        bench.discover(["no_existe"])


def test_table_format():
    bench = load_bench()
    text = bench.table([BenchResult("copia", "cpu", 400, 12.345, 1.0)])
    assert "12.3" in text and "100.0 %" in text and "400" in text
