"""Draw dldna/diagrams/posicional.svg: where each position scheme enters attention.

    python figures/posicional.py

Tokens → embeddings; an absolute encoding (sinusoidal or learned) is added
there. Q, K, V are projected; RoPE rotates Q and K; the scores Q Kᵀ/√d_k get
Shaw's q·a^K term and the T5 or ALiBi bias; softmax; the output averages
V (plus Shaw's a^V). The SVG is written without a date and with a fixed id
salt, so re-running the script gives the same file.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

ORANGE, SKY, GREEN, PURPLE, GREY, YELLOW = "#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#DDDDDD", "#F0E442"
VERMILLION = "#D55E00"


def box(ax, x, y, w, h, title, body="", color=GREY):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h,
                                boxstyle="round,pad=0.02,rounding_size=0.06",
                                facecolor=color, edgecolor="black", linewidth=1.0))
    ax.text(x, y + (0.12 if body else 0), title, ha="center", va="center", fontsize=10.5,
            fontweight="bold")
    if body:
        ax.text(x, y - 0.17, body, ha="center", va="center", fontsize=8)


def tag(ax, x, y, text, w=1.9, h=0.62):
    """A position scheme: dashed vermillion outline, entering from above or below."""
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h,
                                boxstyle="round,pad=0.02,rounding_size=0.06", facecolor="white",
                                edgecolor=VERMILLION, linewidth=1.6, linestyle="--"))
    ax.text(x, y, text, ha="center", va="center", fontsize=8.5)


def arrow(ax, a, b, rad=0.0, color="#333333", style="-|>"):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=13, linewidth=1.2,
                                 color=color, connectionstyle=f"arc3,rad={rad}",
                                 shrinkA=2, shrinkB=2))


def draw() -> Figure:
    fig = Figure(figsize=(12.5, 5.6))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 12.5)
    ax.set_ylim(0, 5.6)
    ax.axis("off")
    mid = 2.6
    box(ax, 0.9, mid, 1.3, 0.9, "tókenes", "x_1 … x_n", SKY)
    box(ax, 2.6, mid, 1.4, 0.9, "incrustación", "e_i (√d · e_i)", SKY)
    arrow(ax, (1.55, mid), (1.9, mid))
    ax.text(3.75, mid, "+", ha="center", va="center", fontsize=18, fontweight="bold")
    arrow(ax, (3.3, mid), (3.6, mid))
    tag(ax, 3.75, 4.25, "absoluta: + PE_i\n(sinusoidal o aprendida)", w=2.3)
    arrow(ax, (3.75, 3.92), (3.75, 2.85), color=VERMILLION)
    ys = {"Q": 3.8, "K": mid, "V": 1.4}
    for name, y in ys.items():
        box(ax, 5.1, y, 0.9, 0.6, f"W_{name}", "", GREY)
        box(ax, 6.3, y, 0.7, 0.6, name, "", ORANGE)
        arrow(ax, (3.95, mid), (4.62, y))
        arrow(ax, (5.58, y), (5.93, y))
    tag(ax, 6.0, 5.0, "RoPE: q_i → R_i q_i,\nk_j → R_j k_j", w=2.1)
    arrow(ax, (6.3, 4.68), (6.3, 4.12), color=VERMILLION)
    arrow(ax, (6.75, 4.68), (6.55, 2.9), color=VERMILLION, rad=-0.25)
    box(ax, 8.3, 3.2, 1.9, 0.9, "Q Kᵀ / √d_k", "puntuaciones (n × n)", GREEN)
    arrow(ax, (6.68, ys["Q"]), (7.33, 3.35))
    arrow(ax, (6.68, ys["K"]), (7.33, 3.05))
    tag(ax, 8.9, 4.75, "+ sesgo b(j − i) (T5, ALiBi)\n+ q_i·a^K_ij (Shaw)", w=2.7, h=0.7)
    arrow(ax, (8.5, 4.4), (8.4, 3.67), color=VERMILLION)
    box(ax, 10.4, 3.2, 1.4, 0.75, "softmax", "por filas", GREEN)
    arrow(ax, (9.27, 3.2), (9.68, 3.2))
    box(ax, 10.4, 1.4, 1.6, 0.8, "Σ_j α_ij v_j", "salida z_i", PURPLE)
    arrow(ax, (10.4, 2.8), (10.4, 1.82))
    arrow(ax, (6.68, ys["V"]), (9.58, 1.4))
    tag(ax, 8.2, 0.75, "Shaw: v_j → v_j + a^V_ij", w=2.4)
    arrow(ax, (9.4, 0.85), (9.8, 1.1), color=VERMILLION)
    ax.text(0.2, 5.45, "Absolutas: cambian la entrada.\nRelativas: cambian la atención\n"
            "y solo ven j − i.", ha="left", va="top", fontsize=9, style="italic")
    ax.text(6.25, 0.02, "Dónde entra la posición en una capa de atención", ha="center", va="bottom",
            fontsize=12)
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
