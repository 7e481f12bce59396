"""Scaling explorer: change ``d_k`` and the switch «divide by √d_k» and watch the
attention weights of random queries stay soft or collapse onto one key.

The numbers come from :func:`dldna.viz.attention.random_attention` (queries
and keys drawn with a fixed seed) and the picture from
:func:`dldna.viz.attention.scaling_panel`: heatmap of the weights, the
largest weight and the entropy of each query, and the standard deviation of
the scores in the title (about ``sqrt(d_k)`` without the division, about 1
with it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dldna import checks
from dldna.viz import attention as va
from dldna.widgets import core

DEFAULT_D_KS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)

ALT = (
    "Mapa de calor de los pesos de atención de consultas aleatorias sobre claves aleatorias, "
    "con barras del peso máximo y de la entropía de cada consulta."
)


class ScalingExplorer(core.Explorer):
    """Explorer of the √d_k scaling (build it with :func:`scaling_explorer`).

    Live controls: ``"d_k"`` (int) and ``"scaled"`` (bool).
    """

    view = "scaling"

    def __init__(self, d_k: int, scaled: bool, *, d_ks: Sequence[int], n_queries: int,
                 n_keys: int, seed: int, title: str):
        super().__init__(title, ALT)
        if not isinstance(scaled, (bool, np.bool_)):
            raise TypeError(f"«scaled» debe ser True o False; se recibió {scaled!r}.")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"La semilla debe ser un entero no negativo; se recibió {seed!r}.")
        d_k = checks.positive_int(d_k, "d_k")
        d_ks = checks.sequence(d_ks, "d_ks (los valores de d_k)", checks.positive_int)
        self.n_queries, self.n_keys, self.seed = n_queries, n_keys, int(seed)
        self._results = {}
        # random_attention checks every d_k (and n_queries, n_keys) with a Spanish message.
        for d in [d_k, *d_ks]:
            for s in (False, True):
                self._results[d, s] = va.random_attention(d, s, n_queries=n_queries,
                                                          n_keys=n_keys, seed=self.seed)
        self.d_ks = sorted({int(d) for d in d_ks} | {int(d_k)})
        self.initial = {"d_k": int(d_k), "scaled": bool(scaled)}

    def result(self, d_k: int, scaled: bool) -> dict:
        """:func:`~dldna.viz.attention.random_attention` for one setting (precomputed)."""
        scaled = checks.boolean(scaled, "scaled")
        if isinstance(d_k, bool) or (d_k, scaled) not in self._results:
            raise ValueError(
                f"d_k = {d_k!r} no está entre los valores calculados: "
                f"{', '.join(map(str, self.d_ks))}."
            )
        return self._results[d_k, bool(scaled)]

    def _make_controls(self) -> dict:
        import ipywidgets as w

        return {
            "d_k": w.SelectionSlider(options=[(str(d), d) for d in self.d_ks],
                                     value=self.initial["d_k"], description="d_k:",
                                     continuous_update=False),
            "scaled": w.Checkbox(value=self.initial["scaled"], description="dividir entre √d_k",
                                 indent=False),
        }

    def _figure(self, state: dict):
        return va.scaling_panel(self.result(state["d_k"], state["scaled"]), title=self.title)

    def _alt(self, state: dict) -> str:
        r = self.result(state["d_k"], state["scaled"])
        how = "dividiendo entre √d_k" if r["scaled"] else "sin dividir entre √d_k"
        return (f"{ALT} Estado: d_k = {r['d_k']}, {how}; desviación típica de las puntuaciones "
                f"{r['score_std']:.2f}; peso máximo por consulta "
                f"{', '.join(f'{v:.2f}' for v in r['max_weight'])}; entropía por consulta "
                f"{', '.join(f'{v:.2f}' for v in r['entropy'])} nats.")

    def _payload(self) -> dict:
        weights = np.stack([np.stack([self._results[d, s]["weights"] for s in (False, True)])
                            for d in self.d_ks])
        pick = lambda key: [[core.rounded(self._results[d, s][key], 3)  # noqa: E731
                             for s in (False, True)] for d in self.d_ks]
        return {
            "d_ks": self.d_ks,
            "n_queries": self.n_queries,
            "n_keys": self.n_keys,
            "w": core.pack(weights, 16, 0.0, 1.0),
            "max_weight": pick("max_weight"),
            "entropy": pick("entropy"),
            "score_std": pick("score_std"),
            "max_entropy": round(float(np.log(self.n_keys)), 4),
            "controls": [
                {"name": "d_k", "label": "d_k", "type": "range",
                 "options": core.options(range(len(self.d_ks)), self.d_ks),
                 "value": self.d_ks.index(self.initial["d_k"])},
                {"name": "scaled", "label": "dividir entre √d_k", "type": "toggle",
                 "value": self.initial["scaled"]},
            ],
        }


def scaling_explorer(
    d_k: int = 64,
    scaled: bool = True,
    *,
    d_ks: Sequence[int] = DEFAULT_D_KS,
    n_queries: int = 4,
    n_keys: int = 8,
    seed: int = 0,
    title: str = "¿Por qué dividir entre √d_k?",
) -> core.Explorer:
    """Explore how ``d_k`` and the division by ``√d_k`` shape attention weights.

    ``d_ks`` are the values of the slider (``d_k`` is added if missing);
    ``n_queries`` random queries attend over ``n_keys`` random keys drawn with
    ``seed``. Bad input gives an explorer that shows the Spanish message.
    """
    return core.build_or_error(title, lambda: ScalingExplorer(
        d_k, scaled, d_ks=d_ks, n_queries=n_queries, n_keys=n_keys, seed=seed, title=title))
