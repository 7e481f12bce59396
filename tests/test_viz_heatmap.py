"""dldna.viz.heatmap: the one heatmap of the book (seaborn underneath)."""

import numpy as np
import pytest
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

from dldna.viz import style
from dldna.viz.heatmap import heatmap


def _cells(ax):
    mesh = ax.collections[0]
    return mesh, mesh.get_array()


def test_annotation_ink_follows_the_luminance_of_each_cell():
    values = np.linspace(-1, 1, 9).reshape(3, 3)
    fig = heatmap(values, annotate=True)
    ax = fig.axes[0]
    mesh, _ = _cells(ax)
    assert len(ax.texts) == 9
    seen = set()
    for text in ax.texts:
        x, y = text.get_position()
        rgb = mesh.cmap(mesh.norm(values[int(y), int(x)]))
        expected = style.INK if style.relative_luminance(rgb) > style.LUMINANCE_THRESHOLD \
            else "#ffffff"
        assert to_rgb(text.get_color()) == to_rgb(expected)
        seen.add(expected)
    # On a diverging map both inks occur: dark on the pale centre, white on the ends.
    assert seen == {style.INK, "#ffffff"}


def test_signed_values_are_centred_at_zero_on_the_diverging_map():
    values = np.array([[-0.5, 0.0], [1.0, 2.0]])
    ax = heatmap(values).axes[0]
    mesh, _ = _cells(ax)
    assert mesh.norm.vmin == -2.0 and mesh.norm.vmax == 2.0
    assert to_rgb(mesh.cmap(mesh.norm(0.0))) == pytest.approx(
        to_rgb(__import__("matplotlib").colormaps[style.DIVERGING_CMAP](0.5)), abs=0.02)
    # Values of one sign keep the sequential map and their own range.
    mesh, _ = _cells(heatmap(np.array([[0.1, 0.9]])).axes[0])
    assert mesh.cmap.name.startswith(style.SEQUENTIAL_CMAP) and mesh.norm.vmin == pytest.approx(0.1)


def test_masked_cells_are_hatched_with_a_legend_and_not_coloured():
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    ax = heatmap(np.ones((3, 3)), allowed=allowed).axes[0]
    _, data = _cells(ax)
    assert np.array_equal(np.ma.getmaskarray(data), ~allowed)
    hatched = [c for c in ax.collections if c.get_hatch() == style.MASKED_HATCH]
    assert sum(len(c.get_paths()) for c in hatched) == 3
    assert ax.get_legend().get_texts()[0].get_text() == style.MASKED_LABEL
    assert len(ax.texts) == 6  # masked cells carry no number


def test_labels_are_drawn_as_typed_and_figure_renders():
    fig = heatmap(np.eye(3), row_labels=["$5", "a", "b"], col_labels=list("xyz"), title="t",
                  xlabel="clave", ylabel="consulta")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [r"\$5", "a", "b"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    assert isinstance(fig, Figure)
    style.figure_png(fig, dpi=40)  # a «$» does not start a formula


def test_many_rows_are_thinned_but_stay_labelled():
    ax = heatmap(np.random.default_rng(0).random((60, 8))).axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert 3 <= len(labels) <= 30 and labels[0] == "0"


@pytest.mark.parametrize(("values", "allowed", "words"), [
    (np.ones(3), None, "matriz"),
    (np.ones((2, 2)), np.ones((3, 3), dtype=bool), "deben coincidir"),
])
def test_bad_input_raises_in_spanish(values, allowed, words):
    with pytest.raises(ValueError, match=words):
        heatmap(values, allowed=allowed)


def test_label_options_follow_the_signature():
    # Sequence | bool | None: True is accepted (the indices, as None), False hides them.
    fig = heatmap(np.ones((2, 3)), row_labels=True, col_labels=np.True_)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["0", "1"]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["0", "1", "2"]
    fig = heatmap(np.ones((2, 3)), row_labels=False)
    assert fig.axes[0].get_yticklabels() == []


def test_ax_that_is_not_axes_is_refused_in_spanish():
    with pytest.raises(TypeError, match="ejes de matplotlib"):
        heatmap(np.ones((2, 2)), ax="ejes")
