"""Draw dldna/diagrams/arbol_prefijo.svg: an assignment, its syntax tree and its prefix linearisation.

    python figures/arbol_prefijo.py

Top: the source text x=(3+y)*2-z. Middle: its tree (ASSIGN at the root, the
operators as inner nodes, digits and variables as leaves), every node
numbered in the order of a pre-order walk. Bottom: the target sequence the
decoder writes, the node labels in that order, followed by EOS.
"""

from __future__ import annotations

from common import save
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from dldna.tasks.parsing import SYMBOLS, parse, to_prefix
from dldna.viz.style import PALETTE

TEXT = "x=(3+y)*2-z"


def layout(tree, depth=0, counter=None, positions=None, order=None):
    """x by in-order position of the leaves, y by depth; returns (positions, edges, order)."""
    if counter is None:
        counter, positions, order = [0], [], [0]
    index = len(positions)
    positions.append(None)
    my_order = order[0]
    order[0] += 1
    if isinstance(tree, str):
        positions[index] = (counter[0], depth, tree, my_order, [])
        counter[0] += 1
        return index
    children = [layout(child, depth + 1, counter, positions, order) for child in tree[1:]]
    x = sum(positions[c][0] for c in children) / len(children)
    positions[index] = (x, depth, tree[0], my_order, children)
    return index


def draw() -> Figure:
    tree = parse(TEXT)
    positions: list = []
    layout(tree, positions=positions, counter=[0], order=[0])
    fig = Figure(figsize=(9, 5.6))
    ax = fig.add_axes((0, 0, 1, 1))
    width = max(p[0] for p in positions) + 1
    ax.set_xlim(-0.8, width + 0.2)
    ax.set_ylim(-1.9, 5.4)
    ax.axis("off")
    ax.text(width / 2 - 0.3, 5.05, f"origen: {TEXT}", ha="center", va="center", fontsize=13,
            family="monospace")

    def xy(p):
        return p[0] * 1.0, 4.1 - p[1] * 1.0

    for p in positions:
        for c in p[4]:
            (x0, y0), (x1, y1) = xy(p), xy(positions[c])
            ax.plot([x0, x1], [y0, y1], color="#555555", linewidth=1.1, zorder=1)
    for p in positions:
        x, y = xy(p)
        inner = p[2] in SYMBOLS
        label = f"{p[2]}\n({SYMBOLS[p[2]]})" if inner else p[2]
        ax.add_patch(FancyBboxPatch((x - 0.38, y - 0.27), 0.76, 0.54, boxstyle="round,pad=0.04",
                                    facecolor=PALETTE[1] if inner else PALETTE[0],
                                    edgecolor="black", linewidth=0.9, zorder=2))
        ax.text(x, y, label, ha="center", va="center", fontsize=8 if inner else 10, zorder=3)
        ax.text(x + 0.42, y + 0.3, str(p[3] + 1), ha="left", va="bottom", fontsize=8,
                color=PALETTE[5], zorder=3)
    prefix = to_prefix(tree) + ["EOS"]
    ax.text(width / 2 - 0.3, -0.85, "destino (recorrido en preorden, números en rojo):", ha="center",
            va="center", fontsize=10)
    step = (width + 0.6) / len(prefix)
    for k, tok in enumerate(prefix):
        x = -0.5 + step * (k + 0.5)
        ax.add_patch(FancyBboxPatch((x - step * 0.45, -1.6), step * 0.9, 0.42,
                                    boxstyle="round,pad=0.02", facecolor="#f2f2f2",
                                    edgecolor="black", linewidth=0.8))
        ax.text(x, -1.39, tok, ha="center", va="center", fontsize=7.5)
    return fig


if __name__ == "__main__":
    save(draw(), __file__)
