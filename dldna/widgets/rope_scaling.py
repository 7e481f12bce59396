"""RoPE-scaling explorer: how position interpolation and NTK-aware scaling stretch RoPE's angles.

Controls: the scaling (none, linear / position interpolation, NTK), the
``factor`` by which the context grows past the training length, and ``d_k``.
The numbers come from :func:`dldna.viz.rope_scaling.rope_scaling_data`
(:func:`dldna.positional.rope_frequencies`) and the picture from
:func:`dldna.viz.rope_scaling.rope_scaling_panel`: the cosine of the angle
``d·θ_i`` that each pair ``i`` turns at each distance ``d`` of the longer
context, with the trained distances marked, and two angles against their
training values (the fastest pair at distance 3, the slowest at the longest
distance).

The static view gets every combination of the controls, each cosine matrix
quantised to 8 bits; a matrix that is the first columns of one already sent
(no scaling at a smaller factor, any scaling at factor 1) is sent once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dldna import checks
from dldna.viz import rope_scaling as vr
from dldna.widgets import core

__all__ = ["RopeScalingExplorer", "rope_scaling_explorer"]

#: The scalings offered, in the order of the control: (name of the live control's value, argument).
SCALINGS: tuple[tuple[str, str | None], ...] = (("none", None), ("linear", "linear"), ("ntk", "ntk"))
DEFAULT_FACTORS: tuple[int, ...] = (1, 2, 4, 8)
DEFAULT_D_KS: tuple[int, ...] = (16, 64)
#: Most cosine values (pairs × distances, over every combination) an explorer sends to the book.
MAX_CELLS = 200_000
#: Most values of one control.
MAX_VALUES = 8

ALT = ("Mapa de calor del coseno del ángulo que gira cada par de dimensiones de RoPE (filas) a cada "
       "distancia entre consulta y clave (columnas), con las distancias vistas al entrenar marcadas, "
       "y dos barras: el ángulo del par más rápido a distancia 3 y el del par más lento a la mayor "
       "distancia, frente a sus valores de entrenamiento.")


def _scaling_key(scaling) -> str:
    if scaling is None:
        return "none"
    if isinstance(scaling, str) and scaling in ("linear", "ntk"):
        return scaling
    raise ValueError(f"scaling debe ser None (ninguno), 'linear' (interpolación de posiciones) o 'ntk'; "
                     f"se recibió {scaling!r}.")


class RopeScalingExplorer(core.Explorer):
    """Explorer of RoPE's scaling (build it with :func:`rope_scaling_explorer`).

    Live controls: ``"scaling"`` (``"none"``, ``"linear"`` or ``"ntk"``),
    ``"factor"`` and ``"d_k"`` (ints).
    """

    view = "rope_scaling"

    def __init__(self, scaling: str | None, factor: int, d_k: int, *, factors: Sequence[int],
                 d_ks: Sequence[int], length: int, base: float, title: str):
        super().__init__(title, ALT)
        key = _scaling_key(scaling)
        factor = checks.positive_int(factor, "factor")
        d_k = checks.positive_int(d_k, "d_k")
        factors = checks.sequence(factors, "factors (los valores de factor)", checks.positive_int)
        d_ks = checks.sequence(d_ks, "d_ks (los valores de d_k)", checks.positive_int)
        self.factors = sorted({int(f) for f in factors} | {int(factor)})
        self.d_ks = sorted({int(d) for d in d_ks} | {int(d_k)})
        if len(self.factors) > MAX_VALUES or len(self.d_ks) > MAX_VALUES:
            raise ValueError(f"Demasiados valores para los controles: como mucho {MAX_VALUES} de factor y "
                             f"{MAX_VALUES} de d_k; se recibieron {len(self.factors)} y {len(self.d_ks)}.")
        self.length = checks.positive_int(length, "length (longitud de entrenamiento)", minimum=vr.NEAR + 1)
        # rope_scaling_data checks d_k (even, NTK needs d_k >= 4), factor·length and base in Spanish.
        self._data = {(k, f, d): vr.rope_scaling_data(d, s, f, self.length, base)
                      for k, s in SCALINGS for f in self.factors for d in self.d_ks}
        cells = len(SCALINGS) * sum(self.factors) * self.length * sum(self.d_ks) // 2
        if cells > MAX_CELLS:
            raise ValueError(f"Demasiadas combinaciones para el libro ({cells} valores, como mucho "
                             f"{MAX_CELLS}): usa menos valores de factor o de d_k, o más pequeños.")
        self.initial = {"scaling": key, "factor": int(factor), "d_k": int(d_k)}

    def data(self, scaling: str, factor: int, d_k: int) -> dict:
        """:func:`~dldna.viz.rope_scaling.rope_scaling_data` for one setting (precomputed);
        ``scaling`` is ``"none"``, ``"linear"`` or ``"ntk"``."""
        if (scaling, factor, d_k) not in self._data:
            raise ValueError(f"La combinación scaling = {scaling!r}, factor = {factor!r}, d_k = {d_k!r} "
                             f"no está calculada: factor entre {', '.join(map(str, self.factors))}; "
                             f"d_k entre {', '.join(map(str, self.d_ks))}.")
        return self._data[scaling, factor, d_k]

    def _make_controls(self) -> dict:
        import ipywidgets as w

        init = self.initial
        return {
            "scaling": w.Dropdown(options=[(vr.SCALING_LABELS[s], k) for k, s in SCALINGS],
                                  value=init["scaling"], description="escalado:"),
            "factor": w.SelectionSlider(options=[(str(f), f) for f in self.factors], value=init["factor"],
                                        description="factor:", continuous_update=False),
            "d_k": w.Dropdown(options=[(str(d), d) for d in self.d_ks], value=init["d_k"],
                              description="d_k:", layout=w.Layout(width="10em")),
        }

    def _state(self, state: dict) -> dict:
        return self.data(state["scaling"], state["factor"], state["d_k"])

    def _figure(self, state: dict):
        return vr.rope_scaling_panel(self._state(state))

    @staticmethod
    def _describe(d: dict) -> str:
        # The degrees rounded as the payload carries them, so both views print the same digits.
        near = {k: round(v, 4) if isinstance(v, float) else v for k, v in d["near"].items()}
        far = {k: round(v, 4) if isinstance(v, float) else v for k, v in d["far"].items()}
        n, length = d["factor"] * d["length"], d["length"]
        return (f"escalado {d['label']}, factor {d['factor']}, d_k = {d['d_k']}: {n} posiciones "
                f"(entrenado con {length}); par {near['pair']} a distancia {near['distance']}: "
                f"{near['scaled_deg']:.1f}° (al entrenar, {near['trained_deg']:.1f}°); par {far['pair']} a "
                f"distancia {far['distance']}: {far['scaled_deg']:.2f}° (al entrenar, como mucho "
                f"{far['trained_deg']:.2f}°, a distancia {far['trained_distance']})")

    def _alt(self, state: dict) -> str:
        return f"{ALT} Estado: {self._describe(self._state(state))}."

    def _note(self, state: dict) -> str:
        return self._describe(self._state(state)) + "."

    def _payload(self) -> dict:
        matrices: list[np.ndarray] = []
        packed: list[dict] = []
        cases = {}
        # Widest first, so that a narrower matrix can be the first columns of one already kept.
        for (key, f, d), data in sorted(self._data.items(), key=lambda item: -item[0][1]):
            cos = data["cos"]
            rows, cols = cos.shape
            index = next((i for i, m in enumerate(matrices)
                          if m.shape[0] == rows and m.shape[1] >= cols and np.array_equal(m[:, :cols], cos)),
                         None)
            if index is None:
                matrices.append(cos)
                packed.append(core.pack(cos, 8, -1.0, 1.0))
                index = len(matrices) - 1
            near, far = data["near"], data["far"]
            cases[f"{key}_{f}_{d}"] = {
                "m": index, "width": int(matrices[index].shape[1]), "pairs": rows, "cols": cols,
                "ticks": data["ticks"], "label": data["label"],
                "near": [round(near["trained_deg"], 4), round(near["scaled_deg"], 4)],
                "far": [round(far["trained_deg"], 4), round(far["scaled_deg"], 4)],
                "far_pair": far["pair"], "far_distance": far["distance"],
            }
        init = self.initial
        keys = [k for k, _ in SCALINGS]
        return {
            "length": self.length,
            "near": vr.NEAR,
            "scalings": keys,
            "matrices": packed,
            "cases": cases,
            "controls": [
                {"name": "scaling", "label": "escalado", "type": "select",
                 "options": core.options(range(len(keys)), [vr.SCALING_LABELS[s] for _, s in SCALINGS]),
                 "value": keys.index(init["scaling"])},
                {"name": "factor", "label": "factor", "type": "range",
                 "options": core.options(self.factors), "value": init["factor"]},
                {"name": "d_k", "label": "d_k", "type": "select",
                 "options": core.options(self.d_ks), "value": init["d_k"]},
            ],
        }


def rope_scaling_explorer(
    scaling: str | None = None,
    factor: int = 4,
    d_k: int = 16,
    *,
    factors: Sequence[int] = DEFAULT_FACTORS,
    d_ks: Sequence[int] = DEFAULT_D_KS,
    length: int = 24,
    base: float = 10000.0,
    title: str = "RoPE más allá de la longitud de entrenamiento",
) -> core.Explorer:
    """Explore how RoPE's scalings stretch its angles past the training ``length``.

    ``scaling``: ``None``, ``"linear"`` (position interpolation) or ``"ntk"``
    (the first shown; the control offers the three); ``factor``: how many
    times ``length`` the context grows (``factors`` are the values of the
    slider, ``factor`` is added if missing); ``d_k``: the head's width
    (``d_ks`` are offered, ``d_k`` is added if missing); ``base``: RoPE's base. Bad input gives an explorer
    that shows the Spanish message.
    """
    return core.build_or_error(title, lambda: RopeScalingExplorer(
        scaling, factor, d_k, factors=factors, d_ks=d_ks, length=length, base=base, title=title))
