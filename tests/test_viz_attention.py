"""dldna.viz.attention: the numbers behind the attention figures (not pixels)."""

import math

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from dldna.viz import attention as va
from dldna.viz import style

TOKENS = ["el", "gato", "come", "pescado"]


@pytest.fixture
def vectors():
    return torch.randn(4, 6, generator=torch.Generator().manual_seed(0))


@pytest.fixture
def causal():
    return torch.tril(torch.ones(4, 4, dtype=torch.bool))


def test_self_attention_weights_match_the_formula(vectors):
    for t in (0.5, 1.0, 3.0):
        w = va.self_attention_weights(vectors, temperature=t)
        x = vectors.double()
        expected = torch.softmax(x @ x.T / math.sqrt(6) / t, dim=-1).numpy()
        np.testing.assert_allclose(w, expected, atol=1e-6)
        np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-9)


def test_masked_cells_get_zero_weight(vectors, causal):
    w = va.self_attention_weights(vectors, mask=causal)
    assert np.all(w[~causal.numpy()] == 0)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-9)


def test_higher_temperature_flattens(vectors):
    ent = [va.row_entropy(va.self_attention_weights(vectors, t)).mean() for t in (0.1, 1, 10)]
    assert ent[0] < ent[1] < ent[2] <= math.log(4) + 1e-9


def test_retemper_is_identity_at_one_and_respects_masks(vectors, causal):
    w = va.self_attention_weights(vectors, mask=causal)
    np.testing.assert_allclose(va.retemper(w, 1.0, causal.numpy()), w, atol=1e-9)
    hot = va.retemper(w, 5.0, causal.numpy())
    assert np.all(hot[~causal.numpy()] == 0)
    np.testing.assert_allclose(hot.sum(-1), 1.0, atol=1e-9)
    # Equivalent to the softmax of the original scores at temperature 5.
    direct = va.self_attention_weights(vectors, temperature=5.0, mask=causal)
    np.testing.assert_allclose(hot, direct, atol=1e-6)


def test_entropy_and_its_maximum():
    uniform = np.full((2, 4), 0.25)
    np.testing.assert_allclose(va.row_entropy(uniform), math.log(4))
    mask = np.array([[True, False, False, False], [True, True, True, True]])
    np.testing.assert_allclose(va.max_entropy(mask, (2, 4)), [0.0, math.log(4)])
    np.testing.assert_allclose(va.max_entropy(None, (2, 4)), [math.log(4)] * 2)


def test_heatmap_shows_masked_cells_as_masked_not_zero(vectors, causal):
    w = va.self_attention_weights(vectors, mask=causal)
    fig = va.attention_heatmap(w, TOKENS, TOKENS, mask=causal, title="Prueba")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    data = ax.collections[0].get_array()
    assert np.array_equal(np.ma.getmaskarray(data), ~causal.numpy())
    np.testing.assert_allclose(data[causal.numpy()], w[causal.numpy()])
    hatched = [c for c in ax.collections if c.get_hatch() == style.MASKED_HATCH]
    assert sum(len(c.get_paths()) for c in hatched) == int((~causal).sum())
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS
    assert ax.get_title() == "Prueba"
    assert ax.get_xlabel() == "clave (key)" and ax.get_ylabel() == "consulta (query)"
    assert "enmascarada" in ax.get_legend().get_texts()[0].get_text()
    assert ax.collections[0].get_cmap().name.startswith(style.SEQUENTIAL_CMAP)


def test_heatmap_draws_into_a_given_axes(vectors):
    fig, axes = style.new_figure(8, 3, ncols=2)
    out = va.attention_heatmap(va.self_attention_weights(vectors), ax=axes[1], colorbar=False)
    assert out is fig and len(axes[1].collections) == 1 and len(axes[0].collections) == 0


def test_row_bars_and_entropy_bars(vectors, causal):
    w = va.self_attention_weights(vectors, mask=causal)
    fig = va.attention_row_bars(w[1], TOKENS, mask_row=causal[1], query_label="gato")
    ax = fig.axes[0]
    heights = [b.get_height() for b in ax.containers[0]]
    np.testing.assert_allclose(heights, [w[1, 0], w[1, 1], 0, 0])
    assert ax.get_title() == "Pesos de la consulta «gato»" and ax.get_ylabel() == "peso"
    assert len([p for p in ax.patches if p.get_hatch() == style.MASKED_HATCH]) == 2

    fig = va.entropy_bars(w, TOKENS, mask=causal, highlight_row=2)
    ax = fig.axes[0]
    widths = [b.get_width() for b in ax.containers[0]]
    np.testing.assert_allclose(widths, va.row_entropy(w, causal.numpy()))
    assert ax.get_xlabel() == "entropía (nats)" and ax.get_title()


def test_panel_has_named_axes_and_highlights_the_query(vectors):
    w = va.self_attention_weights(vectors)
    fig = va.attention_panel(w, TOKENS, TOKENS, query=2, title="Panel")
    axes = va.panel_axes(fig)
    assert set(axes) == {"heat", "entropy", "bars"}
    outline = [p for p in axes["heat"].patches if p.get_edgecolor()[:3] != (0, 0, 0)
               and not p.get_fill()]
    assert outline and outline[0].get_y() == pytest.approx(2)
    np.testing.assert_allclose([b.get_height() for b in axes["bars"].containers[0]], w[2])
    assert fig.get_suptitle() == "Panel"


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: va.tokens_from(""), "vacía"),
        (lambda: va.tokens_from("   "), "vacía"),
        (lambda: va.attention_heatmap(np.eye(3), ["a", "b"]), "etiquetas"),
        (lambda: va.attention_panel(np.eye(3), query=3), "no existe"),
        (lambda: va.as_mask(np.ones((3, 3)), (3, 3)), "booleana"),
        (lambda: va.as_mask(np.ones((2, 2), dtype=bool), (3, 3)), "no encaja"),
        (lambda: va.as_matrix([[1.0, float("nan")]]), "no finitos"),
        (lambda: va.self_attention_weights(np.ones((2, 2)), temperature=0), "temperatura"),
    ],
)
def test_bad_input_raises_in_spanish(call, words):
    with pytest.raises((ValueError, TypeError), match=words):
        call()


def test_random_attention_collapses_without_scaling():
    scaled = va.random_attention(512, True, seed=0)
    raw = va.random_attention(512, False, seed=0)
    assert 0.5 < scaled["score_std"] < 2.0
    assert raw["score_std"] > 10
    assert raw["max_weight"].mean() > 0.9 > scaled["max_weight"].mean()
    assert raw["entropy"].mean() < 0.3 < scaled["entropy"].mean()
    again = va.random_attention(512, True, seed=0)
    np.testing.assert_array_equal(again["weights"], scaled["weights"])
    # Growing d_k keeps the same vectors (first columns of one draw).
    small = va.random_attention(1, False, seed=0)
    assert small["weights"].shape == (4, 8)
    with pytest.raises(ValueError, match="d_k"):
        va.random_attention(0)


def test_scaling_panel_titles_and_data():
    r = va.random_attention(16, False)
    fig = va.scaling_panel(r, title="Escala")
    axes = va.panel_axes(fig)
    np.testing.assert_allclose(axes["heat"].collections[0].get_array(), r["weights"])
    np.testing.assert_allclose([b.get_width() for b in axes["max"].containers[0]],
                               r["max_weight"])
    assert "sin dividir" in fig.get_suptitle() and "d_k = 16" in fig.get_suptitle()


def test_attention_heatmap_refuses_an_ax_that_is_not_axes():
    # "ejes" reached matplotlib and came back as an AttributeError in English.
    with pytest.raises(TypeError, match="ejes de matplotlib"):
        va.attention_heatmap(torch.full((2, 2), 0.5), ax="ejes")
