"""Draw dldna/diagrams/atencion_basica.svg: attention with no parameters, step by step.

    python figures/atencion_basica.py

X (one row per word) → S = X Xᵀ (similarities) → A = softmax(S / T) by rows
(weights) → Y = A X (contextualised vectors). The SVG is written without a
date and with a fixed id salt, so re-running the script gives the same file.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

BLUE, ORANGE, GREEN, PURPLE = "#56B4E9", "#E69F00", "#009E73", "#CC79A7"


def box(ax, x, y, w, h, title, body, color):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h,
                                boxstyle="round,pad=0.02,rounding_size=0.06",
                                facecolor=color, edgecolor="black", linewidth=1.0, alpha=0.9))
    ax.text(x, y + 0.14, title, ha="center", va="center", fontsize=11, fontweight="bold")
    ax.text(x, y - 0.16, body, ha="center", va="center", fontsize=9)


def arrow(ax, a, b, label="", rad=0.0, dy=0.12):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=14, linewidth=1.3,
                                 color="#333333", connectionstyle=f"arc3,rad={rad}"))
    if label:
        ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 + dy, label, ha="center", va="bottom",
                fontsize=9, style="italic")


def draw() -> Figure:
    fig = Figure(figsize=(10.5, 2.9))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 10.5)
    ax.set_ylim(0, 2.9)
    ax.axis("off")
    w, h, y = 2.0, 0.8, 1.75
    xs = [1.15, 3.85, 6.55, 9.3]
    box(ax, xs[0], y, w, h, "X", "un vector por palabra\n(n × d)", BLUE)
    box(ax, xs[1], y, w, h, "S = X Xᵀ", "similitudes\n(n × n, simétrica)", ORANGE)
    box(ax, xs[2], y, w, h, "A = softmax(S / T)", "pesos por filas\n(cada fila suma 1)", GREEN)
    box(ax, xs[3], y, w, h, "Y = A X", "vectores contextualizados\n(n × d)", PURPLE)
    arrow(ax, (xs[0] + w / 2, y), (xs[1] - w / 2, y), "productos\nescalares")
    arrow(ax, (xs[1] + w / 2, y), (xs[2] - w / 2, y), "softmax\npor filas")
    arrow(ax, (xs[2] + w / 2, y), (xs[3] - w / 2, y), "promedio\nponderado")
    arrow(ax, (xs[0], y - h / 2), (xs[3], y - h / 2), rad=0.18)
    ax.text((xs[0] + xs[3]) / 2, 0.08, "los mismos vectores X se promedian con los pesos A",
            ha="center", fontsize=9, style="italic")
    ax.text(5.25, 2.6, "Atención sin parámetros: similitud → pesos → promedio ponderado",
            ha="center", fontsize=12)
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
