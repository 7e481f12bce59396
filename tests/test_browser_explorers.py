"""The static views of the explorers, in a real headless browser.

The book shows each explorer's text/html view (no kernel): moving one of its
controls must change the picture, with no JavaScript error. Fixtures
``built_book``, ``browser`` and ``page_url`` come from ``conftest.py``.
"""

import time

import pytest
import torch
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from dldna import widgets

pytestmark = pytest.mark.book

CHAPTER = "chapters/00_como_usar.html"


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


def test_book_explorers_react_to_their_controls(built_book, browser, page_url):
    assert (built_book / CHAPTER).exists()
    _js_errors(browser)  # drop what earlier tests logged
    browser.get(page_url(CHAPTER))
    roots = _mounted(browser)
    by_view = {}
    for root in roots:
        by_view.setdefault(root.get_attribute("data-dldna-view"), root)
    assert {"attention", "positional"} <= set(by_view), "faltan exploradores en el capítulo 0"
    for view in ("attention", "positional"):
        root = by_view[view]
        assert root.find_element(By.CSS_SELECTOR, "svg").get_attribute("role") == "img"
        assert root.find_element(By.CSS_SELECTOR, ".dldna-fallback").value_of_css_property(
            "display") == "none"
        _assert_moves(browser, root, "range")
        _assert_moves(browser, root, "select")
    assert not _js_errors(browser)


def test_static_views_work_offline_in_a_browser(browser, tmp_path):
    g = torch.Generator().manual_seed(0)
    mask = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    parts = [
        widgets.attention_explorer("el gato come pescado fresco", torch.randn(5, 8, generator=g),
                                   mask=mask),
        widgets.positional_explorer(),
        widgets.scaling_explorer(),
        widgets.positional_explorer(d_model=7),  # shows a message, not a picture
    ]
    page = tmp_path / "exploradores.html"
    page.write_text(
        "<!doctype html><html lang='es'><head><meta charset='utf-8'></head><body>"
        + "".join(p.to_html() for p in parts) + "</body></html>", encoding="utf-8")
    _js_errors(browser)
    browser.get(page.as_uri())
    roots = _mounted(browser)
    assert [r.get_attribute("data-dldna-view") for r in roots] == [
        "attention", "positional", "scaling"]
    attention, positional, scaling = roots
    # Masked cells are drawn hatched, not as weight 0.
    assert attention.find_elements(By.CSS_SELECTOR, "rect.dldna-masked")
    for root, kinds in ((attention, ("range", "select")),
                        (positional, ("range", "select", "multi")),
                        (scaling, ("range", "toggle"))):
        for kind in kinds:
            _assert_moves(browser, root, kind)
    error = browser.find_element(By.CSS_SELECTOR, ".dldna-error")
    assert "d_model debe ser un entero par" in error.text
    assert not _js_errors(browser)
