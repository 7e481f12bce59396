"""Draw dldna/diagrams/atencion_cruzada.svg: cross-attention aligns a translation.

    python figures/atencion_cruzada.py

Bottom, the encoder reads «el gato negro come» and leaves one memory vector
(key and value) per Spanish word; top, the decoder writes «the black cat
eats», one query per English word. Each query's strongest cross-attention
link goes to the Spanish word it translates, so the links for «black» and
«cat» cross: the adjective and the noun swap places. The SVG is written
without a date and with a fixed id salt, so re-running gives the same file.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

ORANGE, SKY, GREEN, VERMILLION, GREY = "#E69F00", "#56B4E9", "#009E73", "#D55E00", "#EEEEEE"

SPANISH = ["el", "gato", "negro", "come"]
ENGLISH = ["the", "black", "cat", "eats"]
LINKS = [(0, 0), (1, 2), (2, 1), (3, 3)]  # (English word, Spanish word)


def box(ax, x, y, w, h, text, color, fontsize=12, bold=True):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                facecolor=color, edgecolor="black", linewidth=1.0))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize,
            fontweight="bold" if bold else "normal")


def draw() -> Figure:
    fig = Figure(figsize=(11.5, 5.4))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 11.5)
    ax.set_ylim(0, 5.4)
    ax.axis("off")
    xs = [2.2 + 1.9 * i for i in range(4)]
    # Encoder band (bottom) and decoder band (top).
    ax.add_patch(FancyBboxPatch((1.2, 0.25), 7.9, 1.75, boxstyle="round,pad=0.02,rounding_size=0.15",
                                facecolor=GREY, edgecolor="#777777", linewidth=1.0))
    ax.add_patch(FancyBboxPatch((1.2, 3.35), 7.9, 1.75, boxstyle="round,pad=0.02,rounding_size=0.15",
                                facecolor=GREY, edgecolor="#777777", linewidth=1.0))
    ax.text(0.3, 1.12, "codificador\n(encoder)", ha="left", va="center", fontsize=10, rotation=90)
    ax.text(0.3, 4.22, "decodificador\n(decoder)", ha="left", va="center", fontsize=10, rotation=90)
    for i, (x, word) in enumerate(zip(xs, SPANISH, strict=True)):
        box(ax, x, 0.65, 1.2, 0.5, word, "white", bold=False)
        box(ax, x, 1.55, 1.35, 0.55, f"K{i + 1}, V{i + 1}", SKY, fontsize=11)
        ax.add_patch(FancyArrowPatch((x, 0.9), (x, 1.27), arrowstyle="-|>", mutation_scale=12,
                                     color="#333333"))
    for i, (x, word) in enumerate(zip(xs, ENGLISH, strict=True)):
        box(ax, x, 4.7, 1.2, 0.5, word, "white", bold=False)
        box(ax, x, 3.8, 1.35, 0.55, f"Q{i + 1}", ORANGE, fontsize=11)
        ax.add_patch(FancyArrowPatch((x, 4.08), (x, 4.45), arrowstyle="-|>", mutation_scale=12,
                                     color="#333333"))
    # Faint links: every query may attend to every key (a bipartite graph).
    for xq in xs:
        for xk in xs:
            ax.plot([xq, xk], [3.52, 1.83], color="#BBBBBB", linewidth=0.8, zorder=0)
    for q, k in LINKS:
        crossing = q != k
        ax.add_patch(FancyArrowPatch((xs[q], 3.52), (xs[k], 1.83), arrowstyle="-|>", mutation_scale=16,
                                     linewidth=3.2, color=VERMILLION if crossing else GREEN, zorder=2))
    ax.text(9.35, 4.7, "salida: una palabra\npor paso", fontsize=9, va="center")
    ax.text(9.35, 3.8, "consultas (Q)", fontsize=9, va="center")
    ax.text(9.35, 1.55, "memoria: claves (K)\ny valores (V)", fontsize=9, va="center")
    ax.text(9.35, 0.65, "entrada", fontsize=9, va="center")
    ax.text(9.35, 2.85, "atención cruzada:\ncada consulta puede\nmirar toda la memoria", fontsize=9,
            va="center", fontweight="bold")
    ax.text(9.35, 2.1, "las flechas de «black»\ny «cat» se cruzan:\nel orden cambia", fontsize=9,
            va="center", color=VERMILLION)
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
