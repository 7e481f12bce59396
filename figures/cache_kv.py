"""Draw dldna/diagrams/cache_kv.svg: decoding with and without a key/value cache, and shared heads.

    python figures/cache_kv.py

Left, without a cache: at every step the model reads the whole prefix again
and recomputes the keys and values of every earlier position. Centre, with
the cache: the keys and values of earlier positions are kept (per layer);
each step computes one query, one key and one value, for the new token only.
Right, how many key/value heads the cache keeps for 4 query heads:
multi-head (4), grouped-query (2) and multi-query (1). The SVG is
reproducible (no date, fixed id salt).
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

ORANGE, SKY, GREEN, BLUE, VERMILLION = "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00"
PALE, GREY = "#CDE8F7", "#DDDDDD"
WORDS = ["<bos>", "ana", "va", "al"]


def box(ax, x, y, text, color, w=0.62, h=0.36, fontsize=8.5):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.01,rounding_size=0.05",
                                facecolor=color, edgecolor="black", linewidth=0.8))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def arrow(ax, a, b, color="#333333"):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=9, linewidth=1.0, color=color))


def steps(ax, x0, cached: bool) -> None:
    for step in range(3):
        y = 4.3 - 1.35 * step
        n = step + 2  # positions read at this step
        ax.text(x0 - 0.35, y + 0.25, f"paso {step + 1}", fontsize=9, va="center")
        for j in range(n):
            x = x0 + 0.72 * j + 0.55
            new = j == n - 1
            if cached and not new:
                box(ax, x, y, "K V", GREY)  # kept from earlier steps: nothing computed
            else:
                box(ax, x, y, "K V", ORANGE)
            box(ax, x, y - 0.45, WORDS[j], PALE if not new else SKY, h=0.3, fontsize=8)
        x_new = x0 + 0.72 * (n - 1) + 0.55
        box(ax, x_new, y + 0.45, "Q", GREEN, w=0.4, h=0.3)
        computed = 1 if cached else n
        ax.text(x0 + 0.72 * 4 + 0.45, y, f"{computed} × (K, V)\ncalculados", fontsize=8.5, va="center")


def draw() -> Figure:
    fig = Figure(figsize=(13.2, 5.4))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.2, 13.4)
    ax.set_ylim(0, 5.4)
    ax.axis("off")
    ax.text(2.1, 5.1, "Sin caché: se recalcula todo el prefijo", ha="center", fontsize=11, fontweight="bold")
    steps(ax, 0.2, cached=False)
    ax.plot([4.55, 4.55], [0.3, 5.3], color="#999999", linewidth=1.0)
    ax.text(6.7, 5.1, "Con caché de claves y valores (KV)", ha="center", fontsize=11, fontweight="bold")
    steps(ax, 4.85, cached=True)
    ax.text(2.25, 0.35, "naranja: claves y valores calculados en ese paso;\nverde: la consulta nueva",
            ha="center", fontsize=8.5)
    ax.text(6.9, 0.35, "gris: leídos de la caché (una por capa),\nsin calcular", ha="center", fontsize=8.5)
    ax.plot([9.2, 9.2], [0.3, 5.3], color="#999999", linewidth=1.0)
    ax.text(11.3, 5.1, "Cabezas de K y V que guarda la caché", ha="center", fontsize=11, fontweight="bold")
    for row, (name, groups) in enumerate((("multicabeza (MHA)", 4), ("agrupada (GQA, 2)", 2),
                                          ("multiconsulta (MQA)", 1))):
        y = 4.2 - 1.45 * row
        ax.text(9.4, y + 0.45, name, fontsize=9.5, va="center")
        for h in range(4):
            x = 10.0 + 0.75 * h
            box(ax, x, y, f"Q{h}", GREEN, w=0.5, h=0.3)
            g = h // (4 // groups)
            kx = 10.0 + 0.75 * (g * (4 // groups)) + 0.375 * (4 // groups - 1)
            arrow(ax, (kx, y - 0.58), (x, y - 0.17), BLUE)
        for g in range(groups):
            kx = 10.0 + 0.75 * (g * (4 // groups)) + 0.375 * (4 // groups - 1)
            ax.add_patch(Rectangle((kx - 0.25, y - 0.9), 0.5, 0.3, facecolor=ORANGE, edgecolor="black",
                                   linewidth=0.8))
            ax.text(kx, y - 0.75, f"KV{g}", ha="center", va="center", fontsize=8)
        ax.text(13.25, y - 0.4, f"caché: {groups}/4", ha="right", fontsize=8.5, va="center", color=VERMILLION)
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
