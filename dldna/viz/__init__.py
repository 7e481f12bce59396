"""Plotting functions of the book.

Each function returns a :class:`matplotlib.figure.Figure` (built without
``pyplot``, so no global style or state is touched), accepts an existing
``ax`` where it draws a single panel, and labels everything in Spanish. The
numbers they draw come from small pure data functions in the same modules,
which the tests check instead of pixels.

* :mod:`dldna.viz.style`: colour-blind-safe palette and colour maps,
  :func:`~dldna.viz.style.new_figure`, and the colours the explorers' browser
  view uses (:func:`~dldna.viz.style.theme`);
* :mod:`dldna.viz.heatmap`: the one heatmap (seaborn) every matrix figure uses;
* :mod:`dldna.viz.attention`: heatmaps of attention weights (with masks),
  one row as bars, entropy per row;
* :mod:`dldna.viz.positional`: waves, heatmap and similarity of positional
  encodings, with an extensible registry of kinds;
* :mod:`dldna.viz.diagrams`: the book's diagrams (:func:`diagram`).
"""

from dldna.viz import attention, heatmap, positional, style
from dldna.viz.attention import (
    attention_heatmap,
    attention_panel,
    attention_row_bars,
    entropy_bars,
)
from dldna.viz.diagrams import diagram
from dldna.viz.positional import (
    positional_heatmap,
    positional_panel,
    positional_similarity,
    positional_waves,
)
from dldna.viz.style import PALETTE, new_figure

__all__ = [
    "attention",
    "heatmap",
    "positional",
    "style",
    "attention_heatmap",
    "attention_panel",
    "attention_row_bars",
    "entropy_bars",
    "positional_heatmap",
    "positional_panel",
    "positional_similarity",
    "positional_waves",
    "PALETTE",
    "diagram",
    "new_figure",
]


def _show_figures_in_ipython() -> None:
    """Let a ``Figure`` left as a cell's last value display as an image.

    The figures of this package are built without ``pyplot``, so IPython's
    inline backend may never have been switched on in the kernel, and a bare
    ``Figure`` would print as ``<Figure size ...>``. Registering IPython's PNG
    formatter for the ``Figure`` type is the part of ``%matplotlib inline``
    that is needed, without pyplot's global figure manager.
    """
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:  # plain Python: nothing to display
        return
    shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"png"}, bbox_inches="tight")


_show_figures_in_ipython()
