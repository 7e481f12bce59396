"""The live explorers in real front ends: a Jupyter server, a kernel and a browser.

The static book is tested in ``test_browser_explorers.py``; this file tests the
other view, the ``ipywidgets`` one, where a kernel redraws the picture. For each
front end it starts a Jupyter server on 127.0.0.1 (a free port, a token, every
Jupyter folder in a temporary directory, no update or news checks), writes a
small notebook that displays an explorer, opens it in the headless Chromium of
``conftest.py``, runs it, and moves two controls as a reader would (a click on
the checkbox, an arrow key on the slider): each move must bring a new picture
from the kernel, and no output may hold a traceback or an error.

Two front ends, the two widget managers that readers meet:

``lab``
    JupyterLab 4 with ipywidgets 8 (``jupyterlab_widgets``), from the
    environment running the tests (``.venv``, ``requirements.txt``).
``classic``
    The classic Notebook 6.5 with ipywidgets 7.7 (``widgetsnbextension`` 3.6),
    the widget manager closest to Colab's, from the Colab environment
    (``requirements-colab.txt``, built by ``make colab-env``) found at
    ``$DLDNA_COLAB_VENV`` or ``.venv-colab`` in the repository. Without it the
    test fails and says how to build it: a skipped test would hide that
    ipywidgets 7 is no longer checked.

The kernel runs in the front end's own environment and imports ``dldna`` from
this checkout (``PYTHONPATH``); installing the wheel is the Colab runner's test.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from selenium.common.exceptions import JavascriptException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[1]
#: Generous: two CPU cores shared with other work, and the kernel imports torch.
SERVER_TIMEOUT = 60.0
KERNEL_TIMEOUT = 90.0
PICTURE_TIMEOUT = 60.0

#: The explorer shown: a checkbox and a slider, each changing the picture.
EXPLORER_CELL = "from dldna import widgets\nwidgets.scaling_explorer(d_k=64)"
VERSIONS_CELL = ("import ipywidgets, os, sys\n"
                 "print('ipywidgets', ipywidgets.__version__, 'en', os.path.realpath(sys.prefix))")


def colab_venv() -> Path:
    return Path(os.environ.get("DLDNA_COLAB_VENV") or ROOT / ".venv-colab")


@dataclass(frozen=True)
class FrontEnd:
    name: str
    ipywidgets: str  # the major.minor the kernel must report
    #: JavaScript, true once the page has a connected kernel and its widget manager.
    ready_js: str
    #: JavaScript that runs every cell of the open notebook.
    run_all_js: str
    #: CSS selectors of what an error or a traceback looks like in this front end.
    error_css: tuple[str, ...]
    #: Text of the browser console that says the widget manager is done asking
    #: the kernel for its widgets (None: nothing to wait for).
    settled_log: str | None = None

    def venv(self) -> Path:
        return Path(sys.prefix) if self.name == "lab" else colab_venv()

    def command(self, port: int, token: str, root: Path) -> list[str]:
        bin_dir = self.venv() / "bin"
        # CI runs as root, which Jupyter refuses unless told.
        as_root = ["--allow-root"] if os.geteuid() == 0 else []
        if self.name == "lab":
            return [str(bin_dir / "jupyter-lab"), *as_root, "--no-browser", "--ip=127.0.0.1",
                    f"--port={port}", "--ServerApp.port_retries=0",
                    f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                    # No network: no update check, no news, no extension listing from PyPI.
                    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                    "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
                    # window.jupyterapp, to run the cells with the app's own command.
                    "--LabApp.expose_app_in_browser=True"]
        return [str(bin_dir / "jupyter-notebook"), *as_root, "--no-browser", "--ip=127.0.0.1",
                f"--port={port}", "--NotebookApp.port_retries=0",
                f"--NotebookApp.token={token}", f"--NotebookApp.notebook_dir={root}"]

    def notebook_url(self, base: str, name: str, token: str) -> str:
        path = "lab/tree" if self.name == "lab" else "notebooks"
        return f"{base}/{path}/{name}?token={token}"


LAB = FrontEnd(
    name="lab",
    ipywidgets="8.1",
    ready_js="""
        const app = window.jupyterapp;
        const panel = app && app.shell.currentWidget;
        const kernel = panel && panel.sessionContext && panel.sessionContext.session
            && panel.sessionContext.session.kernel;
        return Boolean(kernel && kernel.connectionStatus === 'connected'
            && kernel.status === 'idle'
            && app.commands.hasCommand('notebook:run-all-cells'));
    """,
    run_all_js="window.jupyterapp.commands.execute('notebook:run-all-cells');",
    error_css=(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
               ".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']",
               ".dldna-error"),
)

CLASSIC = FrontEnd(
    name="classic",
    ipywidgets="7.7",
    # widgetsnbextension gives the kernel a widget manager and registers the
    # widget view's renderer; before that, the explorer would show its static HTML.
    ready_js="""
        const nb = window.Jupyter && Jupyter.notebook;
        const kernel = nb && nb.kernel;
        return Boolean(kernel && kernel.is_connected() && kernel.widget_manager
            && nb.get_cell(0).output_area.mime_types().indexOf(
                'application/vnd.jupyter.widget-view+json') >= 0);
    """,
    run_all_js="Jupyter.notebook.execute_all_cells();",
    error_css=(".output_error", ".output_stderr", ".dldna-error"),
    # On connecting, widgetsnbextension 3.6 asks the kernel for the widgets it
    # already has: first through a "jupyter.widget.control" comm, which the
    # kernel of ipywidgets 7.7 lacks (the console warns), then with a
    # comm_info request. A widget created by a cell run before that answer
    # arrives can be listed there too and fetched a second time; its view then
    # stays hidden and empty (seen here on a loaded machine: the front end's
    # race, not the explorers'; a reader who runs a cell a moment after opening
    # the notebook does not meet it). Cells run after the warning are answered
    # after that comm_info: the kernel handles its requests in order.
    settled_log="jupyter.widget.control",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(VERSIONS_CELL), nbformat.v4.new_code_cell(EXPLORER_CELL)]
    nbformat.write(nb, path)


def _environment(venv: Path, home: Path) -> dict[str, str]:
    """The server's (and so the kernel's) environment: only ``venv``, only ``home``."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("JUPYTER", "IPYTHON", "PYTHON", "VIRTUAL_ENV"))}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        PYTHONPATH=str(ROOT),
        # Settings, workspaces, kernel specs and connection files of this run only.
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        # A kernel that crashes says where, in the server's log (shown on failure).
        PYTHONFAULTHANDLER="1",
        JUPYTER_PLATFORM_DIRS="0",
    )
    return env


def _classic_widgets_enabled(venv: Path) -> bool:
    """Whether classic Notebook loads widgetsnbextension: its nbconfig in ``venv``.

    The package writes that file into its environment on install; without it
    the page has no widget manager and shows every explorer's static text.
    """
    config = venv / "etc" / "jupyter" / "nbconfig" / "notebook.d" / "widgetsnbextension.json"
    if not config.exists():
        return False
    data = json.loads(config.read_text(encoding="utf-8"))
    return bool(data.get("load_extensions", {}).get("jupyter-js-widgets/extension"))


def _severe(entries) -> list[str]:
    """The browser's errors (JavaScript, failed requests) among log ``entries``."""
    return [f"{entry.get('source')}: {entry['message'][:500]}"
            for entry in entries if entry["level"] == "SEVERE"]


@pytest.fixture
def server(request, tmp_path):
    """A Jupyter server of the front end ``request.param``, stopped after the test."""
    front: FrontEnd = request.param
    venv = front.venv()
    if front.name == "classic" and not (venv / "bin" / "jupyter-notebook").exists():
        pytest.fail(
            f"Falta el entorno de Colab en {venv} (classic Notebook 6.5 e ipywidgets 7.7): "
            "constrúyelo con `make colab-env`, o indica otro con DLDNA_COLAB_VENV=...")
    home = tmp_path / "jupyter"
    work = tmp_path / "cuadernos"
    work.mkdir()
    _notebook(work / "explorador.ipynb")
    env = _environment(venv, home)
    if front.name == "classic" and not _classic_widgets_enabled(venv):
        enabled = subprocess.run([str(venv / "bin" / "jupyter"), "nbextension", "enable", "--py",
                                  "widgetsnbextension", "--sys-prefix"],
                                 capture_output=True, text=True, env=env, timeout=120)
        assert _classic_widgets_enabled(venv), (
            "No se pudo activar widgetsnbextension en el Notebook clásico:\n"
            + enabled.stdout + enabled.stderr)
    port, token = _free_port(), secrets.token_hex(16)
    log = (tmp_path / "servidor.log").open("w+", encoding="utf-8")
    process = subprocess.Popen(front.command(port, token, work), cwd=work, env=env,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"

    def server_log() -> str:
        log.flush()
        return (tmp_path / "servidor.log").read_text(encoding="utf-8", errors="replace")[-6000:]

    try:
        deadline = time.monotonic() + SERVER_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"El servidor de Jupyter ({front.name}) terminó al arrancar:\n"
                            + server_log())
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5):
                    break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    pytest.fail(f"El servidor de Jupyter ({front.name}) no respondió en "
                                f"{SERVER_TIMEOUT:.0f} s:\n" + server_log())
                time.sleep(0.25)
        yield front, front.notebook_url(base, "explorador.ipynb", token), server_log
    finally:
        # The server and its kernel are a process group of their own: asked to
        # stop, then whatever is left of the group ended.
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        log.close()


def _until(browser, condition, timeout: float, message):
    """Poll ``condition(browser)`` until it is truthy; fail with ``message()`` otherwise."""
    try:
        return WebDriverWait(browser, timeout, poll_frequency=0.25,
                             ignored_exceptions=(JavascriptException,)).until(condition)
    except WebDriverException as err:
        pytest.fail(f"{message()} ({type(err).__name__})")


# The output area is redrawn while the kernel answers: read it in one script,
# never through element handles that a redraw can leave stale.
_OUTPUTS_TEXT_JS = """
    return Array.from(document.querySelectorAll(arguments[0]), e => e.innerText).join('\\n');
"""
_PICTURE_JS = """
    const images = document.querySelectorAll(".jupyter-widgets img[src^='data:image/png']");
    return images.length === 1 ? images[0].getAttribute('src') : null;
"""


def _outputs_text(browser, front: FrontEnd) -> str:
    css = ".jp-OutputArea" if front.name == "lab" else ".output_area"
    return browser.execute_script(_OUTPUTS_TEXT_JS, css) or ""


def _errors(browser, front: FrontEnd) -> list[str]:
    found = [f"{css}: {text[:500]}" for css in front.error_css
             if (text := browser.execute_script(
                 "const e = document.querySelector(arguments[0]);"
                 "return e === null ? null : e.innerText + ' ';", css))]
    text = _outputs_text(browser, front)
    found += [f"texto «{word}» en las salidas" for word in ("Traceback", "Error")
              if word in text]
    return found


def _picture(browser) -> str | None:
    """The ``src`` of the explorer's picture, drawn by the kernel inside the widget view."""
    return browser.execute_script(_PICTURE_JS)


def _diagnosis(browser, front: FrontEnd, server_log, console=()) -> str:
    """What a failure message shows: the outputs (text and HTML), the browser's log, the server's."""
    css = ".jp-OutputArea" if front.name == "lab" else ".output_area"
    html = browser.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]), e => e.outerHTML)"
        ".join('\\n');", css) or ""
    console = "\n".join(f"{e['level']} {e.get('source')}: {e['message'][:400]}"
                        for e in [*console, *browser.get_log("browser")])
    return (f"Salidas:\n{_outputs_text(browser, front)}\nHTML de las salidas:\n{html[-4000:]}\n"
            f"Consola del navegador:\n{console[-4000:]}\nServidor:\n{server_log()}")


def _new_picture(browser, front, before: str, what: str, server_log, console) -> str:
    def changed(d):
        if _errors(d, front):
            return True  # stop waiting: the assertion below says what went wrong
        src = _picture(d)
        return src if src and src != before else None

    src = _until(browser, changed, PICTURE_TIMEOUT,
                 lambda: f"El dibujo no cambió al {what} ({front.name}).\n"
                         + _diagnosis(browser, front, server_log, console))
    assert not _errors(browser, front), _errors(browser, front)
    return src


@pytest.mark.parametrize("server", [LAB, CLASSIC], ids=["jupyterlab4-ipywidgets8",
                                                        "notebook6-ipywidgets7"],
                         indirect=True)
def test_moving_a_live_control_redraws_the_picture(browser, server):
    front, url, server_log = server
    # Leave the page of an earlier test (whose server may be gone) before
    # dropping what it logged: from here on, the log is this test's.
    browser.get("about:blank")
    browser.get_log("browser")
    browser.get(url)
    console: list[dict] = []  # the browser's log, read once (reading empties it)

    def ready(d) -> bool:
        console.extend(d.get_log("browser"))
        settled = front.settled_log is None or any(
            front.settled_log in entry["message"] for entry in console)
        return settled and d.execute_script(front.ready_js)

    _until(browser, ready, KERNEL_TIMEOUT,
           lambda: f"La página no tuvo un kernel conectado con su gestor de widgets "
                   f"({front.name}).\n" + _diagnosis(browser, front, server_log, console))
    browser.execute_script(front.run_all_js)

    def explorer_shown(d):
        if _errors(d, front):
            return True
        return bool(_picture(d) and d.find_elements(
            By.CSS_SELECTOR, ".jupyter-widgets input[type=checkbox]"))

    _until(browser, explorer_shown, KERNEL_TIMEOUT,
           lambda: f"El explorador no mostró sus controles y su dibujo ({front.name}).\n"
                   + _diagnosis(browser, front, server_log, console))
    assert not _errors(browser, front), _errors(browser, front)
    # The kernel is the environment this front end is meant to test.
    assert f"ipywidgets {front.ipywidgets}." in _outputs_text(browser, front)
    assert f" en {front.venv().resolve()}\n" in _outputs_text(browser, front)
    # The live view, not the static one: no static explorer mounted or waiting.
    assert not browser.find_elements(By.CSS_SELECTOR, ".dldna-explorer, .dldna-fallback")

    first = _picture(browser)
    checkbox = browser.find_element(By.CSS_SELECTOR, ".jupyter-widgets input[type=checkbox]")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", checkbox)
    checkbox.click()
    second = _new_picture(browser, front, first, "marcar la casilla", server_log,
                          console)

    # The slider (d_k), moved with the keyboard: its handle takes the focus.
    handle = browser.find_element(By.CSS_SELECTOR, ".jupyter-widgets .ui-slider-handle, "
                                                   ".jupyter-widgets .noUi-handle")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", handle)
    handle.click()
    handle.send_keys(Keys.ARROW_RIGHT)
    third = _new_picture(browser, front, second, "mover el deslizador", server_log,
                         console)
    assert len({first, second, third}) == 3
    console.extend(browser.get_log("browser"))
    assert not _severe(console)
