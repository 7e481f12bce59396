"""dldna.widgets: both views of every explorer, live redraws and Spanish errors."""

import json
import re

import numpy as np
import pytest
import torch
from explorer_prompts import PROMPTS, prompt_maps

from dldna import widgets
from dldna.viz import attention as va
from dldna.viz import style
from dldna.widgets import core
from dldna.widgets.masking import mask_explorer
from dldna.widgets.vit import patch_size_explorer

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
SENTENCE = "el gato come pescado fresco"


def vectors(n=5, d=8, seed=0):
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed))


def model_maps():
    g = torch.Generator().manual_seed(1)
    src, tgt = "el gato come pescado".split(), "<bos> the cat eats".split()
    causal = torch.tril(torch.ones(4, 4, dtype=torch.bool))
    pad = torch.tensor([True, True, True, False])

    def soft(mask=None):
        s = torch.randn(2, 4, 4, 4, generator=g)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        return torch.softmax(s, -1)

    return {
        "encoder": widgets.AttentionMaps(soft(pad), src, mask=pad),
        "decoder": widgets.AttentionMaps(soft(causal), tgt, mask=causal),
        "cross": widgets.AttentionMaps(soft(pad), tgt, src, mask=pad),
    }


#: (prompt, caption, query) of each map of :func:`prompt_maps`; the last has neither.


EXPLORERS = {
    "attention": lambda: widgets.attention_explorer(SENTENCE, vectors()),
    "masked": lambda: widgets.attention_explorer(
        SENTENCE, vectors(), mask=torch.tril(torch.ones(5, 5, dtype=torch.bool))),
    "model": lambda: widgets.model_attention_explorer(model_maps()),
    "prompts": lambda: widgets.model_attention_explorer(prompt_maps(), kind_label="Comienzo"),
    "positional": lambda: widgets.positional_explorer(),
    "scaling": lambda: widgets.scaling_explorer(),
    "online_softmax": lambda: widgets.online_softmax_explorer(),
    "rope_scaling": lambda: widgets.rope_scaling_explorer(),
    "masks": lambda: mask_explorer(),
    "patches": lambda: patch_size_explorer(torch.rand(2, 1, 8, 8, generator=torch.Generator()
                                                      .manual_seed(0)), {1: None, 2: 0.9, 4: 0.8}),
}
ID = re.compile(r'(dldna-[a-z_]+-\d+)"')


def payload(html: str) -> dict:
    found = re.search(r'<script type="application/json" class="dldna-data">(.*?)</script>', html,
                      re.S)
    return json.loads(found.group(1))


def test_pack_round_trip():
    values = np.linspace(-1, 1, 101).reshape(101, 1)
    for bits in (8, 16):
        packed = core.pack(values, bits, -1.0, 1.0)
        assert np.max(np.abs(core.unpack(packed) - values)) <= 2 / (2 * (2**bits - 1)) + 1e-12


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_bundle_has_live_and_static_views(name):
    explorer = EXPLORERS[name]()
    assert explorer.error is None
    bundle = explorer._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", WIDGET_MIME}
    html = bundle["text/html"]
    again = EXPLORERS[name]().to_html()
    assert ID.sub("", html) == ID.sub("", again), "static view must be deterministic"
    assert ID.search(html).group(1) != ID.search(again).group(1), "ids must be unique on a page"
    assert "Traceback" not in html
    assert not re.search(r'src=["\']https?:', html), "no network at run time"
    # Only data and a one-line mount call: the renderer is served by the book.
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert scripts == [f'window.dldnaExplorer && window.dldnaExplorer.mount("{ID.search(html).group(1)}");']
    assert "function" not in html and "<style" not in html
    assert core.FALLBACK in html  # what GitHub's viewer shows
    data = payload(html)
    assert data["title"] and data["alt"] and data["controls"]
    assert "explorador" in bundle["text/plain"].lower()


def test_element_id_does_not_depend_on_the_numbers_shown():
    core._ids = __import__("itertools").count(7)
    a = widgets.attention_explorer(SENTENCE, vectors(seed=0)).to_html()
    core._ids = __import__("itertools").count(7)
    b = widgets.attention_explorer(SENTENCE, vectors(seed=1)).to_html()
    assert payload(a) != payload(b)
    assert ID.search(a).group(1) == ID.search(b).group(1) == "dldna-attention-7"


def test_front_end_takes_its_colours_from_style():
    files = core.front_end()
    js, css = files["dldna-explorer.js"], files["dldna-explorer.css"]
    theme = json.loads(js[len("window.dldnaTheme = "):js.index(";\n")])
    assert theme == style.theme()
    assert theme["sequential"][0] == style.colormap_lut(style.SEQUENTIAL_CMAP)[0]
    assert f"--dldna-highlight:{style.HIGHLIGHT}" in css
    # One renderer, one way to register a view, for every kind of explorer.
    for kind in ("attention", "scaling", "positional", "masks", "vit_patches", "online_softmax",
                 "rope_scaling"):
        assert f'register("{kind}"' in js
    # No colour typed again in the renderer: every #rrggbb is white or from the theme.
    renderer = core._static("explorer.js")
    assert set(re.findall(r"#[0-9a-fA-F]{6}", renderer)) <= {"#ffffff"}


def test_static_numbers_are_the_python_numbers():
    explorer = widgets.attention_explorer(SENTENCE, vectors(), temperatures=(0.5, 1.0, 2.0))
    data = payload(explorer.to_html())
    w = core.unpack(data["sources"][0]["w"])
    assert w.shape == (3, 1, 1, 5, 5)
    for i, t in enumerate((0.5, 1.0, 2.0)):
        np.testing.assert_allclose(w[i, 0, 0], va.self_attention_weights(vectors(), t),
                                   atol=1e-4)
    np.testing.assert_allclose(data["sources"][0]["entropy"][1][0][0],
                               va.row_entropy(va.self_attention_weights(vectors())), atol=1e-3)

    pos = widgets.positional_explorer(d_model=16, base=10000.0, d_models=(8, 16), bases=(100,))
    data = payload(pos.to_html())
    assert data["d_models"] == [8, 16] and data["bases"] == ["100", "10000"]
    table = core.unpack(data["kinds"][0]["grid"][1][1]["table"])
    np.testing.assert_allclose(table, pos.data("sinusoidal", 16, 10000.0).table, atol=1 / 255)


@pytest.mark.parametrize(
    ("name", "control", "value"),
    [
        ("attention", "temperature", 4.0),
        ("attention", "query", 3),
        ("model", "head", 2),
        ("model", "kind", 2),
        ("positional", "cursor", 9),
        ("positional", "base", 100.0),
        ("scaling", "d_k", 512),
        ("scaling", "scaled", False),
        ("online_softmax", "step", 3),
        ("online_softmax", "tile", 6),
        ("rope_scaling", "scaling", "ntk"),
        ("rope_scaling", "factor", 8),
        ("rope_scaling", "d_k", 64),
    ],
)
def test_live_view_redraws_when_a_control_moves(name, control, value):
    explorer = EXPLORERS[name]()
    explorer.widget  # noqa: B018 - builds the controls and draws once
    before, count = explorer.image.value, explorer.draw_count
    assert before.startswith('<img src="data:image/png;base64,') and 'alt="' in before
    explorer.controls[control].value = value
    assert explorer.draw_count == count + 1
    assert explorer.image.value != before
    assert explorer.state()[control] == value
    assert explorer.message.value == ""


def test_model_explorer_updates_dependent_controls():
    explorer = widgets.model_attention_explorer(model_maps(), kind="decoder")
    explorer.widget  # noqa: B018
    assert explorer.controls["kind"].value == 1
    explorer.controls["query"].value = 3
    explorer.controls["kind"].value = 0
    assert [label for label, _ in explorer.controls["query"].options][0] == "0: el"
    # Masked cells are shown as masked, with zero weight underneath.
    w = explorer.weights(kind=2)
    assert np.all(w[:, 3] == 0)


def test_live_view_shows_each_choice_caption_and_selects_its_query():
    explorer = EXPLORERS["prompts"]()
    explorer.widget  # noqa: B018
    kind, query = explorer.controls["kind"], explorer.controls["query"]
    assert kind.description == "Comienzo:"
    # The first map's query is the initial one; its caption is shown, escaped, and in the alt.
    assert query.value == PROMPTS[0][2]
    assert PROMPTS[0][1] in explorer.note.value
    assert PROMPTS[0][1] in explorer.image.value  # the alt text of the picture
    kind.value = 1
    assert query.value == PROMPTS[1][2]
    assert "pescado 0.81 &lt;b&gt;" in explorer.note.value and "<b>" not in explorer.note.value
    assert explorer.message.value == ""
    # A map without query keeps the reader's query; without caption, no note.
    query.value = 1
    kind.value = 2
    assert query.value == 1 and explorer.note.value == ""
    kind.value = 0
    assert query.value == PROMPTS[0][2] and PROMPTS[0][1] in explorer.note.value
    # An explicit initial query wins over the first map's.
    other = widgets.model_attention_explorer(prompt_maps(), query=3)
    other.widget  # noqa: B018
    assert other.controls["query"].value == 3


def test_static_payload_carries_captions_and_queries_per_choice():
    data = payload(EXPLORERS["prompts"]().to_html())
    controls = {c["name"]: c for c in data["controls"]}
    assert controls["kind"]["label"] == "Comienzo"
    assert controls["query"]["value"] == PROMPTS[0][2]
    assert controls["query"]["value_by"] == {
        "on": "kind", "map": {str(i): q for i, (_, _, q) in enumerate(PROMPTS) if q is not None}}
    assert [s.get("caption") for s in data["sources"]] == [c for _, c, _ in PROMPTS]
    assert [s["label"] for s in data["sources"]] == [p for p, _, _ in PROMPTS]
    # Explorers that use neither keep their payload as it was (the chapters' stored outputs).
    plain = payload(widgets.model_attention_explorer(model_maps()).to_html())
    assert all("caption" not in s for s in plain["sources"])
    assert all("value_by" not in c for c in plain["controls"])
    assert plain["controls"][0]["label"] == "Tipo de atención"


def test_live_bad_value_shows_message_then_recovers():
    explorer = widgets.positional_explorer(d_model=16)
    explorer.widget  # noqa: B018
    explorer.controls["d_model"].value = 7
    assert "d_model debe ser un entero par" in explorer.message.value
    assert explorer.image.layout.display == "none"
    explorer.controls["base"].value = 1.0
    explorer.controls["base"].value = 100.0
    explorer.controls["d_model"].value = 32
    assert explorer.message.value == "" and explorer.image.layout.display is None
    assert explorer.controls["pairs"].options[-1][1] == 15
    explorer.controls["pairs"].value = ()
    assert "al menos un par" in explorer.message.value


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda: widgets.attention_explorer("", vectors()), "La frase está vacía"),
        (lambda: widgets.attention_explorer([], vectors()), "La frase está vacía"),
        (lambda: widgets.attention_explorer("el gato", vectors()), "2 palabras pero 5 vectores"),
        (lambda: widgets.attention_explorer(SENTENCE, vectors(), query=9), "no existe"),
        (lambda: widgets.attention_explorer(SENTENCE, vectors(), temperature=0), "positivos"),
        (lambda: widgets.attention_explorer(SENTENCE, vectors(), mask=torch.ones(5, 5)),
         "booleana"),
        (lambda: widgets.model_attention_explorer(model_maps(), head=4), "La cabeza 4 no existe"),
        (lambda: widgets.model_attention_explorer(model_maps(), layer=-1), "La capa -1"),
        (lambda: widgets.model_attention_explorer({}), "al menos un tipo"),
        (lambda: widgets.model_attention_explorer(model_maps(), kind="x"), "no está"),
        (lambda: widgets.model_attention_explorer(
            {"a": widgets.AttentionMaps(torch.eye(3), "a b c", query=3)}),
         "La consulta (query) de maps['a'] es 3"),
        (lambda: widgets.model_attention_explorer(
            {"a": widgets.AttentionMaps(torch.eye(3), "a b c", caption=["x"])}),
         "El texto (caption) de maps['a'] debe ser un texto"),
        (lambda: widgets.model_attention_explorer(prompt_maps(), kind_label=""), "kind_label"),
        (lambda: widgets.positional_explorer(d_model=7), "d_model debe ser un entero par"),
        (lambda: widgets.positional_explorer(d_model=0), "d_model debe ser un entero par"),
        (lambda: widgets.positional_explorer(base=1), "La base debe ser un número mayor que 1"),
        (lambda: widgets.positional_explorer(base=-3.0), "La base"),
        (lambda: widgets.positional_explorer(pairs=[8]), "no existe"),
        (lambda: widgets.positional_explorer(cursor=99), "cursor"),
        (lambda: widgets.positional_explorer(kinds=("nada",)), "desconocido"),
        # a repeated kind was dropped silently; a dict reached a cache as Python's «unhashable type»
        (lambda: widgets.positional_explorer(kinds=("sinusoidal", "sinusoidal")),
         "kinds repite 'sinusoidal'"),
        (lambda: widgets.positional_explorer(kinds=("sinusoidal", {"a": 1})), "Cada tipo de kinds"),
        (lambda: widgets.scaling_explorer(d_k=0), "d_k"),
        (lambda: widgets.scaling_explorer(seed=-1), "semilla"),
    ],
)
def test_bad_input_shows_a_spanish_message_in_both_views(build, words):
    explorer = build()
    assert isinstance(explorer, widgets.ErrorExplorer)
    assert words in explorer.error
    bundle = explorer._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", WIDGET_MIME}
    assert 'role="alert"' in bundle["text/html"] and "no se puede mostrar" in bundle["text/html"]
    assert words.split()[0] in bundle["text/html"]
    assert words.split()[0] in explorer.widget.children[0].value
    assert "Traceback" not in bundle["text/html"] + bundle["text/plain"]


def test_online_softmax_live_step_follows_the_tile_size():
    explorer = widgets.online_softmax_explorer()
    explorer.widget  # noqa: B018 - builds the controls and draws once
    explorer.controls["step"].value = 3
    explorer.controls["tile"].value = 6  # two tiles: step 3 does not exist, back to 1 (as the static view)
    assert (explorer.controls["step"].value, explorer.controls["step"].max) == (1, 2)
    explorer.controls["step"].value = 2
    explorer.controls["tile"].value = 3  # four tiles: step 2 stays
    assert (explorer.controls["step"].value, explorer.controls["step"].max) == (2, 4)
    assert explorer.message.value == ""
