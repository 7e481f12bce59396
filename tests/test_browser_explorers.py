"""The static views of the explorers, in a real headless browser.

The book shows each explorer's text/html view (no kernel): moving one of its
controls must change the picture, with no JavaScript error. Fixtures
``built_book``, ``browser`` and ``page_url`` come from ``conftest.py``.
"""

import time

import pytest
import torch
from explorer_prompts import PROMPTS, prompt_maps
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from dldna import widgets
from dldna.widgets import core
from dldna.widgets.masking import mask_explorer
from dldna.widgets.vit import patch_size_explorer

pytestmark = pytest.mark.book

def _mounted(browser, timeout=10.0):
    WebDriverWait(browser, timeout).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".dldna-explorer[data-dldna-mounted] svg"))
    return browser.find_elements(By.CSS_SELECTOR, ".dldna-explorer[data-dldna-mounted]")


def _picture(root) -> str:
    return root.find_element(By.CSS_SELECTOR, "svg").get_attribute("innerHTML")


def _js_errors(browser) -> list:
    """JavaScript errors logged since the last call (needs the driver's browser log)."""
    try:
        logs = browser.get_log("browser")
    except Exception:  # noqa: BLE001 - a driver without logs: nothing to check
        return []
    return [entry for entry in logs
            if entry["level"] == "SEVERE" and (entry.get("source") == "javascript"
                                               or "dldna:" in entry.get("message", ""))]


def _move(browser, root, kind: str) -> None:
    """Move one control of ``kind`` ('range', 'select', 'multi' or 'toggle') like a reader."""
    if kind == "range":
        slider = root.find_element(By.CSS_SELECTOR, "input[type=range]")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", slider)
        slider.send_keys(Keys.ARROW_RIGHT)
    elif kind == "toggle":
        root.find_element(By.CSS_SELECTOR, "input[type=checkbox]").click()
    else:
        for element in root.find_elements(By.CSS_SELECTOR, "select"):
            if bool(element.get_attribute("multiple")) == (kind == "multi"):
                choice = Select(element)
                if kind == "multi":
                    choice.select_by_index(len(choice.options) - 1)
                else:
                    choice.select_by_index((int(element.get_attribute("selectedIndex")) + 1)
                                           % len(choice.options))
                return
        raise AssertionError(f"no hay un control de tipo {kind}")


def _assert_moves(browser, root, kind: str) -> None:
    before = _picture(root)
    alt_before = root.find_element(By.CSS_SELECTOR, "svg").get_attribute("aria-label")
    _move(browser, root, kind)
    time.sleep(0.1)
    after = _picture(root)
    assert after != before, f"el dibujo no cambió al mover un control {kind}"
    alt = root.find_element(By.CSS_SELECTOR, "svg").get_attribute("aria-label")
    assert alt and alt != alt_before, "el texto alternativo debe describir el nuevo estado"


#: A chapter of the book for every kind of explorer, and the controls moved there.
BOOK_KINDS = {
    "attention": ("chapters/00_como_usar.html", ("range", "select")),
    "positional": ("chapters/00_como_usar.html", ("range", "select", "multi")),
    "scaling": ("chapters/02_qkv.html", ("range", "toggle")),
    "masks": ("chapters/04_mascaras.html", ("range", "select")),
    "vit_patches": ("chapters/08_vit.html", ("range", "select")),
    "online_softmax": ("chapters/10_moderno.html", ("range",)),
    "rope_scaling": ("chapters/10b_llama.html", ("range", "select")),
}


@pytest.mark.parametrize("view", sorted(BOOK_KINDS))
def test_book_explorers_react_to_their_controls(built_book, browser, page_url, view):
    chapter, kinds = BOOK_KINDS[view]
    assert (built_book / chapter).exists()
    # The renderer is served once per page, not pasted into the outputs.
    page = (built_book / chapter).read_text(encoding="utf-8")
    assert page.count("dldna-explorer.js") == 1 and "dldnaTheme" not in page
    # What the book serves is the package's renderer as it is now: a change to
    # explorer.js (or to the colours of viz.style) reaches the book with `make book`.
    for name, text in core.front_end().items():
        assert (built_book / "_static" / name).read_text(encoding="utf-8") == text
    _js_errors(browser)  # drop what earlier tests logged
    browser.get(page_url(chapter))
    roots = [r for r in _mounted(browser) if r.get_attribute("data-dldna-view") == view]
    assert roots, f"no hay un explorador «{view}» en {chapter}"
    root = roots[0]
    assert root.find_element(By.CSS_SELECTOR, "svg").get_attribute("role") == "img"
    assert root.find_element(By.CSS_SELECTOR, ".dldna-fallback").value_of_css_property(
        "display") == "none"
    for kind in kinds:
        _assert_moves(browser, root, kind)
    assert not _js_errors(browser)


def test_static_views_work_offline_in_a_browser(browser, tmp_path):
    g = torch.Generator().manual_seed(0)
    mask = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    parts = [
        widgets.attention_explorer("el gato come pescado fresco", torch.randn(5, 8, generator=g),
                                   mask=mask),
        widgets.positional_explorer(),
        widgets.scaling_explorer(),
        mask_explorer(n=8, pad=4),
        patch_size_explorer(torch.rand(3, 1, 8, 8, generator=g), {1: None, 2: 0.9, 4: 0.8}),
        widgets.positional_explorer(d_model=7),  # shows a message, not a picture
    ]
    page = tmp_path / "exploradores.html"
    page.write_text(core.standalone_page(parts), encoding="utf-8")
    _js_errors(browser)
    browser.get(page.as_uri())
    roots = _mounted(browser)
    assert [r.get_attribute("data-dldna-view") for r in roots] == [
        "attention", "positional", "scaling", "masks", "vit_patches"]
    attention, positional, scaling, masks, patches = roots
    # Masked cells are drawn hatched, not as weight 0.
    assert attention.find_elements(By.CSS_SELECTOR, "rect.dldna-masked")
    assert masks.find_elements(By.CSS_SELECTOR, "rect.dldna-masked")
    for root, kinds in ((attention, ("range", "select")),
                        (positional, ("range", "select", "multi")),
                        (scaling, ("range", "toggle")),
                        (masks, ("range", "select")),
                        (patches, ("range", "select"))):
        for kind in kinds:
            _assert_moves(browser, root, kind)
    error = browser.find_element(By.CSS_SELECTOR, ".dldna-error")
    assert "d_model debe ser un entero par" in error.text
    assert not _js_errors(browser)


def test_choosing_a_prompt_shows_its_caption_and_selects_its_query(browser, tmp_path):
    """Like the live view: each choice of the dropdown brings its caption and its query."""
    prompts, maps = PROMPTS, prompt_maps()
    explorer = widgets.model_attention_explorer(maps, kind_label="Comienzo")
    page = tmp_path / "comienzos.html"
    page.write_text(core.standalone_page([explorer]), encoding="utf-8")
    _js_errors(browser)
    browser.get(page.as_uri())
    root = _mounted(browser)[0]
    kind = root.find_element(By.CSS_SELECTOR, "select[data-name=kind]")
    query = root.find_element(By.CSS_SELECTOR, "select[data-name=query]")
    note = root.find_element(By.CSS_SELECTOR, ".dldna-note")
    label = root.find_element(By.CSS_SELECTOR, f"label[for='{kind.get_attribute('id')}']")
    assert label.text == "Comienzo"
    # The note sits between the controls and the picture.
    order = browser.execute_script(
        "return Array.from(arguments[0].children).map(e => e.className);", root)
    assert order.index("dldna-controls") < order.index("dldna-note") < order.index("dldna-figure")

    def shown():
        svg = root.find_element(By.CSS_SELECTOR, "svg")
        return (note.text if note.is_displayed() else None, int(query.get_attribute("value")),
                svg.get_attribute("aria-label"))

    text, chosen, alt = shown()
    assert (text, chosen) == (prompts[0][1], prompts[0][2])
    assert prompts[0][1] in alt and "consulta «una»" in alt
    Select(kind).select_by_index(1)
    time.sleep(0.1)
    text, chosen, alt = shown()
    assert (text, chosen) == (prompts[1][1], prompts[1][2])
    assert prompts[1][1] in alt and "consulta «come»" in alt
    # A prompt with neither: no note, and the reader's query stays.
    Select(query).select_by_value("1")
    Select(kind).select_by_index(2)
    time.sleep(0.1)
    text, chosen, alt = shown()
    assert (text, chosen) == (None, 1) and "consulta «marta»" in alt
    Select(kind).select_by_index(0)
    time.sleep(0.1)
    assert shown()[:2] == (prompts[0][1], prompts[0][2])
    assert not _js_errors(browser)


def test_without_the_renderer_the_output_says_where_to_move_it(browser, tmp_path):
    """GitHub's notebook viewer runs no JavaScript: the output explains itself."""
    page = tmp_path / "sin_js.html"
    page.write_text("<!doctype html><html lang='es'><head><meta charset='utf-8'></head><body>"
                    + widgets.scaling_explorer().to_html() + "</body></html>", encoding="utf-8")
    browser.get(page.as_uri())
    fallback = browser.find_element(By.CSS_SELECTOR, ".dldna-fallback")
    assert fallback.is_displayed() and core.FALLBACK in fallback.text
    assert not _js_errors(browser)


def test_online_softmax_view_steps_through_the_tiles(browser, tmp_path):
    """Both sliders redraw; a step beyond the new number of tiles goes back to the first."""
    page = tmp_path / "teselas.html"
    page.write_text(core.standalone_page([widgets.online_softmax_explorer()]), encoding="utf-8")
    _js_errors(browser)
    browser.get(page.as_uri())
    (root,) = _mounted(browser)
    tile, step = root.find_elements(By.CSS_SELECTOR, "input[type=range]")
    alts = []
    for slider in (step, step, tile, tile):  # tiles of 4: step 2, 3; then tiles of 6, of 12
        before = _picture(root)
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", slider)
        slider.send_keys(Keys.ARROW_RIGHT)
        time.sleep(0.1)
        assert _picture(root) != before
        alts.append(root.find_element(By.CSS_SELECTOR, "svg").get_attribute("aria-label"))
    assert "teselas de 4 claves, 3 de 3 leídas" in alts[1]
    assert "teselas de 6 claves, 1 de 2 leídas" in alts[2]  # step 3 does not exist: back to 1
    assert "teselas de 12 claves, 1 de 1 leídas" in alts[3]
    assert not _js_errors(browser)


def test_rope_scaling_view_follows_its_three_controls(browser, tmp_path):
    """Each control redraws, and the picture's text is the live view's for the same state."""
    explorer = widgets.rope_scaling_explorer()
    page = tmp_path / "rope.html"
    page.write_text(core.standalone_page([explorer]), encoding="utf-8")
    _js_errors(browser)
    browser.get(page.as_uri())
    (root,) = _mounted(browser)
    scaling = Select(root.find_element(By.CSS_SELECTOR, "select[data-name=scaling]"))
    d_k = Select(root.find_element(By.CSS_SELECTOR, "select[data-name=d_k]"))
    factor = root.find_element(By.CSS_SELECTOR, "input[type=range][data-name=factor]")
    moves = [
        (lambda: scaling.select_by_visible_text("lineal (PI)"), ("linear", 4, 16)),
        (lambda: factor.send_keys(Keys.ARROW_RIGHT), ("linear", 8, 16)),
        (lambda: d_k.select_by_visible_text("64"), ("linear", 8, 64)),
        (lambda: scaling.select_by_visible_text("NTK"), ("ntk", 8, 64)),
    ]
    for move, values in moves:
        state = dict(zip(("scaling", "factor", "d_k"), values, strict=True))
        before = _picture(root)
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", root)
        move()
        time.sleep(0.1)
        assert _picture(root) != before, state
        alt = root.find_element(By.CSS_SELECTOR, "svg").get_attribute("aria-label")
        assert alt == explorer._alt(state)
        assert root.find_element(By.CSS_SELECTOR, ".dldna-note").text == explorer._note(state)
    # The training range is marked: the bracket's words, and the line where it ends.
    assert "entrenamiento (d < 24)" in root.find_element(By.CSS_SELECTOR, "svg").get_attribute("textContent")
    assert root.find_elements(By.CSS_SELECTOR, "line.dldna-cursor")
    assert not _js_errors(browser)
