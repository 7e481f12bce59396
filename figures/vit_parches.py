"""Draw dldna/diagrams/vit_parches.svg: how the Vision Transformer turns an image into tokens.

    python figures/vit_parches.py

Left to right: an 8×8 digit (scikit-learn's bundled digits, no download) cut
into 2×2 patches; the 16 patches in reading order, each flattened into 4
values; one shared linear map E turns every patch into a vector of d_model;
a learnable [CLS] token goes in front and a learned position embedding is
added to every token; the encoder stack mixes the 17 tokens and a linear
head reads the class from the final [CLS] vector. The SVG is written without
a date and with a fixed id salt, so re-running the script gives the same file.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
from sklearn.datasets import load_digits

ORANGE, SKY, GREEN, PURPLE, VERMILLION, GREY = (
    "#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#D55E00", "#DDDDDD")
P = 2


def arrow(ax, start, end, text=None, dy=0.12):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, color="#333333",
                                 linewidth=1.1))
    if text:
        ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + dy, text, ha="center",
                va="bottom", fontsize=8.5)


def box(ax, x, y, w, h, text, color, fontsize=9.5):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                facecolor=color, edgecolor="black", linewidth=1.0))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)


def draw() -> Figure:
    image = load_digits().images[0] / 16.0  # a zero
    fig = Figure(figsize=(13, 5.4))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 13)
    ax.set_ylim(0, 5.4)
    ax.axis("off")
    ax.text(6.5, 5.2, "Una imagen como secuencia de tókenes: el Vision Transformer", ha="center",
            va="top", fontsize=13)

    # 1. the image and its patch grid
    x0, y0, side = 0.3, 1.3, 2.4
    ax.imshow(image, cmap="gray_r", vmin=0, vmax=1, extent=(x0, x0 + side, y0, y0 + side),
              interpolation="nearest")
    cell = side / 8
    for k in range(0, 9, P):
        ax.plot([x0 + k * cell] * 2, [y0, y0 + side], color=VERMILLION, linewidth=1.5)
        ax.plot([x0, x0 + side], [y0 + k * cell] * 2, color=VERMILLION, linewidth=1.5)
    ax.text(x0 + side / 2, y0 - 0.15, "imagen 8×8\ncortada en 16 parches de 2×2", ha="center",
            va="top", fontsize=9)
    ax.text(x0 + side / 2, 4.55, "1. parches", ha="center", fontsize=10.5,
            fontweight="bold")

    # 2. the patches in reading order, each flattened
    arrow(ax, (x0 + side + 0.1, y0 + side / 2), (3.3, y0 + side / 2))
    px, w = 3.4, 0.26
    for k in range(16):
        r, c = divmod(k, 4)
        patch = image[r * P:(r + 1) * P, c * P:(c + 1) * P]
        y = 4.1 - k * 0.2
        ax.imshow(patch.reshape(1, -1), cmap="gray_r", vmin=0, vmax=1, aspect="auto",
                  extent=(px, px + 4 * w, y - 0.16, y), interpolation="nearest")
        ax.add_patch(Rectangle((px, y - 0.16), 4 * w, 0.16, fill=False, edgecolor="#555555",
                               linewidth=0.5))
        ax.text(px - 0.06, y - 0.08, str(k + 1), ha="right", va="center", fontsize=6.5)
    ax.text(px + 2 * w, 4.55, "2. aplanar", ha="center", fontsize=10.5, fontweight="bold")
    ax.text(px + 2 * w, 0.75, "16 vectores de\np² = 4 valores", ha="center", va="top", fontsize=9)

    # 3. shared linear projection
    arrow(ax, (px + 4 * w + 0.1, 2.5), (5.2, 2.5))
    box(ax, 5.25, 1.9, 1.25, 1.2, "proyección\nlineal E\n(4 → d_model)\ncompartida", SKY, 8.5)
    ax.text(5.87, 4.55, "3. incrustar", ha="center", fontsize=10.5, fontweight="bold")
    ax.text(5.87, 1.75, "= Conv2d con filtros\nde 2×2 y paso 2", ha="center", va="top", fontsize=8.5)

    # 4. the token sequence: [CLS] + 16 patch tokens, plus positions
    arrow(ax, (6.55, 2.5), (7.05, 2.5))
    tx, ty, tw = 7.1, 2.2, 0.19
    ax.add_patch(Rectangle((tx, ty), tw, 0.6, facecolor=ORANGE, edgecolor="black"))
    ax.text(tx + tw / 2, ty + 0.75, "CLS", ha="center", fontsize=7.5, fontweight="bold")
    for k in range(16):
        ax.add_patch(Rectangle((tx + (k + 1) * tw, ty), tw, 0.6, facecolor=GREEN, edgecolor="black",
                               linewidth=0.6))
    for k in range(17):
        ax.add_patch(Rectangle((tx + k * tw, ty - 0.42), tw, 0.25, facecolor=PURPLE,
                               edgecolor="black", linewidth=0.6))
        ax.text(tx + k * tw + tw / 2, ty - 0.55, str(k), ha="center", va="top", fontsize=5.5)
    ax.text(tx + 17 * tw / 2, ty - 0.08, "+", ha="center", va="center", fontsize=10)
    ax.text(tx + 17 * tw / 2, 4.55, "4. secuencia", ha="center", fontsize=10.5, fontweight="bold")
    ax.text(tx + 17 * tw / 2, 3.55, "[CLS] aprendible + 16 tókenes\n(17 × d_model)", ha="center",
            va="center", fontsize=8.5)
    ax.text(tx + 17 * tw / 2, 1.35, "+ incrustación de posición\naprendida (una por tóken)",
            ha="center", va="top", fontsize=8.5)

    # 5. encoder and head
    arrow(ax, (tx + 17 * tw + 0.1, 2.5), (10.55, 2.5))
    box(ax, 10.6, 1.6, 1.1, 1.8, "codificador\nTransformer\n× L\n(solo\ncodificador)", GREY, 8.5)
    ax.text(11.15, 4.55, "5. mezclar", ha="center", fontsize=10.5, fontweight="bold")
    arrow(ax, (11.75, 2.5), (12.1, 2.5))
    box(ax, 12.12, 2.0, 0.8, 1.0, "cabeza\nlineal\nsobre\n[CLS]", ORANGE, 8)
    ax.text(12.52, 1.8, "clase\n0…9", ha="center", va="top", fontsize=9)
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
