"""Draw dldna/diagrams/multihead.svg: the split of Q, K, V into heads, the heads, and W_O.

    python figures/multihead.py

Top row: X is projected to Q, K, V (d_model columns each); every projection is
cut into h column blocks, one per head (one colour per head); each head runs
scaled dot-product attention on its blocks; the head outputs are concatenated
and multiplied by W_O. Bottom row: the same product written as the sum over
heads of head_i · W_O,i, where W_O,i are the row blocks of W_O.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from dldna.viz.style import PALETTE

HEADS = 4
COLORS = [PALETTE[i] for i in (0, 1, 2, 6)]  # orange, sky blue, green, purple


def striped(ax, x, y, w, h, n, label=None, vertical=True, fontsize=9):
    """A w×h rectangle cut into n coloured stripes (columns or rows)."""
    for k in range(n):
        if vertical:
            cell = Rectangle((x + k * w / n, y), w / n, h)
        else:
            cell = Rectangle((x, y + h - (k + 1) * h / n), w, h / n)
        cell.set(facecolor=COLORS[k], edgecolor="white", linewidth=1.2)
        ax.add_patch(cell)
    ax.add_patch(Rectangle((x, y), w, h, fill=False, edgecolor="black", linewidth=1))
    if label:
        ax.text(x + w / 2, y - 0.12, label, ha="center", va="top", fontsize=fontsize)


def plain(ax, x, y, w, h, text, color="#f2f2f2", fontsize=9):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="black", linewidth=1))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)


def arrow(ax, start, end, text=None, offset=(0, 0.12)):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12,
                                 color="#333333", linewidth=1.1))
    if text:
        mx, my = (start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1]
        ax.text(mx, my, text, ha="center", va="bottom", fontsize=8)


def draw() -> Figure:
    fig = Figure(figsize=(11, 6.2))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 11)
    ax.set_ylim(0, 6.2)
    ax.axis("off")
    ax.text(5.5, 6.0, f"Atención multicabeza con h = {HEADS} cabezas", ha="center", va="top",
            fontsize=13)

    # X and its three projections
    plain(ax, 0.2, 3.55, 1.0, 1.1, "X\n(seq × d_model)", fontsize=8)
    names = ["$Q = XW^Q$", "$K = XW^K$", "$V = XW^V$"]
    for r, name in enumerate(names):
        y = 4.85 - r * 0.95
        striped(ax, 2.0, y, 1.4, 0.55, HEADS)
        ax.text(3.5, y + 0.27, name, ha="left", va="center", fontsize=10)
        arrow(ax, (1.2, 4.1), (2.0, y + 0.27))
    ax.text(2.7, 2.7, "cada color: las $d_k = d_{model}/h$\ncolumnas de una cabeza",
            ha="center", va="top", fontsize=8)

    # The heads
    arrow(ax, (4.45, 4.1), (5.1, 4.1), "view +\ntranspose", offset=(0, 0.1))
    for k in range(HEADS):
        y = 5.0 - k * 0.62
        ax.add_patch(Rectangle((5.15, y), 2.05, 0.48, facecolor=COLORS[k], edgecolor="black",
                               linewidth=1, alpha=0.9))
        formula = rf"$\mathrm{{softmax}}(Q_{k + 1}K_{k + 1}^\top/\sqrt{{d_k}})\,V_{k + 1}$"
        ax.text(6.175, y + 0.24, f"cabeza {k + 1}: {formula}", ha="center", va="center",
                fontsize=8)
    ax.text(6.175, 2.4, "(batch, h, seq, d_k):\nlas h cabezas a la vez,\ncada una en su subespacio",
            ha="center", va="top", fontsize=8)

    # Concatenation and W_O
    arrow(ax, (7.25, 4.1), (7.85, 4.1), "concatenar", offset=(0, 0.1))
    striped(ax, 7.9, 3.8, 1.2, 0.6, HEADS, "Concat(cabezas)\n(seq × d_model)", fontsize=8)
    arrow(ax, (9.15, 4.1), (9.65, 4.1), "$\\times W^O$", offset=(0, 0.1))
    plain(ax, 9.7, 3.55, 1.1, 1.1, "salida\n(seq × d_model)", fontsize=8)

    # Bottom: the sum over heads
    ax.plot([0.3, 10.7], [2.0, 2.0], color="#bbbbbb", linewidth=0.8)
    ax.text(5.5, 1.85, "La misma cuenta, cabeza por cabeza:  "
            r"$\mathrm{Concat}(\mathrm{cabeza}_1,\ldots,\mathrm{cabeza}_h)\,W^O"
            r" = \sum_i \mathrm{cabeza}_i\,W^O_i$", ha="center", va="top", fontsize=10)
    striped(ax, 0.6, 0.55, 1.2, 0.6, HEADS, "Concat")
    ax.text(2.0, 0.85, "×", ha="center", va="center", fontsize=14)
    striped(ax, 2.25, 0.45, 0.6, 0.95, HEADS, "$W^O$ (filas por cabeza)", vertical=False,
            fontsize=8)
    ax.text(3.35, 0.85, "=", ha="center", va="center", fontsize=14)
    for k in range(HEADS):
        x = 3.7 + k * 1.75
        ax.add_patch(Rectangle((x, 0.55), 0.35, 0.6, facecolor=COLORS[k], edgecolor="black"))
        ax.text(x + 0.5, 0.85, "×", ha="center", va="center", fontsize=11)
        ax.add_patch(Rectangle((x + 0.7, 0.78), 0.6, 0.14, facecolor=COLORS[k],
                               edgecolor="black"))
        ax.text(x + 0.5, 0.42, rf"$\mathrm{{cabeza}}_{k + 1}\,W^O_{k + 1}$", ha="center", va="top",
                fontsize=9)
        if k < HEADS - 1:
            ax.text(x + 1.52, 0.85, "+", ha="center", va="center", fontsize=14)
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
