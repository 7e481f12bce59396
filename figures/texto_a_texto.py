"""Draw dldna/diagrams/texto_a_texto.svg: one model, two tasks, told apart by a prefix.

    python figures/texto_a_texto.py

Two inputs that differ only in their first word («copia:» or «traduce:») go
into the same encoder-decoder Transformer (one vocabulary, one set of
weights) and come out as two different texts: the same Spanish sentence, or
its English translation. Without the prefix, the same sentence does not say
which task to do.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from dldna.viz import style

BOX = dict(boxstyle="round,pad=0.02,rounding_size=0.05", linewidth=1.2)
SENTENCE = ["el", "gato", "negro", "come"]


def _token(ax, x, y, text, color, width=0.9):
    ax.add_patch(FancyBboxPatch((x - width / 2, y - 0.2), width, 0.4, facecolor=color,
                                edgecolor="#333333", **BOX))
    ax.text(x, y, text, ha="center", va="center", fontsize=9)


def _row(ax, x0, y, words, colors):
    for i, (w, c) in enumerate(zip(words, colors, strict=True)):
        _token(ax, x0 + i, y, w, c)


def _arrow(ax, start, end, color):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, color=color,
                                 linewidth=1.4))


def draw() -> Figure:
    word, prefix, out = "#dce9f5", "#f2d7a6", "#e3f1e6"
    fig = Figure(figsize=(11, 3.4))
    ax = fig.subplots()
    rows = {"copia:": (1.0, SENTENCE), "traduce:": (-1.0, ["the", "black", "cat", "eats"])}
    for first, (y, target) in rows.items():
        _row(ax, 0, y, [first, *SENTENCE], [prefix] + [word] * 4)
        _arrow(ax, (4.6, y), (5.9, 0.25 * y), style.color(0))
        _arrow(ax, (8.1, 0.25 * y), (9.3, y), style.color(1))
        _row(ax, 9.9, y, target, [out] * 4)
    ax.add_patch(FancyBboxPatch((6.0, -0.7), 2.0, 1.4, facecolor="#f4f4f4", edgecolor="#333333", **BOX))
    ax.text(7.0, 0.2, "un Transformer", ha="center", va="center", fontsize=10, weight="bold")
    ax.text(7.0, -0.25, "un vocabulario,\nunos pesos", ha="center", va="center", fontsize=9)
    ax.text(2.0, 1.6, "la entrada: un prefijo + el texto", ha="center", fontsize=9, color="#555555")
    ax.text(11.4, 1.6, "la salida: solo texto", ha="center", fontsize=9, color="#555555")
    ax.text(2.0, -1.65, "sin el prefijo, la misma frase no dice qué tarea hacer", ha="center",
            fontsize=9, color="#555555")
    ax.set_xlim(-0.6, 13.5)
    ax.set_ylim(-2.0, 2.0)
    ax.axis("off")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
