"""Checks of the book's sources: table of contents, notebooks, configuration."""

from __future__ import annotations

import copy
import itertools
import os
import re
from pathlib import Path

import nbformat
import pytest
import yaml

from book import ROOT, chapter_notebooks, notebook_tool, read, source_of, toc_files

NOTEBOOKS = chapter_notebooks()
IDS = [p.name for p in NOTEBOOKS]


def test_every_toc_entry_has_a_source_and_every_notebook_is_in_the_toc():
    entries = toc_files()
    assert len(entries) == len(set(entries)), "una entrada aparece dos veces en _toc.yml"
    sources = {source_of(entry) for entry in entries}
    orphans = [p.name for p in NOTEBOOKS if p not in sources]
    assert not orphans, f"cuadernos fuera de _toc.yml: {orphans}"


def test_there_are_chapter_notebooks():
    assert NOTEBOOKS, "chapters/ no tiene cuadernos"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_badge_and_setup_cell_are_generated_from_the_repository_url(path):
    tool = notebook_tool()
    nb = read(path)
    expected = tool.synced(read(path), path)
    assert nb.cells[0].source == expected.cells[0].source, "insignia de Colab desactualizada: make sync"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "setup" in code[0].metadata.get("tags", []), "la 1.ª celda de código debe ser la de preparación"
    assert code[0].source == tool.setup_source(), "celda de preparación desactualizada: make sync"
    assert tool.repo_url() in code[0].source and "pip install dldna" not in code[0].source


def test_setup_cell_installs_from_the_repository_only_in_colab():
    source = notebook_tool().setup_source()
    install = [line for line in source.splitlines() if "pip install" in line]
    assert len(install) == 1 and install[0].startswith("    ")  # inside the Colab branch
    assert 'if "google.colab" in sys.modules:' in source
    assert "git+https://github.com/" in install[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_was_executed_top_to_bottom_without_errors(path):
    nb = read(path)
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert counts == list(range(1, len(counts) + 1)), f"orden de ejecución {counts}: make notebooks"
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", f"salida de error guardada: {out.get('ename')}"
            assert not (out.output_type == "stream" and out.name == "stderr"), (
                f"salida de stderr guardada en una celda: {out.text[:200]!r}"
            )


def test_terminal_view_keeps_the_last_state_of_each_progress_bar_and_the_order_of_outputs():
    from nbval.plugin import coalesce_streams

    def stream(text, name="stdout"):
        return nbformat.v4.new_output("stream", name=name, text=text)

    figure = nbformat.v4.new_output("display_data", data={"text/plain": "<Figure>"})
    raw = [stream("\rsemilla 0:   0%| | 0/9"), stream("\rsemilla 0:  50%| | 4/9"),
           stream("\rsemilla 0: 100%| | 9/9"), stream("\n"), stream("tabla\n"), figure,
           stream("aviso\n", "stderr"), stream("después\n")]
    tidy = notebook_tool().terminal_view(copy.deepcopy(raw))
    assert [(o.output_type, o.get("name"), o.get("text")) for o in tidy] == [
        ("stream", "stdout", "semilla 0: 100%| | 9/9\ntabla\n"), ("display_data", None, None),
        ("stream", "stderr", "aviso\n"), ("stream", "stdout", "después\n")]
    # nbval sees the same text in the tidy outputs as in the raw ones: stored
    # outputs tidied by `make notebooks` still compare with a fresh run.
    assert ([o.get("text") for o in coalesce_streams(copy.deepcopy(tidy))]
            == [o.get("text") for o in coalesce_streams(copy.deepcopy(raw))])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_stored_streams_are_what_a_terminal_shows(path):
    """No progress bar stored as its hundred redrawings (the book would show them all)."""
    for i, cell in enumerate(read(path).cells):
        outputs = cell.get("outputs", [])
        for before, out in itertools.pairwise(outputs):
            assert not (before.output_type == out.output_type == "stream" and before.name == out.name), (
                f"celda {i}: salidas de texto sin juntar: make notebooks")
        for out in outputs:
            if out.output_type == "stream":
                assert not re.search(r"\r[^\n]", out.text), f"celda {i}: texto con \\r sin aplicar"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_outputs_that_vary_are_marked_by_a_tag_the_reader_does_not_see(path):
    for i, cell in enumerate(read(path).cells):
        if cell.cell_type == "code":
            assert not re.search(r"^\s*#\s*NBVAL_", cell.source, re.MULTILINE), (
                f"celda {i}: usa la etiqueta nbval-ignore-output, no un comentario NBVAL_ en el código")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_every_figure_has_alt_text_and_every_widget_its_state(path):
    nb = read(path)
    uses_widgets = False
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data or "image/svg+xml" in data:
                alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
                assert len(alt) > 10, f"celda {i}: figura sin texto alternativo (mystnb.image.alt)"
            if "application/vnd.jupyter.widget-view+json" in data:
                uses_widgets = True
                assert "text/html" in data, f"celda {i}: widget sin vista estática para el libro"
    if uses_widgets:
        state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
        assert state.get("state"), "el cuaderno usa widgets pero no guarda su estado"


#: A decimal comma («0,423») in text a reader sees; the book writes «0.423» (dldna.fmt).
DECIMAL_COMMA = re.compile(r"(?<![\w.])\d+,\d+(?![\d,])")


def _prose(text: str) -> str:
    """``text`` without code and math, where a comma between digits is not a decimal comma."""
    for pattern in (r"```.*?```", r"`[^`]*`", r"\$\$.*?\$\$", r"\$[^$]*\$"):
        text = re.sub(pattern, "", text, flags=re.S)
    return text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_prose_and_alt_texts_use_the_decimal_point(path):
    for i, cell in enumerate(read(path).cells):
        alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")
        texts = [alt] + ([cell.source] if cell.cell_type == "markdown" else [])
        for text in texts:
            found = DECIMAL_COMMA.findall(_prose(text))
            assert not found, f"celda {i}: coma decimal {found}; el libro escribe el punto (0.5)"


def test_the_decimal_comma_check_finds_one():
    assert DECIMAL_COMMA.findall(_prose("con probabilidad 0,056 y `f(1,2)` en $x_{1,2}$")) == ["0,056"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_markdown_images_exist_and_have_alt_text(path):
    for cell in read(path).cells:
        if cell.cell_type != "markdown":
            continue
        for alt, target in re.findall(r"!\[([^\]]*)\]\(([^)\s]+)", cell.source):
            if target.startswith("http"):
                continue
            assert alt.strip(), f"imagen {target} sin texto alternativo"
            assert (path.parent / target).resolve().exists(), f"no existe la imagen {target}"


def test_repository_url_lives_in_one_place_of_configuration():
    url = notebook_tool().repo_url()
    skip = {".git", ".venv", "_build", "node_modules", "_static"}
    config_files = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in skip]
        config_files += [Path(folder) / f for f in files
                         if Path(f).suffix in {".yml", ".yaml", ".toml", ".txt", ".cfg", ".json"}]
    holders = sorted(p.relative_to(ROOT).as_posix() for p in config_files
                     if url in p.read_text(encoding="utf-8", errors="ignore"))
    assert holders == ["_config.yml"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for found in re.findall(r"https://github\.com/[\w.-]+/[\w.-]+", readme):
        assert found.removesuffix(".git") == url, f"el README cita otro repositorio: {found}"


def test_config_is_jupyter_book_1_without_execution_and_with_launch_buttons():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["execute"]["execute_notebooks"] == "off"
    assert config["sphinx"]["config"]["language"] == "es"
    buttons = config["launch_buttons"]
    assert buttons["colab_url"] and buttons["binderhub_url"] and buttons["thebe"] is True
    assert (ROOT / config["bibtex_bibfiles"][0]).exists()


def _requirements(path):
    lines = [line.split("#")[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return {re.split(r"[=<>~ ]", line)[0].lower(): line for line in lines
            if line and not line.startswith("-")}


def test_binder_installs_the_cpu_build_of_torch_and_otherwise_the_same_pins():
    local = _requirements(ROOT / "requirements.txt")
    binder_file = ROOT / "binder" / "requirements.txt"
    binder = _requirements(binder_file)
    assert local["torch"] == "torch==2.13.0"
    assert "download.pytorch.org/whl/cpu" in binder_file.read_text(encoding="utf-8")
    assert binder["torch"].startswith("torch==2.13.0")
    assert {k: v for k, v in binder.items() if k != "torch"} == {
        k: v for k, v in local.items() if k != "torch"}


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make book" in readme and "make test" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    # The README's test command, then every chapter on Colab's stack (README: make colab).
    assert [c.strip() for c in commands if c.strip().startswith("make")] == ["make test", "make colab"]
    assert "make colab" in readme


# Chapter 0's convention for printed checks: a question that says «idéntico» or «bit a bit»
# compares with torch.equal (no tolerance); «¿igual…?» may use allclose.
IDENTITY_LABEL = re.compile(r"¿[^?]*idéntic|bit a bit", re.I)


def _identity_prints_without_equal(source: str) -> list[str]:
    """The ``print(...)`` calls of ``source`` whose label claims identity but that call no ``equal``."""
    import ast

    # IPython lines (%pip, %matplotlib) are not Python: a placeholder keeps the blocks around them valid.
    code = "\n".join(line[:len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!"))
                     else line for line in source.splitlines())
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
            text = ast.get_source_segment(code, node)
            if IDENTITY_LABEL.search(text) and "equal(" not in text:
                found.append(text)
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_identity_labels_compare_with_torch_equal(path):
    for i, cell in enumerate(read(path).cells):
        if cell.cell_type == "code":
            bad = _identity_prints_without_equal(cell.source)
            assert not bad, (f"celda {i}: la etiqueta dice «idéntico» o «bit a bit» y no compara con "
                             f"torch.equal (capítulo 0, sección 4): {bad}")


def test_the_identity_label_check_finds_one():
    assert _identity_prints_without_equal('print("¿idénticos?", torch.allclose(a, b))')
    assert not _identity_prints_without_equal('print("¿idénticos?", torch.equal(a, b))')
    assert not _identity_prints_without_equal('print("¿iguales?", torch.allclose(a, b))')
