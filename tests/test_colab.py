"""Colab as it is (tools/colab.py): the install adds only dldna, and the runner's checks bite.

Running every chapter in the Colab environment is ``make colab`` (``.ci/run``
calls it after ``make test``); here are its parts, each on a case where it must
say no.
"""

import ast
import copy
import importlib.util
import json
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("colab_tool", ROOT / "tools" / "colab.py")
colab = importlib.util.module_from_spec(spec)
spec.loader.exec_module(colab)


def _pins() -> dict[str, str]:
    lines = (ROOT / "requirements-colab.txt").read_text(encoding="utf-8").splitlines()
    return colab.parse_freeze("\n".join(line.split("#")[0] for line in lines))


def test_requirements_colab_holds_colab_versions():
    pins = _pins()
    assert pins["ipywidgets"] == "7.7.1"
    assert pins["ipython"] == "7.34.0"
    assert pins["torch"] == "2.11.0"
    assert pins["notebook"] == "6.5.7"
    header = (ROOT / "requirements-colab.txt").read_text(encoding="utf-8")
    assert re.search(r"commit [0-9a-f]{7,} of \d{4}-\d{2}-\d{2}", header)


def test_every_dependency_admits_colabs_version():
    """What pyproject asks for, Colab's pinned version satisfies: pip has nothing to replace."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11 and newer
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _pins()
    for line in project["dependencies"]:
        req = Requirement(line)
        name = colab._name(req.name)
        assert name in pins, f"{name} no está en requirements-colab.txt"
        assert req.specifier.contains(pins[name]), f"{line} no admite {name}=={pins[name]} de Colab"


def test_parse_freeze_drops_local_tags_and_urls():
    text = "torch==2.11.0+cu128\nIPython==7.34.0\ngoogle-colab @ file:///colabtools\n# nota\n"
    assert colab.parse_freeze(text) == {"torch": "2.11.0", "ipython": "7.34.0"}


def test_install_in_colab_adds_only_dldna():
    """The wheel of this checkout, ``pip install --dry-run`` into the Colab environment."""
    venv = colab.DEFAULT_VENV
    assert (venv / colab.STAMP).exists(), "Falta el entorno de Colab: créalo con `make colab-env`."
    planned = colab.would_install(venv, colab.wheel())
    assert [colab._name(p) for p in planned] == ["dldna"], planned


# ------------------------------------------------------------------ the runner


def _notebook(cells, widgets=None):
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    if widgets is not None:
        nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": widgets}}
    return nb


def _code(*outputs, tags=()):
    return {"cell_type": "code", "source": "", "metadata": {"tags": list(tags)},
            "outputs": list(outputs), "execution_count": 1}


def _stream(text):
    return {"output_type": "stream", "name": "stdout", "text": text}


def _explorer(model_id):
    return {"output_type": "display_data", "metadata": {},
            "data": {colab.WIDGET_MIME: {"version_major": 2, "version_minor": 0, "model_id": model_id},
                     "text/plain": "explorador", "text/html": "<div class='dldna-explorer'></div>"}}


def _state(image_value):
    return {"box": {"state": {"_model_name": "VBoxModel", "children": ["IPY_MODEL_aa", "IPY_MODEL_bb"]}},
            "aa": {"state": {"_model_name": "HTMLModel", "value": "<strong>título</strong>"}},
            "bb": {"state": {"_model_name": "HTMLModel", "value": image_value}}}


GOOD_IMAGE = '<img src="data:image/png;base64,AAAA" alt="x">'


def test_problems_accepts_the_same_notebook():
    nb = _notebook([_code(_stream("las filas suman 1: True\n")), _code(_explorer("box"))],
                   widgets=_state(GOOD_IMAGE))
    assert colab.problems(nb, copy.deepcopy(nb)) == []


def test_problems_sees_a_check_that_no_longer_holds():
    stored = _notebook([_code(_stream("perplejidad 2.46 < 3.44: True\n"))])
    executed = _notebook([_code(_stream("perplejidad 3.50 < 3.44: False\n"))])
    (found,) = colab.problems(stored, executed)
    assert "comprobaciones ['True']" in found and "['False']" in found


def test_problems_lets_numbers_move_when_checks_hold():
    stored = _notebook([_code(_stream("exactitud 24 %: True\n"))])
    executed = _notebook([_code(_stream("exactitud 23 %: True\n"))])
    assert colab.problems(stored, executed) == []


def _html(text):
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/html": text, "text/plain": "<tabla>"}}


def test_changed_lines_counts_a_moved_figure_as_nbval_would():
    """A last digit that moved is a changed line; what nbval does not compare is not."""
    stored = _notebook([
        _code(tags=["setup"]),
        _code(_stream("Entorno: Jupyter local (o pruebas)\nPython 3.11.7 · PyTorch 2.13.0\n")),
        _code(_stream("semilla 0: 100 % |████| 300/300 [00:02<00:00, 112.02 pasos/s]\nexactitud 24.1 %\n")),
        _code(_stream("12.3 s\n"), tags=["nbval-ignore-output"]),
        _code(_stream("pérdida 0.8788\n"), _html("<b>0.8788</b>"))])
    executed = _notebook([
        _code(_stream("Note: you may need to restart the kernel to use updated packages.\n"), tags=["setup"]),
        _code(_stream("Entorno: Google Colab\nPython 3.13.15 · PyTorch 2.11.0\n")),
        # A bar redrawn with \r, interrupted by another stream: nbval merges each stream by name.
        _code(_stream("\rsemilla 0:  41 % |██  | 123/300 [00:01<00:01, 122.96 pasos/s]"),
              {"output_type": "stream", "name": "stderr", "text": "aviso\n"},
              _stream("\rsemilla 0: 100 % |████| 300/300 [00:02<00:00, 128.26 pasos/s]\nexactitud 24.1 %\n")),
        _code(_stream("20.5 s\n"), tags=["nbval-ignore-output"]),
        _code(_stream("pérdida 0.8789\n"), _html("<b>0.8789</b>"))])
    stored["cells"][2]["outputs"].insert(1, {"output_type": "stream", "name": "stderr", "text": "aviso\n"})
    assert colab.changed_lines(stored, copy.deepcopy(stored)) == []
    (figure, html) = colab.changed_lines(stored, executed)
    assert figure == (5, "pérdida 0.8788", "pérdida 0.8789")
    assert html[0] == 5 and html[1].startswith("text/html: 13 caracteres") and html[1] != html[2]
    missing = _notebook(executed["cells"][:4] + [_code()])
    assert colab.changed_lines(stored, missing)[0] == (5, "pérdida 0.8788", "")
    assert colab.changed_lines(stored, _notebook(executed["cells"][:4])) is None  # problems() says why


def test_problems_sees_errors_and_tracebacks():
    error = {"output_type": "error", "ename": "AttributeError",
             "evalue": "'VBox' object has no attribute '_repr_mimebundle_'", "traceback": []}
    stored = _notebook([_code(), _code()])
    executed = _notebook([_code(error),
                          _code(_stream("Traceback (most recent call last):\n  ...\nKeyError: 1\n"))])
    found = colab.problems(stored, executed)
    assert any("_repr_mimebundle_" in f for f in found)
    assert any("KeyError" in f for f in found)


def test_problems_sees_an_explorer_without_its_picture():
    stored = _notebook([_code(_explorer("box"))], widgets=_state(GOOD_IMAGE))
    blank = _notebook([_code(_explorer("box"))], widgets=_state(""))
    broken = _notebook([_code(_explorer("box"))],
                       widgets=_state('<div class="dldna-error">no se puede mostrar</div>'))
    assert colab.problems(stored, blank) == ["celda 1: el explorador no dibujó su imagen"]
    assert colab.problems(stored, broken) == ["celda 1: el explorador muestra un error"]


def test_prepare_points_the_readers_install_at_the_wheel(tmp_path):
    source = ROOT / "chapters" / "00_como_usar.ipynb"
    wheel = tmp_path / "dldna-0.1.0-py3-none-any.whl"
    nb = colab.prepare(source, wheel)
    setup = [c for c in nb["cells"] if "setup" in c["metadata"].get("tags", [])][0]
    original = [c for c in json.loads(source.read_text())["cells"]
                if "setup" in c["metadata"].get("tags", [])][0]
    assert f'"dldna @ {wheel.as_uri()}"' in setup["source"]
    # Only the address changes: the cell is the reader's.
    assert re.sub(r'"dldna @ [^"]+"', "X", setup["source"]) == re.sub(
        r'"dldna @ [^"]+"', "X", "".join(original["source"]))
    assert "google.colab" in nb["cells"][0]["source"] and "DLDNA_FROM" in nb["cells"][-1]["source"]


# ---------------------------------------------------------------- Python 3.13

#: Standard-library modules that Python 3.13 removed (PEP 594, and lib2to3).
REMOVED_IN_313 = {"aifc", "audioop", "cgi", "cgitb", "chunk", "crypt", "imghdr", "mailcap", "msilib",
                  "nis", "nntplib", "ossaudiodev", "pipes", "sndhdr", "spwd", "sunau", "telnetlib",
                  "uu", "xdrlib", "lib2to3"}


def _sources():
    for path in [*ROOT.glob("dldna/**/*.py"), *ROOT.glob("tools/*.py"), *ROOT.glob("tests/*.py"),
                 *ROOT.glob("figures/*.py")]:
        yield path, path.read_text(encoding="utf-8")
    for path in ROOT.glob("chapters/*.ipynb"):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        # IPython's magics (%pip, !ls) are not Python: each becomes a `pass` at its indentation.
        yield path, re.sub(r"^(\s*)[%!].*$", r"\1pass", code, flags=re.MULTILINE)


def test_no_module_that_python_313_removed():
    """Colab runs Python 3.13; these machines only 3.11, so the code is kept free of what 3.13 removed."""
    used = set()
    for path, text in _sources():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                used |= {(path.name, a.name.split(".")[0]) for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                used.add((path.name, node.module.split(".")[0]))
    assert not {u for u in used if u[1] in REMOVED_IN_313}


def test_workflow_has_the_colab_job():
    workflow = (ROOT / ".github" / "workflows" / "libro.yml").read_text(encoding="utf-8")
    assert re.search(r'python-version: "3\.13"', workflow)
    assert "make colab" in workflow
