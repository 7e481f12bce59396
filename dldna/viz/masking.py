"""Pictures of attention masks: as matrices and as graphs.

A mask (boolean, ``True`` = may attend, shape ``(q_len, k_len)``) is at the
same time the adjacency matrix of a graph: an edge goes from key ``j`` to query
``i`` whenever ``mask[i, j]`` is ``True``, and attention is message passing
along those edges. The functions here draw both views:

* :func:`plot_mask`, :func:`plot_masks`: the matrix (allowed cells coloured,
  blocked cells grey and hatched);
* :func:`plot_mask_graph`: the same mask as arcs over the sequence;
* :func:`plot_complete_graph`, :func:`plot_bipartite_graph`,
  :func:`plot_grid_graph` and :func:`plot_attention_graphs`: self-attention,
  cross-attention and a convolution's neighbourhood as graphs;
* :func:`plot_patterns`: several masks, each above its graph;
* :func:`plot_masked_weights`: a mask next to the attention weights it produces.

Every function returns a :class:`matplotlib.figure.Figure` (built without
``pyplot``); those that accept ``ax`` draw into it and return its figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Arc, Patch, Rectangle

from dldna import checks
from dldna.viz import style
from dldna.viz.attention import as_matrix
from dldna.viz.heatmap import heatmap, outline_cells
from dldna.viz.style import (
    HIGHLIGHT,
    MASKED_COLOR,
    MASKED_HATCH,
    PALETTE,
    figure_or_new,
    new_figure,
)

ALLOWED_COLOR = style.ALLOWED_COLOR  # Okabe-Ito blue
QUERY_COLOR = PALETTE[0]  # orange
KEY_COLOR = PALETTE[1]  # sky blue
EDGE_COLOR = "#9a9a9a"

__all__ = [
    "plot_mask",
    "plot_masks",
    "plot_mask_graph",
    "plot_complete_graph",
    "plot_bipartite_graph",
    "plot_grid_graph",
    "plot_attention_graphs",
    "plot_patterns",
    "plot_masked_weights",
]


def _as_matrix(mask, name: str = "La máscara") -> np.ndarray:
    """A 2-D boolean numpy array from a tensor/array, squeezing leading 1s."""
    if isinstance(mask, torch.Tensor):
        mask = mask.detach().cpu().numpy()
    arr = np.asarray(mask)
    while arr.ndim > 2 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim != 2:
        raise ValueError(
            f"{name} debe ser una matriz (q_len, k_len) para dibujarla; se recibió forma "
            f"{arr.shape}. Elige una frase y una cabeza, p. ej. mask[0, 0]."
        )
    if arr.dtype != bool:
        raise TypeError(f"{name} debe ser booleana (True = puede atender); dtype {arr.dtype}.")
    return arr


def plot_mask(
    mask,
    tokens: Sequence[str] | None = None,
    *,
    key_tokens: Sequence[str] | None = None,
    title: str = "Máscara de atención",
    ax: Axes | None = None,
    legend: bool = True,
) -> Figure:
    """Draw a boolean mask ``(q_len, k_len)``: allowed cells blue, blocked cells grey hatched.

    ``tokens`` label the queries (and the keys, unless ``key_tokens`` is given).
    """
    legend = checks.boolean(legend, "legend")
    m = _as_matrix(mask)
    own = ax is None
    fig, ax = figure_or_new(ax, 0.3 * m.shape[1] + 2.6, 0.3 * m.shape[0] + 2.0)
    rows = style.labels(tokens, m.shape[0], "consultas")
    cols = style.labels(key_tokens if key_tokens is not None else tokens, m.shape[1], "claves")
    heatmap(np.ones(m.shape), ax=ax, row_labels=rows, col_labels=cols, allowed=m,
            cmap=ListedColormap([ALLOWED_COLOR]), signed=False, vmin=0.0, vmax=1.0,
            annotate=False, colorbar=False, legend=False, title=title,
            xlabel="clave j (posición atendida)", ylabel="consulta i (quien atiende)")
    if legend and own:
        handles = [Patch(facecolor=ALLOWED_COLOR, label="puede atender (True)"),
                   Patch(facecolor=MASKED_COLOR, hatch=MASKED_HATCH, label="bloqueada (False)")]
        fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize="small",
                   frameon=False)
    return fig


def plot_masks(
    masks: dict[str, object],
    tokens: Sequence[str] | None = None,
    *,
    title: str | None = None,
    panel_size: float = 2.6,
) -> Figure:
    """Several masks side by side, one panel per ``{name: mask}`` entry."""
    _check_masks(masks)
    panel_size = checks.positive_number(panel_size, "panel_size")
    if not masks:
        raise ValueError("No hay máscaras que dibujar: el diccionario está vacío.")
    fig, axes = new_figure(panel_size * len(masks) + 0.4, panel_size + 1.2, 1, len(masks))
    axes = np.atleast_1d(axes)
    for ax, (name, mask) in zip(axes, masks.items(), strict=True):
        plot_mask(mask, tokens, title=name, ax=ax, legend=False)
        if ax is not axes[0]:
            ax.set_ylabel("")
    handles = [Patch(facecolor=ALLOWED_COLOR, label="puede atender"),
               Patch(facecolor=MASKED_COLOR, hatch=MASKED_HATCH, label="bloqueada")]
    fig.legend(handles=handles, loc="outside lower center", ncols=2, frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def _node(ax: Axes, x: float, y: float, label: str, color: str, size: float = 0.32) -> None:
    ax.add_patch(Rectangle((x - size, y - size), 2 * size, 2 * size, facecolor=color,
                           edgecolor="black", linewidth=0.8, zorder=3))
    ax.text(x, y, label, ha="center", va="center", fontsize=8, zorder=4)


def plot_mask_graph(
    mask,
    tokens: Sequence[str] | None = None,
    *,
    query: int | None = None,
    title: str = "La máscara como grafo",
    ax: Axes | None = None,
) -> Figure:
    """Draw a square mask as arcs over the sequence.

    Each allowed pair ``(i, j)`` with ``j != i`` is an arc between positions
    ``j`` and ``i``: above the line when ``j < i`` (information from the past),
    below when ``j > i`` (from the future). With ``query`` set, the arcs that
    reach that query are drawn thick in orange and the rest thin and grey.
    Self-loops (the diagonal) are not drawn.
    """
    m = _as_matrix(mask)
    n = m.shape[0]
    if m.shape[1] != n:
        raise ValueError(f"plot_mask_graph necesita una máscara cuadrada; se recibió {m.shape}.")
    if query is not None and (isinstance(query, bool) or not isinstance(query, (int, np.integer))
                              or not 0 <= query < n):
        raise ValueError(f"query debe estar entre 0 y {n - 1}; se recibió {query}.")
    labels = style.labels(tokens, n, "posiciones")
    fig, ax = figure_or_new(ax, max(4.0, 0.45 * n + 1), 2.8)
    top = 0.0
    bottom = 0.0
    for i in range(n):
        for j in range(n):
            if i == j or not m[i, j]:
                continue
            span = abs(i - j)
            height = 0.5 * span
            above = j < i
            focus = query is not None and i == query
            look = dict(color=HIGHLIGHT if focus else EDGE_COLOR,
                        linewidth=2.0 if focus else 0.8,
                        alpha=1.0 if focus or query is None else 0.55,
                        zorder=2 if focus else 1)
            ax.add_patch(Arc(((i + j) / 2, 0), span, 2 * height,
                             theta1=0 if above else 180, theta2=180 if above else 360, **look))
            if above:
                top = max(top, height)
            else:
                bottom = max(bottom, height)
    for k in range(n):
        color = QUERY_COLOR if k == query else KEY_COLOR
        _node(ax, k, 0, labels[k], color, size=0.3)
    ax.set_xlim(-0.7, n - 0.3)
    ax.set_ylim(-bottom - 0.6, top + 0.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title)
    return fig


def _words(tokens, name: str) -> list[str]:
    """A non-empty list of node labels (a text is refused: its letters are not tokens)."""
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, (list, tuple)) or not tokens:
        raise TypeError(f"{name} debe ser una lista no vacía de palabras, p. ej. frase.split(); "
                        f"se recibió {tokens!r:.60}.")
    return [str(t) for t in tokens]


def _check_masks(masks) -> None:
    if not isinstance(masks, dict):
        raise TypeError("masks debe ser un diccionario {nombre: máscara}; "
                        f"se recibió {type(masks).__name__}.")


def plot_complete_graph(
    tokens: Sequence[str] | int,
    *,
    title: str = "Autoatención: grafo completo",
    ax: Axes | None = None,
) -> Figure:
    """Nodes on a circle, every pair joined: what full self-attention assumes."""
    if isinstance(tokens, (int, np.integer)) and not isinstance(tokens, bool):
        labels = [str(i) for i in range(checks.positive_int(tokens, "tokens (número de nodos)"))]
    else:
        labels = _words(tokens, "tokens")
    n = len(labels)
    fig, ax = figure_or_new(ax, 3.2, 3.2)
    angles = [math.pi / 2 - 2 * math.pi * k / n for k in range(n)]
    xy = [(math.cos(a), math.sin(a)) for a in angles]
    segments = [(xy[a], xy[b]) for a in range(n) for b in range(a + 1, n)]
    ax.add_collection(LineCollection(segments, colors=EDGE_COLOR, linewidths=0.9, zorder=1))
    for (x, y), label in zip(xy, labels, strict=True):
        ax.add_patch(_circle(x, y, KEY_COLOR))
        ax.text(1.32 * x, 1.32 * y, label, ha="center", va="center", fontsize=8)
    ax.set_xlim(-1.6, 1.6)
    ax.set_ylim(-1.6, 1.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title)
    return fig


def _circle(x: float, y: float, color: str, r: float = 0.11):
    from matplotlib.patches import Circle

    return Circle((x, y), r, facecolor=color, edgecolor="black", linewidth=0.8, zorder=3)


def plot_bipartite_graph(
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    mask=None,
    *,
    title: str = "Atención cruzada: grafo bipartito",
    ax: Axes | None = None,
) -> Figure:
    """Queries (top, orange) joined to the keys (bottom, blue) they may attend to.

    Edges only go between the two sets, never inside one: the graph of
    encoder-decoder (cross) attention. ``mask`` ``(q_len, k_len)`` removes
    edges (e.g. padding of the source sentence); default: all pairs.
    """
    q = _words(query_tokens, "query_tokens")
    k = _words(key_tokens, "key_tokens")
    m = np.ones((len(q), len(k)), dtype=bool) if mask is None else _as_matrix(mask)
    if m.shape != (len(q), len(k)):
        raise ValueError(f"La máscara tiene forma {m.shape}; se esperaba {(len(q), len(k))}.")
    fig, ax = figure_or_new(ax, 3.6, 3.2)
    width = max(len(q), len(k)) - 1
    qx = np.linspace(0, width, len(q)) if len(q) > 1 else np.array([width / 2])
    kx = np.linspace(0, width, len(k)) if len(k) > 1 else np.array([width / 2])
    segments = [((qx[i], 1.0), (kx[j], 0.0)) for i in range(len(q)) for j in range(len(k))
                if m[i, j]]
    ax.add_collection(LineCollection(segments, colors=EDGE_COLOR, linewidths=0.9, zorder=1))
    for x, label in zip(qx, q, strict=True):
        ax.add_patch(_circle(x, 1.0, QUERY_COLOR, r=0.13))
        ax.text(x, 1.28, label, ha="center", va="bottom", fontsize=8)
    for x, label in zip(kx, k, strict=True):
        ax.add_patch(_circle(x, 0.0, KEY_COLOR, r=0.13))
        ax.text(x, -0.28, label, ha="center", va="top", fontsize=8)
    ax.text(-0.6, 1.0, "decodificador\n(consultas)", ha="right", va="center", fontsize=8)
    ax.text(-0.6, 0.0, "codificador\n(claves y valores)", ha="right", va="center", fontsize=8)
    ax.set_xlim(-2.6, width + 0.6)
    ax.set_ylim(-0.8, 1.8)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title)
    return fig


def plot_grid_graph(
    height: int = 5,
    width: int = 5,
    center: tuple[int, int] = (2, 2),
    radius: int = 1,
    *,
    title: str = "Convolución 3×3: cuadrícula",
    ax: Axes | None = None,
) -> Figure:
    """A pixel grid; the ``(2·radius+1)²`` neighbours of ``center`` send it messages.

    This is the graph a 3×3 convolution (``radius=1``) attends over, with fixed
    (learned, position-dependent) weights instead of softmax weights.
    """
    height, width = checks.positive_int(height, "height"), checks.positive_int(width, "width")
    radius = checks.non_negative_int(radius, "radius")
    if not isinstance(center, (tuple, list)) or len(center) != 2:
        raise TypeError(f"center debe ser un par (fila, columna); se recibió {center!r}.")
    ci, cj = (checks.non_negative_int(c, "Cada coordenada de center") for c in center)
    if not (0 <= ci < height and 0 <= cj < width):
        raise ValueError(f"El centro {center} está fuera de la cuadrícula {height}×{width}.")
    fig, ax = figure_or_new(ax, 3.2, 3.2)
    grid = [((i, j), (i, j + 1)) for i in range(height) for j in range(width - 1)]
    grid += [((i, j), (i + 1, j)) for i in range(height - 1) for j in range(width)]
    ax.add_collection(LineCollection([((a[1], -a[0]), (b[1], -b[0])) for a, b in grid],
                                     colors="#d0d0d0", linewidths=0.8, zorder=1))
    near = [(i, j) for i in range(height) for j in range(width)
            if max(abs(i - ci), abs(j - cj)) <= radius and (i, j) != (ci, cj)]
    ax.add_collection(LineCollection([((j, -i), (cj, -ci)) for i, j in near],
                                     colors=HIGHLIGHT, linewidths=1.8, zorder=2))
    for i in range(height):
        for j in range(width):
            if (i, j) == (ci, cj):
                color = QUERY_COLOR
            elif (i, j) in near:
                color = KEY_COLOR
            else:
                color = "white"
            ax.add_patch(_circle(j, -i, color, r=0.16))
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(-height + 0.4, 0.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title)
    return fig


def plot_attention_graphs(
    tokens: Sequence[str] = ("el", "gato", "negro", "salta"),
    target_tokens: Sequence[str] = ("the", "black", "cat"),
) -> Figure:
    """Three panels: complete graph (self-attention), bipartite graph
    (cross-attention) and grid neighbourhood (convolution)."""
    fig, axes = new_figure(10.5, 3.8, 1, 3)
    plot_complete_graph(tokens, ax=axes[0])
    plot_bipartite_graph(target_tokens, tokens, ax=axes[1])
    plot_grid_graph(ax=axes[2])
    handles = [
        Line2D([], [], marker="o", linestyle="", markerfacecolor=QUERY_COLOR,
               markeredgecolor="black", label="nodo que recibe (consulta)"),
        Line2D([], [], marker="o", linestyle="", markerfacecolor=KEY_COLOR,
               markeredgecolor="black", label="nodo que envía (clave/valor)"),
        Line2D([], [], color=EDGE_COLOR, label="arista: par que puede atenderse"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False,
               fontsize="small")
    fig.suptitle("La atención como paso de mensajes sobre un grafo")
    return fig


def plot_patterns(
    masks: dict[str, object],
    *,
    query: int | None = None,
    title: str | None = "Patrones de máscara: matriz y grafo",
) -> Figure:
    """Each mask twice: its matrix (top row) and its graph of arcs (bottom row).

    ``query`` highlights the arcs that reach one position in every graph.
    """
    _check_masks(masks)
    if not masks:
        raise ValueError("No hay máscaras que dibujar: el diccionario está vacío.")
    n_panels = len(masks)
    fig, axes = new_figure(3.0 * n_panels, 5.6, 2, n_panels,
                           gridspec_kw={"height_ratios": [3, 2]})
    axes = np.asarray(axes).reshape(2, n_panels)
    for col, (name, mask) in enumerate(masks.items()):
        plot_mask(mask, title=name, ax=axes[0, col], legend=False)
        if col:
            axes[0, col].set_ylabel("")
        m = _as_matrix(mask)
        if query is not None:
            outline_cells(axes[0, col], [(query, 0)], width=m.shape[1], linewidth=2)
        plot_mask_graph(mask, query=query, title="", ax=axes[1, col])
    handles = [Patch(facecolor=ALLOWED_COLOR, label="puede atender"),
               Patch(facecolor=MASKED_COLOR, hatch=MASKED_HATCH, label="bloqueada")]
    if query is not None:
        handles.append(Line2D([], [], color=HIGHLIGHT, linewidth=2,
                              label=f"lo que ve la consulta {query}"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def plot_masked_weights(
    mask,
    weights,
    tokens: Sequence[str] | None = None,
    *,
    title: str | None = None,
) -> Figure:
    """Two panels: the mask and the attention weights it produces.

    Blocked cells are hatched in both panels, so a weight of exactly 0 caused
    by the mask is told apart from a small learned weight.
    """
    m = _as_matrix(mask)
    ndim = 2 if isinstance(weights, (str, bytes)) or np.ndim(weights) < 2 else np.ndim(weights)
    w = as_matrix(weights, "weights", ndim=ndim)  # text, booleans and NaN refused in Spanish
    if (w < 0).any() or (w > 1).any():
        raise ValueError("Los pesos de atención deben estar entre 0 y 1.")
    while w.ndim > 2 and w.shape[0] == 1:
        w = w[0]
    if w.shape != m.shape:
        raise ValueError(
            f"Los pesos tienen forma {w.shape} y la máscara {m.shape}; deben coincidir."
        )
    side = 0.32 * m.shape[1] + 2.2
    fig, axes = new_figure(2 * side + 1.0, 0.32 * m.shape[0] + 2.2, 1, 2)
    plot_mask(m, tokens, title="Máscara", ax=axes[0], legend=False)
    rows = style.labels(tokens, m.shape[0], "consultas")
    heatmap(w, ax=axes[1], row_labels=rows, col_labels=rows, allowed=m, signed=False, vmin=0.0,
            vmax=1.0, annotate=m.shape[1] <= 8, legend=False, title="Pesos de atención",
            xlabel="clave j (posición atendida)", colorbar_label="peso")
    if title:
        fig.suptitle(title)
    return fig
