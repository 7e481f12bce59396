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
    expected = {"copy", "addition", "parsing", "translation", "text_to_text", "language_models", "kv_cache",
                "vit"}
    assert expected <= set(found)
    assert "base" not in found


def test_quick_run_and_table(capsys):
    bench = load_bench()
    rows = bench.run(["copy", "addition"], device="cpu", quick=True)
    assert sorted((r.task, r.models) for r in rows) == [
        ("copia", 1), ("copia", 3), ("suma (cifra mayor primero)", 1), ("suma (unidades primero)", 1),
        ("suma (unidades primero)", 3)]
    assert all(isinstance(r, BenchResult) and r.steps == 5 and r.device == "cpu" for r in rows)
    assert all(0.0 <= r.accuracy <= 1.0 and r.wall_s > 0 and r.steps_per_s > 0 for r in rows)
    # Copy claims 99 %; addition claims a comparison of its two orders, no target; no evaluation in quick.
    assert {(r.task, r.claim) for r in rows} == {("copia", 0.99), ("suma (unidades primero)", None),
                                                 ("suma (cifra mayor primero)", None)}
    assert all(r.seconds_to_claim is None for r in rows)
    text = bench.table(rows)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["tarea", "dispositivo", "modelos"] and set(lines[1]) <= {"-", " "}
    assert len(lines) == 2 + len(rows)
    # The ratio to one seed: on the rows of three seeds only, and it is their time over one's.
    one, three = (next(r for r in rows if r.task == "copia" and r.models == k) for k in (1, 3))
    assert bench._to_one(one, rows) == "—"
    assert bench._to_one(three, rows) == f"{three.wall_s / one.wall_s:.2f}"


def test_chapter_10_rows():
    bench = load_bench()
    rows = bench.run(["kv_cache", "language_models"], device="cpu", quick=True)
    tasks = [r.task for r in rows]
    cache = [r for r in rows if r.task.startswith("decodificación voraz")]
    assert [r.task for r in cache] == ["decodificación voraz sin caché KV",
                                       "decodificación voraz con caché KV"]
    assert all(r.accuracy == 1.0 and r.steps == 8 for r in cache)  # the same tokens either way
    assert {"GPT con GQA(2) (siguiente palabra)", "GPT con MQA (siguiente palabra)",
            "bloque Llama (siguiente palabra)"} <= set(tasks)
    assert all("perplejidad" in r.note for r in rows if "siguiente palabra" in r.task)


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
    text = bench.table([BenchResult("copia", "cpu", 400, 12.345, 1.0, steps_per_s=32.4, claim=0.99,
                                    seconds_to_claim=7.25),
                        BenchResult("suma", "cuda", 800, 3.0, 0.5, steps_per_s=266.7, claim=0.99)])
    lines = text.splitlines()
    assert "pasos/s" in lines[0] and "hasta la meta (s)" in lines[0]
    assert "12.3" in lines[2] and "32.4" in lines[2] and "7.2 (meta 99 %)" in lines[2]
    assert "100.0 %" in lines[2] and "no la alcanza" in lines[3] and "cuda" in lines[3]


def test_seconds_to_claim_reads_the_evaluations():
    from dldna.training import FitResult, History, Recipe

    result = FitResult(History([1.0] * 4, [0.1] * 4), Recipe(steps=4, batch_size=1, lr=0.1, warmup=1),
                       "cpu", 2.0, evals=[(2, 0.5), (4, 1.0)], eval_s=[1.0, 2.0])
    assert result.seconds_to(0.9) == 2.0 and result.seconds_to(0.4) == 1.0
    assert result.seconds_to(1.5) is None and result.steps_per_s == 2.0


def test_the_language_models_and_the_vit_have_rows():
    bench = load_bench()
    rows = bench.run(["language_models", "vit"], device="cpu", quick=True)
    assert [r.task.split()[0] for r in rows] == ["modelo", "modelo", "GPT", "GPT", "bloque", "ViT,"]
    assert all(r.steps == 5 and 0.0 <= r.accuracy <= 1.0 and r.steps_per_s > 0 for r in rows)
    assert "perplejidad" in rows[0].note and "bigramas" in rows[0].note
