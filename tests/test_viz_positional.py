"""dldna.viz.positional: the numbers behind the positional figures (not pixels)."""

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

from dldna import positional
from dldna.viz import positional as vp


@pytest.fixture
def data():
    return vp.positional_data("sinusoidal", n_positions=40, d_model=16, base=10000.0)


def test_sinusoidal_data_comes_from_dldna_positional(data):
    np.testing.assert_allclose(data.table, positional.sinusoidal(40, 16, 10000.0).numpy(),
                               atol=1e-6)
    expected = [2 * math.pi * 10000 ** (2 * i / 16) for i in range(8)]
    np.testing.assert_allclose(data.wavelengths, expected, rtol=1e-5)
    sim = data.similarity
    assert sim.shape == (40, 40)
    np.testing.assert_allclose(np.diag(sim), 1.0, atol=1e-9)
    np.testing.assert_allclose(sim, sim.T, atol=1e-12)
    # Sinusoidal similarity depends only on the distance between positions.
    np.testing.assert_allclose(sim[3, 10], sim[20, 27], atol=1e-6)


def test_waves_show_the_columns_of_each_pair_with_wavelength(data):
    fig = vp.positional_waves(data, pairs=(0, 3), cursor=5)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    waves = [line for line in ax.lines if len(line.get_xdata()) == 40]
    assert len(waves) == 4
    for line, col in zip(waves, (0, 1, 6, 7), strict=True):
        np.testing.assert_allclose(line.get_ydata(), data.table[:, col])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "λ = 6.28" in labels[0] and "sen" in labels[0] and "cos" in labels[1]
    assert f"λ = {vp.format_wavelength(float(data.wavelengths[3]))}" in labels[2]
    assert ax.get_xlabel() == "posición" and ax.get_ylabel() and ax.get_title()


def test_heatmap_and_similarity(data):
    fig = vp.positional_heatmap(data, cursor=4)
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.collections[0].get_array(), data.table, atol=1e-12)
    assert ax.get_xlabel() == "dimensión" and ax.get_ylabel() == "posición"
    fig = vp.positional_similarity(data, cursor=7)
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), data.similarity[7])
    assert "7" in ax.get_title() and ax.get_ylabel() == "similitud coseno"


def test_panel_has_the_three_views(data):
    fig = vp.positional_panel(data, pairs=[1], cursor=2)
    assert {ax.get_gid() for ax in fig.axes if ax.get_gid()} == {"waves", "heatmap",
                                                                  "similarity"}
    assert fig.get_suptitle()


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: vp.positional_data(d_model=7), "par"),
        (lambda: vp.positional_data(d_model=0), "par"),
        (lambda: vp.positional_data(base=1), "base"),
        (lambda: vp.positional_data(base=0.5), "base"),
        (lambda: vp.positional_data(kind="nada"), "desconocido"),
        (lambda: vp.positional_data(n_positions=1), "posiciones"),
        (lambda: vp.check_pairs([8], 16), "no existe"),
        (lambda: vp.check_pairs([], 16), "al menos"),
        (lambda: vp.positional_similarity(vp.positional_data(n_positions=5), 5), "cursor"),
    ],
)
def test_bad_input_raises_in_spanish(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_kinds_are_extensible():
    def compute(n, d, base):
        table = np.zeros((n, d))
        return vp.PositionalData(kind="prueba", label="de prueba", d_model=d, base=base,
                                 table=table, similarity=np.eye(n), wavelengths=None)

    vp.register_kind(vp.PositionalKind("prueba", "de prueba", compute))
    try:
        with pytest.raises(ValueError, match="Ya existe"):
            vp.register_kind(vp.PositionalKind("prueba", "x", compute))
        d = vp.positional_data("prueba", 10, 4, 100.0)
        fig = vp.positional_panel(d, pairs=[0, 1], cursor=3)
        assert "de prueba" in fig.get_suptitle()
    finally:
        del vp.KINDS["prueba"]
