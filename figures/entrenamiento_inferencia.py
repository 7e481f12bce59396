"""Draw dldna/diagrams/entrenamiento_inferencia.svg: teacher forcing against inference.

    python figures/entrenamiento_inferencia.py

Left, training: the decoder reads the whole reference «<bos> I like nachos»
at once and must predict «I like nachos <eos>», every position in the same
pass (the causal mask keeps each one from seeing its answer). Right,
inference: there is no reference; the decoder writes one word per step and
reads its own previous words. Both sides read the encoded source «Me gustan
los nachos». The SVG is reproducible (no date, fixed id salt).
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

ORANGE, SKY, GREEN, VERMILLION, GREY = "#E69F00", "#56B4E9", "#009E73", "#D55E00", "#EEEEEE"


def token(ax, x, y, text, color="white", w=0.95):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - 0.2), w, 0.4, boxstyle="round,pad=0.02,rounding_size=0.06",
                                facecolor=color, edgecolor="black", linewidth=0.9))
    ax.text(x, y, text, ha="center", va="center", fontsize=10)


def arrow(ax, a, b, color="#333333"):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=11, linewidth=1.1, color=color))


def draw() -> Figure:
    fig = Figure(figsize=(12.8, 5.6))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-0.3, 12.5)
    ax.set_ylim(0, 5.6)
    ax.axis("off")
    source = "Me gustan los nachos"
    # Left: training with teacher forcing.
    ax.text(2.75, 5.3, "Entrenamiento: forzado del profesor (teacher forcing)", ha="center",
            fontsize=11.5, fontweight="bold")
    ax.text(2.75, 4.85, f"codificador ← «{source}»", ha="center", fontsize=10, color="#0072B2")
    inputs = ["<bos>", "I", "like", "nachos"]
    targets = ["I", "like", "nachos", "<eos>"]
    xs = [1.1 + 1.15 * i for i in range(4)]
    ax.add_patch(FancyBboxPatch((0.4, 2.15), 4.7, 0.9, boxstyle="round,pad=0.02,rounding_size=0.1",
                                facecolor=GREY, edgecolor="#777777"))
    ax.text(2.75, 2.6, "decodificador: todas las posiciones\na la vez (máscara causal)", ha="center",
            va="center", fontsize=9.5)
    for x, a, b in zip(xs, inputs, targets, strict=True):
        token(ax, x, 1.3, a, SKY)
        token(ax, x, 3.9, b, ORANGE)
        arrow(ax, (x, 1.52), (x, 2.13))
        arrow(ax, (x, 3.07), (x, 3.68))
    ax.text(-0.2, 1.3, "lee", fontsize=9, va="center")
    ax.text(-0.2, 3.9, "predice", fontsize=9, va="center")
    ax.text(2.75, 0.55, "la entrada es la traducción de referencia desplazada un paso:\n"
            "todas las posiciones se aprenden a la vez", ha="center", fontsize=9)
    ax.plot([5.75, 5.75], [0.3, 5.45], color="#999999", linewidth=1.0)
    # Right: inference, one step at a time.
    ax.text(8.9, 5.3, "Inferencia: un paso cada vez (autorregresiva)", ha="center", fontsize=11.5,
            fontweight="bold")
    ax.text(8.9, 4.85, f"codificador ← «{source}»  (una sola vez)", ha="center", fontsize=10,
            color="#0072B2")
    produced = ["I", "like", "nachos", "<eos>"]
    for step in range(4):
        y = 4.2 - 0.95 * step
        ax.text(5.95, y, f"paso {step + 1}", fontsize=9.5, va="center")
        prefix = ["<bos>", *produced[:step]]
        for j, tok in enumerate(prefix):
            token(ax, 6.95 + 0.9 * j, y, tok, SKY if j == 0 else "#CDE8F7", w=0.82)
        x_end = 6.95 + 0.9 * len(prefix)
        arrow(ax, (x_end - 0.47, y), (x_end + 0.05, y), VERMILLION)
        token(ax, x_end + 0.5, y, produced[step], ORANGE, w=0.82)
    ax.text(8.9, 0.35, "cada palabra producida (naranja) se añade a la entrada del paso siguiente;\n"
            "se para al escribir <eos>", ha="center", fontsize=9)
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
