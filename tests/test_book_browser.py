"""The built book, opened page by page in headless Chromium, as a reader would.

The machine that runs the tests has no network, like a reader offline: every
script, style and image the pages need must come from the built book itself.
The only remote resource allowed is the Colab badge image, whose link must
still be right.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from book import toc_files

pytestmark = pytest.mark.book
PAGES = toc_files()
REMOTE_IMAGES_ALLOWED = ("https://colab.research.google.com/assets/colab-badge.svg",)


def test_build_has_no_warnings_and_a_page_for_every_toc_entry(book_build, built_book):
    log = book_build.stdout + book_build.stderr
    assert "WARNING" not in log, log[-3000:]
    missing = [entry for entry in PAGES if not (built_book / f"{entry}.html").exists()]
    assert not missing, f"páginas sin construir: {missing}"


def test_no_page_exists_outside_the_table_of_contents(built_book):
    extra = {"index", "genindex", "search"}
    pages = {p.relative_to(built_book).with_suffix("").as_posix()
             for p in Path(built_book).rglob("*.html") if "_static" not in p.parts}
    assert pages - extra - set(PAGES) == set()


def _open(browser, url):
    browser.get(url)
    WebDriverWait(browser, 30).until(
        lambda d: d.execute_script("return document.readyState") == "complete")
    # MathJax typesets after the page has loaded; wait for it where there is math.
    browser.set_script_timeout(30)
    browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        if (!document.querySelector('.math')) { done(); return; }
        const wait = (n) => {
          if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
            MathJax.startup.promise.then(() => done(), () => done());
          } else if (n > 100) { done(); } else { setTimeout(() => wait(n + 1), 100); }
        };
        wait(0);""")


@pytest.mark.parametrize("entry", PAGES)
def test_page_opens_cleanly_in_a_browser(browser, page_url, entry):
    browser.get_log("browser")  # forget messages from earlier pages
    _open(browser, page_url(f"{entry}.html"))
    assert browser.title and "Error response" not in browser.title, f"{entry}: no se abrió"

    text = browser.execute_script("return document.body.innerText")
    assert "Traceback (most recent call last)" not in text, f"{entry}: traza de Python en la página"
    errors = browser.execute_script(
        "return document.querySelectorAll('.output.traceback, .output.error, .output.stderr').length")
    assert errors == 0, f"{entry}: la página muestra {errors} salidas de error"

    broken = browser.execute_script(
        "return Array.from(document.images)"
        ".filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
    broken_local = [src for src in broken if not src.startswith(REMOTE_IMAGES_ALLOWED)]
    assert not broken_local, f"{entry}: imágenes que no cargan: {broken_local}"
    remote = browser.execute_script(
        "return Array.from(document.images).map(i => i.src).filter(s => !s.startsWith(location.origin))")
    assert set(remote) <= set(REMOTE_IMAGES_ALLOWED), f"{entry}: imágenes remotas: {remote}"

    raw_math = browser.execute_script(
        "return document.querySelectorAll('.math:not(:has(mjx-container))').length")
    assert raw_math == 0, f"{entry}: {raw_math} fórmulas sin renderizar por MathJax"

    severe = [m["message"] for m in browser.get_log("browser") if m["level"] == "SEVERE"
              and not m["message"].startswith(REMOTE_IMAGES_ALLOWED)]
    assert not severe, f"{entry}: errores en la consola del navegador: {severe}"

    nav = browser.execute_script(
        "return Array.from(document.querySelectorAll('nav.bd-links a.reference'))"
        ".map(a => new URL(a.href).pathname)")
    for other in PAGES[1:]:
        assert any(path.endswith(f"/{other}.html") for path in nav), (
            f"{entry}: el índice lateral no enlaza {other}")


@pytest.mark.parametrize("entry", [e for e in PAGES if e.split("/")[-1][:2].isdigit()])
def test_chapter_pages_have_colab_binder_and_live_code_buttons(browser, page_url, entry):
    _open(browser, page_url(f"{entry}.html"))
    links = browser.execute_script("return Array.from(document.links).map(a => a.href)")
    assert any(h.startswith("https://colab.research.google.com/github/") and h.endswith(f"{entry}.ipynb")
               for h in links), f"{entry}: falta el botón de Colab"
    assert any(h.startswith("https://mybinder.org/v2/gh/") for h in links), f"{entry}: falta Binder"
    thebe = browser.execute_script(
        "return document.querySelectorAll('.btn-launch-thebe, [onclick*=\"initThebe\"]').length")
    assert thebe > 0, f"{entry}: falta el botón de código en vivo (Thebe)"
