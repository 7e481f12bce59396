"""Draw dldna/diagrams/transformer_arquitectura.svg: the encoder-decoder Transformer (Pre-LN).

    python figures/transformer_arquitectura.py

Read from bottom to top, as in the original paper. Left: the encoder (source
ids → embedding × √d_model + positional encoding → N layers of
[LayerNorm → self-attention → +] and [LayerNorm → feed-forward → +] → final
LayerNorm = the memory). Right: the decoder (target ids shifted right → the
same input → N layers of masked self-attention, cross-attention whose keys and
values come from the memory, and feed-forward, each with LayerNorm and a
residual connection → final LayerNorm → linear → log-softmax). The residual
paths are drawn as lines that skip each sub-layer.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from dldna.viz.style import PALETTE

ATTN = PALETTE[1]     # sky blue: attention
FF = PALETTE[0]       # orange: feed-forward
NORM = "#e8e8e8"      # grey: LayerNorm
EMB = PALETTE[2]      # green: embeddings
OUTC = PALETTE[6]     # reddish purple: output
MEM = PALETTE[4]      # blue: the memory (encoder output)
W = 3.0               # width of a block


def box(ax, cx, y, text, color, h=0.5, w=W, fontsize=9, alpha=0.85):
    ax.add_patch(FancyBboxPatch((cx - w / 2, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                facecolor=color, edgecolor="black", linewidth=0.9, alpha=alpha))
    ax.text(cx, y + h / 2, text, ha="center", va="center", fontsize=fontsize)
    return y + h


def arrow(ax, start, end, color="#333333", style="-|>", lw=1.1, **kw):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=11, color=color,
                                 linewidth=lw, shrinkA=0, shrinkB=0, **kw))


def plus(ax, cx, y, r=0.16):
    ax.add_patch(Circle((cx, y), r, facecolor="white", edgecolor="black", linewidth=1))
    ax.text(cx, y - 0.01, "+", ha="center", va="center", fontsize=11)


def sublayer(ax, cx, y, text, color, residual_x):
    """LayerNorm → sub-layer → (+), with the residual path on the side. Returns the top y."""
    arrow(ax, (cx, y), (cx, y + 0.25))
    top = box(ax, cx, y + 0.25, "LayerNorm", NORM, h=0.36, fontsize=8)
    arrow(ax, (cx, top), (cx, top + 0.18))
    top = box(ax, cx, top + 0.18, text, color, h=0.55)
    arrow(ax, (cx, top), (cx, top + 0.22))
    plus_y = top + 0.38
    plus(ax, cx, plus_y)
    # residual path: from below the LayerNorm, around the side, into the (+)
    ax.plot([cx, residual_x, residual_x], [y + 0.12, y + 0.12, plus_y], color="#555555",
            linewidth=1.0)
    arrow(ax, (residual_x, plus_y), (cx - 0.16, plus_y), color="#555555", lw=1.0)
    return plus_y + 0.16


def draw() -> Figure:
    fig = Figure(figsize=(10, 10))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.5, 12.0)
    ax.axis("off")
    enc_x, dec_x = 2.8, 7.2

    # ---- encoder ----------------------------------------------------------
    ax.text(enc_x, -0.2, "tókenes de origen\n(batch, S)", ha="center", va="center", fontsize=9)
    arrow(ax, (enc_x, 0.05), (enc_x, 0.35))
    y = box(ax, enc_x, 0.35, "incrustación × √d_model", EMB)
    arrow(ax, (enc_x, y), (enc_x, y + 0.3))
    plus(ax, enc_x, y + 0.46)
    ax.text(enc_x - 0.35, y + 0.46, "codificación\nposicional ~", ha="right", va="center",
            fontsize=8)
    y = y + 0.62
    arrow(ax, (enc_x, y), (enc_x, y + 0.2))
    y = box(ax, enc_x, y + 0.2, "dropout", "#f7f7f7", h=0.34, fontsize=8)
    stack_bottom = y + 0.2
    y = sublayer(ax, enc_x, stack_bottom, "atención multicabeza\n(autoatención)", ATTN,
                 enc_x - W / 2 - 0.25)
    y = sublayer(ax, enc_x, y, "red feed-forward\npor posición", FF, enc_x - W / 2 - 0.25)
    stack_top = y + 0.08
    ax.add_patch(FancyBboxPatch((enc_x - W / 2 - 0.45, stack_bottom - 0.08), W + 0.9,
                                stack_top - stack_bottom + 0.08,
                                boxstyle="round,pad=0.02,rounding_size=0.15", fill=False,
                                edgecolor="black", linestyle="--", linewidth=1.1))
    ax.text(enc_x - W / 2 - 0.6, (stack_bottom + stack_top) / 2, "N ×", ha="right", va="center",
            fontsize=12, fontweight="bold")
    arrow(ax, (enc_x, y), (enc_x, stack_top + 0.3))
    y = box(ax, enc_x, stack_top + 0.3, "LayerNorm final", NORM, h=0.36, fontsize=8)
    mem_y = y + 0.45
    ax.text(enc_x, mem_y + 0.12, "memoria (batch, S, d_model)", ha="center", va="bottom",
            fontsize=9, color=MEM, fontweight="bold")
    arrow(ax, (enc_x, y), (enc_x, mem_y + 0.08), color=MEM)
    ax.text(enc_x, 11.3, "CODIFICADOR", ha="center", fontsize=13, fontweight="bold")

    # ---- decoder ----------------------------------------------------------
    ax.text(dec_x, -0.2, "tókenes de destino desplazados a la derecha\n(batch, T): BOS, y₁, y₂, …",
            ha="center", va="center", fontsize=9)
    arrow(ax, (dec_x, 0.05), (dec_x, 0.35))
    y = box(ax, dec_x, 0.35, "incrustación × √d_model", EMB)
    arrow(ax, (dec_x, y), (dec_x, y + 0.3))
    plus(ax, dec_x, y + 0.46)
    ax.text(dec_x + 0.35, y + 0.46, "~ codificación\nposicional", ha="left", va="center",
            fontsize=8)
    y = y + 0.62
    arrow(ax, (dec_x, y), (dec_x, y + 0.2))
    y = box(ax, dec_x, y + 0.2, "dropout", "#f7f7f7", h=0.34, fontsize=8)
    side = dec_x + W / 2 + 0.25
    stack_bottom = y + 0.2
    y = sublayer(ax, dec_x, stack_bottom, "atención multicabeza enmascarada\n(máscara causal)",
                 ATTN, side)
    cross_bottom = y
    y = sublayer(ax, dec_x, y, "atención cruzada\nQ: decodificador · K, V: memoria", ATTN, side)
    y = sublayer(ax, dec_x, y, "red feed-forward\npor posición", FF, side)
    stack_top = y + 0.08
    ax.add_patch(FancyBboxPatch((dec_x - W / 2 - 0.45, stack_bottom - 0.08), W + 0.9,
                                stack_top - stack_bottom + 0.08,
                                boxstyle="round,pad=0.02,rounding_size=0.15", fill=False,
                                edgecolor="black", linestyle="--", linewidth=1.1))
    ax.text(dec_x + W / 2 + 0.6, (stack_bottom + stack_top) / 2, "× N", ha="left", va="center",
            fontsize=12, fontweight="bold")
    arrow(ax, (dec_x, y), (dec_x, stack_top + 0.3))
    y = box(ax, dec_x, stack_top + 0.3, "LayerNorm final", NORM, h=0.36, fontsize=8)
    arrow(ax, (dec_x, y), (dec_x, y + 0.25))
    y = box(ax, dec_x, y + 0.25, "lineal d_model → V  (pesos atados opcionales)", OUTC, h=0.42,
            fontsize=8)
    arrow(ax, (dec_x, y), (dec_x, y + 0.25))
    y = box(ax, dec_x, y + 0.25, "log-softmax", OUTC, h=0.36, fontsize=8)
    arrow(ax, (dec_x, y), (dec_x, y + 0.3))
    ax.text(dec_x, y + 0.36, "log-probabilidades del siguiente tóken\n(batch, T, V)", ha="center",
            va="bottom", fontsize=9)
    ax.text(dec_x, 11.3, "DECODIFICADOR", ha="center", fontsize=13, fontweight="bold")

    # ---- memory → cross-attention (keys and values) --------------------------
    cross_attn_y = cross_bottom + 0.25 + 0.36 + 0.18 + 0.27
    mid = (enc_x + dec_x) / 2
    ax.plot([enc_x + 0.9, mid, mid], [mem_y + 0.05, mem_y + 0.05, cross_attn_y], color=MEM,
            linewidth=1.6)
    arrow(ax, (mid, cross_attn_y), (dec_x - W / 2, cross_attn_y), color=MEM, lw=1.6)
    ax.text(mid + 0.08, cross_attn_y + 0.12, "K, V", ha="left", va="bottom", fontsize=9,
            color=MEM, fontweight="bold")
    ax.text(5.0, 11.75, "Transformer codificador-decodificador (Pre-LN): x + subcapa(LayerNorm(x))",
            ha="center", fontsize=10, style="italic")
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
