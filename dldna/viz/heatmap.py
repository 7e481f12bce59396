"""The one heatmap of the book: every matrix figure is drawn by :func:`heatmap`.

Built on :func:`seaborn.heatmap` (always given an ``ax``, so no global state),
with the book's conventions in one place:

* **colours**: :data:`~dldna.viz.style.SEQUENTIAL_CMAP` for values of one sign,
  :data:`~dldna.viz.style.DIVERGING_CMAP` centred at 0 (``center=0``, a
  symmetric range) for signed values; both colour-blind safe;
* **annotations**: the value in each cell, in dark or white text chosen by the
  luminance of the cell's own colour (:func:`dldna.viz.style.text_color`,
  seaborn's rule), so no row is white on near-white whatever the colour map;
* **masked cells**: where ``allowed`` is ``False``, grey and hatched, with a
  legend entry, so "not allowed" never looks like a learned zero;
* **labels**: rows are the first index (queries, positions), columns the
  second (keys, dimensions); tick labels are drawn as typed (a ``$`` stays a
  ``$``), rotated 45° when there are more than six columns, thinned out when
  there are too many to read.

Cell ``(r, c)`` spans ``[c, c + 1] × [r, r + 1]`` in data coordinates (the
first row at the top): :func:`outline_cells` draws a frame around cells. The
values drawn are ``ax.collections[0].get_array()`` (a masked array).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.collections import PatchCollection
from matplotlib.colors import Colormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from dldna import checks
from dldna.viz import style

__all__ = ["heatmap", "masked_legend_handle", "outline_cells", "tick_labels"]

#: Most tick labels shown along one side before they are thinned out.
MAX_TICKS = 24


def masked_legend_handle(label: str = style.MASKED_LABEL) -> Patch:
    """Legend entry for masked cells (grey, hatched)."""
    label = checks.text(label, "label")
    return Patch(facecolor=style.MASKED_COLOR, edgecolor=style.MASKED_EDGE,
                 hatch=style.MASKED_HATCH, label=label)


def tick_labels(labels: Sequence | None, n: int) -> list[str]:
    """``labels`` as text drawn as typed, or ``0 … n-1`` when ``None``.

    A single string is refused rather than split into its letters: ``"abc"``
    would silently label three rows ``a``, ``b``, ``c``.
    """
    n = checks.non_negative_int(n, "n (número de etiquetas)")
    if labels is None:
        return [str(i) for i in range(n)]
    return [style.mathtext_safe(v) for v in style.labels(labels, n, "filas o columnas")]


def outline_cells(ax: Axes, cells: Iterable[tuple[int, int]], color: str = style.HIGHLIGHT,
                  linewidth: float = 2.5, width: int = 1) -> None:
    """Frame cells ``(row, col)`` of a heatmap (``width`` columns wide each)."""
    if not isinstance(ax, Axes):
        raise TypeError(f"ax debe ser unos ejes de matplotlib; se recibió {type(ax).__name__}.")
    if isinstance(cells, (str, bytes)) or not isinstance(cells, Iterable):
        raise TypeError("cells debe ser una lista de celdas (fila, columna); "
                        f"se recibió {type(cells).__name__}.")
    cells = list(cells)
    for cell in cells:
        if not isinstance(cell, (list, tuple)) or len(cell) != 2:
            raise ValueError(f"Cada celda de cells debe ser un par (fila, columna); se recibió {cell!r}.")
        checks.non_negative_int(cell[0], "La fila de una celda")
        checks.non_negative_int(cell[1], "La columna de una celda")
    color = style.check_color(color)
    linewidth = checks.positive_number(linewidth, "linewidth")
    width = checks.positive_int(width, "width")
    for r, c in cells:
        ax.add_patch(Rectangle((c, r), width, 1, fill=False, edgecolor=color,
                               linewidth=linewidth, zorder=4, clip_on=False))


def _hatch(ax: Axes, blocked: np.ndarray) -> None:
    rows, cols = np.nonzero(blocked)
    if len(rows):
        ax.add_collection(PatchCollection(
            [Rectangle((c, r), 1, 1) for r, c in zip(rows, cols, strict=True)],
            facecolor=style.MASKED_COLOR, edgecolor=style.MASKED_EDGE,
            hatch=style.MASKED_HATCH, linewidth=0, zorder=2))


def _ticks(labels, texts: list[str]):
    """seaborn's ``xticklabels``: none, every label, or every k-th when too many."""
    if labels is False:
        return False
    return texts if len(texts) <= MAX_TICKS else len(texts) // MAX_TICKS + 1


def _array(values) -> np.ndarray:
    """``values`` as a float array; text, None and ragged lists refused in Spanish."""
    if isinstance(values, (str, bytes)) or values is None:
        raise TypeError(f"values debe ser una matriz de números; se recibió {type(values).__name__}.")
    if hasattr(values, "detach"):  # a tensor, perhaps on a GPU or requiring grad
        values = values.detach().cpu()
    if np.asarray(values).dtype == np.bool_:  # True/False are not values to colour
        raise TypeError("values debe ser una matriz de números; se recibió una matriz booleana.")
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("values debe ser una matriz de números (filas de la misma longitud); "
                        f"se recibió {type(values).__name__}.") from None
    return v


def heatmap(
    values,
    *,
    ax: Axes | None = None,
    row_labels: Sequence | bool | None = None,
    col_labels: Sequence | bool | None = None,
    allowed=None,
    signed: bool | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    cmap: str | Colormap | None = None,
    annotate: bool | None = None,
    fmt: str = ".2f",
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    colorbar: bool = True,
    colorbar_label: str | None = None,
    legend: bool = True,
    width: float | None = None,
    height: float | None = None,
) -> Figure:
    """Draw the matrix ``values`` ``(rows, cols)`` and return its figure.

    Args:
        ax: where to draw (default: a new figure of ``width`` × ``height``
            inches, sized from the matrix when not given).
        row_labels, col_labels: one label per row / column (``None``, the
            default, or ``True``: the indices; ``False``: none).
        allowed: boolean ``(rows, cols)``, ``False`` = masked cell (drawn grey
            and hatched, not coloured); ``None``: every cell is shown.
        signed: diverging colours centred at 0 (default: when a shown value
            is negative). ``vmin``/``vmax`` default to the data's range
            (symmetric about 0 when signed).
        cmap: overrides the colour map chosen by ``signed``.
        annotate: write each value with ``fmt`` (default: at most 10 × 10 cells).
        colorbar, colorbar_label: the colour bar and its label.
        legend: a legend entry for masked cells, when there are any.
    """
    v = _array(values)
    if v.ndim != 2 or 0 in v.shape:
        raise ValueError(f"El mapa de calor necesita una matriz (filas, columnas); forma {v.shape}.")
    rows, cols = v.shape
    # The options, before anything is drawn: "no" would silently mean True, "0" a text limit.
    signed, annotate = (None if x is None else checks.boolean(x, name)
                        for x, name in ((signed, "signed"), (annotate, "annotate")))
    colorbar, legend = checks.boolean(colorbar, "colorbar"), checks.boolean(legend, "legend")
    vmin, vmax = (None if x is None else checks.real(x, name) for x, name in ((vmin, "vmin"), (vmax, "vmax")))
    if cmap is not None and not isinstance(cmap, Colormap):
        cmap = style.check_cmap(cmap)
    # True asks for labels, and with none given they are the indices (as None); False hides them.
    row_labels, col_labels = (None if x is True or (isinstance(x, np.bool_) and x) else
                              False if x is False or isinstance(x, np.bool_) else x
                              for x in (row_labels, col_labels))
    if ax is not None:
        style.figure_or_new(ax)  # "ejes" or a figure instead of axes: a Spanish refusal, before drawing
    shown = np.ones(v.shape, dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    if shown.shape != v.shape:
        raise ValueError(f"La máscara tiene forma {shown.shape} y la matriz {v.shape}; "
                         "deben coincidir.")
    if np.isnan(v[shown]).any():
        raise ValueError("values contiene NaN (valores no numéricos) en celdas visibles; "
                         "para ocultar celdas usa allowed.")
    visible = v[shown & np.isfinite(v)]
    if signed is None:
        signed = visible.size > 0 and float(visible.min()) < 0
    if signed:
        top = float(np.abs(visible).max()) if visible.size else 1.0
        vmax = top if vmax is None else vmax
        vmin = -vmax if vmin is None else vmin
    if annotate is None:
        annotate = rows * cols <= 100
    if ax is None:
        _, ax = style.new_figure(width or 1.6 + 0.55 * cols, height or 1.2 + 0.45 * rows)
    fig = ax.figure
    xt = tick_labels(None if col_labels is False else col_labels, cols)
    yt = tick_labels(None if row_labels is False else row_labels, rows)
    sns.heatmap(
        v, ax=ax, mask=~shown, cmap=cmap or (style.DIVERGING_CMAP if signed else
                                             style.SEQUENTIAL_CMAP),
        center=0.0 if signed else None, vmin=vmin, vmax=vmax, annot=annotate, fmt=fmt,
        annot_kws={"fontsize": "x-small"}, cbar=colorbar,
        cbar_kws={"label": colorbar_label, "shrink": 0.9} if colorbar else None,
        xticklabels=_ticks(col_labels, xt), yticklabels=_ticks(row_labels, yt),
    )
    # seaborn's thinned-out labels are indices: put the labels back.
    if col_labels is not False and cols > MAX_TICKS:
        ax.set_xticklabels([xt[int(t.get_position()[0])] for t in ax.get_xticklabels()])
    if row_labels is not False and rows > MAX_TICKS:
        ax.set_yticklabels([yt[int(t.get_position()[1])] for t in ax.get_yticklabels()])
    # One rule for the ink of the annotations (the browser view uses the same).
    mesh = ax.collections[0]
    for text in ax.texts:
        x, y = text.get_position()
        text.set_color(style.text_color(mesh.cmap(mesh.norm(v[int(y), int(x)]))))
    if not shown.all():
        _hatch(ax, ~shown)
        if legend:
            ax.legend(handles=[masked_legend_handle()], loc="upper left",
                      bbox_to_anchor=(0.0, -0.12 if cols <= 6 else -0.22),
                      fontsize="small", frameon=False)
    rotate = cols > 6
    ax.tick_params(axis="x", labelrotation=45 if rotate else 0, length=0)
    ax.tick_params(axis="y", labelrotation=0, length=0)
    if rotate:
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
            label.set_rotation_mode("anchor")
    for spine in ax.spines.values():
        spine.set_visible(True)
        spine.set_edgecolor(style.AXIS)
        spine.set_linewidth(0.8)
    if title is not None:
        ax.set_title(title)
    ax.set_xlabel(xlabel or "")
    ax.set_ylabel(ylabel or "")
    return fig
