"""Tests of dldna.viz.embeddings: text matrices and the figures of chapters 1 and 2."""

from __future__ import annotations

import pytest
import torch
from matplotlib.figure import Figure

from dldna.viz import embeddings as V


def test_format_matrix_rounds_labels_and_hides_negative_zero():
    text = V.format_matrix(torch.tensor([[1.234, -0.0001], [2.0, 3.5]]), ["a", "bb"], decimals=2)
    lines = text.splitlines()
    assert len(lines) == 3
    assert lines[1].split() == ["a", "1.23", "0.00"]
    assert "-0.00" not in text
    with pytest.raises(ValueError, match="etiquetas"):
        V.format_matrix(torch.zeros(2, 2), ["a"])
    with pytest.raises(ValueError, match="2 ejes"):
        V.format_matrix(torch.zeros(3), ["a", "b", "c"])


def test_projection_figure_has_spanish_labels_and_one_series_per_group():
    coords = torch.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5]])
    fig = V.plot_projection(coords, ["gato", "perro", "pan"], ["animales", "animales", "comida"])
    ax = fig.axes[0]
    assert isinstance(fig, Figure)
    assert ax.get_title() and "componente" in ax.get_xlabel()
    assert len(ax.collections) == 2
    with pytest.raises(ValueError, match="etiquetas"):
        V.plot_projection(coords, ["gato"])
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        V.plot_projection(torch.zeros(3, 3), ["a", "b", "c"])


def test_convex_hull_figure_draws_the_hull_inputs_and_outputs():
    pts = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.3, 0.3]])
    out = torch.softmax(torch.randn(4, 4), dim=1) @ pts
    fig = V.plot_convex_hull(pts, out, ["a", "b", "c", "d"])
    ax = fig.axes[0]
    polygons = [p for p in ax.patches if p.__class__.__name__ == "Polygon"]
    assert len(polygons) == 1 and len(polygons[0].get_xy()) - 1 == 3  # closed triangle
    with pytest.raises(ValueError, match="coincidir"):
        V.plot_convex_hull(pts, out[:2], ["a", "b", "c", "d"])


def test_attention_graph_draws_one_arrow_per_ordered_pair():
    w = torch.softmax(torch.randn(4, 4), dim=1)
    fig = V.plot_attention_graph(w, ["a", "b", "c", "d"])
    arrows = [p for p in fig.axes[0].patches if p.__class__.__name__ == "FancyArrowPatch"]
    assert len(arrows) == 4 * 3
    with pytest.raises(ValueError, match="cuadrada"):
        V.plot_attention_graph(torch.zeros(2, 3), ["a", "b"])


def test_plot_curve_accepts_several_series_and_rejects_empty_ones():
    fig = V.plot_curve({"a": [1, 2, 3], "b": [3, 2, 1]}, [1, 10, 100], logx=True)
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 2 and ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="al menos un valor"):
        V.plot_curve({"a": []})
    with pytest.raises(ValueError, match="abscisas"):
        V.plot_curve([1, 2, 3], [1, 2])
