"""Colab as it is: the book's chapters on the stack Colab ships.

    python tools/colab.py refresh FREEZE --commit SHA --date YYYY-MM-DD
        rewrite requirements-colab.txt from Colab's published ``pip-freeze.gpu.txt``
    python tools/colab.py env [--venv DIR]
        build the Colab environment (default ``.venv-colab``) from requirements-colab.txt
    python tools/colab.py check-install [--venv DIR]
        build dldna's wheel; ``pip install --dry-run`` of it into the Colab
        environment must add dldna and nothing else
    python tools/colab.py run [--venv DIR] [--device cpu|cuda] [NOTEBOOK ...]
        execute every chapter (or those named) as Colab would, and check it
    python tools/colab.py gpu-wheels [DIR]
        download, for a GPU machine with Python 3.12 and torch but no Jupyter and
        no network, the wheels of Colab's Jupyter stack (see CONTRIBUTING.md)

``run`` does, for each chapter, what a reader's Colab session does: the
notebook is copied outside the repository, the kernel is the Colab
environment's (its ipykernel, IPython, ipywidgets and torch), ``google.colab``
is present, and the set-up cell runs as the reader has it, except that its
``%pip install "dldna @ git+…"`` names the wheel built from this checkout (the
same files a ``git+`` install would build). Nothing of the repository is on
``sys.path`` (a last cell checks that ``dldna`` was imported from the
environment's site-packages). The run fails when

* any output is an error or holds a traceback;
* a printed check changed: the ``True``/``False`` printed by a cell differ
  from the ones the book stores (the numbers beside them may move with
  another torch; the conclusions may not);
* an explorer did not draw its picture (its widget state has no image), or
  shows an error box the stored notebook does not.

Beside the problems it counts, for each chapter, the output lines that differ
from the book's, compared as nbval compares them (:func:`changed_lines`): not
a failure, since another torch may move a last digit, but the figure chapter 0
quotes, measured again on every run (each line is listed).

It prints a table of chapters, seconds and problems, and writes the executed
notebooks to ``_build/colab/<device>/`` to look at. ``--device cuda`` is the
GPU run (the notebooks pick the GPU through ``DLDNA_DEVICE``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
REQUIREMENTS = ROOT / "requirements-colab.txt"
DEFAULT_VENV = ROOT / ".venv-colab"
BUILD = ROOT / "_build" / "colab"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
STAMP = ".instalado"

#: What a reader's kernel touches; the rest of the environment is what these need.
ROOTS = ["torch", "numpy", "scipy", "matplotlib", "seaborn", "pandas", "scikit-learn", "tqdm",
         "ipywidgets", "ipykernel", "ipython", "traitlets", "jupyter_client", "jupyter_core",
         "notebook", "nbclient", "nbformat", "tokenizers", "transformers"]
#: torch's GPU runtime: whatever the torch wheel asks for (on a CPU they are never loaded,
#: and Colab's +cu128 build names other ones than PyPI's).
GPU_RUNTIME = re.compile(r"^(nvidia-.*|triton|cuda-.*)$")
#: Variables that the Makefile exports for the repository's own runs; Colab has none of them.
NOT_IN_COLAB = ("PYTHONPATH", "ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA",
                "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_CONFIG_DIR")
_BOOL = re.compile(r"\b(True|False)\b")
_SETUP_SPEC = re.compile(r'"dldna @ [^"]+"')


def _name(requirement: str) -> str:
    return re.split(r"[=<>@ ;\[]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


# ------------------------------------------------------------------- refresh


def parse_freeze(text: str) -> dict[str, str]:
    """``pip freeze`` text → {normalised name: version}, local tags (``+cu128``) dropped.

    Lines installed from a file or URL (``name @ …``) have no version on PyPI
    and are left out.
    """
    pins = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or " @ " in line or "==" not in line:
            continue
        name, version = line.split("==", 1)
        pins[_name(name)] = version.split("+", 1)[0]
    return pins


def refresh(freeze: Path, commit: str, date: str) -> None:
    """Resolve :data:`ROOTS` under Colab's pins and write requirements-colab.txt."""
    colab = parse_freeze(freeze.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        constraints = Path(tmp, "colab.txt")
        constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(colab.items())
                                       if not GPU_RUNTIME.match(n)), encoding="utf-8")
        report = Path(tmp, "report.json")
        subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
                        "--quiet", "--report", str(report), "-c", str(constraints), *ROOTS],
                       check=True)
        resolved = {_name(item["metadata"]["name"]): item["metadata"]["version"]
                    for item in json.loads(report.read_text())["install"]}
    lines = [
        "# Colab's runtime, as Colab publishes it: the versions of what a reader's kernel",
        "# touches, and of what those need (tools/colab.py refresh writes this file).",
        "# Source: github.com/googlecolab/backend-info, pip-freeze.gpu.txt,",
        f"# commit {commit} of {date}. Colab runs Python {_colab_python(freeze)};",
        "# these machines have 3.11, which installs the same versions.",
        "# torch's GPU runtime (nvidia-*, triton) is left to the torch wheel: on a CPU it",
        "# is never loaded, and Colab's +cu128 build names other packages than PyPI's.",
        "# Refresh: download pip-freeze.gpu.txt and os-info-gpu.txt from that repository, then",
        "#   python tools/colab.py refresh pip-freeze.gpu.txt --commit SHA --date YYYY-MM-DD",
    ]
    for name, version in sorted(resolved.items()):
        if GPU_RUNTIME.match(name):
            continue
        note = "" if colab.get(name) == version else "  # no está en Colab: la versión que elige pip"
        lines.append(f"{name}=={version}{note}")
    REQUIREMENTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{REQUIREMENTS.name}: {len(lines)} líneas")


def _colab_python(freeze: Path) -> str:
    info = freeze.with_name("os-info-gpu.txt")
    if info.exists():
        found = re.search(r"^Python (\S+)", info.read_text(encoding="utf-8"), re.MULTILINE)
        if found:
            return found.group(1)
    return "3.13"


#: What a GPU machine with PyTorch lacks to run a notebook: Colab's Jupyter stack.
JUPYTER_STACK = ["ipykernel", "ipython", "ipywidgets", "widgetsnbextension", "jupyterlab-widgets",
                 "traitlets", "jupyter-client", "jupyter-core", "nbclient", "nbformat", "tornado",
                 "pyzmq", "debugpy", "matplotlib-inline", "nest-asyncio", "jedi", "parso", "pexpect",
                 "ptyprocess", "prompt-toolkit", "wcwidth", "pickleshare", "backcall", "decorator",
                 "ipython-genutils", "fastjsonschema", "jsonschema", "jsonschema-specifications",
                 "referencing", "rpds-py", "attrs", "platformdirs", "entrypoints", "seaborn"]


def gpu_wheels(target: Path) -> None:
    """Download :data:`JUPYTER_STACK` at Colab's versions for CPython 3.12 on x86-64 Linux."""
    pins = parse_freeze(REQUIREMENTS.read_text(encoding="utf-8"))
    wanted = [f"{n}=={pins[n]}" for n in JUPYTER_STACK]
    platforms = [arg for tag in ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64",
                                 "manylinux2014_x86_64", "manylinux1_x86_64")
                 for arg in ("--platform", tag)]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp",
                    *platforms, "-d", str(target), *wanted], check=True)
    size = sum(f.stat().st_size for f in target.glob("*.whl")) / 2**20
    print(f"{len(wanted)} ruedas en {target} ({size:.0f} MiB)")


# ----------------------------------------------------------------------- env


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def env(venv: Path) -> None:
    """Build ``venv`` with requirements-colab.txt (again only if that file changed)."""
    stamp = venv / STAMP
    if stamp.exists() and stamp.stat().st_mtime >= REQUIREMENTS.stat().st_mtime:
        return
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(_python(venv)), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", "-r", str(REQUIREMENTS)], check=True)
    stamp.touch()


def _check_env(venv: Path) -> None:
    if not (venv / STAMP).exists():
        sys.exit(f"No encuentro el entorno de Colab en {venv}: créalo con `make colab-env`.")


# -------------------------------------------------------------- check-install


def wheel(dist: Path | None = None) -> Path:
    """dldna's wheel, built from this checkout into ``dist`` (default: a new temporary folder)."""
    dist = Path(tempfile.mkdtemp(prefix="dldna-wheel-")) if dist is None else dist
    dist.mkdir(parents=True, exist_ok=True)
    # With setuptools at hand no build environment is downloaded (these machines' CI
    # reaches PyPI, but a build needs nothing from it); a Python 3.12+ venv has none.
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation,
                    "--wheel-dir", str(dist), str(ROOT)], check=True)
    (built,) = dist.glob("dldna-*.whl")
    return built


def _colab_environ() -> dict[str, str]:
    """This process's environment without what Colab does not have (the repository on
    ``PYTHONPATH`` would make pip see this checkout's dldna as installed)."""
    return {k: v for k, v in os.environ.items() if k not in NOT_IN_COLAB}


def _uninstall_dldna(venv: Path) -> None:
    """Back to Colab's image, which has no dldna (a run leaves the last chapter's install)."""
    subprocess.run([str(_python(venv)), "-m", "pip", "uninstall", "--quiet", "--yes", "dldna"],
                   check=True, capture_output=True, env=_colab_environ())


def would_install(venv: Path, wheel_path: Path) -> list[str]:
    """``name==version`` of everything ``pip install wheel_path`` would install in ``venv``
    as Colab's image has it (without dldna)."""
    _uninstall_dldna(venv)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp, "report.json")
        subprocess.run([str(_python(venv)), "-m", "pip", "install", "--dry-run", "--quiet",
                        "--disable-pip-version-check", "--report", str(report), str(wheel_path)],
                       check=True, env=_colab_environ())
        items = json.loads(report.read_text())["install"]
    return [f"{i['metadata']['name']}=={i['metadata']['version']}" for i in items]


def check_install(venv: Path) -> int:
    _check_env(venv)
    planned = would_install(venv, wheel())
    print("pip instalaría en el entorno de Colab:", ", ".join(planned) or "nada")
    if [_name(p) for p in planned] != ["dldna"]:
        print("ERROR: la celda de instalación cambiaría lo que trae Colab.", file=sys.stderr)
        return 1
    return 0


# ----------------------------------------------------------------------- run

_PRELUDE = ("# Añadida por tools/colab.py: la sesión se presenta como Colab.\n"
            "import sys, types\nsys.modules.setdefault('google.colab', types.ModuleType('google.colab'))")
_EPILOGUE = ("# Añadida por tools/colab.py: de dónde vino dldna.\n"
             "import sys, dldna\nprint('DLDNA_FROM', dldna.__file__)\nprint('PYTHON', sys.executable)")


def prepare(source: Path, wheel_path: Path) -> dict:
    """The notebook a Colab reader runs: ``source`` with the install pointing at the wheel."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    setup = [c for c in nb["cells"] if "setup" in c.get("metadata", {}).get("tags", [])]
    if len(setup) != 1:
        raise SystemExit(f"{source.name}: esperaba una celda de preparación (etiqueta «setup»).")
    text = "".join(setup[0]["source"])
    if not _SETUP_SPEC.search(text):
        raise SystemExit(f"{source.name}: la celda de preparación no instala «dldna @ …».")
    setup[0]["source"] = _SETUP_SPEC.sub(f'"dldna @ {wheel_path.as_uri()}"', text)

    def cell(code, cell_id):
        return {"cell_type": "code", "id": cell_id, "metadata": {"tags": ["colab-runner"]},
                "source": code, "outputs": [], "execution_count": None}

    nb["cells"] = [cell(_PRELUDE, "colab-prelude"), *nb["cells"], cell(_EPILOGUE, "colab-epilogue")]
    return nb


def _texts(cell: dict) -> list[str]:
    out = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            out.append("".join(output.get("text", "")))
        elif "data" in output:
            out.append("".join(output["data"].get("text/plain", "")))
        elif output.get("output_type") == "error":
            out.append("\n".join(output.get("traceback", [])))
    return out


def _code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"
            and "colab-runner" not in c.get("metadata", {}).get("tags", [])]


def _widget_images(state: dict, model_id: str) -> list[str]:
    """The ``value`` of every HTML widget reachable from ``model_id`` in the stored state."""
    seen, stack, values = set(), [model_id], []
    while stack:
        mid = stack.pop()
        if mid in seen or mid not in state:
            continue
        seen.add(mid)
        model = state[mid].get("state", {})
        if model.get("_model_name") == "HTMLModel":
            values.append(model.get("value", ""))
        for ref in re.findall(r"IPY_MODEL_([0-9a-f]+)", json.dumps(model)):
            stack.append(ref)
    return values


def problems(stored: dict, executed: dict) -> list[str]:
    """What the reader would meet in ``executed`` that ``stored`` (the book) does not have."""
    found = []
    cells = _code_cells(executed)
    for output in (o for c in executed["cells"] for o in c.get("outputs", [])):
        if output.get("output_type") == "error":
            found.append(f"error: {output.get('ename')}: {output.get('evalue')}")
    for c in executed["cells"]:
        for text in _texts(c):
            if "Traceback (most recent call last)" in text and not any(
                    o.get("output_type") == "error" for o in c.get("outputs", [])):
                found.append("traceback en una salida: " + text.strip().splitlines()[-1][:120])
    before = _code_cells(stored)
    if len(before) != len(cells):
        return found + [f"{len(cells)} celdas de código, el libro guarda {len(before)}"]
    state = executed.get("metadata", {}).get("widgets", {}).get(
        "application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for i, (old, new) in enumerate(zip(before, cells, strict=True)):
        old_checks = _BOOL.findall("\n".join(_texts(old)))
        new_checks = _BOOL.findall("\n".join(_texts(new)))
        if old_checks != new_checks:
            found.append(f"celda {i + 1}: comprobaciones {old_checks} en el libro, {new_checks} aquí")
        old_errors = sum("dldna-error" in "".join(o.get("data", {}).get("text/html", ""))
                         for o in old.get("outputs", []))
        for output in new.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_MIME)
            if view is None:
                continue
            values = _widget_images(state, view["model_id"])
            if any("dldna-error" in v for v in values) and not old_errors:
                found.append(f"celda {i + 1}: el explorador muestra un error")
            elif not old_errors and not any("<img src=\"data:image/png" in v for v in values):
                found.append(f"celda {i + 1}: el explorador no dibujó su imagen")
    return found


def _sanitizers() -> list[tuple[re.Pattern, str]]:
    """The book's nbval sanitizers (``tests/nbval_sanitize.cfg``, read by nbval's own parser):
    what legitimately varies between runs."""
    from nbval.plugin import get_sanitize_patterns

    text = (ROOT / "tests" / "nbval_sanitize.cfg").read_text(encoding="utf-8")
    return [(re.compile(regex), replace) for regex, replace in get_sanitize_patterns(text)]


#: The lines of ``dldna.runtime.describe``: where, with what, on which device; in Colab they differ by design.
_ENVIRONMENT_LINE = re.compile(r"^(Entorno: |Python \S+ · PyTorch |Dispositivo de entrenamiento: )")
#: What nbval does not compare (``IPyNbFile.skip_compare`` in nbval's plugin, without ``--nbdime``).
_NOT_COMPARED = {"application/vnd.jupyter.widget-view+json", "image/png", "image/jpeg"}


def changed_lines(stored: dict, executed: dict) -> list[tuple[int, str, str]] | None:
    """``(cell, book's line, executed line)`` for every printed line that differs,
    or ``None`` when the code cells cannot be paired (:func:`problems` says so).

    Compared as nbval compares the notebook: the streams of a cell merged by
    name with carriage returns applied (nbval's own ``coalesce_streams``),
    nbval's sanitizers on both sides, cells the book tags
    ``nbval-ignore-output`` skipped, and every output nbval compares:
    ``text/plain`` line by line, any other text (``text/html``,
    ``image/svg+xml``) as one line with its length and hash; images and
    widget ids, which nbval skips, are skipped. A line one side lacks is
    compared with ``""``. Left out by design: the set-up cell (in Colab it
    installs), the environment's description (:data:`_ENVIRONMENT_LINE`) and
    error outputs (:func:`problems` fails on them). ``cell`` counts code cells
    from 1, as :func:`problems` does.
    """
    import hashlib

    import nbformat
    from nbval.plugin import coalesce_streams

    rules = _sanitizers()

    def sanitize(text: str) -> str:
        for pattern, replace in rules:
            text = pattern.sub(replace, text)
        return text

    def lines(cell: dict) -> list[str]:
        # The JSON may split a text into a list of lines; "".join gives one string either way.
        outputs = [nbformat.from_dict({**o, "text": "".join(o["text"])} if o.get("output_type") == "stream"
                                      else o) for o in cell.get("outputs", [])]
        found = []
        for output in coalesce_streams(outputs):
            if output.output_type == "stream":
                found += sanitize(output.text).splitlines()
            for mime, value in output.get("data", {}).items():
                if mime in _NOT_COMPARED:
                    continue
                raw = "".join(value) if isinstance(value, str | list) else json.dumps(value, sort_keys=True)
                text = sanitize(raw)
                if mime == "text/plain":
                    found += text.splitlines()
                else:
                    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]
                    found.append(f"{mime}: {len(text)} caracteres, sha1 {digest}")
        return [line for line in found if line.strip() and not _ENVIRONMENT_LINE.match(line)]

    old_cells, new_cells = _code_cells(stored), _code_cells(executed)
    if len(old_cells) != len(new_cells):
        return None
    found = []
    for i, (old, new) in enumerate(zip(old_cells, new_cells, strict=True), start=1):
        if {"nbval-ignore-output", "setup"} & set(old.get("metadata", {}).get("tags", [])):
            continue
        before, after = lines(old), lines(new)
        before += [""] * (len(after) - len(before))
        after += [""] * (len(before) - len(after))
        found += [(i, a, b) for a, b in zip(before, after, strict=True) if a != b]
    return found


def _execute(path: Path, out: Path, device: str) -> None:
    """Run inside the Colab environment: execute ``path`` into ``out`` (nbclient)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=1800, kernel_name="python3", allow_errors=True,
                            store_widget_state=True, resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    finally:
        nbformat.write(nb, out)


def run(venv: Path, device: str, notebooks: list[Path]) -> int:
    _check_env(venv)
    if device == "cuda":
        probe = subprocess.run([str(_python(venv)), "-c", "import torch; print(torch.cuda.is_available())"],
                               capture_output=True, text=True)
        if probe.stdout.strip() != "True":
            print("ERROR: --device cuda, pero torch no ve ninguna GPU en este entorno.", file=sys.stderr)
            return 1
    wheel_path = wheel()
    planned = would_install(venv, wheel_path)
    if [_name(p) for p in planned] != ["dldna"]:
        print("ERROR: la instalación añadiría", planned, file=sys.stderr)
        return 1
    target = BUILD / device
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    environ = _colab_environ()
    environ["DLDNA_DEVICE"] = device
    environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # ipykernel's debugger notes, noise here
    python = str(_python(venv))
    rows, failed = [], 0
    with tempfile.TemporaryDirectory(prefix="colab-") as tmp:
        environ["JUPYTER_DATA_DIR"] = str(Path(tmp, "jupyter-data"))
        for source in notebooks:
            # Each chapter starts from Colab's image: no dldna until its set-up cell installs it.
            _uninstall_dldna(venv)
            work = Path(tmp, source.stem)
            work.mkdir()
            copy = work / source.name
            copy.write_text(json.dumps(prepare(source, wheel_path)), encoding="utf-8")
            executed_path = target / source.name
            start = time.perf_counter()
            done = subprocess.run([python, str(Path(__file__).resolve()), "_execute", str(copy),
                                   str(executed_path), device], env=environ, cwd=work)
            seconds = time.perf_counter() - start
            changed = None
            if done.returncode != 0 or not executed_path.exists():
                found = [f"nbclient terminó con código {done.returncode}"]
            else:
                stored = json.loads(source.read_text(encoding="utf-8"))
                executed = json.loads(executed_path.read_text(encoding="utf-8"))
                found = problems(stored, executed)
                changed = changed_lines(stored, executed)
                origin = "\n".join(_texts(executed["cells"][-1]))
                if f"DLDNA_FROM {venv.resolve()}" not in origin and f"DLDNA_FROM {venv}" not in origin:
                    found.append("dldna no vino del entorno de Colab: " + origin.strip()[:200])
            failed += bool(found)
            rows.append((source.name, seconds, found, len(changed or [])))
            status = "bien" if not found else f"{len(found)} problema(s)"
            print(f"{source.name:<32} {seconds:7.1f} s  {status:<14} "
                  f"{'—' if changed is None else len(changed):>4} líneas distintas del libro", flush=True)
            for item in found:
                print(f"    - {item}", flush=True)
            for cell, old, new in changed or []:
                print(f"    celda {cell}:\n      libro: {old}\n      aquí:  {new}", flush=True)
    total = sum(r[1] for r in rows)
    print(f"\n{len(rows)} capítulos en {device} ({_versions(python)}): {total:.0f} s en total; "
          f"{failed} con problemas; {sum(r[3] for r in rows)} líneas de salida distintas de las del libro "
          "(comparadas como nbval, sin tiempos ni entorno)")
    return 1 if failed else 0


def _versions(python: str) -> str:
    code = ("import sys, torch, ipywidgets, IPython; print(f'Python {sys.version.split()[0]}, torch "
            "{torch.__version__}, ipywidgets {ipywidgets.__version__}, IPython {IPython.__version__}')")
    return subprocess.run([python, "-c", code], capture_output=True, text=True,
                          env=_colab_environ()).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("refresh")
    p.add_argument("freeze", type=Path)
    p.add_argument("--commit", required=True)
    p.add_argument("--date", required=True)
    for name in ("env", "check-install", "run"):
        p = sub.add_parser(name)
        p.add_argument("--venv", type=Path, default=DEFAULT_VENV)
        if name == "run":
            p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
            p.add_argument("notebooks", nargs="*", type=Path)
    p = sub.add_parser("gpu-wheels")
    p.add_argument("target", type=Path, nargs="?", default=ROOT / ".whl")
    p = sub.add_parser("_execute")
    p.add_argument("path", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("device")
    args = parser.parse_args(argv)
    if getattr(args, "venv", None) is not None:
        # The chapters run from a temporary folder: a relative path would point nowhere there.
        args.venv = args.venv.absolute()
    if args.command == "refresh":
        refresh(args.freeze, args.commit, args.date)
    elif args.command == "env":
        env(args.venv)
    elif args.command == "check-install":
        return check_install(args.venv)
    elif args.command == "run":
        notebooks = [p.resolve() for p in args.notebooks] or sorted(CHAPTERS.glob("*.ipynb"))
        return run(args.venv, args.device, notebooks)
    elif args.command == "gpu-wheels":
        gpu_wheels(args.target)
    elif args.command == "_execute":
        _execute(args.path, args.out, args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
