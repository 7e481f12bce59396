"""RoPE's scaling drawn: dldna.viz.rope_scaling and the explorer dldna.widgets.rope_scaling_explorer.

The numbers drawn must be those of :func:`dldna.positional.rope_frequencies`
(in the live figure and in the static view's payload), the three scalings
must do what the chapter says of them, and moving a control must change the
picture.
"""

import json
import re

import matplotlib
import numpy as np
import pytest

from dldna import widgets
from dldna.positional import rope_frequencies
from dldna.viz import rope_scaling as vr
from dldna.widgets import core
from dldna.widgets.rope_scaling import RopeScalingExplorer

matplotlib.use("Agg")

L = 24
SCALINGS = (None, "linear", "ntk")


def payload(html: str) -> dict:
    found = re.search(r'<script type="application/json" class="dldna-data">(.*?)</script>', html, re.S)
    return json.loads(found.group(1))


def expected_theta(d_k, scaling, factor):
    return rope_frequencies(d_k, scaling=scaling, factor=factor if scaling else 1.0).numpy()


@pytest.mark.parametrize("scaling", SCALINGS)
@pytest.mark.parametrize("factor", [1, 2, 8])
@pytest.mark.parametrize("d_k", [16, 64])
def test_the_angles_are_rope_frequencies_times_the_distance(scaling, factor, d_k):
    data = vr.rope_scaling_data(d_k, scaling, factor, L)
    theta = expected_theta(d_k, scaling, factor)
    np.testing.assert_array_equal(data["theta"], theta)
    np.testing.assert_array_equal(data["trained_theta"], rope_frequencies(d_k).numpy())
    assert data["cos"].shape == (d_k // 2, factor * L)
    distances = np.arange(factor * L)
    np.testing.assert_allclose(data["cos"], np.cos(np.outer(theta, distances)), rtol=0, atol=1e-12)
    assert data["near"]["scaled_deg"] == pytest.approx(np.degrees(3 * theta[0]))
    assert data["far"]["scaled_deg"] == pytest.approx(np.degrees((factor * L - 1) * theta[-1]))
    assert data["far"]["trained_deg"] == pytest.approx(np.degrees((L - 1) * rope_frequencies(d_k)[-1].item()))
    assert data["ticks"][0] == 0 and data["ticks"][-1] == factor * L - 1
    assert data["ticks"] == sorted(set(data["ticks"]))


@pytest.mark.parametrize("d_k", [16, 64])
def test_what_each_scaling_does_to_the_fastest_and_the_slowest_pair(d_k):
    """The chapter's claims, checked: PI slows every pair by the factor, NTK only the slow ones."""
    f = 8
    none, pi, ntk = (vr.rope_scaling_data(d_k, s, f, L) for s in SCALINGS)
    trained_far = none["far"]["trained_deg"]
    # Without scaling the slowest pair turns (f·L − 1)/(L − 1) times farther than in training.
    assert none["far"]["scaled_deg"] == pytest.approx(trained_far * (f * L - 1) / (L - 1))
    # With PI or NTK it stays below the angle of position L: the distances d < L of training.
    limit = trained_far * L / (L - 1)
    assert pi["far"]["scaled_deg"] < limit and ntk["far"]["scaled_deg"] < limit
    assert pi["far"]["scaled_deg"] == pytest.approx(ntk["far"]["scaled_deg"])  # NTK: slowest ÷ f exactly
    # The fastest pair: unchanged by NTK, f times slower with PI (neighbours get closer).
    assert ntk["near"]["scaled_deg"] == pytest.approx(none["near"]["scaled_deg"])
    assert pi["near"]["scaled_deg"] == pytest.approx(none["near"]["scaled_deg"] / f)
    # NTK divides the pairs in between by less than f, more the slower they are.
    ratio = none["theta"] / ntk["theta"]
    assert ratio[0] == pytest.approx(1) and ratio[-1] == pytest.approx(f)
    assert np.all(np.diff(ratio) > 0)


def test_the_panel_draws_the_numbers_of_the_data():
    data = vr.rope_scaling_data(16, "ntk", 4, L)
    fig = vr.rope_scaling_panel(data)
    drawn = np.asarray(fig.axes[0].collections[0].get_array()).reshape(data["cos"].shape)
    np.testing.assert_allclose(drawn, np.cos(np.outer(expected_theta(16, "ntk", 4), np.arange(4 * L))),
                               atol=1e-12)
    bars = [fig.axes[i] for i in range(len(fig.axes)) if fig.axes[i].patches and i > 0]
    widths = [[p.get_width() for p in ax.patches] for ax in bars]
    assert widths == [[pytest.approx(data[k]["trained_deg"]), pytest.approx(data[k]["scaled_deg"])]
                      for k in ("near", "far")]
    assert "NTK" in fig._suptitle.get_text() and "96 posiciones" in fig._suptitle.get_text()


def test_the_live_picture_changes_with_every_control():
    explorer = widgets.rope_scaling_explorer()
    explorer.widget  # noqa: B018 - builds the controls and draws once
    seen = {explorer.image.value}
    for name, value in (("scaling", "linear"), ("factor", 8), ("d_k", 64), ("scaling", "ntk"), ("factor", 1)):
        explorer.controls[name].value = value
        assert explorer.message.value == ""
        assert explorer.image.value not in seen, f"el dibujo no cambió con {name} = {value}"
        seen.add(explorer.image.value)
    assert explorer.state() == {"scaling": "ntk", "factor": 1, "d_k": 64}
    assert "escalado NTK, factor 1, d_k = 64" in explorer.note.value
    # The live figure draws the frequencies of the state shown.
    drawn = np.asarray(explorer.last_figure.axes[0].collections[0].get_array()).reshape(32, L)
    theta = expected_theta(64, "ntk", 1)
    np.testing.assert_allclose(drawn, np.cos(np.outer(theta, np.arange(L))), atol=1e-12)


def test_the_static_payload_carries_rope_frequencies_for_every_combination():
    explorer = widgets.rope_scaling_explorer(factors=(1, 2, 4, 8), d_ks=(16, 64))
    html = explorer.to_html()
    data = payload(html)
    assert data["scalings"] == ["none", "linear", "ntk"] and data["length"] == L
    assert len(data["cases"]) == 3 * 4 * 2
    matrices = [core.unpack(m) for m in data["matrices"]]
    for key, case in data["cases"].items():
        name, f, d = key.split("_")
        scaling, f, d = {"none": None}.get(name, name), int(f), int(d)
        theta = expected_theta(d, scaling, f)
        shown = matrices[case["m"]][:, :case["cols"]]
        assert shown.shape == (d // 2, f * L) and case["width"] == matrices[case["m"]].shape[1]
        np.testing.assert_allclose(shown, np.cos(np.outer(theta, np.arange(f * L))), atol=1 / 255)
        assert case["near"][1] == pytest.approx(np.degrees(3 * theta[0]), abs=1e-4)
        assert case["far"][1] == pytest.approx(np.degrees((f * L - 1) * theta[-1]), abs=1e-4)
        assert case["far_distance"] == f * L - 1 and case["far_pair"] == d // 2 - 1
    # A matrix that is the first columns of another is sent once: 14 matrices for 24 cases.
    assert len(matrices) == 14
    assert len(html) < 60_000
    controls = {c["name"]: c for c in data["controls"]}
    assert [o[1] for o in controls["scaling"]["options"]] == ["ninguno", "lineal (PI)", "NTK"]
    assert [o[0] for o in controls["factor"]["options"]] == [1, 2, 4, 8]
    assert [o[0] for o in controls["d_k"]["options"]] == [16, 64]


def test_both_views_describe_the_same_state():
    explorer = widgets.rope_scaling_explorer("linear", 8, 64)
    state = {"scaling": "linear", "factor": 8, "d_k": 64}
    text = explorer._note(state)
    assert text.startswith("escalado lineal (PI), factor 8, d_k = 64: 192 posiciones (entrenado con 24)")
    assert "par 0 a distancia 3: 21.5° (al entrenar, 171.9°)" in text
    assert payload(explorer.to_html())["controls"][0]["value"] == 1  # the index of "linear"


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"scaling": "lineal"}, "scaling debe ser None"),
        ({"scaling": ["ntk"]}, "scaling debe ser None"),
        ({"factor": 0}, "factor"),
        ({"factor": 2.5}, "factor"),
        ({"d_k": 7}, "d_k debe ser un entero par"),
        ({"d_k": 2}, "NTK necesita d_k ≥ 4"),
        ({"d_k": 512}, "como mucho 128"),
        ({"factors": "2"}, "factors"),
        ({"d_ks": [16, "64"]}, "d_ks"),
        ({"length": 3}, "length"),
        ({"base": 1}, "La base"),
        ({"factor": 64}, "factor · length"),
        ({"factors": (1, 2, 4, 8, 16), "d_ks": (16, 32, 64, 128)}, "Demasiadas combinaciones"),
        ({"factors": range(1, 10)}, "Demasiados valores"),
    ],
)
def test_bad_input_shows_a_spanish_message(kwargs, words):
    explorer = widgets.rope_scaling_explorer(**kwargs)
    assert isinstance(explorer, widgets.ErrorExplorer)
    assert words in explorer.error
    assert explorer.error != core.UNEXPECTED


def test_the_data_function_refuses_in_spanish():
    with pytest.raises(ValueError, match="factor · length"):
        vr.rope_scaling_data(16, None, 64, L)
    with pytest.raises(ValueError, match="scaling debe ser None"):
        vr.rope_scaling_data(16, "pi", 2, L)
    with pytest.raises(TypeError, match="rope_scaling_data"):
        vr.rope_scaling_panel({"cos": np.zeros((2, 2))})


def test_the_class_raises_what_the_factory_shows():
    with pytest.raises(ValueError, match="d_k debe ser un entero par"):
        RopeScalingExplorer(None, 2, 7, factors=(2,), d_ks=(16,), length=L, base=10000.0, title="t")
