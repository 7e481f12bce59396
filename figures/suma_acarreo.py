"""Draw dldna/diagrams/suma_acarreo.svg: what each written digit of a sum depends on, in both orders.

    python figures/suma_acarreo.py

Both panels show the column addition a₂a₁a₀ + b₂b₁b₀ = s₃s₂s₁s₀ with the order
in which the decoder writes the digits (①, ②...). Left, units first: each
digit needs its own column and the carry of the previous column, which was
just written (short arrows). Right, most significant digit first: the first
digit written, s₃, depends on every column through the chain of carries.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from dldna.viz.style import PALETTE

CIRCLED = "①②③④"


def cell(ax, x, y, text, color="#f4f4f4"):
    ax.add_patch(Rectangle((x - 0.32, y - 0.3), 0.64, 0.6, facecolor=color, edgecolor="black",
                           linewidth=0.9))
    ax.text(x, y, text, ha="center", va="center", fontsize=11)


def arrow(ax, start, end, color, rad=0.0, lw=1.3):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=11, color=color,
                                 linewidth=lw, connectionstyle=f"arc3,rad={rad}"))


def panel(ax, x0, title, units_first: bool) -> None:
    cols = [x0 + 0.9 * k for k in range(4)]  # column 3 (thousands) ... column 0 (units), left to right
    ax.text(x0 + 1.35, 4.75, title, ha="center", va="center", fontsize=12)
    for k in range(3):
        cell(ax, cols[k + 1], 3.8, f"a{'₂₁₀'[k]}")
        cell(ax, cols[k + 1], 3.0, f"b{'₂₁₀'[k]}")
    ax.text(cols[0], 3.0, "+", ha="center", va="center", fontsize=13)
    ax.plot([cols[0] - 0.35, cols[3] + 0.35], [2.55, 2.55], color="black", linewidth=1.2)
    out_color = PALETTE[0]
    for k in range(4):
        cell(ax, cols[k], 2.0, f"s{'₃₂₁₀'[k]}", out_color)
    order = [3, 2, 1, 0] if units_first else [0, 1, 2, 3]  # write order of each column index
    for k in range(4):
        ax.text(cols[k], 1.35, CIRCLED[order[k]], ha="center", va="center", fontsize=13)
    ax.text(x0 + 1.35, 0.85, "orden en que se escribe", ha="center", va="center", fontsize=8.5)
    if units_first:
        color = PALETTE[2]
        for k in range(1, 4):  # own column
            arrow(ax, (cols[k], 2.7), (cols[k], 2.32), color)
        for k in range(0, 3):  # carry from the column on the right, already written
            arrow(ax, (cols[k + 1] - 0.05, 1.72), (cols[k] + 0.05, 1.72), PALETTE[5], rad=-0.5)
        ax.text(x0 + 1.35, 0.35, "cada cifra: su columna + el acarreo\nde la columna que acaba de escribir",
                ha="center", va="center", fontsize=8.5)
    else:
        color = PALETTE[5]
        for k in range(1, 4):  # s₃ depends on all the columns
            arrow(ax, (cols[k], 2.68), (cols[0] + 0.1, 2.32), color, rad=-0.12 * k, lw=1.1)
        ax.text(x0 + 1.35, 0.35, "la primera cifra (millares) puede\ndepender de toda la cadena de acarreos",
                ha="center", va="center", fontsize=8.5)


def draw() -> Figure:
    fig = Figure(figsize=(9, 4.4))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 9)
    ax.set_ylim(0, 5.1)
    ax.axis("off")
    panel(ax, 0.9, "Unidades primero", units_first=True)
    ax.plot([4.5, 4.5], [0.2, 4.9], color="#999999", linewidth=1, linestyle=(0, (4, 3)))
    panel(ax, 5.4, "Cifra mayor primero", units_first=False)
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
