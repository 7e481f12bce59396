"""Shared look of the book's figures: colour-blind-safe colours and a figure factory.

Every plotting function in :mod:`dldna.viz` builds its figure with
:func:`new_figure`, which uses :class:`matplotlib.figure.Figure` directly (never
``pyplot``): no global state is touched, Jupyter shows the figure once (when it
is the value of a cell) and the caller receives it.

Colours:

* :data:`PALETTE` is the Okabe–Ito palette, distinguishable with the common
  forms of colour blindness;
* :data:`SEQUENTIAL_CMAP` (``viridis``) for quantities in ``[0, 1]`` such as
  attention weights; :data:`DIVERGING_CMAP` (``RdBu_r``, a ColorBrewer map
  rated safe for colour-blind readers) for signed quantities such as
  positional encodings;
* :data:`MASKED_COLOR` and :data:`MASKED_HATCH` draw masked cells: grey with
  diagonal hatching, so that "not allowed" never looks like a learned zero.
"""

from __future__ import annotations

import io

import matplotlib
from matplotlib.axes import Axes
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

#: Okabe & Ito (2008): orange, sky blue, bluish green, yellow, blue, vermillion,
#: reddish purple, black.
PALETTE: tuple[str, ...] = (
    "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000",
)
SEQUENTIAL_CMAP = "viridis"
DIVERGING_CMAP = "RdBu_r"
MASKED_COLOR = "#d9d9d9"
MASKED_HATCH = "///"
#: Colour of highlights (selected row, cursor): vermillion, visible on viridis.
HIGHLIGHT = "#D55E00"


def color(i: int) -> str:
    """The ``i``-th colour of :data:`PALETTE` (cycling)."""
    return PALETTE[i % len(PALETTE)]


def new_figure(
    width: float = 6.4,
    height: float = 4.0,
    nrows: int = 1,
    ncols: int = 1,
    **subplot_kw,
) -> tuple[Figure, Axes | object]:
    """A figure with constrained layout and its axes, without ``pyplot``.

    Returns ``(figure, axes)``; ``axes`` is one :class:`~matplotlib.axes.Axes`
    when ``nrows == ncols == 1`` and an array of them otherwise. Extra keyword
    arguments go to :meth:`Figure.subplots` (``sharex``, ``gridspec_kw``...).
    """
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=True, **subplot_kw)
    return fig, axes


def figure_or_new(ax: Axes | None, width: float = 6.4, height: float = 4.0) -> tuple[Figure, Axes]:
    """``(ax.figure, ax)`` when an axes is given, else a new one-axes figure."""
    if ax is not None:
        return ax.figure, ax
    fig, new_ax = new_figure(width, height)
    return fig, new_ax


def colormap_lut(name: str, n: int = 32) -> list[str]:
    """``n`` evenly spaced colours of a matplotlib colour map, as hex strings.

    The static (browser) views interpolate in this table, so that they use the
    same colours as the matplotlib figures.
    """
    cmap = matplotlib.colormaps[name]
    return [to_hex(cmap(i / (n - 1))) for i in range(n)]


def figure_png(fig: Figure, dpi: int = 90) -> bytes:
    """The figure rendered as PNG bytes (no metadata, so the bytes are stable)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def matplotlib_cmap(name: str):
    """The named colour map with masked ("bad") cells in :data:`MASKED_COLOR`."""
    return matplotlib.colormaps[name].with_extremes(bad=MASKED_COLOR)
