"""Draw dldna/diagrams/familia.svg: the three members of the Transformer family.

    python figures/familia.py

Left, encoder-only (BERT): every token sees every other (arrows both ways)
and the model fills in a [MASK]. Centre, decoder-only (GPT): each token sees
only the tokens before it and the model writes the next word. Right,
encoder-decoder (T5): a bidirectional encoder reads the input, a causal
decoder writes the output and looks at the encoder through cross-attention.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from dldna.viz import style

BOX = dict(boxstyle="round,pad=0.02,rounding_size=0.04", linewidth=1.2)


def _token(ax, x, y, text, color):
    ax.add_patch(FancyBboxPatch((x - 0.42, y - 0.18), 0.84, 0.36, facecolor=color,
                                edgecolor="#333333", **BOX))
    ax.text(x, y, text, ha="center", va="center", fontsize=9)


def _arc(ax, x0, x1, y, color, rad):
    ax.add_patch(FancyArrowPatch((x0, y), (x1, y), connectionstyle=f"arc3,rad={rad}",
                                 arrowstyle="-|>", mutation_scale=9, color=color, linewidth=1.0))


def draw() -> Figure:
    enc, dec, cross = style.color(0), style.color(1), style.color(2)
    fig = Figure(figsize=(12, 3.6))
    axes = fig.subplots(1, 3)
    words = ["ana", "saca", "[MASK]", "del", "banco"]
    # Encoder-only: arcs in both directions from the masked token.
    ax = axes[0]
    for i, w in enumerate(words):
        _token(ax, i, 0, w, "#f2d7a6" if w == "[MASK]" else "#dce9f5")
    for j in range(len(words)):
        if j != 2:
            _arc(ax, j, 2, 0.2, enc, -0.5 if j < 2 else 0.5)
    ax.text(2, -0.75, "predice «dinero»", ha="center", fontsize=9)
    ax.set_title("solo codificador (BERT)\natención bidireccional", fontsize=11)
    # Decoder-only: arcs only from the past.
    ax = axes[1]
    words = ["ana", "va", "al", "cine", "a ver una"]
    for i, w in enumerate(words):
        _token(ax, i, 0, w, "#dce9f5")
    for j in range(4):
        _arc(ax, j, 4, 0.2, dec, -0.5)
    ax.text(4, -0.75, "predice «película»", ha="center", fontsize=9)
    ax.text(1.5, -0.75, "solo mira hacia atrás", ha="center", fontsize=9, color="#555555")
    ax.set_title("solo decodificador (GPT)\natención causal", fontsize=11)
    # Encoder-decoder.
    ax = axes[2]
    src, tgt = ["suma:", "12", "+", "7"], ["<bos>", "1", "9"]
    for i, w in enumerate(src):
        _token(ax, i, -0.55, w, "#dce9f5")
    for i, w in enumerate(tgt):
        _token(ax, i + 0.5, 0.85, w, "#e3f1e6")
    for j in range(4):
        ax.add_patch(FancyArrowPatch((j, -0.37), (2.5, 0.67), arrowstyle="-|>",
                                     mutation_scale=9, color=cross, linewidth=1.0))
    for j in range(2):
        _arc(ax, j + 0.5, 2.5, 1.03, dec, -0.6)
    ax.text(1.5, -1.15, "codificador: bidireccional", ha="center", fontsize=9)
    ax.text(1.5, 1.55, "decodificador: causal + atención cruzada", ha="center", fontsize=9)
    ax.set_title("codificador-decodificador (T5)\ntexto a texto", fontsize=11)
    for ax in axes:
        ax.set_xlim(-0.7, 4.7)
        ax.set_ylim(-1.4, 1.7)
        ax.axis("off")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
