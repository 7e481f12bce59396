"""Draw dldna/diagrams/qkv_flow.svg: the flow of queries, keys and values.

    python figures/qkv_flow.py

X → three learned linear maps (W_Q, W_K, W_V) → Q, K, V; Q and K give the
scores Q Kᵀ / √d_k, softmax turns each row into weights A, and the output is
A V. The SVG is written without a date and with a fixed id salt, so
re-running the script gives the same file.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

ORANGE, SKY, GREEN, PURPLE, GREY = "#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#DDDDDD"


def box(ax, x, y, w, h, title, body="", color=GREY, text_color="black"):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h,
                                boxstyle="round,pad=0.02,rounding_size=0.06",
                                facecolor=color, edgecolor="black", linewidth=1.0))
    ax.text(x, y + (0.12 if body else 0), title, ha="center", va="center", fontsize=11,
            fontweight="bold", color=text_color)
    if body:
        ax.text(x, y - 0.17, body, ha="center", va="center", fontsize=8.5, color=text_color)


def arrow(ax, a, b, rad=0.0):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=13, linewidth=1.2,
                                 color="#333333", connectionstyle=f"arc3,rad={rad}",
                                 shrinkA=2, shrinkB=2))


def draw() -> Figure:
    fig = Figure(figsize=(11.5, 4.6))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 11.5)
    ax.set_ylim(0, 4.6)
    ax.axis("off")
    ys = {"Q": 3.4, "K": 2.2, "V": 1.0}
    box(ax, 1.0, 2.2, 1.5, 1.0, "X", "entrada\n(n × d_model)", SKY)
    for name, y in ys.items():
        box(ax, 3.2, y, 1.3, 0.7, f"W_{name}", "aprendida", GREY)
        box(ax, 5.0, y, 1.3, 0.7, name, f"n × d_{'v' if name == 'V' else 'k'}", ORANGE)
        arrow(ax, (1.75, 2.2), (2.55, y))
        arrow(ax, (3.85, y), (4.35, y))
    ax.text(3.2, 4.25, "tres proyecciones lineales", ha="center", fontsize=9, style="italic")
    box(ax, 7.2, 2.8, 1.9, 0.8, "S = Q Kᵀ / √d_k", "puntuaciones (n × n)", GREEN)
    arrow(ax, (5.65, ys["Q"]), (6.25, 2.95))
    arrow(ax, (5.65, ys["K"]), (6.25, 2.65))
    box(ax, 7.2, 1.5, 1.9, 0.7, "A = softmax(S)", "por filas: cada fila suma 1", GREEN)
    arrow(ax, (7.2, 2.4), (7.2, 1.85))
    box(ax, 10.0, 1.5, 1.9, 0.8, "Y = A V", "salida (n × d_v)", PURPLE)
    arrow(ax, (8.15, 1.5), (9.05, 1.5))
    arrow(ax, (5.65, ys["V"]), (9.05, 1.25), rad=0.12)
    ax.text(8.6, 3.55, "Q: qué busca cada palabra\nK: qué ofrece cada palabra\n"
            "V: qué contenido entrega", fontsize=9, va="bottom")
    ax.text(5.75, 0.2, "Autoatención con consultas (Q), claves (K) y valores (V)",
            ha="center", fontsize=12)
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
