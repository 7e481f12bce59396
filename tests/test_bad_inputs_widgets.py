"""Bad input to the explorers: a Spanish message inside the widget, never an exception.

One row per input a curious reader might type: the factory must return an
explorer (an :class:`~dldna.widgets.ErrorExplorer` showing the message in
both views), and the message must be Spanish, with no Python or matplotlib
words in English. Valid settings must never be rejected.
"""

import re

import numpy as np
import pytest
import torch

from dldna import widgets
from dldna.widgets.masking import mask_explorer
from dldna.widgets.vit import patch_size_explorer

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SENTENCE = "el gato come pescado"
VECTORS = torch.randn(4, 6, generator=torch.Generator().manual_seed(0))
IMAGES = torch.rand(2, 1, 8, 8, generator=torch.Generator().manual_seed(0))
#: Words of Python's, NumPy's or matplotlib's English messages.
ENGLISH = re.compile(r"\b(the|must|expected|got|invalid|cannot|object|unsupported|argument|"
                     r"Traceback|Error:|not supported|has no attribute)\b")

BAD = [
    # (explorer, bad input, words of the Spanish message)
    ("attention", lambda: widgets.attention_explorer(None, VECTORS), "frase"),
    ("attention", lambda: widgets.attention_explorer(SENTENCE, "vectores"), "vectors"),
    ("attention", lambda: widgets.attention_explorer(SENTENCE, VECTORS[:, :, None]), "vectors"),
    ("attention", lambda: widgets.attention_explorer(SENTENCE, VECTORS, temperature="x"), ""),
    ("attention", lambda: widgets.attention_explorer(SENTENCE, VECTORS, query=1.5), "consulta"),
    ("attention", lambda: widgets.attention_explorer(SENTENCE, VECTORS, mask="sí"), ""),
    ("model", lambda: widgets.model_attention_explorer([1, 2]), ""),
    ("model", lambda: widgets.model_attention_explorer(
        {"encoder": widgets.AttentionMaps(torch.rand(3, 3), ["a", "b"])}), ""),
    ("model", lambda: widgets.model_attention_explorer(
        {"a": widgets.AttentionMaps(torch.eye(4), SENTENCE, query=2.0)}), "Escríbelo sin decimales"),
    ("model", lambda: widgets.model_attention_explorer(
        {"a": widgets.AttentionMaps(torch.eye(4), SENTENCE, query=-1)}), "consulta (query)"),
    ("model", lambda: widgets.model_attention_explorer(
        {"a": widgets.AttentionMaps(torch.eye(4), SENTENCE, query="3")}), "sin comillas"),
    ("model", lambda: widgets.model_attention_explorer(
        {"a": widgets.AttentionMaps(torch.eye(4), SENTENCE, caption=" ")}), "vacío"),
    ("model", lambda: widgets.model_attention_explorer(
        {"a": widgets.AttentionMaps(torch.eye(4), SENTENCE, caption=0.94)}), "texto"),
    ("model", lambda: widgets.model_attention_explorer(
        {"a": widgets.AttentionMaps(torch.eye(4), SENTENCE)}, kind_label=None), "kind_label"),
    ("positional", lambda: widgets.positional_explorer(n_positions=0), "n_positions"),
    ("positional", lambda: widgets.positional_explorer(n_positions="48"), "n_positions"),
    ("positional", lambda: widgets.positional_explorer(d_model="16"), "d_model"),
    ("positional", lambda: widgets.positional_explorer(kinds="sinusoidal"), "kinds"),
    ("positional", lambda: widgets.positional_explorer(bases=[0.5]), "base"),
    ("scaling", lambda: widgets.scaling_explorer(d_k=2.5), "d_k"),
    ("scaling", lambda: widgets.scaling_explorer(scaled="sí"), "scaled"),
    ("scaling", lambda: widgets.scaling_explorer(n_keys=0), ""),
    ("online_softmax", lambda: widgets.online_softmax_explorer(tile=0), "tile"),
    ("online_softmax", lambda: widgets.online_softmax_explorer(tile=20), "tesela"),
    ("online_softmax", lambda: widgets.online_softmax_explorer(tiles="2"), "tiles"),
    ("online_softmax", lambda: widgets.online_softmax_explorer(seed=-1), "seed"),
    ("rope_scaling", lambda: widgets.rope_scaling_explorer(scaling="PI"), "scaling"),
    ("rope_scaling", lambda: widgets.rope_scaling_explorer(factor=0.5), "factor"),
    ("rope_scaling", lambda: widgets.rope_scaling_explorer(d_k=15), "d_k"),
    ("rope_scaling", lambda: widgets.rope_scaling_explorer(d_ks=(16, 4.5)), "d_ks"),
    ("rope_scaling", lambda: widgets.rope_scaling_explorer(factor=100), "factor"),
    ("masks", lambda: mask_explorer(pattern="diagonal"), "Patrón desconocido"),
    ("masks", lambda: mask_explorer(n=8, pad=8), "relleno"),
    ("masks", lambda: mask_explorer(n=40), "longitudes"),
    ("masks", lambda: mask_explorer(width=0), "tamaños"),
    ("patches", lambda: patch_size_explorer(IMAGES, [2, 4]), "diccionario"),
    ("patches", lambda: patch_size_explorer(IMAGES, {2: 0.9, "4": 0.8}), "tamaño de parche"),
    ("patches", lambda: patch_size_explorer(IMAGES, {3: 0.9}, patch_size=3), "no divide"),
    ("patches", lambda: patch_size_explorer(IMAGES, {2: 1.5}), "exactitud"),
    ("patches", lambda: patch_size_explorer(IMAGES, {2: 0.9}, patch_size=4), "no está"),
    ("patches", lambda: patch_size_explorer(IMAGES[0, 0], {2: 0.9}), "forma"),
    ("patches", lambda: patch_size_explorer(IMAGES, {2: 0.9}, labels=["uno"]), "etiquetas"),
    ("patches", lambda: patch_size_explorer(None, {2: 0.9}), "imágenes"),
]


@pytest.mark.parametrize(("kind", "build", "words"), BAD,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(BAD)])
def test_bad_input_is_a_spanish_message_inside_the_widget(kind, build, words):
    explorer = build()  # never raises
    assert isinstance(explorer, widgets.ErrorExplorer), kind
    assert words in explorer.error
    assert not ENGLISH.search(explorer.error), explorer.error
    bundle = explorer._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", WIDGET_MIME}
    assert 'role="alert"' in bundle["text/html"]
    assert explorer.error.split()[0] in explorer.widget.children[0].value


GOOD = [
    ("masks: padding larger than the default grid's shortest sentence",
     lambda: mask_explorer(n=8, pad=4)),
    ("masks: every pad of the grid below the chosen length", lambda: mask_explorer(n=4, pad=3)),
    ("patches: images as a list of arrays",
     lambda: patch_size_explorer([np.asarray(im) for im in IMAGES], {2: 0.9, 4: None})),
    ("positional: two positions", lambda: widgets.positional_explorer(n_positions=2)),
    ("rope_scaling: a factor outside the default list (it is added), RoPE's smallest NTK head",
     lambda: widgets.rope_scaling_explorer("ntk", 3, 4)),
    ("rope_scaling: a head width outside d_ks (it is added)", lambda: widgets.rope_scaling_explorer(d_k=6)),
    ("scaling: a d_k outside d_ks (it is added)", lambda: widgets.scaling_explorer(d_k=3, d_ks=(4, 16))),
    ("online softmax: a tile outside tiles (it is added)",
     lambda: widgets.online_softmax_explorer(tile=5, tiles=(2, 4))),
    ("attention: no temperature list (the initial one is added)",
     lambda: widgets.attention_explorer(SENTENCE, VECTORS, temperatures=[])),
    ("model: the last query, a NumPy integer, and a caption with «$» and «<»",
     lambda: widgets.model_attention_explorer(
         {"a": widgets.AttentionMaps(torch.eye(4), SENTENCE, query=np.int64(3),
                                     caption="[MASK] → $5 0.81 · <pad> 0.02")})),
]


@pytest.mark.parametrize(("what", "build"), GOOD, ids=[g[0] for g in GOOD])
def test_valid_settings_are_accepted(what, build):
    explorer = build()
    assert explorer.error is None, explorer.error
    explorer.widget  # noqa: B018 - the live view draws the picture
    assert explorer.draw_count == 1 and explorer.message.value == ""


def test_a_starting_value_outside_the_list_is_added_to_the_control():
    # Documented in each explorer: the initial value joins the slider's options (it is shown,
    # and can be chosen again), so it is not a value the control cannot reach.
    assert widgets.scaling_explorer(d_k=3, d_ks=(4, 16)).d_ks == [3, 4, 16]
    assert widgets.online_softmax_explorer(tile=5, tiles=(2, 4)).tiles == [2, 4, 5]
    rope = widgets.rope_scaling_explorer(scaling="ntk", factor=3, d_k=6, factors=(1, 2, 4))
    assert rope.factors == [1, 2, 3, 4] and rope.d_ks == [6, 16, 64]
    rope.widget  # noqa: B018 - builds the live controls
    assert rope.controls["factor"].value == 3 and rope.controls["d_k"].value == 6


def test_mask_explorer_offers_only_paddings_that_fit_the_length():
    explorer = mask_explorer(n=8, pad=4)
    explorer.widget  # noqa: B018
    explorer.controls["n"].value = 4
    assert list(explorer.controls["pad"].options) == [0, 1, 2, 3]
    assert explorer.message.value == "" and explorer.draw_count == 2


@pytest.mark.parametrize("sentence", ["cuesta $5 y $6", "$\\frac$ no es una fórmula", "a$b"])
def test_a_dollar_in_a_sentence_is_drawn_as_typed(sentence):
    tokens = sentence.split()
    explorer = widgets.attention_explorer(tokens, torch.randn(len(tokens), 4))
    explorer.widget  # noqa: B018
    assert explorer.message.value == "" and explorer.draw_count == 1


def test_an_unexpected_failure_is_a_spanish_message(monkeypatch):
    explorer = widgets.scaling_explorer()
    explorer.widget  # noqa: B018

    def broken(state):
        raise RuntimeError("something broke deep inside")

    monkeypatch.setattr(explorer, "_figure", broken)
    explorer.controls["scaled"].value = False
    assert "something" not in explorer.message.value
    assert "Algo falló" in explorer.message.value
