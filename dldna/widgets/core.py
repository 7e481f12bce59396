"""Machinery shared by the explorers: one object, a live view and a static view.

An explorer is a Python object whose ``_repr_mimebundle_`` returns two views
of the same thing, and each front end shows the one it can run:

``application/vnd.jupyter.widget-view+json`` (live: JupyterLab, Jupyter, Colab, VS Code)
    An ``ipywidgets`` container: the controls, and a picture drawn by a
    :mod:`dldna.viz` function (a matplotlib figure, sent as a PNG inside an
    ``<img>`` with alt text), redrawn whenever a control changes.

``text/html`` (static: the rendered book, with no kernel)
    The book drops the widget view (``nb_mime_priority_overrides`` in
    ``_config.yml``) and shows this instead. **Technique: precomputed data +
    one JavaScript renderer served by the book.** Python computes, with the
    same data functions the live view uses, the numbers for *every* value of
    every control (a small grid: a few temperatures, a few ``d_model``...),
    and the output carries only them, as JSON, and a one-line mount call. The
    renderer, ``static/explorer.js`` (with ``static/explorer.css`` and the
    colours of :func:`dldna.viz.style.theme`), is served once per page by the
    book's Sphinx extension :mod:`dldna.sphinx_ext`; it builds HTML controls
    and draws the picture as SVG, redrawing it when a control moves. Why:

    * it needs no kernel and no network (Thebe/Binder or a CDN would need
      both), so the book also works offline;
    * the numbers are Python's, so the static view cannot disagree with the
      live one; JavaScript only selects and draws them;
    * precomputed *images* for every combination would be far larger than the
      numbers, and SVG stays sharp and accessible (``role="img"`` with an
      ``aria-label`` describing the current state);
    * a fix to the renderer reaches the book with ``make book``, without
      re-executing a notebook; the output is deterministic (element ids count
      the explorers of a notebook, floats are rounded or quantised), so
      ``nbval`` compares it.

    Where no renderer runs (GitHub's notebook viewer, a notebook opened
    without its kernel), the output shows a short Spanish text instead, which
    the renderer hides when it mounts. :func:`standalone_page` writes a page
    that carries the renderer itself.

    Large arrays are quantised to 8 or 16 bits and base64-encoded
    (:func:`pack`); a picture cannot show more precision than that anyway.

    A control of the payload is ``{"name", "label", "type", "value"}`` with
    ``"options"`` (``[[value, label], ...]``), or ``"options_by": {"on": other,
    "map": {str(other's value): options}}`` when its options depend on another
    control; ``"value_by": {"on": other, "map": {str(other's value): value}}``
    selects a value whenever that other control moves to a listed value (the
    live view does the same in :meth:`Explorer._on_change`).

A short text can go with the picture, between the controls and the picture,
in both views (:meth:`Explorer._note` in the live view; ``note`` of the
JavaScript view in the static one): for what the picture cannot say, such as
a model's predictions for the chosen sentence.

Bad input never produces a traceback or an empty area: explorer classes raise
``ValueError``/``TypeError`` with a Spanish message, and the factory functions
(:func:`dldna.widgets.attention_explorer` and friends) build them with
:func:`build_or_error`, which returns an :class:`ErrorExplorer` showing the
message in both views; any other exception becomes a generic Spanish message
(never Python's English one). A control moved to a bad value in the live view
(an odd ``d_model`` typed in a box) shows the message in place of the picture
until the value is fixed.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import re
from collections.abc import Callable
from importlib import resources
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text

from dldna import checks
from dldna.viz import style

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

#: Shown where no renderer runs (GitHub's notebook viewer, say); the renderer hides it.
FALLBACK = "Abre este capítulo en el libro o en Colab para mover los controles."
#: What the reader sees when something unexpected fails (Python's message is English).
UNEXPECTED = ("Algo falló al preparar el explorador con estos valores. Prueba otros valores; "
              "si el problema sigue, avisa en el repositorio del libro.")
#: Words of Python's, NumPy's, PyTorch's or matplotlib's own (English) messages. A
#: ValueError/TypeError whose text has them did not come from a check of ours: the
#: explorer shows :data:`UNEXPECTED` instead (tests/test_properties.py looks for any).
ENGLISH = re.compile(r"\b(the|must|expected|got|invalid|cannot|could not|object|unsupported|"
                     r"argument|Traceback|not supported|has no attribute|iterable|convert)\b")


def reader_message(err: BaseException) -> str:
    """The Spanish text of ``err`` for the picture area; never Python's English words."""
    if not isinstance(err, BaseException):
        raise TypeError(f"reader_message lee una excepción; se recibió {type(err).__name__}.")
    text = str(err)
    return UNEXPECTED if not text or ENGLISH.search(text) else text


def _text(value, name: str, *, allow_empty: bool = False) -> str:
    return checks.text(value, name, allow_empty=allow_empty)


def _finite_array(values, name: str) -> np.ndarray:
    """``values`` as a float64 array of finite numbers (text, None and NaN refused)."""
    try:
        if np.asarray(values).dtype == bool:  # True/False are not numbers to draw
            raise TypeError
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} debe ser un array o una lista de números; se recibió "
                        f"{type(values).__name__}.") from None
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contiene NaN o infinitos; se esperaban números finitos.")
    return a


_ERROR_STYLE = ("border:1px solid #D55E00;border-left:6px solid #D55E00;background:#fff6ef;"
                "padding:0.6em 0.9em;margin:0.6em 0;color:#222;font-family:system-ui,sans-serif")
_NOTE_STYLE = "margin:0.3em 0;font-size:0.95em;font-family:system-ui,sans-serif"
_ids = itertools.count(1)


def _static(name: str) -> str:
    return resources.files("dldna.widgets").joinpath(f"static/{name}").read_text("utf-8")


def front_end() -> dict[str, str]:
    """The explorers' static front end: file name → text, as the book serves it.

    ``dldna-explorer.js`` is ``window.dldnaTheme`` (the colours of
    :func:`dldna.viz.style.theme`) followed by ``static/explorer.js``;
    ``dldna-explorer.css`` is the same colours as CSS variables followed by
    ``static/explorer.css``.
    """
    colours = style.theme()
    theme = json.dumps(colours, sort_keys=True, ensure_ascii=True)
    variables = "".join(f"--dldna-{key.replace('_', '-')}:{value};"
                        for key, value in sorted(colours.items()) if isinstance(value, str))
    return {
        "dldna-explorer.js": f"window.dldnaTheme = {theme};\n{_static('explorer.js')}",
        "dldna-explorer.css": f":root{{{variables}}}\n{_static('explorer.css')}",
    }


def standalone_page(parts, title: str = "Exploradores") -> str:
    """A self-contained HTML page with ``parts`` (explorers) and the front end inlined.

    For a page outside the book (a test, a file sent to someone): it needs no
    network and no other file.
    """
    if isinstance(parts, Explorer):
        parts = [parts]
    if not isinstance(parts, (list, tuple)) or not all(isinstance(p, Explorer) for p in parts):
        raise TypeError("parts debe ser una lista de exploradores (los que devuelven las funciones de "
                        f"dldna.widgets); se recibió {type(parts).__name__}.")
    title = _text(title, "title")
    files = front_end()
    body = "".join(part.to_html() for part in parts)
    return (
        "<!doctype html><html lang='es'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{files['dldna-explorer.css']}</style>"
        f"<script>{files['dldna-explorer.js']}</script></head><body>{body}</body></html>"
    )


# ------------------------------------------------------------------- payloads


def pack(values, bits: int = 16, lo: float | None = None, hi: float | None = None) -> dict:
    """Quantise an array to unsigned ``bits``-bit integers over ``[lo, hi]``, base64.

    Returns ``{"s": shape, "lo": lo, "hi": hi, "b": bits, "d": base64}``; the
    JavaScript ``unpack`` (and :func:`unpack` here) reads value
    ``lo + (hi - lo) * q / (2**bits - 1)``. The error is at most half a step:
    ``(hi - lo) / (2 * (2**bits - 1))``. ``lo``/``hi`` default to the array's
    range, rounded to 6 decimals so that the output is reproducible.
    """
    if bits not in (8, 16) or isinstance(bits, bool):
        raise ValueError(f"bits debe ser 8 o 16; se recibió {bits!r}.")
    a = _finite_array(values, "values")
    if not a.size:
        raise ValueError("values está vacío: no hay valores que cuantizar.")
    lo = round(float(a.min()) if lo is None else checks.real(lo, "lo"), 6)
    hi = round(float(a.max()) if hi is None else checks.real(hi, "hi"), 6)
    if hi <= lo:
        hi = lo + 1.0
    levels = 2**bits - 1
    q = np.rint((np.clip(a, lo, hi) - lo) / (hi - lo) * levels)
    raw = q.astype("<u1" if bits == 8 else "<u2").tobytes()
    return {"s": list(a.shape), "lo": lo, "hi": hi, "b": bits,
            "d": base64.b64encode(raw).decode("ascii")}


def unpack(packed: dict) -> np.ndarray:
    """Inverse of :func:`pack` (up to its quantisation error)."""
    if not isinstance(packed, dict) or not {"s", "lo", "hi", "b", "d"} <= set(packed):
        raise TypeError("unpack lee el diccionario que devuelve pack (con s, lo, hi, b y d); "
                        f"se recibió {type(packed).__name__}.")
    dtype = "<u1" if packed["b"] == 8 else "<u2"
    q = np.frombuffer(base64.b64decode(packed["d"]), dtype=dtype).astype(np.float64)
    levels = 2 ** packed["b"] - 1
    values = packed["lo"] + (packed["hi"] - packed["lo"]) * q / levels
    return values.reshape(packed["s"])


def rounded(values, ndigits: int = 4):
    """Nested lists of Python floats rounded to ``ndigits`` (for small arrays in JSON)."""
    ndigits = checks.non_negative_int(ndigits, "ndigits")
    a = _finite_array(values, "values")
    return np.round(a, ndigits).tolist()


def canonical_json(payload: dict) -> str:
    """JSON that is the same on every run and safe inside ``<script>``."""
    if not isinstance(payload, dict):
        raise TypeError(f"payload debe ser un diccionario; se recibió {type(payload).__name__}.")
    try:
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                          allow_nan=False)
    except ValueError:
        raise ValueError("payload contiene NaN o infinitos, que JSON no admite.") from None
    except TypeError:
        raise TypeError("payload solo puede contener textos, números, listas y diccionarios "
                        "(JSON); tiene otro tipo de valor.") from None
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def options(values, labels=None) -> list[list]:
    """Control options as ``[[value, label], ...]`` for the static view."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, range, np.ndarray)):
        raise TypeError(f"values debe ser una lista de valores; se recibió {type(values).__name__}.")
    labels = labels if labels is not None else [str(v) for v in values]
    if isinstance(labels, (str, bytes)) or not isinstance(labels, (list, tuple)) \
            or len(labels) != len(values):
        raise ValueError(f"labels debe ser una lista con una etiqueta por valor ({len(values)}); "
                         f"se recibió {labels!r:.80}.")
    return [[v, str(lab)] for v, lab in zip(values, labels, strict=True)]


def static_html(payload: dict, ordinal: int | None = None) -> str:
    """The static view of an explorer's ``payload``: its data and a mount call.

    ``payload`` must hold ``view`` (a kind registered in ``explorer.js``),
    ``title``, ``alt`` and ``controls``. The element id is the view and the
    explorer's ordinal in the session (``ordinal``, default: the next one), not
    a function of the numbers shown, so the same notebook run from the top
    gives the same ids on any machine.
    """
    if not isinstance(payload, dict) or not {"view", "title", "alt", "controls"} <= set(payload):
        raise ValueError("payload debe ser un diccionario con view, title, alt y controls.")
    if ordinal is not None:
        ordinal = checks.non_negative_int(ordinal, "ordinal")
    data = canonical_json(payload)
    uid = f"dldna-{payload['view']}-{next(_ids) if ordinal is None else ordinal}"
    title = html.escape(payload["title"])
    alt = html.escape(payload["alt"])
    return (
        f'<div class="dldna-explorer" id="{uid}" data-dldna-view="{payload["view"]}" '
        f'role="group" aria-label="{title}">\n'
        f'<div class="dldna-fallback"><p><strong>{title}</strong></p><p>{alt}</p>'
        f"<p><em>{FALLBACK}</em></p></div>\n"
        f'<script type="application/json" class="dldna-data">{data}</script>\n'
        "</div>\n"
        f'<script>window.dldnaExplorer && window.dldnaExplorer.mount("{uid}");</script>\n'
    )


def widget_view(widget) -> dict:
    """The ``application/vnd.jupyter.widget-view+json`` data that shows ``widget`` live.

    Written here rather than asked of the widget, because the two ipywidgets
    in use differ: 8 (JupyterLab 4, VS Code) gives widgets a
    ``_repr_mimebundle_``, 7.7 (Colab's, and classic Notebook 6) displays them
    through ``_ipython_display_`` and has no such method. Both front ends read
    the same view data, a model id under protocol version 2.0, so one path
    serves them.
    """
    if not isinstance(getattr(widget, "model_id", None), str):
        raise TypeError(f"widget debe ser un widget de ipywidgets; se recibió {type(widget).__name__}.")
    return {"version_major": 2, "version_minor": 0, "model_id": widget.model_id}


def error_html(title: str, message: str) -> str:
    """A visible, readable box with a Spanish error message (no traceback).

    Styled inline: the live view (Jupyter, Colab) has no stylesheet of ours.
    """
    title, message = _text(title, "title"), _text(message, "message")
    return (
        f'<div class="dldna-error" role="alert" style="{_ERROR_STYLE}">'
        f'<strong style="display:block;margin-bottom:0.2em">{html.escape(title)}: '
        f"no se puede mostrar</strong><span>{html.escape(message)}</span></div>"
    )


def note_html(text: str) -> str:
    """The live view's box for :meth:`Explorer._note`'s text (empty text: nothing).

    Styled inline, like :func:`error_html`; the static view's twin is the
    ``.dldna-note`` paragraph that ``explorer.js`` adds.
    """
    text = _text(text, "text", allow_empty=True)
    if not text:
        return ""
    return (f'<p class="dldna-note" aria-live="polite" style="{_NOTE_STYLE}">'
            f"{html.escape(text)}</p>")


# ------------------------------------------------------------------ explorers


class Explorer:
    """Base class of the explorers (see the module docstring for the two views).

    Subclasses set :attr:`view` (the JavaScript renderer's name) and
    implement :meth:`_make_controls`, :meth:`_figure`, :meth:`_alt` and
    :meth:`_payload`; they may override :meth:`_on_change` to update
    dependent controls, and :meth:`_note` to show a text with the picture.
    Constructors validate their arguments and raise ``ValueError``/``TypeError``
    in Spanish.

    Useful attributes: ``controls`` (name → ipywidget), ``widget`` (the live
    container), ``image`` (the HTML widget with the picture), ``note`` (the
    HTML widget with :meth:`_note`'s text), ``message``
    (the HTML widget with an error message, empty when all is well),
    ``draw_count`` (how many times the live picture was drawn) and ``error``
    (``None``; the message for an :class:`ErrorExplorer`).
    """

    view = ""
    dpi = 80

    def __init__(self, title: str, alt: str):
        self.title = _text(title, "title")
        self.alt = _text(alt, "alt", allow_empty=True)
        self.error: str | None = None
        self.draw_count = 0
        self.last_figure: Figure | None = None
        self._widget = None
        self._html: str | None = None
        self._updating = False
        self.controls: dict[str, Any] = {}

    # -- to implement -------------------------------------------------------
    def _make_controls(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _figure(self, state: dict) -> Figure:  # pragma: no cover - abstract
        raise NotImplementedError

    def _alt(self, state: dict) -> str:
        return self.alt

    def _payload(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _note(self, state: dict) -> str:
        """A short text shown with the picture for ``state`` (empty: none)."""
        return ""

    def _on_change(self, name: str) -> None:
        """Update controls that depend on control ``name`` (before the redraw)."""

    # -- live view ----------------------------------------------------------
    def state(self) -> dict:
        """The current value of every live control."""
        return {name: control.value for name, control in self.controls.items()}

    def figure(self, **overrides) -> Figure:
        """The matplotlib figure for the current state, with ``overrides`` applied.

        Raises ``ValueError`` (Spanish) for a bad state; the live view shows
        that message instead.
        """
        state = self.state() if self._widget is not None else self._initial_state()
        state.update(overrides)
        return self._figure(state)

    def _initial_state(self) -> dict:
        if not self.controls:
            self.controls = self._make_controls()
        return self.state()

    @property
    def widget(self):
        """The live ``ipywidgets`` container (built on first use)."""
        if self._widget is None:
            import ipywidgets as widgets

            if not self.controls:
                self.controls = self._make_controls()
            self.image = widgets.HTML(layout=widgets.Layout(max_width="100%"))
            self.message = widgets.HTML()
            self.note = widgets.HTML()
            header = widgets.HTML(f"<strong>{html.escape(self.title)}</strong>")
            box = widgets.HBox(list(self.controls.values()),
                               layout=widgets.Layout(flex_flow="row wrap"))
            self._widget = widgets.VBox([header, box, self.note, self.message, self.image])
            for name, control in self.controls.items():
                control.observe(lambda change, name=name: self._changed(name), names="value")
            self.redraw()
        return self._widget

    def _changed(self, name: str) -> None:
        if self._updating:
            return
        self._updating = True
        try:
            self._on_change(name)
        except (ValueError, TypeError):
            pass  # the redraw below shows the message
        finally:
            self._updating = False
        self.redraw()

    def redraw(self) -> None:
        """Draw the live picture for the current state (or show the error message)."""
        _ = self.widget  # make sure the controls exist
        state = self.state()
        try:
            fig = self._figure(state)
            # Whatever a reader typed is drawn as typed: a «$» must not start a formula.
            for text in fig.findobj(Text):
                text.set_parse_math(False)
            png = base64.b64encode(style.figure_png(fig, dpi=self.dpi)).decode("ascii")
        except (ValueError, TypeError) as err:
            self._show_message(reader_message(err))
            return
        except Exception:  # noqa: BLE001 - the reader must never see a traceback
            self._show_message(UNEXPECTED)
            return
        self.last_figure = fig
        self.draw_count += 1
        alt = html.escape(self._alt(state))
        self.note.value = note_html(self._note(state))
        self.message.value = ""
        self.image.value = (
            f'<img src="data:image/png;base64,{png}" alt="{alt}" title="{alt}" '
            'style="max-width:100%;height:auto">'
        )
        self.image.layout.display = None

    def _show_message(self, text: str) -> None:
        self.note.value = ""
        self.message.value = error_html(self.title, text)
        self.image.layout.display = "none"

    # -- static view --------------------------------------------------------
    def to_html(self) -> str:
        """The static, self-contained HTML view (deterministic)."""
        if self._html is None:
            payload = self._payload()
            payload.update(view=self.view, title=self.title, alt=self.alt)
            self._html = static_html(payload)
        return self._html

    def _plain(self) -> str:
        return (f"{self.title} (explorador interactivo: se mueve en Jupyter, en Colab y en el "
                "libro en línea)")

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {
            WIDGET_MIME: widget_view(self.widget),
            "text/plain": self._plain(),
            "text/html": self.to_html(),
        }

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.title}>"


class ErrorExplorer(Explorer):
    """What a factory returns for bad input: the Spanish message, in both views."""

    def __init__(self, title: str, message: str):
        super().__init__(title, alt=message)
        self.error = message

    def _make_controls(self) -> dict:
        return {}

    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as widgets

            self.image = widgets.HTML()
            self.message = widgets.HTML(error_html(self.title, self.error))
            self._widget = widgets.VBox([self.message])
        return self._widget

    def redraw(self) -> None:
        pass

    def figure(self, **overrides) -> Figure:
        raise ValueError(self.error)

    def to_html(self) -> str:
        return error_html(self.title, self.error)

    def _plain(self) -> str:
        return f"{self.title}: no se puede mostrar. {self.error}"


def build_or_error(title: str, build: Callable[[], Explorer]) -> Explorer:
    """``build()``, or an :class:`ErrorExplorer` showing the Spanish message of the
    ``ValueError``/``TypeError`` it raised; any other exception shows
    :data:`UNEXPECTED` (never a traceback, never Python's English words).

    The static view is built here too, so that a failure there is caught.
    """
    title = _text(title, "title")
    checks.function(build, "build", "una función sin argumentos que construye el explorador")
    try:
        explorer = build()
        if not isinstance(explorer, Explorer):
            raise TypeError(f"build debe devolver un explorador; devolvió {type(explorer).__name__}.")
        explorer.to_html()
        return explorer
    except (ValueError, TypeError) as err:
        return ErrorExplorer(title, reader_message(err))
    except Exception:  # noqa: BLE001 - the reader must never see a traceback
        return ErrorExplorer(title, UNEXPECTED)
