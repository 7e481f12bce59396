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

:func:`theme` hands the same colours to the explorers' static view (the
browser), so that a change here changes both the figures and the book's
explorers (the latter with ``make book``, see :mod:`dldna.sphinx_ext`).
"""

from __future__ import annotations

import io

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import is_color_like, to_hex
from matplotlib.figure import Figure

from dldna import checks

#: Okabe & Ito (2008): orange, sky blue, bluish green, yellow, blue, vermillion,
#: reddish purple, black.
PALETTE: tuple[str, ...] = (
    "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000",
)
SEQUENTIAL_CMAP = "viridis"
DIVERGING_CMAP = "RdBu_r"
#: Colours of lines drawn side by side: the palette without its yellow, poor on white.
LINE_COLORS: tuple[str, ...] = tuple(c for c in PALETTE if c != "#F0E442")
IMAGE_CMAP = "gray_r"  # ink dark on white paper, as a digit is written
MASKED_COLOR = "#d9d9d9"
MASKED_EDGE = "#8c8c8c"
MASKED_HATCH = "///"
MASKED_LABEL = "enmascarada (no puede atender)"
#: Colour of cells that may attend in a mask (Okabe-Ito blue).
ALLOWED_COLOR = PALETTE[4]
#: Colour of highlights (selected row, cursor): vermillion, visible on viridis.
HIGHLIGHT = "#D55E00"
#: Grid drawn over an image (patches): vermillion, visible on grey and on viridis.
GRID_COLOR = PALETTE[5]
INK = "#222222"
MUTED = "#444444"
AXIS = "#555555"
RULE = "#dddddd"
#: A cell whose WCAG relative luminance is above this gets dark text (:data:`INK`),
#: else white: seaborn's rule for annotated heatmaps, used by both views.
LUMINANCE_THRESHOLD = 0.408


def color(i: int) -> str:
    """The ``i``-th colour of :data:`PALETTE` (cycling)."""
    i = checks.integer(i, "i (número del color)")
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
    width = checks.positive_number(width, "width (ancho en pulgadas)")
    height = checks.positive_number(height, "height (alto en pulgadas)")
    nrows, ncols = checks.positive_int(nrows, "nrows"), checks.positive_int(ncols, "ncols")
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=True, **subplot_kw)
    return fig, axes


def figure_or_new(ax: Axes | None, width: float = 6.4, height: float = 4.0) -> tuple[Figure, Axes]:
    """``(ax.figure, ax)`` when an axes is given, else a new one-axes figure."""
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax debe ser unos ejes de matplotlib (o None); se recibió {type(ax).__name__}.")
    if ax is not None:
        return ax.figure, ax
    fig, new_ax = new_figure(width, height)
    return fig, new_ax


def colormap_lut(name: str, n: int = 32) -> list[str]:
    """``n`` evenly spaced colours of a matplotlib colour map, as hex strings.

    The static (browser) views interpolate in this table, so that they use the
    same colours as the matplotlib figures.
    """
    cmap = matplotlib.colormaps[check_cmap(name)]
    n = checks.positive_int(n, "n (número de colores)", minimum=2)
    return [to_hex(cmap(i / (n - 1))) for i in range(n)]


def figure_png(fig: Figure, dpi: int = 90) -> bytes:
    """The figure rendered as PNG bytes (no metadata, so the bytes are stable)."""
    if not isinstance(fig, Figure):
        raise TypeError(f"fig debe ser una figura de matplotlib; se recibió {type(fig).__name__}.")
    dpi = checks.positive_int(dpi, "dpi (puntos por pulgada)")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def check_cmap(name) -> str:
    """``name`` if it is the name of a matplotlib colour map (a Spanish refusal otherwise)."""
    if not isinstance(name, str) or name not in matplotlib.colormaps:
        raise ValueError(f"cmap debe ser el nombre de un mapa de colores de matplotlib, p. ej. "
                         f"'{SEQUENTIAL_CMAP}', '{DIVERGING_CMAP}' o 'magma'; se recibió {name!r:.40}.")
    return name


def check_color(value) -> str:
    """``value`` if matplotlib reads it as a colour (``"#D55E00"``, ``"red"``, ``"C0"``...)."""
    if isinstance(value, bool) or not is_color_like(value):
        raise ValueError(f"El color debe ser uno que matplotlib conozca, p. ej. '#D55E00' o 'red'; "
                         f"se recibió {value!r:.40}.")
    return value


def _rgb(rgb) -> list[float]:
    """The first three channels of a colour given as numbers in ``[0, 1]``."""
    try:
        values = np.asarray(rgb, dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or isinstance(rgb, str) or values.ndim != 1 or len(values) not in (3, 4) \
            or not np.all((values >= 0) & (values <= 1)):
        raise ValueError(f"El color debe ser (r, g, b) o (r, g, b, a) con números entre 0 y 1; "
                         f"se recibió {rgb!r:.60}.")
    return values[:3].tolist()


def relative_luminance(rgb) -> float:
    """WCAG relative luminance of an RGB colour with channels in ``[0, 1]``."""
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in _rgb(rgb)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def text_color(rgb) -> str:
    """Readable text colour (:data:`INK` or white) on a cell of colour ``rgb``."""
    return INK if relative_luminance(rgb) > LUMINANCE_THRESHOLD else "#ffffff"


def theme() -> dict:
    """The colours of the explorers' static view, as JSON-ready values.

    The browser renderer (``dldna/widgets/static/explorer.js``) reads them
    from ``window.dldnaTheme``; nothing there types a colour again.
    """
    return {
        "palette": list(PALETTE), "lines": list(LINE_COLORS),
        "sequential": colormap_lut(SEQUENTIAL_CMAP), "diverging": colormap_lut(DIVERGING_CMAP),
        "image": colormap_lut(IMAGE_CMAP),
        "masked": MASKED_COLOR, "masked_edge": MASKED_EDGE, "masked_label": MASKED_LABEL,
        "allowed": ALLOWED_COLOR, "highlight": HIGHLIGHT, "grid": GRID_COLOR,
        "ink": INK, "muted": MUTED, "axis": AXIS, "rule": RULE,
        "luminance_threshold": LUMINANCE_THRESHOLD,
    }


def labels(values, n: int, what: str) -> list[str]:
    """``values`` as ``n`` strings (``0 … n-1`` when ``None``); a Spanish error
    naming ``what`` (e.g. ``"consultas"``) when there are not ``n`` of them.

    A single string is refused rather than split into its letters: ``"abc"``
    would silently label three rows ``a``, ``b``, ``c``.
    """
    n = checks.non_negative_int(n, "n (número de etiquetas)")
    if values is None:
        return [str(i) for i in range(n)]
    if isinstance(values, str) or not isinstance(values, (list, tuple, np.ndarray, range)):
        raise TypeError(
            f"Las etiquetas de {what} deben ser una lista con una etiqueta por elemento ({n}); se recibió "
            f"{type(values).__name__}: {values!r:.60}. Para las palabras de una frase usa frase.split()."
        )
    texts = [str(v) for v in values]
    if len(texts) != n:
        raise ValueError(f"Hay {len(texts)} etiquetas de {what}, pero la figura tiene {n}: "
                         "debe haber una por elemento.")
    return texts


def mathtext_safe(text) -> str:
    """``text`` with ``$`` escaped, so matplotlib draws it as typed.

    Matplotlib reads a pair of ``$`` as a formula (mathtext): a token such as
    «$5» in a reader's sentence would raise a parse error, in English.
    """
    return str(text).replace("$", r"\$")
