"""Maintainer tool for the chapter notebooks.

    python tools/notebooks.py sync [NOTEBOOK ...]     # write badge + set-up cell
    python tools/notebooks.py execute [NOTEBOOK ...]  # run in place, store outputs
    python tools/notebooks.py check [NOTEBOOK ...]    # exit 1 if sync would change

The repository URL lives in one place, ``_config.yml`` (``repository.url``).
The Colab badge and the Colab install cell of every notebook, and the address
of the published book (``sphinx.config.html_baseurl``, the repository's GitHub
Pages site), are generated from it here; ``tests/test_book_structure.py`` and
``tests/test_publish.py`` check that they still match.

``execute`` runs each notebook top to bottom in a fresh kernel on the CPU
(``DLDNA_DEVICE=cpu``, the path the tests compare), stores outputs and widget
state in the file, and prints how long each notebook took. Before storing,
its stream outputs are reduced to what a terminal (or Jupyter) shows
(:func:`terminal_view`): a progress bar redrawn with ``\\r`` a hundred times
is stored as its last state, one line, not as a hundred lines in the book.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
CONFIG = ROOT / "_config.yml"
BASEURL_RE = re.compile(r"^(?P<key>\s+html_baseurl:).*$", re.MULTILINE)
BADGE_RE = re.compile(r"^\[!\[Abrir en Colab\]\(.*$", re.MULTILINE)
SETUP_TAG = "setup"
# nbval applies this pattern to the streams before comparing them
# (nbval.plugin.coalesce_streams), so a stored output tidied with it and a
# fresh, untidied one still compare equal.
_OVERWRITTEN = re.compile(r"^.*\r(?=[^\n])", re.MULTILINE)


def _config() -> dict:
    return yaml.safe_load(CONFIG.read_text(encoding="utf-8"))


def repo_url() -> str:
    """The repository URL, read from its one place of configuration."""
    return _config()["repository"]["url"].rstrip("/")


def branch() -> str:
    return _config()["repository"].get("branch", "main")


def owner_repo() -> str:
    """``owner/name`` of the GitHub repository."""
    url = repo_url()
    if not url.startswith("https://github.com/") or url.count("/") != 4:
        raise SystemExit("_config.yml: repository.url debe ser https://github.com/DUEÑO/REPOSITORIO; "
                         f"es {url!r}.")
    return url.removeprefix("https://github.com/")


def pages_url() -> str:
    """Address of the book on the repository's GitHub Pages site, with a final slash."""
    owner, name = owner_repo().split("/")
    host = f"{owner.lower()}.github.io"
    # A repository named OWNER.github.io is published at the root of that host.
    return f"https://{host}/" if name.lower() == host else f"https://{host}/{name}/"


def synced_config(text: str) -> str:
    """``_config.yml``'s text with ``html_baseurl`` set to :func:`pages_url`."""
    if not BASEURL_RE.search(text):
        raise SystemExit("_config.yml: falta la clave sphinx.config.html_baseurl.")
    return BASEURL_RE.sub(lambda m: f"{m['key']} {pages_url()}", text, count=1)


def colab_badge(notebook: Path) -> str:
    """Markdown for the 'open in Colab' badge of ``notebook``."""
    rel = notebook.resolve().relative_to(ROOT).as_posix()
    link = f"https://colab.research.google.com/github/{owner_repo()}/blob/{branch()}/{rel}"
    return f"[![Abrir en Colab](https://colab.research.google.com/assets/colab-badge.svg)]({link})"


def setup_source() -> str:
    """Source of the first code cell: install ``dldna`` in Colab only, import it."""
    return (
        "# En Colab se instala el paquete del libro desde su repositorio;\n"
        "# en local ya está instalado (véase el README).\n"
        "import sys\n"
        "\n"
        'if "google.colab" in sys.modules:\n'
        f'    %pip install -q "dldna @ git+{repo_url()}.git@{branch()}"\n'
        "\n"
        "import dldna"
    )


def notebooks(paths: list[str] | None = None) -> list[Path]:
    if paths:
        return [Path(p).resolve() for p in paths]
    return sorted(CHAPTERS.glob("*.ipynb"))


def synced(nb: nbformat.NotebookNode, path: Path) -> nbformat.NotebookNode:
    """Return ``nb`` with its badge and set-up cell regenerated."""
    first = nb.cells[0]
    if first.cell_type != "markdown" or not first.source.startswith("# "):
        raise SystemExit(f"{path.name}: la primera celda debe ser Markdown y empezar por '# Título'.")
    badge = colab_badge(path)
    if BADGE_RE.search(first.source):
        first.source = BADGE_RE.sub(lambda _: badge, first.source, count=1)
    else:
        title, _, rest = first.source.partition("\n")
        first.source = f"{title}\n\n{badge}\n\n{rest.lstrip()}".rstrip()
    code = [c for c in nb.cells if c.cell_type == "code"]
    # "hide-input": in the web book the set-up cell is folded, since it only
    # matters in Colab; in Jupyter and Colab it is an ordinary cell.
    tags = [SETUP_TAG, "hide-input"]
    if code and SETUP_TAG in code[0].get("metadata", {}).get("tags", []):
        code[0].source = setup_source()
        code[0].metadata["tags"] = tags
    else:
        nb.cells.insert(1, nbformat.v4.new_code_cell(setup_source(), metadata={"tags": tags}))
    return nb


def sync(paths: list[Path], check_only: bool = False) -> int:
    changed = 0
    before = CONFIG.read_text(encoding="utf-8")
    after = synced_config(before)
    if after != before:
        changed += 1
        print(f"{'desincronizado' if check_only else 'actualizado'}: {CONFIG.name} (html_baseurl)")
        if not check_only:
            CONFIG.write_text(after, encoding="utf-8")
    for path in paths:
        before = path.read_text(encoding="utf-8")
        nb = synced(nbformat.reads(before, as_version=4), path)
        after = nbformat.writes(nb) + "\n"
        if after != before:
            changed += 1
            print(f"{'desincronizado' if check_only else 'actualizado'}: {path.name}")
            if not check_only:
                path.write_text(after, encoding="utf-8")
    return changed


def terminal_view(outputs: list) -> list:
    """``outputs`` of one cell with adjacent stream outputs of the same stream
    merged and carriage returns applied, as a terminal shows them: a line
    rewritten after ``\\r`` keeps only its last version (the order of
    streams, figures and widgets is kept)."""
    tidy: list = []
    for out in outputs:
        if (out.get("output_type") == "stream" and tidy and tidy[-1].get("output_type") == "stream"
                and tidy[-1].get("name") == out.get("name")):
            tidy[-1]["text"] += out["text"]
        else:
            tidy.append(out)
    for out in tidy:
        if out.get("output_type") == "stream":
            out["text"] = _OVERWRITTEN.sub("", out["text"])
    return tidy


def execute(paths: list[Path], timeout: int = 1800) -> None:
    # The per-cell limit only catches a hung kernel: on a busy machine a training
    # cell takes several times its budget, which `make test` reports per notebook.
    from nbclient import NotebookClient

    os.environ["DLDNA_DEVICE"] = "cpu"
    os.environ.setdefault("PYTHONHASHSEED", "0")
    total = 0.0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
            store_widget_state=True,
        )
        start = time.perf_counter()
        client.execute()
        elapsed = time.perf_counter() - start
        total += elapsed
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = terminal_view(cell.outputs)
        nbformat.write(nb, path)
        print(f"{elapsed:7.1f} s  {path.relative_to(ROOT)}", flush=True)
    print(f"{total:7.1f} s  en total ({len(paths)} cuadernos)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["sync", "execute", "check"])
    parser.add_argument("notebooks", nargs="*")
    args = parser.parse_args(argv)
    paths = notebooks(args.notebooks)
    if args.command == "check":
        return 1 if sync(paths, check_only=True) else 0
    sync(paths)
    if args.command == "execute":
        execute(paths)
    return 0


if __name__ == "__main__":
    sys.exit(main())
