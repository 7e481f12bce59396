"""Root conftest: hooks that apply to the notebooks in chapters/ as well."""

from __future__ import annotations

from pathlib import Path

from dldna.cpu import pin_cpu_kernels

# Before any test module imports torch: the stored outputs were computed with
# PyTorch's AVX2 kernels, and the notebooks' kernels inherit the variable.
pin_cpu_kernels()

ROOT = Path(__file__).resolve().parent


# Per-notebook durations, printed at the end of the run so the time budgets
# (90 s a concept notebook, 150 s a training notebook, on 2 CPU cores) can be
# watched. A notebook declares a training budget in its metadata:
# {"dldna": {"budget_s": 150}}.
_NOTEBOOK_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        _NOTEBOOK_SECONDS[path] = _NOTEBOOK_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    if not _NOTEBOOK_SECONDS:
        return
    import nbformat

    terminalreporter.section("duración de cada cuaderno (nbval)")
    for path, seconds in sorted(_NOTEBOOK_SECONDS.items()):
        meta = nbformat.read(ROOT / path, as_version=4).metadata.get("dldna", {})
        budget = meta.get("budget_s", 90)
        flag = "" if seconds <= budget else f"  <-- supera el presupuesto de {budget} s"
        terminalreporter.write_line(f"{seconds:7.1f} s  (máx. {budget:>3} s)  {path}{flag}")
    terminalreporter.write_line(f"{sum(_NOTEBOOK_SECONDS.values()):7.1f} s  en total")
