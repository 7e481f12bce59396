"""What the tests need to know about the book's sources."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]


def toc_files() -> list[str]:
    """Every document of ``_toc.yml``, root first, without extension."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [chapter["file"] for chapter in part.get("chapters", [])]
    return files


def source_of(entry: str) -> Path:
    for ext in (".ipynb", ".md"):
        path = ROOT / f"{entry}{ext}"
        if path.exists():
            return path
    raise FileNotFoundError(f"_toc.yml cita {entry!r}, pero no existe ni .ipynb ni .md")


def chapter_notebooks() -> list[Path]:
    return sorted((ROOT / "chapters").glob("*.ipynb"))


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def notebook_tool():
    """The maintainer tool ``tools/notebooks.py``, imported as a module."""
    spec = importlib.util.spec_from_file_location("book_notebooks", ROOT / "tools" / "notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
