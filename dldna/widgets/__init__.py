"""Explorers: interactive figures that work in Jupyter, in Colab and in the static book.

Each explorer is a thin shell over :mod:`dldna.viz` plotting functions; put
it as the last expression of a cell::

    from dldna import widgets
    widgets.attention_explorer("el gato come pescado", vectores)
    widgets.positional_explorer(d_model=16, base=10000)
    widgets.scaling_explorer(d_k=64)
    widgets.rope_scaling_explorer(scaling="ntk", factor=4)

In Jupyter and Colab the controls are ``ipywidgets`` and the matplotlib
picture is redrawn when they move; in the rendered book (no kernel) a static
view with the same controls redraws an SVG from numbers precomputed in
Python. How the two views are produced is explained in
:mod:`dldna.widgets.core`. Bad input shows a Spanish message in place of the
explorer, never a traceback.
"""

from dldna.widgets.attention import (
    AttentionMaps,
    attention_explorer,
    model_attention_explorer,
)
from dldna.widgets.core import ErrorExplorer, Explorer
from dldna.widgets.online_softmax import online_softmax_explorer
from dldna.widgets.positional import positional_explorer
from dldna.widgets.rope_scaling import rope_scaling_explorer
from dldna.widgets.scaling import scaling_explorer

__all__ = [
    "AttentionMaps",
    "ErrorExplorer",
    "Explorer",
    "attention_explorer",
    "model_attention_explorer",
    "online_softmax_explorer",
    "positional_explorer",
    "rope_scaling_explorer",
    "scaling_explorer",
]
