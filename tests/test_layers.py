"""The package's import graph is layered: a module never imports one of a higher layer.

runtime/checks → attention/masking/positional/embeddings → transformer/decoding
→ training → tasks/vit/language models → viz → widgets. Imports made inside functions count
too (they hide a cycle, they do not remove it). Modules of the same layer may
import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "dldna"

#: Layer of each top-level module (or subpackage) of ``dldna``; lower first.
LAYERS: dict[str, int] = {
    "dldna": 0,  # the package itself (it only pins the CPU kernels)
    "cpu": 0,
    "runtime": 0,
    "checks": 0,
    "fmt": 0,  # how numbers are written for a reader
    "attention": 1,
    "masking": 1,
    "positional": 1,
    "embeddings": 1,
    "online_softmax": 1,  # attention tile by tile (chapter 10)
    "transformer": 2,
    "decoding": 2,
    "training": 3,
    "ensemble": 3,  # several seeds of one model trained together (training.fit for a list)
    "tasks": 4,
    "vit": 4,
    "language_models": 4,
    "corpus": 4,  # sentences for language models, tokenised with tasks.base.Tokenizer
    "subwords": 4,  # byte-pair encoding of the corpus (chapter 10)
    "kv_cache": 4,  # incremental decoding of language_models.LanguageModel
    "llama": 4,  # the Llama block and its map to Hugging Face (chapter 10b)
    "rnn": 4,  # the GRU encoder-decoder of chapter 1 and its training (training.train_steps)
    "viz": 5,
    "widgets": 6,
    "diagrams": 6,
    "sphinx_ext": 7,
}


def layer_of(dotted: str) -> int:
    """Layer of a module named ``dldna.x.y`` (by its first component ``x``)."""
    parts = dotted.split(".")
    name = parts[1] if len(parts) > 1 else "dldna"
    if name not in LAYERS:
        raise KeyError(
            f"El módulo dldna.{name} no tiene capa: añádelo a LAYERS en tests/test_layers.py."
        )
    return LAYERS[name]


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every import of a ``dldna`` module in ``path``, in any scope."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "dldna"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "dldna":
                continue
            if module == "dldna":  # `from dldna import training` imports dldna.training
                found += [(node.lineno, f"dldna.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, module))
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer():
    for path in MODULES:
        layer_of(module_name(path))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_module_imports_a_higher_layer(path):
    name = module_name(path)
    own = layer_of(name)
    wrong = [f"línea {line}: {module} (capa {layer_of(module)})"
             for line, module in imported_modules(path) if layer_of(module) > own]
    assert not wrong, f"{name} (capa {own}) importa módulos de una capa superior: {wrong}"


def test_the_check_finds_a_violation(tmp_path):
    """The parser sees imports inside functions and ``from dldna import x``."""
    package = tmp_path / "dldna"
    package.mkdir()
    (package / "training.py").write_text(
        "def f():\n    from dldna import widgets\n    import dldna.tasks.base\n")
    global PACKAGE
    saved, PACKAGE = PACKAGE, package
    try:
        found = imported_modules(package / "training.py")
    finally:
        PACKAGE = saved
    assert found == [(2, "dldna.widgets"), (3, "dldna.tasks.base")]
    assert all(layer_of(m) > LAYERS["training"] for _, m in found)
