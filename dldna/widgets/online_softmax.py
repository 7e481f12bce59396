"""Online-softmax explorer: step through the key tiles of one query, as FlashAttention reads them.

The numbers come from :func:`dldna.viz.online_softmax.online_softmax_steps`
(:func:`dldna.online_softmax.online_attention` with ``trace=True``) and the
picture from :func:`dldna.viz.online_softmax.online_softmax_panel`: the scores
read so far, the running maximum ``m``, the rescaled sum ``l`` and the output
``acc / l`` after each tile, against the output of the full softmax.
"""

from __future__ import annotations

from collections.abc import Sequence

from dldna import checks
from dldna.viz import online_softmax as vo
from dldna.widgets import core

ALT = ("Puntuaciones de una consulta sobre sus claves, leídas por teselas, con el máximo acumulado, "
       "la suma reescalada y la salida parcial tras cada tesela frente a la salida final.")


class OnlineSoftmaxExplorer(core.Explorer):
    """Explorer of the online softmax (build it with :func:`online_softmax_explorer`).

    Live controls: ``"tile"`` (keys per tile) and ``"step"`` (tiles read).
    """

    view = "online_softmax"

    def __init__(self, tile: int, *, tiles: Sequence[int], n_keys: int, d_v: int, seed: int, title: str):
        super().__init__(title, ALT)
        n_keys = checks.positive_int(n_keys, "n_keys", minimum=2)
        if isinstance(tiles, (str, bytes)) or not isinstance(tiles, Sequence) or not tiles:
            raise TypeError("tiles debe ser una lista no vacía de tamaños de tesela, p. ej. (2, 3, 4, 6).")
        sizes = sorted({checks.positive_int(t, "tile") for t in [*tiles, tile]})
        if sizes[-1] > n_keys:
            raise ValueError(f"Una tesela no puede tener más claves ({sizes[-1]}) que la consulta "
                             f"(n_keys = {n_keys}).")
        self.tiles, self.n_keys = sizes, n_keys
        self._steps = {t: vo.online_softmax_steps(n_keys, d_v, t, seed) for t in sizes}
        self.initial = {"tile": int(tile), "step": 1}

    def steps(self, tile: int) -> dict:
        """The precomputed states for one tile size."""
        if isinstance(tile, bool) or not isinstance(tile, int) or tile not in self._steps:
            raise ValueError(f"tile = {tile!r} no está entre los tamaños calculados: "
                             f"{', '.join(map(str, self.tiles))}.")
        return self._steps[tile]

    def _n_tiles(self, tile: int) -> int:
        return len(self.steps(tile)["m"])

    def _make_controls(self) -> dict:
        import ipywidgets as w

        return {
            "tile": w.SelectionSlider(options=[(str(t), t) for t in self.tiles], value=self.initial["tile"],
                                      description="tesela:", continuous_update=False),
            "step": w.IntSlider(value=1, min=1, max=self._n_tiles(self.initial["tile"]),
                                description="teselas leídas:", continuous_update=False,
                                style={"description_width": "initial"}),
        }

    def _on_change(self, name: str) -> None:
        if name == "tile":
            # As the static view does: a step beyond the new number of tiles goes back to the first.
            step, n_tiles = self.controls["step"], self._n_tiles(self.controls["tile"].value)
            if step.value > n_tiles:
                step.value = 1
            step.max = n_tiles

    def _figure(self, state: dict):
        step = checks.positive_int(state["step"], "step (teselas leídas)")
        return vo.online_softmax_panel(self.steps(state["tile"]), min(step, self._n_tiles(state["tile"])))

    def _describe(self, tile: int, step: int) -> str:
        s = self.steps(tile)
        step = checks.positive_int(step, "step (teselas leídas)")
        k = step - 1
        return (f"teselas de {tile} claves, {step} de {len(s['m'])} leídas (claves 0 a {s['stops'][k] - 1}); "
                f"m = {s['m'][k]:.2f}, l = {s['l'][k]:.3f}; salida parcial "
                f"{', '.join(f'{v:.2f}' for v in s['output'][k])}; salida final "
                f"{', '.join(f'{v:.2f}' for v in s['final'])}")

    def _alt(self, state: dict) -> str:
        return f"{ALT} Estado: {self._describe(state['tile'], state['step'])}."

    def _note(self, state: dict) -> str:
        return self._describe(state["tile"], min(state["step"], self._n_tiles(state["tile"]))) + "."

    def _payload(self) -> dict:
        first = self._steps[self.tiles[0]]
        cases = {}
        for t in self.tiles:
            s = self._steps[t]
            cases[str(t)] = {"starts": s["starts"].tolist(), "stops": s["stops"].tolist(),
                             "m": core.rounded(s["m"], 4), "l": core.rounded(s["l"], 4),
                             "output": core.rounded(s["output"], 4)}
        return {
            "scores": core.rounded(first["scores"], 4),
            "final": core.rounded(first["final"], 4),
            "tiles": self.tiles,
            "cases": cases,
            "controls": [
                {"name": "tile", "label": "tesela", "type": "range",
                 "options": core.options(self.tiles), "value": self.initial["tile"]},
                {"name": "step", "label": "teselas leídas", "type": "range",
                 "options_by": {"on": "tile", "map": {
                     str(t): core.options(range(1, self._n_tiles(t) + 1)) for t in self.tiles}},
                 "value": 1},
            ],
        }


def online_softmax_explorer(
    tile: int = 4,
    *,
    tiles: Sequence[int] = (2, 3, 4, 6, 12),
    n_keys: int = 12,
    d_v: int = 3,
    seed: int = 10,
    title: str = "Softmax en línea, tesela a tesela",
) -> core.Explorer:
    """Step through the tiles of one query's ``n_keys`` keys (random scores and
    ``d_v``-dimensional values drawn with ``seed``), for each tile size of
    ``tiles`` (``tile`` is the first shown and is added if missing). Bad input
    gives an explorer that shows the Spanish message.
    """
    return core.build_or_error(title, lambda: OnlineSoftmaxExplorer(
        tile, tiles=tiles, n_keys=n_keys, d_v=d_v, seed=seed, title=title))
