"""Positional-wave explorer: d_model, base, dimension pairs, a cursor, the kind.

Shows :func:`dldna.viz.positional.positional_panel`: the two waves of each
chosen dimension pair with their wavelengths (``2π·base^(2i/d)`` for the
sinusoidal kind), the position × dimension heatmap and the similarity of the
cursor's encoding with every position.

Kinds come from :data:`dldna.viz.positional.KINDS`; a chapter that registers
a new kind (RoPE, ALiBi...) passes ``kinds=("sinusoidal", "rope")`` and both
views show it without other changes.

Live view: ``d_model`` and ``base`` are typed in boxes (an odd ``d_model`` or
a base ≤ 1 shows the Spanish message until it is fixed); the static view
offers the grid ``d_models`` × ``bases`` (the initial values are added to it).
"""

from __future__ import annotations

from collections.abc import Sequence

from dldna import checks
from dldna.viz import positional as vp
from dldna.widgets import core

DEFAULT_D_MODELS: tuple[int, ...] = (8, 16, 32, 64)
DEFAULT_BASES: tuple[float, ...] = (10.0, 100.0, 1000.0, 10000.0)

ALT = (
    "Arriba, las ondas seno y coseno de los pares de dimensiones elegidos a lo largo de las "
    "posiciones, con su longitud de onda; abajo a la izquierda, el mapa de calor posición × "
    "dimensión de la codificación; abajo a la derecha, la similitud de la posición del cursor "
    "con todas las demás."
)


def default_pairs(d_model: int) -> list[int]:
    """Three contrasting pairs (fast, medium, slow waves), fewer for a small ``d_model``."""
    d_model = checks.positive_int(d_model, "d_model", minimum=2)
    if d_model % 2:
        raise ValueError(f"d_model debe ser par (las dimensiones van por pares); se recibió {d_model}.")
    n = d_model // 2
    return sorted({0, min(1, n - 1), min(2, n - 1)})


def _pair_options(d_model: int) -> list[tuple[str, int]]:
    return [(f"par {i} (dims {2 * i}, {2 * i + 1})", i) for i in range(d_model // 2)]


class PositionalExplorer(core.Explorer):
    """The positional-wave explorer (build it with :func:`positional_explorer`).

    Live controls: ``"kind"`` (name, when there are several), ``"d_model"``,
    ``"base"``, ``"pairs"`` (tuple of pair indices), ``"cursor"``.
    """

    view = "positional"

    def __init__(
        self,
        d_model: int,
        base: float,
        *,
        pairs: Sequence[int] | None,
        cursor: int,
        n_positions: int,
        kinds: Sequence[str],
        d_models: Sequence[int],
        bases: Sequence[float],
        title: str,
    ):
        super().__init__(title, ALT)
        # Types here; the ranges (even d_model, base > 1) in dldna.positional's own messages.
        d_model = checks.integer(d_model, "d_model")
        base = checks.real(base, "base")
        if isinstance(kinds, str) or not isinstance(kinds, (list, tuple)) or not kinds:
            raise ValueError("kinds debe ser una lista no vacía de tipos, p. ej. ('sinusoidal',).")
        # A repeated kind is most likely a slip for another one: say so rather than drop it silently.
        kinds = [checks.text(k, "Cada tipo de kinds") for k in kinds]  # a dict or None: not a kind
        repeated = [k for i, k in enumerate(kinds) if k in kinds[:i]]
        if repeated:
            raise ValueError(f"kinds repite {repeated[0]!r}: cada tipo va una sola vez (¿querías otro? "
                             f"tipos: {', '.join(map(repr, vp.KINDS))}).")
        self.kinds = list(kinds)
        self.n_positions = checks.positive_int(n_positions, "n_positions")
        # Validate the initial values (Spanish messages from dldna.positional).
        self._cache: dict = {}
        self.data(self.kinds[0], d_model, base)
        self.pairs = vp.check_pairs(default_pairs(d_model) if pairs is None else pairs, d_model)
        vp._check_cursor(cursor, self.n_positions)
        for kind in self.kinds[1:]:
            self.data(kind, d_model, base)
        d_models = checks.sequence(d_models, "d_models", checks.integer, minimum=0)
        bases = checks.sequence(bases, "bases", checks.real, minimum=0)
        self.d_models = sorted(set(d_models) | {int(d_model)})
        self.bases = sorted(set(bases) | {float(base)})
        for d in self.d_models:
            for b in self.bases:
                vp.positional_data(self.kinds[0], 2, d, b)  # check the grid early
        self.initial = {"kind": self.kinds[0], "d_model": int(d_model), "base": float(base),
                        "pairs": tuple(self.pairs), "cursor": int(cursor)}

    def data(self, kind: str, d_model: int, base: float):
        """:class:`~dldna.viz.positional.PositionalData`, cached."""
        d_model, base = checks.integer(d_model, "d_model"), checks.real(base, "base")
        if kind not in self.kinds:
            raise ValueError(f"El tipo {kind!r} no está entre los del explorador: {', '.join(self.kinds)}.")
        key = (kind, d_model, base)
        if key not in self._cache:
            self._cache[key] = vp.positional_data(kind, self.n_positions, d_model, base)
        return self._cache[key]

    # -- live ----------------------------------------------------------------
    def _make_controls(self) -> dict:
        import ipywidgets as w

        init = self.initial
        wide = {"description_width": "initial"}
        controls: dict = {}
        if len(self.kinds) > 1:
            controls["kind"] = w.Dropdown(
                options=[(vp.KINDS[k].label, k) for k in self.kinds], value=init["kind"],
                description="Tipo:")
        controls["d_model"] = w.IntText(value=init["d_model"], description="d_model:",
                                        layout=w.Layout(width="11em"), style=wide)
        controls["base"] = w.FloatText(value=init["base"], description="base:",
                                       layout=w.Layout(width="12em"), style=wide)
        controls["pairs"] = w.SelectMultiple(options=_pair_options(init["d_model"]),
                                             value=init["pairs"], rows=4,
                                             description="Pares:", style=wide)
        controls["cursor"] = w.IntSlider(value=init["cursor"], min=0, max=self.n_positions - 1,
                                         description="Cursor (posición):",
                                         continuous_update=False, style=wide)
        return controls

    def _on_change(self, name: str) -> None:
        if name != "d_model":
            return
        d = self.controls["d_model"].value
        if not isinstance(d, int) or d < 2 or d % 2:
            return  # the redraw shows the message
        pairs = self.controls["pairs"]
        kept = tuple(i for i in pairs.value if i < d // 2) or tuple(default_pairs(d))
        pairs.options = _pair_options(d)
        pairs.value = kept

    def _state(self, state: dict):
        kind = state.get("kind", self.kinds[0])
        data = self.data(kind, state["d_model"], state["base"])
        pairs = vp.check_pairs(state["pairs"], data.d_model)
        vp._check_cursor(state["cursor"], self.n_positions)
        return data, pairs, int(state["cursor"])

    def _figure(self, state: dict):
        data, pairs, cursor = self._state(state)
        return vp.positional_panel(data, pairs, cursor,
                                   title=f"{self.title} — codificación {data.label}")

    def _alt(self, state: dict) -> str:
        data, pairs, p = self._state(state)
        sim = data.similarity[p]
        return (f"{ALT} Estado: {data.label}, d_model = {data.d_model}, base = {data.base:g}, "
                f"cursor en la posición {p}; pares mostrados: {', '.join(map(str, pairs))}; la "
                f"similitud con la posición {p} vale {sim[min(p + 1, len(sim) - 1)]:.2f} en la "
                f"posición vecina y {sim[-1]:.2f} en la última.")

    # -- static --------------------------------------------------------------
    def _payload(self) -> dict:
        kinds = []
        for kind in self.kinds:
            grid = []
            sample = None
            for d in self.d_models:
                row = []
                for b in self.bases:
                    data = self.data(kind, d, b)
                    sample = data
                    row.append({
                        "table": core.pack(data.table, 8, *data.value_range),
                        "similarity": core.pack(data.similarity, 8, *data.similarity_range),
                        "wavelengths": None if data.wavelengths is None else [
                            vp.format_wavelength(float(v)) for v in data.wavelengths],
                    })
                grid.append(row)
            kinds.append({
                "name": kind, "label": sample.label, "grid": grid,
                "value_label": sample.value_label, "column_label": sample.column_label,
                "similarity_label": sample.similarity_label,
                "wave_labels": list(sample.wave_labels),
                "value_range": list(sample.value_range),
                "similarity_range": list(sample.similarity_range),
            })
        init = self.initial
        controls = []
        if len(self.kinds) > 1:
            controls.append({"name": "kind", "label": "Tipo", "type": "select",
                             "options": core.options(range(len(self.kinds)),
                                                     [vp.KINDS[k].label for k in self.kinds]),
                             "value": 0})
        controls += [
            {"name": "d_model", "label": "d_model", "type": "select",
             "options": core.options(range(len(self.d_models)), self.d_models),
             "value": self.d_models.index(init["d_model"])},
            {"name": "base", "label": "base", "type": "select",
             "options": core.options(range(len(self.bases)), [f"{b:g}" for b in self.bases]),
             "value": self.bases.index(init["base"])},
            {"name": "pairs", "label": "Pares", "type": "multi",
             "options_by": {"on": "d_model", "map": {
                 str(i): [[v, lab] for lab, v in _pair_options(d)]
                 for i, d in enumerate(self.d_models)}},
             "value": list(init["pairs"])},
            {"name": "cursor", "label": "Cursor (posición)", "type": "range",
             "options": core.options(range(self.n_positions)), "value": init["cursor"]},
        ]
        return {
            "kinds": kinds,
            "n_positions": self.n_positions,
            "d_models": self.d_models,
            "bases": [f"{b:g}" for b in self.bases],
            "controls": controls,
        }


def positional_explorer(
    d_model: int = 16,
    base: float = 10000.0,
    *,
    pairs: Sequence[int] | None = None,
    cursor: int = 0,
    n_positions: int = 48,
    kinds: Sequence[str] = ("sinusoidal",),
    d_models: Sequence[int] = DEFAULT_D_MODELS,
    bases: Sequence[float] = DEFAULT_BASES,
    title: str = "Explorador de la codificación posicional",
) -> core.Explorer:
    """Explore positional encodings.

    Args:
        d_model: even, ≥ 2. base: > 1 (10000 in the original paper).
        pairs: dimension pairs whose waves are drawn (default: 0, 1, 2).
        cursor: the position compared with every other one.
        n_positions: how many positions (rows of the heatmap).
        kinds: registered kinds (:data:`dldna.viz.positional.KINDS`), each once.
        d_models, bases: the values offered by the static view.

    Bad input (odd ``d_model``, ``base`` ≤ 1, a pair out of range...) gives
    an explorer that shows the Spanish message (attribute ``error``).
    """
    return core.build_or_error(title, lambda: PositionalExplorer(
        d_model, base, pairs=pairs, cursor=cursor, n_positions=n_positions, kinds=kinds,
        d_models=d_models, bases=bases, title=title))
