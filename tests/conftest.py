"""Shared fixtures: the book built once per test session, and a headless browser.

``built_book`` builds the whole book from scratch into a temporary folder with
warnings treated as errors (a fresh build, because Sphinx does not repeat the
warnings of documents it already built). ``browser`` is a headless Chromium
(Debian's, or Google Chrome where that is what the machine has, as on GitHub's
runners) driven by Selenium, with no network beyond this machine; the pair of
browser and driver is the one ``scripts/install-chromium.sh --find`` chooses.
``page_url`` serves the built book over HTTP on 127.0.0.1, as a reader's
browser would see it.

The Hypothesis profiles of the property-based tests (``tests/test_properties.py``)
are here too: ``make`` (the default, what ``make test`` runs: a few examples
per function, the same ones every run) and ``deep`` (hundreds of fresh random
examples per function, started by hand: ``HYPOTHESIS_PROFILE=deep``).
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Neither profile has a deadline (the machine may be loaded: a slow example is
# not a failure) nor a database (no .hypothesis folder in the checkout).
_QUIET = dict(deadline=None, database=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
# make test: few examples, derandomized, so the run is fast and the same every time.
settings.register_profile("make", max_examples=4, derandomize=True, **_QUIET)
# By hand, to hunt for new bad inputs: many fresh examples per function.
settings.register_profile("deep", max_examples=300, **_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "make"))

ROOT = Path(__file__).resolve().parents[1]
INSTALL_CHROMIUM = ROOT / "scripts" / "install-chromium.sh"


@pytest.fixture(scope="session")
def book_build(tmp_path_factory) -> subprocess.CompletedProcess:
    """Run ``jupyter-book build`` once; the result carries its log."""
    out = tmp_path_factory.mktemp("book")
    jb = Path(sys.executable).with_name("jupyter-book")
    result = subprocess.run(
        [str(jb), "build", str(ROOT), "--path-output", str(out), "--all",
         "--warningiserror", "--keep-going"],
        capture_output=True, text=True, cwd=ROOT, timeout=900,
    )
    result.html = out / "_build" / "html"  # type: ignore[attr-defined]
    return result


@pytest.fixture(scope="session")
def built_book(book_build) -> Path:
    if book_build.returncode != 0:
        pytest.fail("El libro no se construye:\n" + book_build.stdout[-4000:] + book_build.stderr[-4000:])
    return book_build.html


@pytest.fixture(scope="session")
def page_url(built_book):
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    yield lambda rel: f"{base}/{rel.lstrip('/')}"
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output readable
        pass


@pytest.fixture(scope="session")
def browser():
    found = subprocess.run(["bash", str(INSTALL_CHROMIUM), "--find"], capture_output=True, text=True)
    if found.returncode != 0:
        pytest.fail(found.stderr.strip() or "No se encontró Chromium con su ChromeDriver.")
    chromium, chromedriver = found.stdout.splitlines()[:2]
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--window-size=1280,1600"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()

