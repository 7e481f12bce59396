"""Pictures of attention: heatmaps of weights, one row as bars, entropy per row.

Two layers, kept apart so that the numbers can be tested without pixels:

* **data functions** (pure, return arrays): :func:`tokens_from`,
  :func:`as_matrix`, :func:`as_mask`, :func:`self_attention_weights`,
  :func:`retemper`, :func:`row_entropy`, :func:`max_entropy`;
* **plotting functions** (return a :class:`~matplotlib.figure.Figure`, accept
  an existing ``ax`` to draw into): :func:`attention_heatmap`,
  :func:`attention_row_bars`, :func:`entropy_bars`, and
  :func:`attention_panel`, which combines the three.

Shapes: ``weights`` is ``(q_len, k_len)``: row ``i`` is the distribution of
query ``i`` over the keys. ``mask`` is boolean, broadcastable to
``(q_len, k_len)``, and ``True`` means "may attend" (as in
:mod:`dldna.attention`). Masked cells are drawn grey and hatched, never as a
zero weight.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from dldna import attention as _attention
from dldna import checks
from dldna.viz import style
from dldna.viz.heatmap import heatmap, masked_legend_handle, outline_cells

__all__ = [
    "tokens_from",
    "as_matrix",
    "as_mask",
    "self_attention_weights",
    "retemper",
    "row_entropy",
    "max_entropy",
    "attention_heatmap",
    "attention_row_bars",
    "entropy_bars",
    "attention_panel",
    "panel_axes",
    "random_attention",
    "scaling_panel",
]

# --------------------------------------------------------------------------- data


def tokens_from(sentence: str | Sequence[str]) -> list[str]:
    """Tokens of a sentence (split on white space) or a copy of a token list.

    Raises ``ValueError`` (in Spanish) when there is no token.
    """
    if isinstance(sentence, str):
        tokens = sentence.split()
    elif isinstance(sentence, Sequence) and all(isinstance(t, str) for t in sentence):
        tokens = [str(t) for t in sentence]
    else:
        raise TypeError(
            "La frase debe ser un texto (str) o una lista de palabras (tókenes) de tipo str; "
            f"se recibió {type(sentence).__name__}."
        )
    if not tokens or any(not t.strip() for t in tokens):
        raise ValueError(
            "La frase está vacía (o contiene palabras vacías): escribe al menos una palabra."
        )
    return tokens


def as_matrix(values, name: str = "weights", ndim: int = 2) -> np.ndarray:
    """``values`` (tensor, array or nested list) as a finite float64 array of ``ndim`` axes."""
    name = checks.text(name, "name")
    if isinstance(values, torch.Tensor):
        if values.dtype == torch.bool:  # True/False are not weights
            raise TypeError(f"«{name}» debe ser una matriz de números; se recibió un tensor booleano.")
        values = values.detach().cpu().double().numpy()
    if np.asarray(values).dtype == np.bool_:
        raise TypeError(f"«{name}» debe ser una matriz de números; se recibió una matriz booleana.")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        what = "un texto" if isinstance(values, str) else (
            "filas de longitudes distintas o valores que no son números"
            if isinstance(values, (list, tuple)) else f"un {type(values).__name__}")
        raise TypeError(f"«{name}» debe ser una matriz de números; se recibió {what}.") from None
    if array.ndim != ndim:
        raise ValueError(
            f"«{name}» debe tener {ndim} ejes; tiene forma {tuple(array.shape)}."
        )
    if array.size == 0:
        raise ValueError(f"«{name}» está vacía (forma {tuple(array.shape)}).")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"«{name}» contiene valores no finitos (NaN o infinito).")
    return array


def as_mask(mask, shape: tuple[int, int]) -> np.ndarray | None:
    """A boolean mask broadcast to ``shape`` (``True`` = may attend), or ``None``."""
    if not isinstance(shape, (tuple, list)) or not 1 <= len(shape) <= 2:
        raise TypeError(f"shape debe ser la forma de los pesos, p. ej. (3, 4); se recibió {shape!r}.")
    shape = tuple(checks.positive_int(n, "Cada longitud de shape") for n in shape)
    if mask is None:
        return None
    if isinstance(mask, torch.Tensor):
        if mask.dtype != torch.bool:
            raise TypeError(
                f"La máscara debe ser booleana (True = puede atender); se recibió {mask.dtype}."
            )
        mask = mask.detach().cpu().numpy()
    array = np.asarray(mask)
    if array.dtype != np.bool_:
        raise TypeError(
            f"La máscara debe ser booleana (True = puede atender); se recibió {array.dtype}."
        )
    try:
        return np.broadcast_to(array, shape).copy()
    except ValueError:
        raise ValueError(
            f"La máscara de forma {tuple(array.shape)} no encaja con la matriz de pesos "
            f"de forma {tuple(shape)} (consultas × claves)."
        ) from None


def self_attention_weights(
    vectors,
    temperature: float = 1.0,
    mask=None,
    scale: float | None = None,
) -> np.ndarray:
    """Weights of self-attention with ``Q = K = V = vectors``: ``(n, n)``.

    ``vectors`` has shape ``(n, d)``. The weights are
    ``softmax(X Xᵀ · scale / temperature)`` with ``scale = 1/sqrt(d)`` by
    default, computed by :func:`dldna.attention.scaled_dot_product_attention`.
    """
    x = torch.from_numpy(as_matrix(vectors, "vectors"))
    if scale is not None:  # 0 would silently make every weight equal
        scale = checks.positive_number(scale, "scale")
    m = as_mask(mask, (x.shape[0], x.shape[0]))
    m_t = torch.from_numpy(m) if m is not None else None
    _, weights = _attention.scaled_dot_product_attention(
        x, x, x, mask=m_t, scale=scale, temperature=temperature
    )
    return weights.numpy()


def retemper(weights, temperature: float, mask=None) -> np.ndarray:
    """Re-apply a softmax temperature to weights that a model already produced.

    A row of weights ``w`` came from ``softmax(s)``; ``log w`` equals ``s`` up to
    a constant per row, so ``softmax(log w / T)`` is what the model would give
    with temperature ``T``. Zero weights and masked cells stay zero.
    Shape ``(..., q_len, k_len)`` in and out.
    """
    w = as_matrix(weights, "weights", ndim=np.ndim(weights) if np.ndim(weights) >= 2 else 2)
    if (w < 0).any():
        raise ValueError("weights contiene pesos negativos; los pesos de atención están entre 0 y 1.")
    w = torch.from_numpy(w)
    allowed = w > 0
    if mask is not None:
        allowed &= torch.from_numpy(as_mask(mask, tuple(w.shape[-2:])))
    scores = torch.where(allowed, torch.log(w.clamp_min(1e-300)), torch.tensor(float("-inf")))
    return _attention.softmax(scores, dim=-1, temperature=temperature).numpy()


def row_entropy(weights, mask=None) -> np.ndarray:
    """Entropy (nats) of each row, ``(q_len,)``; masked cells count as weight 0."""
    w = as_matrix(weights, "weights")
    if (w < 0).any():
        raise ValueError("weights contiene pesos negativos; los pesos de atención están entre 0 y 1.")
    if mask is not None:
        w = np.where(as_mask(mask, w.shape), w, 0.0)
    return _attention.entropy(torch.from_numpy(w), dim=-1).numpy()


def max_entropy(mask, shape: tuple[int, int]) -> np.ndarray:
    """Largest possible entropy of each row, ``log(number of allowed keys)``; ``(q_len,)``.

    A row with no allowed key gets 0.
    """
    allowed = as_mask(mask, shape)
    allowed = np.full(tuple(shape), True) if allowed is None else allowed
    counts = allowed.sum(axis=-1)
    return np.log(np.maximum(counts, 1)).astype(np.float64)


# ----------------------------------------------------------------------- drawing


def _check_row(row, q_len: int) -> None:
    """``row`` (a row to highlight) is ``None`` or the index of a query."""
    if row is not None and (isinstance(row, bool) or not isinstance(row, (int, np.integer))
                            or not 0 <= row < q_len):
        raise ValueError(
            f"La fila resaltada {row!r} no existe: hay {q_len} consultas (0 a {q_len - 1})."
        )


def attention_heatmap(
    weights,
    q_tokens: Sequence[str] | None = None,
    k_tokens: Sequence[str] | None = None,
    *,
    mask=None,
    ax: Axes | None = None,
    title: str = "Pesos de atención",
    xlabel: str = "clave (key)",
    ylabel: str = "consulta (query)",
    highlight_row: int | None = None,
    annotate: bool | None = None,
    colorbar: bool = True,
    vmin: float | None = 0.0,
    vmax: float | None = 1.0,
    cmap: str | None = None,
    colorbar_label: str = "peso",
) -> Figure:
    """Heatmap of a ``(q_len, k_len)`` weight matrix with token labels.

    Drawn by :func:`dldna.viz.heatmap.heatmap`: masked cells (``mask`` False)
    grey and hatched with a legend entry, each value written in its cell
    (default: at most 10×10 cells) in ink chosen by the cell's luminance.
    ``highlight_row`` outlines one query's row. Pass ``vmin=vmax=None`` for
    matrices that are not weights (scores, say): signed values then get the
    diverging colour map centred at 0 (``cmap`` overrides the colour map).
    The drawn values are ``ax.collections[0].get_array()`` (a masked array).
    """
    w = as_matrix(weights, "weights")
    q_len, k_len = w.shape
    if ax is not None:
        style.figure_or_new(ax)  # refuses what is not a matplotlib Axes, in Spanish
    q_labels = style.labels(q_tokens, q_len, "consultas")
    k_labels = style.labels(k_tokens, k_len, "claves")
    m = as_mask(mask, w.shape)
    _check_row(highlight_row, q_len)
    fig = heatmap(w, ax=ax, row_labels=q_labels, col_labels=k_labels, allowed=m, vmin=vmin,
                  vmax=vmax, cmap=cmap, annotate=annotate, title=title, xlabel=xlabel,
                  ylabel=ylabel, colorbar=colorbar, colorbar_label=colorbar_label,
                  width=1.2 + 0.55 * k_len, height=1.0 + 0.45 * q_len)
    if highlight_row is not None:
        outline_cells(fig.axes[0] if ax is None else ax, [(highlight_row, 0)], width=k_len)
    return fig


def attention_row_bars(
    row,
    k_tokens: Sequence[str] | None = None,
    *,
    mask_row=None,
    ax: Axes | None = None,
    title: str | None = None,
    query_label: str | None = None,
    xlabel: str = "clave (key)",
    ylabel: str = "peso",
    values: bool | None = None,
) -> Figure:
    """One query's weights over the keys as bars, ``row`` of shape ``(k_len,)``.

    Masked keys get a grey hatched column with no bar (they have no weight, not
    weight 0). The default title names ``query_label``. The bars are
    ``ax.containers[0]`` (heights = weights, masked keys height 0).
    """
    r = as_matrix(row, "row", ndim=1)
    k_len = r.shape[0]
    labels = style.labels(k_tokens, k_len, "claves")
    m = None if mask_row is None else as_mask(mask_row, (k_len,))
    fig, ax = style.figure_or_new(ax, 1.0 + 0.5 * k_len, 2.6)
    heights = r if m is None else np.where(m, r, 0.0)
    ax.bar(range(k_len), heights, color=style.PALETTE[4], zorder=2)
    if m is not None:
        for c in np.nonzero(~m)[0]:
            ax.add_patch(Rectangle((c - 0.4, 0), 0.8, 1.0, facecolor=style.MASKED_COLOR,
                                   edgecolor=style.MASKED_EDGE, hatch=style.MASKED_HATCH,
                                   linewidth=0, zorder=1))
        if not m.all():
            ax.legend(handles=[masked_legend_handle()], loc="upper right", fontsize="small")
    values = k_len <= 16 if values is None else checks.boolean(values, "values")
    if values:
        for c in range(k_len):
            if m is None or m[c]:
                ax.text(c, heights[c] + 0.02, f"{heights[c]:.2f}", ha="center", va="bottom",
                        fontsize="x-small")
    ax.set_ylim(0, 1.12)
    ax.set_xlim(-0.5, k_len - 0.5)
    ax.set_xticks(range(k_len), labels, rotation=45 if k_len > 6 else 0,
                  ha="right" if k_len > 6 else "center")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title is None:
        title = f"Pesos de la consulta «{query_label}»" if query_label else "Pesos de una consulta"
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3, zorder=0)
    return fig


def entropy_bars(
    weights,
    q_tokens: Sequence[str] | None = None,
    *,
    mask=None,
    ax: Axes | None = None,
    title: str = "Entropía de cada fila",
    highlight_row: int | None = None,
    xlabel: str = "entropía (nats)",
    ylabel: str = "consulta (query)",
) -> Figure:
    """Horizontal bars of the entropy of each row, with its maximum ``log(k)``.

    Rows run top to bottom in the order of the heatmap, so the two can share
    the vertical axis. A black tick marks the largest possible entropy of the
    row (uniform over its allowed keys). Bars are ``ax.containers[0]``.
    """
    w = as_matrix(weights, "weights")
    q_len = w.shape[0]
    labels = style.labels(q_tokens, q_len, "consultas")
    m = as_mask(mask, w.shape)
    _check_row(highlight_row, q_len)
    ent = row_entropy(w, m)
    top = max_entropy(m, w.shape)
    fig, ax = style.figure_or_new(ax, 3.0, 1.0 + 0.45 * q_len)
    colors = [style.HIGHLIGHT if r == highlight_row else style.PALETTE[1] for r in range(q_len)]
    ax.barh(range(q_len), ent, color=colors, height=0.7, zorder=2)
    ax.scatter(top, range(q_len), marker="|", s=250, color="black", zorder=3,
               label="máximo (uniforme)")
    ax.set_yticks(range(q_len), labels)
    ax.set_ylim(q_len - 0.5, -0.5)
    ax.set_xlim(0, max(float(top.max()), 1e-3) * 1.08)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize="x-small")
    ax.grid(axis="x", alpha=0.3, zorder=0)
    return fig


def attention_panel(
    weights,
    q_tokens: Sequence[str] | None = None,
    k_tokens: Sequence[str] | None = None,
    *,
    query: int = 0,
    mask=None,
    title: str | None = None,
) -> Figure:
    """Heatmap, the ``query`` row as bars and the entropy of every row, in one figure.

    Layout: heatmap top left, entropy per row to its right (same rows), the
    selected row's bars below the heatmap (same keys). Axes are named
    ``fig.axes[0]`` heatmap, then colour bar, then bars and entropy (use
    :func:`panel_axes` to get them by name).
    """
    w = as_matrix(weights, "weights")
    q_len, k_len = w.shape
    q_labels = style.labels(q_tokens, q_len, "consultas")
    k_labels = style.labels(k_tokens, k_len, "claves")
    if isinstance(query, bool) or not isinstance(query, (int, np.integer)) or not (
        0 <= query < q_len
    ):
        raise ValueError(
            f"La consulta elegida ({query!r}) no existe: hay {q_len} consultas (0 a {q_len - 1})."
        )
    m = as_mask(mask, w.shape)
    width = min(13.0, 3.8 + 0.6 * k_len + 2.6)
    height = min(11.0, 2.8 + 0.42 * q_len + 2.4)
    fig = Figure(figsize=(width, height), layout="constrained")
    axd = fig.subplot_mosaic(
        [["heat", "entropy"], ["bars", "."]],
        width_ratios=[max(k_len, 3), 2.6], height_ratios=[max(q_len, 3), 3.2],
    )
    attention_heatmap(w, q_labels, k_labels, mask=m, ax=axd["heat"], highlight_row=query,
                      title="Pesos de atención", colorbar=False)
    entropy_bars(w, q_labels, mask=m, ax=axd["entropy"], highlight_row=query, ylabel="")
    attention_row_bars(w[query], k_labels, mask_row=None if m is None else m[query],
                       ax=axd["bars"], query_label=q_labels[query])
    axd["heat"].set_xlabel("")
    axd["heat"].set_title("Pesos de atención (fila resaltada: consulta elegida)")
    fig.colorbar(axd["heat"].collections[0], ax=axd["entropy"], label="peso", location="right",
                 shrink=0.9)
    for name, axis in axd.items():
        axis.set_gid(name)
    if title:
        fig.suptitle(title)
    return fig


def panel_axes(fig: Figure) -> dict[str, Axes]:
    """The named axes of a figure made by :func:`attention_panel`."""
    if not isinstance(fig, Figure):
        raise TypeError(f"fig debe ser la figura de attention_panel; se recibió {type(fig).__name__}.")
    return {ax.get_gid(): ax for ax in fig.axes if ax.get_gid()}


# ------------------------------------------------------- scaling by sqrt(d_k)

#: Width of the fixed random draw of :func:`random_attention` (largest d_k).
MAX_D_K = 1024


def random_attention(
    d_k: int,
    scaled: bool = True,
    *,
    n_queries: int = 4,
    n_keys: int = 8,
    seed: int = 0,
) -> dict:
    """Attention of random queries and keys of dimension ``d_k``, scaled or not.

    Queries ``(n_queries, d_k)`` and keys ``(n_keys, d_k)`` are the first
    ``d_k`` columns of one standard-normal draw of width :data:`MAX_D_K` made
    with a local generator seeded with ``seed`` (no global state is touched),
    so growing ``d_k`` adds dimensions to the same vectors. Scores are
    ``Q Kᵀ / sqrt(d_k)`` when ``scaled`` and ``Q Kᵀ`` otherwise; their standard
    deviation grows like ``sqrt(d_k)`` without the division, and the softmax
    collapses onto one key.

    Returns a dict: ``weights`` ``(n_queries, n_keys)``, ``max_weight`` and
    ``entropy`` ``(n_queries,)``, ``score_std`` (float), ``max_entropy``
    (``log n_keys``).
    """
    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or not 1 <= d_k <= MAX_D_K:
        raise ValueError(
            f"d_k debe ser un entero entre 1 y {MAX_D_K}; se recibió {d_k!r}."
        )
    for name, n in (("n_queries", n_queries), ("n_keys", n_keys)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= 32:
            raise ValueError(f"{name} debe ser un entero entre 1 y 32; se recibió {n!r}.")
    scaled = checks.boolean(scaled, "scaled")
    generator = torch.Generator().manual_seed(checks.non_negative_int(seed, "seed (semilla)"))
    draw = torch.randn(n_queries + n_keys, MAX_D_K, generator=generator, dtype=torch.float64)
    q, k = draw[:n_queries, :d_k], draw[n_queries:, :d_k]
    scale = 1.0 / float(np.sqrt(d_k)) if scaled else 1.0
    _, weights = _attention.scaled_dot_product_attention(q, k, k, scale=scale)
    scores = (q @ k.T) * scale
    w = weights.numpy()
    return {
        "weights": w,
        "max_weight": w.max(axis=-1),
        "entropy": row_entropy(w),
        "score_std": float(scores.std(unbiased=False)),
        "max_entropy": float(np.log(n_keys)),
        "d_k": int(d_k),
        "scaled": bool(scaled),
    }


def scaling_panel(result: dict, *, title: str | None = None) -> Figure:
    """Heatmap of :func:`random_attention`'s weights, with max weight and entropy per query.

    Axes have gids ``"heat"``, ``"max"`` and ``"entropy"``.
    """
    if not isinstance(result, dict) or not {"weights", "max_weight", "entropy", "max_entropy"} <= set(result):
        raise TypeError("result debe ser el diccionario que devuelve random_attention.")
    if title is not None:
        title = checks.text(title, "title", allow_empty=True)
    w = as_matrix(result["weights"], "weights")
    nq, nk = w.shape
    q_labels = [f"q{i + 1}" for i in range(nq)]
    k_labels = [f"k{j + 1}" for j in range(nk)]
    fig = Figure(figsize=(11.0, 1.9 + 0.5 * nq), layout="constrained")
    axd = fig.subplot_mosaic([["heat", "max", "entropy"]], width_ratios=[max(nk, 3), 2.4, 2.4])
    attention_heatmap(w, q_labels, k_labels, ax=axd["heat"], title="Pesos de atención",
                      colorbar=True)
    ax = axd["max"]
    ax.barh(range(nq), result["max_weight"], color=style.PALETTE[4], height=0.7)
    ax.set_yticks(range(nq), q_labels)
    ax.set_ylim(nq - 0.5, -0.5)
    ax.set_xlim(0, 1.0)
    ax.set_xlabel("peso")
    ax.set_title("Peso máximo")
    ax.grid(axis="x", alpha=0.3)
    entropy_bars(w, q_labels, ax=axd["entropy"], title="Entropía", ylabel="")
    for name, axis in axd.items():
        axis.set_gid(name)
    how = "dividiendo entre √d_k" if result["scaled"] else "sin dividir entre √d_k"
    fig.suptitle(
        (title + " — " if title else "")
        + f"d_k = {result['d_k']}, {how}; desviación típica de las puntuaciones: "
        f"{result['score_std']:.2f} (√d_k = {np.sqrt(result['d_k']):.2f})"
    )
    return fig
