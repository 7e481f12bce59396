"""``make bench``: train every task of ``dldna.tasks`` with its recipe and print a table.

    python tools/bench.py                   # every task, on the current device
    python tools/bench.py copy addition     # only these modules
    python tools/bench.py --quick           # a few steps each (checks the plumbing)

A task joins the benchmark by defining, in its own module of the package
``dldna.tasks`` (or in a module listed in ``OTHER_MODULES``, such as the
language models of chapter 9), a function ``benchmark(device=None)`` that returns a
:class:`dldna.tasks.base.BenchResult` (or a list of them); an optional
``quick=False`` parameter lets ``--quick`` run it in a few steps (tasks
without it are skipped by ``--quick``). Nothing
else needs to change: this script imports every module of the package and
calls the ones that have it. ``DLDNA_DEVICE`` (or ``--device``) picks the
device, as in the notebooks; run it once per device to compare them.

Columns: how many models (seeds) each step trained together
(:func:`dldna.tasks.train_together`); optimisation steps per second; the
training time, and for several seeds trained together, that time divided by
the time of the row with one seed of the same task (three seeds trained one
after the other would give about 3); the time until the validation accuracy
first reached the accuracy the chapter claims (for several seeds: until every
one had); the exact match on held-out examples never trained on (their mean).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Callable

import dldna.tasks
from dldna.tasks.base import BenchResult

HEADER = ("tarea", "dispositivo", "modelos", "pasos", "pasos/s", "tiempo (s)", "× una semilla",
          "hasta la meta (s)", "exactitud (datos nuevos)")


#: Modules outside ``dldna.tasks`` whose ``benchmark()`` joins the table, by their short name.
OTHER_MODULES = {"language_models": "dldna.language_models", "kv_cache": "dldna.kv_cache", "vit": "dldna.vit"}


def discover(names: list[str] | None = None) -> dict[str, Callable]:
    """``{module name: benchmark function}`` for the modules of ``dldna.tasks`` that
    have one, then those of :data:`OTHER_MODULES`."""
    found = {}
    modules = {info.name: f"dldna.tasks.{info.name}"
               for info in sorted(pkgutil.iter_modules(dldna.tasks.__path__), key=lambda m: m.name)}
    for name, dotted in (modules | OTHER_MODULES).items():
        if names and name not in names:
            continue
        bench = getattr(importlib.import_module(dotted), "benchmark", None)
        if callable(bench):
            found[name] = bench
    if names:
        missing = sorted(set(names) - set(found))
        if missing:
            raise SystemExit(
                f"Sin función benchmark(): {', '.join(missing)}. Disponibles: "
                f"{', '.join(n for n in discover())}."
            )
    return found


def run(names: list[str] | None = None, *, device=None, quick: bool = False) -> list[BenchResult]:
    rows: list[BenchResult] = []
    for name, bench in discover(names).items():
        kwargs = {"device": device}
        if quick:
            if "quick" not in inspect.signature(bench).parameters:
                print(f"· {name}: sin modo rápido (parámetro quick); se omite", flush=True)
                continue
            kwargs["quick"] = True
        print(f"· {name} …", flush=True)
        out = bench(**kwargs)
        rows.extend(out if isinstance(out, list) else [out])
    return rows


def _to_claim(r: BenchResult) -> str:
    if r.claim is None:
        return "—"
    when = "no la alcanza" if r.seconds_to_claim is None else f"{r.seconds_to_claim:.1f}"
    return f"{when} (meta {100 * r.claim:.0f} %)"


def _to_one(r: BenchResult, rows: list[BenchResult]) -> str:
    """The wall time of ``r`` over that of the one-seed row of the same task and device."""
    one = next((o for o in rows if o.models == 1 and (o.task, o.note, o.device, o.steps)
                == (r.task, r.note, r.device, r.steps)), None)
    if r.models == 1 or one is None or one.wall_s <= 0:
        return "—"
    return f"{r.wall_s / one.wall_s:.2f}"


def table(rows: list[BenchResult]) -> str:
    """The table of ``make bench``: one row per task, device and number of seeds."""
    cells = [HEADER] + [
        (r.task + (f" ({r.note})" if r.note else ""), r.device, str(r.models), str(r.steps),
         f"{r.steps_per_s:.1f}", f"{r.wall_s:.1f}", _to_one(r, rows), _to_claim(r),
         f"{100 * r.accuracy:.1f} %")
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(HEADER))]
    lines = []
    for k, row in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths, strict=True))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="*", help="módulos de dldna.tasks (por defecto, todos)")
    parser.add_argument("--quick", action="store_true", help="unos pocos pasos por tarea")
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (por defecto, DLDNA_DEVICE o auto)")
    args = parser.parse_args(argv)
    rows = run(args.tasks or None, device=args.device, quick=args.quick)
    print()
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
