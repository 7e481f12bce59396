"""Pictures of word vectors and of attention as geometry.

* :func:`plot_projection`: a 2-D projection of word vectors, coloured by group;
* :func:`plot_convex_hull`: inputs, their convex hull and the outputs of
  attention (weighted averages), which always fall inside it;
* :func:`plot_attention_graph`: attention weights as a weighted, directed,
  fully connected graph;
* :func:`plot_curve`: one or more curves (a training loss, say).

Every function returns a :class:`~matplotlib.figure.Figure` built without
``pyplot`` and accepts an existing ``ax`` to draw into.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, Polygon

from dldna import checks
from dldna.attention import convex_hull_2d
from dldna.viz import style
from dldna.viz.attention import as_matrix

__all__ = [
    "format_matrix", "plot_projection", "plot_convex_hull", "plot_attention_graph", "plot_curve",
]


def format_matrix(matrix, rows: Sequence[str], cols: Sequence[str] | None = None,
                  decimals: int = 2) -> str:
    """A labelled matrix as text, one row per line, rounded to ``decimals``.

    ``-0.00`` is written ``0.00`` so the text does not depend on the sign of
    a rounding error.
    """
    decimals = checks.non_negative_int(decimals, "decimals")
    if np.asarray(matrix).dtype == np.bool_:
        raise TypeError("matrix debe ser una matriz de números; se recibió una matriz booleana.")
    if isinstance(matrix, torch.Tensor):
        matrix = matrix.detach().cpu().double().numpy()
    try:  # -inf (a masked score) is printed as it is, so no check of the values here
        m = np.asarray(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("matrix debe ser una matriz de números; "
                        f"se recibió {type(matrix).__name__}.") from None
    if m.ndim != 2:
        raise ValueError(f"Se esperaba una matriz (2 ejes); se recibió forma {m.shape}.")
    cols = rows if cols is None else cols
    rows = style.labels(rows, m.shape[0], "filas")
    cols = style.labels(cols, m.shape[1], "columnas")
    cells = [[f"{v:.{decimals}f}" for v in row] for row in m]
    cells = [[c[1:] if c.startswith("-") and float(c) == 0 else c for c in row] for row in cells]
    width = max([len(c) for c in cols] + [len(c) for row in cells for c in row]) + 1
    left = max(len(r) for r in rows) + 1
    lines = [" " * left + "".join(c.rjust(width) for c in cols)]
    lines += [r.ljust(left) + "".join(c.rjust(width) for c in row)
              for r, row in zip(rows, cells, strict=True)]
    return "\n".join(lines)


def _points(values, name: str) -> np.ndarray:
    array = as_matrix(values, name)
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] == 0:
        raise ValueError(
            f"«{name}» deben ser puntos del plano, de forma (n, 2); se recibió {array.shape}."
        )
    return array


def plot_projection(
    coords,
    words: Sequence[str],
    groups: Sequence[str] | None = None,
    *,
    title: str = "Vectores de palabras proyectados en 2-D",
    xlabel: str = "componente principal 1",
    ylabel: str = "componente principal 2",
    ax: Axes | None = None,
) -> Figure:
    """Scatter of 2-D word coordinates with their words; one colour per group."""
    xy = _points(coords, "coords")
    words = style.labels(words, len(xy), "puntos")
    if groups is None:
        groups = ["palabras"] * len(xy)
    groups = style.labels(groups, len(xy), "puntos")
    fig, ax = style.figure_or_new(ax, 7.5, 5.5)
    markers = "osD^vP*X"
    colors = [c for c in style.PALETTE if c != "#F0E442"]  # yellow is hard to see on white
    for k, group in enumerate(dict.fromkeys(groups)):
        idx = [i for i, g in enumerate(groups) if g == group]
        ax.scatter(xy[idx, 0], xy[idx, 1], color=colors[k % len(colors)], marker=markers[k % len(markers)],
                   s=40, edgecolor="black", linewidth=0.4, label=group, zorder=3)
    for (x, y), word in zip(xy, words, strict=True):
        ax.annotate(word, (x, y), xytext=(3, 3), textcoords="offset points", fontsize=7.5)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small", loc="best", framealpha=0.9)
    ax.grid(alpha=0.3)
    return fig


def plot_convex_hull(
    inputs,
    outputs,
    labels: Sequence[str],
    *,
    title: str = "Las salidas de la atención quedan dentro de la envolvente convexa",
    xlabel: str = "componente principal 1",
    ylabel: str = "componente principal 2",
    ax: Axes | None = None,
) -> Figure:
    """Inputs (circles), their convex hull (shaded) and outputs (crosses) in 2-D.

    An arrow joins each input to the output at the same position.
    """
    xin = _points(inputs, "inputs")
    xout = _points(outputs, "outputs")
    labels = style.labels(labels, len(xin), "entradas")
    if len(xout) != len(xin):
        raise ValueError(f"Hay {len(xin)} entradas y {len(xout)} salidas: deben coincidir.")
    fig, ax = style.figure_or_new(ax, 6.8, 5.0)
    if len(xin) >= 3:
        hull = xin[convex_hull_2d(torch.from_numpy(xin)).numpy()]
        ax.add_patch(Polygon(hull, closed=True, facecolor=style.color(1), alpha=0.2,
                             edgecolor=style.color(4), linewidth=1.2,
                             label="envolvente convexa de las entradas"))
    for a, b in zip(xin, xout, strict=True):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=9, color="#777777",
                                     linewidth=0.8, zorder=2))
    ax.scatter(xin[:, 0], xin[:, 1], color=style.color(4), s=45, zorder=3, label="entradas $x_i$")
    ax.scatter(xout[:, 0], xout[:, 1], color=style.color(5), marker="X", s=55, zorder=4,
               label="salidas $y_i = \\sum_j \\alpha_{ij} x_j$")
    for (x, y), word in zip(xin, labels, strict=True):
        ax.annotate(word, (x, y), xytext=(4, 4), textcoords="offset points", fontsize=8)
    pad = 0.1 * max(np.ptp(xin[:, 0]), np.ptp(xin[:, 1]), 1e-9)
    ax.set_xlim(xin[:, 0].min() - pad, xin[:, 0].max() + pad)
    ax.set_ylim(xin[:, 1].min() - pad, xin[:, 1].max() + pad)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small", loc="best", framealpha=0.9)
    ax.grid(alpha=0.3)
    return fig


def plot_attention_graph(
    weights,
    words: Sequence[str],
    *,
    title: str = "La atención como grafo ponderado y completo",
    min_weight: float = 0.0,
    ax: Axes | None = None,
) -> Figure:
    """Nodes on a circle; an arrow ``j → i`` whose width is the weight ``α_ij``.

    ``weights`` is ``(n, n)``: row ``i`` says how much word ``i`` takes from
    each word ``j``, so the arrow points from the word that gives information
    to the one that receives it. The weight a word gives itself (the
    diagonal) is written under its name. Arrows below ``min_weight`` are left
    out to keep the picture readable.
    """
    w = as_matrix(weights, "weights")
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] == 0:
        raise ValueError(f"Los pesos deben formar una matriz cuadrada (n, n); forma {w.shape}.")
    if (w < 0).any() or (w > 1).any():
        raise ValueError("Los pesos de atención deben estar entre 0 y 1 (cada fila, una softmax).")
    min_weight = checks.probability(min_weight, "min_weight")
    n = w.shape[0]
    words = style.labels(words, n, "palabras")
    fig, ax = style.figure_or_new(ax, 5.6, 5.6)
    angles = [math.pi / 2 - 2 * math.pi * k / n for k in range(n)]
    xy = np.array([(math.cos(a), math.sin(a)) for a in angles])
    off = w[~np.eye(n, dtype=bool)]
    top = off.max() if off.size and off.max() > 0 else 1.0  # widths relative to the others
    for i in range(n):
        for j in range(n):
            if i == j or w[i, j] < min_weight:
                continue
            ax.add_patch(FancyArrowPatch(
                xy[j], xy[i], arrowstyle="-|>", mutation_scale=8 + 10 * w[i, j] / top,
                connectionstyle="arc3,rad=0.12", shrinkA=14, shrinkB=14,
                linewidth=0.3 + 5.0 * w[i, j] / top, color=style.color(4),
                alpha=0.25 + 0.75 * w[i, j] / top, zorder=1,
            ))
    for k, ((x, y), word) in enumerate(zip(xy, words, strict=True)):
        ax.add_patch(Circle((x, y), 0.11, facecolor=style.color(0), edgecolor="black",
                            linewidth=0.8, zorder=3))
        ax.text(1.3 * x, 1.3 * y, f"{word}\n(sí misma {w[k, k]:.2f})", ha="center",
                va="center", fontsize=7.5)
    ax.set_xlim(-1.65, 1.65)
    ax.set_ylim(-1.6, 1.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title)
    return fig


def _curve(values, name: str) -> np.ndarray:
    """One curve's values: a list of finite numbers (an empty one is counted by the caller)."""
    if isinstance(values, (str, bytes)) or values is None:
        raise TypeError(f"{name} debe ser una lista de números; se recibió {type(values).__name__}.")
    if np.ndim(values) == 1 and len(values) == 0:
        return np.zeros(0)
    return as_matrix(values, name, ndim=1)


def plot_curve(
    ys: dict[str, Sequence[float]] | Sequence[float],
    xs: Sequence[float] | None = None,
    *,
    title: str = "Pérdida durante el entrenamiento",
    xlabel: str = "época",
    ylabel: str = "pérdida",
    logx: bool = False,
    logy: bool = False,
    ax: Axes | None = None,
) -> Figure:
    """One curve (a sequence) or several (a dict label → sequence) on shared axes."""
    series = ys if isinstance(ys, dict) else {ylabel: ys}
    if not series or any(_curve(v, "ys").size == 0 for v in series.values()):
        raise ValueError("No hay datos que dibujar: cada curva necesita al menos un valor.")
    series = {label: _curve(v, f"la curva {label!r}") for label, v in series.items()}
    if xs is not None:
        xs = _curve(xs, "xs")
    logx, logy = checks.boolean(logx, "logx"), checks.boolean(logy, "logy")
    fig, ax = style.figure_or_new(ax, 6.0, 3.6)
    markers = "osD^v"
    for k, (label, values) in enumerate(series.items()):
        x = list(xs) if xs is not None else list(range(1, len(values) + 1))
        if len(x) != len(values):
            raise ValueError(f"La curva «{label}» tiene {len(values)} valores y {len(x)} abscisas.")
        ax.plot(x, values.tolist(), marker=markers[k % len(markers)], color=style.color(k),
                label=label)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(series) > 1:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3, which="both")
    return fig
