"""Attention-map explorer: which query, softmax temperature, and for a model
layer, head and kind of attention.

Two ways in, one explorer:

* :func:`attention_explorer` ``(sentence, vectors)``: self-attention of the
  tokens' own vectors, ``softmax(X Xᵀ / sqrt(d) / T)``;
* :func:`model_attention_explorer` ``(maps)``: weights a model already
  produced, one :class:`AttentionMaps` per kind (``"encoder"``,
  ``"decoder"``, ``"cross"``), or one per sentence or prompt of the same
  model (the dropdown's label is then ``kind_label``, e.g. «Comienzo»). The
  temperature re-applies the softmax to them
  (:func:`dldna.viz.attention.retemper`). Each map may carry a ``caption``
  (shown with it: the model's predictions for that prompt, say) and the
  ``query`` selected when the reader switches to it (the position that
  predicts).

Both show :func:`dldna.viz.attention.attention_panel`: the heatmap with token
labels (masked cells grey and hatched), the chosen query's row as bars and
the entropy of every row. See :mod:`dldna.widgets.core` for the live and the
static views. Bad input gives an explorer that shows a Spanish message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dldna import checks
from dldna.viz import attention as va
from dldna.widgets import core

#: Temperatures offered by the slider (the same in the live and static views).
DEFAULT_TEMPERATURES: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0)

#: Spanish names of the kinds of attention of an encoder-decoder Transformer.
KIND_LABELS: dict[str, str] = {
    "encoder": "autoatención del codificador",
    "decoder": "autoatención del decodificador",
    "cross": "atención cruzada (decodificador → codificador)",
}

ALT = (
    "Mapa de calor de los pesos de atención (consultas en filas, claves en columnas; las "
    "celdas enmascaradas aparecen en gris rayado), barras con los pesos de la consulta "
    "elegida y barras con la entropía de cada fila."
)
_MAX_VALUES = 400_000


@dataclass(frozen=True)
class AttentionMaps:
    """Weights of one kind of attention of a model, ready for the explorer.

    ``weights``: ``(layers, heads, q_len, k_len)``; ``(heads, q_len, k_len)``
    or ``(q_len, k_len)`` are read as one layer / one head. ``k_tokens``
    defaults to ``q_tokens`` (self-attention). ``mask`` is boolean,
    broadcastable to ``(q_len, k_len)``, ``True`` = may attend.

    ``caption``: a short text shown with these weights in both views (e.g.
    the model's top predictions, «película 0.94 · obra 0.02»). ``query``: the
    query index selected when the reader chooses these weights (e.g. the last
    position of a prompt, or the masked one); ``None`` keeps the reader's
    query. Both are checked by :func:`model_attention_explorer`.
    """

    weights: Any
    q_tokens: Sequence[str]
    k_tokens: Sequence[str] | None = None
    mask: Any = None
    caption: str | None = None
    query: int | None = None


@dataclass
class _Source:
    label: str
    q_tokens: list[str]
    k_tokens: list[str]
    mask: np.ndarray | None
    weights: np.ndarray  # (temperatures, layers, heads, q, k)
    entropy: np.ndarray  # (temperatures, layers, heads, q)
    max_entropy: np.ndarray  # (q,)
    caption: str | None = None
    query: int | None = None  # selected when the reader chooses this source

    @property
    def layers(self) -> int:
        return self.weights.shape[1]

    @property
    def heads(self) -> int:
        return self.weights.shape[2]


def _check_temperatures(temperatures, temperature) -> tuple[float, ...]:
    # Types here; the range (positive) below, with the message the explorer always gave.
    given = checks.sequence(temperatures, "temperatures (las temperaturas)", checks.real, minimum=0)
    temperature = checks.real(temperature, "temperature (la temperatura)")
    values = sorted(set(given) | {temperature})
    for t in values:
        if not np.isfinite(t) or t <= 0:
            raise ValueError(
                f"Las temperaturas deben ser números positivos y finitos; se recibió {t!r}."
            )
    return tuple(values)


def _check_index(value, count: int, what: str, plural: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not (
        0 <= value < count
    ):
        raise ValueError(
            f"{what} {value!r} no existe: hay {count} {plural} (índices 0 a {count - 1})."
        )
    return int(value)


def _check_extras(item: AttentionMaps, name: str, q_len: int) -> tuple[str | None, int | None]:
    """``item``'s caption and query, checked (``q_len``: its number of queries)."""
    caption = item.caption
    if caption is not None:
        caption = checks.text(caption, f"El texto (caption) de maps[{name!r}]").strip()
    query = item.query
    if query is not None:
        query = checks.non_negative_int(query, f"La consulta (query) de maps[{name!r}]")
        if query >= q_len:
            raise ValueError(
                f"La consulta (query) de maps[{name!r}] es {query}, pero esos pesos tienen "
                f"{q_len} consultas (índices 0 a {q_len - 1})."
            )
    return caption, query


def _source(label: str, q_tokens, k_tokens, mask, per_temperature: np.ndarray,
            caption: str | None = None, query: int | None = None) -> _Source:
    """``per_temperature``: ``(T, layers, heads, q, k)``."""
    entropy = np.stack([
        np.stack([
            np.stack([va.row_entropy(per_temperature[t, l, h], mask)
                      for h in range(per_temperature.shape[2])])
            for l in range(per_temperature.shape[1])
        ])
        for t in range(per_temperature.shape[0])
    ])
    return _Source(label, q_tokens, k_tokens, mask, per_temperature, entropy,
                   va.max_entropy(mask, per_temperature.shape[-2:]), caption, query)


class AttentionExplorer(core.Explorer):
    """The attention-map explorer (build it with :func:`attention_explorer` or
    :func:`model_attention_explorer`).

    Live controls (``self.controls``): ``"query"`` (index), ``"temperature"``
    (float), and when there is more than one: ``"kind"`` (index into
    :attr:`sources`, labelled ``kind_label``), ``"layer"``, ``"head"``.
    Choosing a kind whose source has a ``query`` selects that query; its
    ``caption`` is shown with the picture.
    """

    view = "attention"

    def __init__(
        self,
        sources: list[_Source],
        temperatures: Sequence[float],
        *,
        title: str,
        temperature: float = 1.0,
        query: int = 0,
        kind: int = 0,
        layer: int = 0,
        head: int = 0,
        kind_label: str = "Tipo de atención",
    ):
        super().__init__(title, ALT)
        self.sources = sources
        self.temperatures = tuple(temperatures)
        self.kind_label = kind_label
        self.initial = {"kind": kind, "layer": layer, "head": head, "query": query,
                        "temperature": float(temperature)}
        src = sources[kind]
        _check_index(layer, src.layers, "La capa", "capas")
        _check_index(head, src.heads, "La cabeza", "cabezas")
        _check_index(query, len(src.q_tokens), "La consulta", "consultas")

    # -- live ----------------------------------------------------------------
    def _make_controls(self) -> dict:
        import ipywidgets as w

        init = self.initial
        src = self.sources[init["kind"]]
        controls: dict = {}
        wide = {"description_width": "initial"}
        if len(self.sources) > 1:
            controls["kind"] = w.Dropdown(
                options=[(s.label, i) for i, s in enumerate(self.sources)], value=init["kind"],
                description=f"{self.kind_label}:", style=wide)
        if max(s.layers for s in self.sources) > 1:
            controls["layer"] = w.Dropdown(options=self._layer_options(src), value=init["layer"],
                                           description="Capa:")
        if max(s.heads for s in self.sources) > 1:
            controls["head"] = w.Dropdown(options=self._head_options(src), value=init["head"],
                                          description="Cabeza:")
        controls["query"] = w.Dropdown(options=self._query_options(src), value=init["query"],
                                       description="Consulta:")
        controls["temperature"] = w.SelectionSlider(
            options=[(f"{t:g}", t) for t in self.temperatures], value=init["temperature"],
            description="Temperatura:", continuous_update=False, style=wide)
        return controls

    @staticmethod
    def _query_options(src: _Source):
        return [(f"{i}: {tok}", i) for i, tok in enumerate(src.q_tokens)]

    @staticmethod
    def _layer_options(src: _Source):
        return [(f"capa {i}", i) for i in range(src.layers)]

    @staticmethod
    def _head_options(src: _Source):
        return [(f"cabeza {i}", i) for i in range(src.heads)]

    def _on_change(self, name: str) -> None:
        if name != "kind":
            return
        src = self.sources[self.controls["kind"].value]
        for key, opts in (("query", self._query_options(src)),
                          ("layer", self._layer_options(src)),
                          ("head", self._head_options(src))):
            if key in self.controls:
                old = self.controls[key].value
                self.controls[key].options = opts
                self.controls[key].value = old if old < len(opts) else 0
        if src.query is not None:
            self.controls["query"].value = src.query

    def _note(self, state: dict) -> str:
        return self._resolve(state)[0].caption or ""

    def _resolve(self, state: dict):
        src = self.sources[_check_index(state.get("kind", 0), len(self.sources), "El tipo de atención",
                                        "tipos")]
        layer = _check_index(state.get("layer", 0), src.layers, "La capa", "capas")
        head = _check_index(state.get("head", 0), src.heads, "La cabeza", "cabezas")
        query = _check_index(state["query"], len(src.q_tokens), "La consulta", "consultas")
        t = checks.real(state["temperature"], "La temperatura")
        if t not in self.temperatures:
            raise ValueError(
                f"La temperatura {t:g} no está entre las calculadas: "
                f"{', '.join(f'{x:g}' for x in self.temperatures)}."
            )
        return src, layer, head, query, self.temperatures.index(t)

    def _describe(self, src: _Source, layer: int, head: int, t_index: int) -> str:
        parts = []
        if len(self.sources) > 1:
            parts.append(src.label)
        if src.layers > 1:
            parts.append(f"capa {layer}")
        if src.heads > 1:
            parts.append(f"cabeza {head}")
        parts.append(f"temperatura {self.temperatures[t_index]:g}")
        return ", ".join(parts)

    def weights(self, **state) -> np.ndarray:
        """The ``(q_len, k_len)`` weights shown for ``state`` (defaults: current state)."""
        full = {**self.initial, **(self.state() if self._widget is not None else {}), **state}
        src, layer, head, _, t = self._resolve(full)
        return src.weights[t, layer, head]

    def _figure(self, state: dict):
        src, layer, head, query, t = self._resolve(state)
        return va.attention_panel(
            src.weights[t, layer, head], src.q_tokens, src.k_tokens, query=query, mask=src.mask,
            title=f"{self.title} — {self._describe(src, layer, head, t)}")

    def _alt(self, state: dict) -> str:
        src, layer, head, query, t = self._resolve(state)
        row = src.weights[t, layer, head, query]
        cells = [
            f"{tok} {'enmascarada' if src.mask is not None and not src.mask[query, j] else f'{v:.2f}'}"
            for j, (tok, v) in enumerate(zip(src.k_tokens, row, strict=True))
        ]
        caption = f"; {src.caption}" if src.caption else ""
        return (f"{ALT} Estado: {self._describe(src, layer, head, t)}{caption}; consulta "
                f"«{src.q_tokens[query]}»: pesos {', '.join(cells)}; entropía "
                f"{src.entropy[t, layer, head, query]:.2f} nats.")

    # -- static --------------------------------------------------------------
    def _payload(self) -> dict:
        total = sum(s.weights.size for s in self.sources)
        if total > _MAX_VALUES:
            raise ValueError(
                f"Demasiados pesos para la vista estática ({total}); usa menos capas, cabezas, "
                "palabras o temperaturas."
            )
        bits = 16 if total <= _MAX_VALUES // 4 else 8
        sources = []
        for s in self.sources:
            # Only the keys a source uses: the stored outputs of the chapters stay the same.
            extra = {} if s.caption is None else {"caption": s.caption}
            sources.append({
                **extra,
                "label": s.label,
                "q_tokens": s.q_tokens,
                "k_tokens": s.k_tokens,
                "layers": s.layers,
                "heads": s.heads,
                "mask": None if s.mask is None else [
                    "".join("1" if v else "0" for v in row) for row in s.mask],
                "w": core.pack(s.weights, bits=bits, lo=0.0, hi=1.0),
                "entropy": core.rounded(s.entropy, 3),
                "max_entropy": core.rounded(s.max_entropy, 3),
            })
        init = self.initial
        controls = []
        if len(self.sources) > 1:
            controls.append({"name": "kind", "label": self.kind_label, "type": "select",
                             "options": core.options(range(len(self.sources)),
                                                     [s.label for s in self.sources]),
                             "value": init["kind"]})

        def by_kind(make):
            return {"on": "kind", "map": {str(i): [list(o[::-1]) for o in make(s)]
                                          for i, s in enumerate(self.sources)}}

        for name, label, make, needed in (
            ("layer", "Capa", self._layer_options, max(s.layers for s in self.sources) > 1),
            ("head", "Cabeza", self._head_options, max(s.heads for s in self.sources) > 1),
            ("query", "Consulta", self._query_options, True),
        ):
            if not needed:
                continue
            ctrl = {"name": name, "label": label, "type": "select", "value": init[name]}
            if len(self.sources) > 1:
                ctrl["options_by"] = by_kind(make)
            else:
                ctrl["options"] = [list(o[::-1]) for o in make(self.sources[0])]
            chosen = {str(i): s.query for i, s in enumerate(self.sources) if s.query is not None}
            if name == "query" and len(self.sources) > 1 and chosen:
                ctrl["value_by"] = {"on": "kind", "map": chosen}
            controls.append(ctrl)
        controls.append({
            "name": "temperature", "label": "Temperatura", "type": "range",
            "options": core.options(range(len(self.temperatures)),
                                    [f"{t:g}" for t in self.temperatures]),
            "value": self.temperatures.index(init["temperature"]),
        })
        return {
            "sources": sources,
            "temperatures": [f"{t:g}" for t in self.temperatures],
            "controls": controls,
        }


def attention_explorer(
    sentence: str | Sequence[str],
    vectors,
    *,
    mask=None,
    temperatures: Sequence[float] = DEFAULT_TEMPERATURES,
    temperature: float = 1.0,
    query: int = 0,
    title: str = "Explorador de atención",
) -> core.Explorer:
    """Explore the self-attention of a sentence's token vectors.

    Args:
        sentence: a text (split on white space) or a list of tokens, ``n`` of them.
        vectors: ``(n, d)``, one vector per token (tensor, array or lists).
        mask: boolean, broadcastable to ``(n, n)``, ``True`` = may attend.
        temperatures: the values of the temperature slider; ``temperature``
            (the initial one) is added if missing.
        query: the initially selected query token.

    Returns an explorer to display (last expression of a cell). With bad
    input, the explorer shows the Spanish message instead of a picture; its
    ``error`` attribute holds it.
    """
    def build():
        tokens = va.tokens_from(sentence)
        x = va.as_matrix(vectors, "vectors")
        if x.shape[0] != len(tokens):
            raise ValueError(
                f"Hay {len(tokens)} palabras pero {x.shape[0]} vectores: debe haber exactamente "
                "un vector (una fila) por palabra."
            )
        m = va.as_mask(mask, (len(tokens), len(tokens)))
        temps = _check_temperatures(temperatures, temperature)
        per_t = np.stack([va.self_attention_weights(x, t, m) for t in temps])
        src = _source("autoatención", tokens, tokens, m, per_t[:, None, None])
        return AttentionExplorer([src], temps, title=title, temperature=temperature,
                                 query=query)

    return core.build_or_error(title, build)


def model_attention_explorer(
    maps: Mapping[str, AttentionMaps],
    *,
    temperatures: Sequence[float] = DEFAULT_TEMPERATURES,
    temperature: float = 1.0,
    kind: str | None = None,
    layer: int = 0,
    head: int = 0,
    query: int | None = None,
    title: str = "Explorador de atención del modelo",
    kind_label: str = "Tipo de atención",
) -> core.Explorer:
    """Explore weights a model produced, by kind, layer, head, query and temperature.

    Args:
        maps: kind → :class:`AttentionMaps`. Kinds ``"encoder"``, ``"decoder"``
            and ``"cross"`` get Spanish names (:data:`KIND_LABELS`); any other
            key is shown as written (a prompt, a sentence with ``[MASK]``...).
            A map's ``caption`` is shown with it; its ``query`` is selected
            when the reader chooses it.
        kind: the kind shown first (default: the first of ``maps``).
        layer, head: initial indices (checked against the weights).
        query: the initial query; default: the ``query`` of the first kind's
            map, or 0.
        kind_label: the label of the dropdown that chooses among ``maps``
            (e.g. «Comienzo» when each map is a prompt).

    Bad input (no maps, wrong shapes, a head out of range...) gives an
    explorer that shows the Spanish message.

    Example (one map per prompt, each with its predictions)::

        model_attention_explorer(
            {"ana va al cine …": AttentionMaps(w, tokens, mask=causal,
                                               caption="película 0.94 · obra 0.02", query=8)},
            kind_label="Comienzo")
    """
    def build():
        label = checks.text(kind_label, "kind_label (la etiqueta del menú de tipos)")
        if not isinstance(maps, Mapping) or not maps:
            raise ValueError(
                "Hace falta al menos un tipo de atención: un diccionario como "
                "{'encoder': AttentionMaps(pesos, tokens)}."
            )
        temps = _check_temperatures(temperatures, temperature)
        names = list(maps)
        if kind is not None and kind not in maps:
            raise ValueError(
                f"El tipo de atención {kind!r} no está entre los dados: {', '.join(names)}."
            )
        sources = []
        for name in names:
            item = maps[name]
            if not isinstance(item, AttentionMaps):
                raise TypeError(
                    f"maps[{name!r}] debe ser un AttentionMaps(pesos, tokens...); "
                    f"se recibió {type(item).__name__}."
                )
            raw = np.asarray(
                item.weights.detach().cpu().double().numpy()
                if hasattr(item.weights, "detach") else item.weights, dtype=np.float64)
            if raw.ndim not in (2, 3, 4):
                raise ValueError(
                    f"Los pesos de {name!r} deben tener forma (capas, cabezas, consultas, claves), "
                    f"(cabezas, consultas, claves) o (consultas, claves); tienen "
                    f"{tuple(raw.shape)}."
                )
            w = raw.reshape((1,) * (4 - raw.ndim) + raw.shape)
            va.as_matrix(w.reshape(-1, w.shape[-1]), f"pesos de {name!r}")
            q_tokens = va.tokens_from(item.q_tokens)
            k_tokens = va.tokens_from(item.k_tokens) if item.k_tokens is not None else q_tokens
            if w.shape[-2:] != (len(q_tokens), len(k_tokens)):
                raise ValueError(
                    f"Los pesos de {name!r} tienen {w.shape[-2]} consultas × {w.shape[-1]} claves, "
                    f"pero hay {len(q_tokens)} tókenes de consulta y {len(k_tokens)} de clave."
                )
            m = va.as_mask(item.mask, w.shape[-2:])
            caption, chosen = _check_extras(item, name, len(q_tokens))
            per_t = np.stack([va.retemper(w, t, m) for t in temps])
            sources.append(_source(KIND_LABELS.get(name, name), q_tokens, k_tokens, m, per_t,
                                   caption, chosen))
        first = names.index(kind) if kind is not None else 0
        start = query if query is not None else sources[first].query or 0
        return AttentionExplorer(sources, temps, title=title, temperature=temperature,
                                 kind=first, layer=layer, head=head, query=start,
                                 kind_label=label)

    return core.build_or_error(title, build)
