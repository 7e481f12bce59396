"""The book's diagrams, shipped inside the package so every reader sees them.

Each diagram is drawn by a script ``figures/NAME.py`` that writes
``dldna/diagrams/NAME.svg``. Notebooks show it with ``viz.diagram("NAME")``
rather than a Markdown image: a relative image path resolves in the book,
in local Jupyter and on GitHub, but not in Colab, which opens the notebook
alone; the package is installed everywhere.
"""

from __future__ import annotations

from importlib import resources

from IPython.display import SVG


def available() -> list[str]:
    """Names of the diagrams that ship with the package."""
    folder = resources.files("dldna") / "diagrams"
    return sorted(p.name.removesuffix(".svg") for p in folder.iterdir() if p.name.endswith(".svg"))


def diagram(name: str) -> SVG:
    """The diagram ``name`` as an SVG object that Jupyter displays."""
    if name not in available():
        raise ValueError(
            f"No hay ningún diagrama llamado {name!r}. Los disponibles son: {', '.join(available())}."
        )
    path = resources.files("dldna") / "diagrams" / f"{name}.svg"
    return SVG(data=path.read_text(encoding="utf-8"))
