"""Mask explorer: pick a sequence length, the padding of the sentence and a mask
pattern, and see the mask and the attention weights it produces.

The masks come from :mod:`dldna.masking`, the weights from
:func:`dldna.attention.softmax` applied to fixed random scores (so that only
the mask changes between two settings), and the live picture from
:func:`dldna.viz.masking.plot_masked_weights`. The static view (kind "masks"
of ``static/explorer.js``) draws the same precomputed masks and weights.

Patterns (the ``pattern`` control): ``"none"`` (no mask), ``"padding"``,
``"causal"``, ``"causal+padding"``, ``"window"`` (local window, both sides),
``"strided"`` and ``"fixed"`` (Child et al., 2019, causal). Padding is applied
to the keys in every pattern except ``"none"`` and ``"causal"``; ``width`` is
the window, stride or block size of the last three.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import torch

from dldna import checks, masking
from dldna.attention import softmax
from dldna.viz import masking as vm
from dldna.widgets import core

PATTERNS: dict[str, str] = {
    "none": "sin máscara",
    "padding": "relleno",
    "causal": "causal",
    "causal+padding": "causal + relleno",
    "window": "ventana local + relleno",
    "strided": "con paso (strided) + relleno",
    "fixed": "fija (fixed) + relleno",
}
USES_WIDTH = {"window", "strided", "fixed"}
USES_PADDING = {"padding", "causal+padding", "window", "strided", "fixed"}
WORDS = ("el", "gato", "negro", "salta", "la", "cuerda", "muy", "alto", "esta", "tarde",
         "en", "casa")
ALT = (
    "Dos cuadrículas: a la izquierda la máscara de atención (azul: puede atender; gris rayado: "
    "bloqueada) y a la derecha los pesos de atención que resultan, con las celdas bloqueadas "
    "a cero."
)


def build_mask(pattern: str, n: int, pad: int = 0, width: int = 2) -> torch.Tensor:
    """The ``(n, n)`` mask of one setting of the explorer (``True`` = may attend)."""
    n = checks.positive_int(n, "n (número de tókenes)")
    if n > len(WORDS):
        raise ValueError(f"n (número de tókenes) debe estar entre 1 y {len(WORDS)} (las palabras de "
                         f"la frase de ejemplo); se recibió {n}.")
    width = checks.positive_int(width, "width (ventana, paso o bloque)")
    if not isinstance(pattern, str) or pattern not in PATTERNS:
        raise ValueError(
            f"Patrón desconocido {pattern!r}. Patrones válidos: {', '.join(PATTERNS)}."
        )
    if isinstance(pad, bool) or not isinstance(pad, int) or not 0 <= pad < n:
        raise ValueError(
            f"El relleno debe ser un entero entre 0 y {n - 1} (al menos un tóken real); "
            f"se recibió {pad!r}."
        )
    full = torch.ones(n, n, dtype=torch.bool)
    shapes = {
        "none": lambda: full,
        "padding": lambda: full,
        "causal": lambda: masking.causal_mask(n),
        "causal+padding": lambda: masking.causal_mask(n),
        "window": lambda: masking.local_window_mask(n, width),
        "strided": lambda: masking.strided_mask(n, width),
        "fixed": lambda: masking.fixed_mask(n, width),
    }
    mask = shapes[pattern]()
    if pattern in USES_PADDING:
        mask = masking.combine(masking.padding_mask([n - pad], max_len=n)[0, 0], mask)
    return mask


@cache
def _scores(max_n: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(max_n, max_n, generator=generator)


def weights_for(mask: torch.Tensor, seed: int = 0) -> torch.Tensor:
    """Softmax of fixed random scores (seeded) under ``mask``; blocked cells get 0."""
    mask = checks.mask(mask, checks.as_tensor(mask, "mask").shape, "mask")
    n = mask.shape[-1]
    if mask.dim() != 2 or mask.shape[0] != n or not 1 <= n <= len(WORDS):
        raise ValueError(f"mask debe ser cuadrada, de forma (n, n) con n entre 1 y {len(WORDS)}; "
                         f"tiene forma {tuple(mask.shape)}.")
    seed = checks.non_negative_int(seed, "seed (semilla)")
    scores = _scores(len(WORDS), seed)[:n, :n]
    return softmax(scores.masked_fill(~mask, float("-inf")))


def _summary(mask: torch.Tensor) -> str:
    allowed = int(mask.sum())
    empty = int(masking.fully_masked_rows(mask).sum())
    text = f"{allowed} de {mask.numel()} pares permitidos"
    if empty:
        text += f"; {empty} filas sin ninguna clave (pesos a cero)"
    return text


class MaskExplorer(core.Explorer):
    """Explorer of attention masks (build it with :func:`mask_explorer`).

    Live controls: ``"n"``, ``"pattern"``, ``"pad"`` and ``"width"``.
    """

    view = "masks"

    def __init__(self, n: int, pattern: str, pad: int, width: int, *, lengths: Sequence[int],
                 pads: Sequence[int], widths: Sequence[int], seed: int, title: str):
        super().__init__(title, ALT)
        # Types here; the ranges below and in build_mask, with the messages they always gave.
        n = checks.integer(n, "n (número de tókenes)")
        pad = checks.integer(pad, "pad (tókenes de relleno)")
        width = checks.integer(width, "width (ventana, paso o bloque)")
        seed = checks.non_negative_int(seed, "seed (semilla)")
        lengths = checks.sequence(lengths, "lengths (las longitudes)", checks.integer, minimum=0)
        pads = checks.sequence(pads, "pads (los rellenos)", checks.integer, minimum=0)
        widths = checks.sequence(widths, "widths (los tamaños)", checks.integer, minimum=0)
        self.lengths = sorted(set(lengths) | {n})
        self.pads = sorted(set(pads) | {pad})
        self.widths = sorted(set(widths) | {width})
        if min(self.lengths) < 2 or max(self.lengths) > len(WORDS):
            raise ValueError(f"Las longitudes deben estar entre 2 y {len(WORDS)}.")
        if min(self.pads) < 0:
            raise ValueError("Los rellenos deben ser enteros no negativos.")
        if min(self.widths) < 1:
            raise ValueError("Los tamaños de ventana, paso o bloque deben ser enteros positivos.")
        build_mask(pattern, n, pad, width)  # Spanish error for a bad pattern or padding
        self.seed = seed
        self.initial = {"n": n, "pattern": pattern, "pad": pad, "width": width}

    def pads_for(self, n: int) -> list[int]:
        """The paddings offered for length ``n``: every sentence keeps a real token."""
        return [p for p in self.pads if p < n]

    def tokens(self, n: int, pad: int) -> list[str]:
        return list(WORDS[: n - pad]) + ["PAD"] * pad

    def _make_controls(self) -> dict:
        import ipywidgets as w

        return {
            "n": w.SelectionSlider(options=self.lengths, value=self.initial["n"],
                                   description="longitud:", continuous_update=False),
            "pattern": w.Dropdown(options=[(name, key) for key, name in PATTERNS.items()],
                                  value=self.initial["pattern"], description="patrón:"),
            "pad": w.SelectionSlider(options=self.pads_for(self.initial["n"]),
                                     value=self.initial["pad"],
                                     description="relleno:", continuous_update=False),
            "width": w.SelectionSlider(options=self.widths, value=self.initial["width"],
                                       description="tamaño:", continuous_update=False),
        }

    def _on_change(self, name: str) -> None:
        if name != "n":
            return
        pad = self.controls["pad"]
        options = self.pads_for(self.controls["n"].value)
        old = pad.value
        pad.options = options
        pad.value = old if old in options else options[-1]

    def _figure(self, state: dict):
        mask = build_mask(state["pattern"], state["n"], state["pad"], state["width"])
        title = f"{PATTERNS[state['pattern']]} · {_summary(mask)}"
        return vm.plot_masked_weights(mask, weights_for(mask, self.seed),
                                      self.tokens(state["n"], state["pad"]), title=title)

    def _alt(self, state: dict) -> str:
        mask = build_mask(state["pattern"], state["n"], state["pad"], state["width"])
        return (f"{ALT} Estado: {PATTERNS[state['pattern']]}, longitud {state['n']}, relleno "
                f"{state['pad']}, tamaño {state['width']}; {_summary(mask)}.")

    def _payload(self) -> dict:
        cases = {}
        keys = list(PATTERNS)
        for n in self.lengths:
            for index, pattern in enumerate(keys):
                for pad in self.pads_for(n):
                    for width in (self.widths if pattern in USES_WIDTH else self.widths[:1]):
                        mask = build_mask(pattern, n, pad, width)
                        weights = weights_for(mask, self.seed).numpy()
                        cases[f"{n}_{index}_{pad}_{width}"] = {
                            "mask": ["".join("1" if v else "0" for v in row)
                                     for row in mask.tolist()],
                            "w": core.pack(weights, 8, 0.0, 1.0),
                            "summary": _summary(mask),
                        }
        return {
            "cases": cases,
            "tokens": list(WORDS),
            "pattern_names": [PATTERNS[key] for key in keys],
            "uses_width": [key in USES_WIDTH for key in keys],
            "widths": self.widths,
            "controls": [
                {"name": "n", "label": "longitud", "type": "range",
                 "options": core.options(self.lengths), "value": self.initial["n"]},
                {"name": "pattern", "label": "patrón", "type": "select",
                 "options": core.options(range(len(keys)), [PATTERNS[k] for k in keys]),
                 "value": keys.index(self.initial["pattern"])},
                {"name": "pad", "label": "relleno", "type": "range",
                 "options_by": {"on": "n", "map": {str(n): core.options(self.pads_for(n))
                                                   for n in self.lengths}},
                 "value": self.initial["pad"]},
                {"name": "width", "label": "tamaño (ventana, paso o bloque)", "type": "range",
                 "options": core.options(self.widths), "value": self.initial["width"]},
            ],
        }

    def to_html(self) -> str:
        if self._html is None:
            page = super().to_html()
            # One JSON case per line: JSON allows the whitespace, and short lines keep
            # line-based tools (such as the nbval sanitizers) fast.
            start = page.index('<script type="application/json" class="dldna-data">')
            end = page.index("</script>", start)
            page = page[:start] + page[start:end].replace('},"', '},\n"') + page[end:]
            self._html = page
        return self._html


def mask_explorer(
    n: int = 8,
    pattern: str = "causal+padding",
    pad: int = 2,
    width: int = 3,
    *,
    lengths: Sequence[int] = (4, 6, 8, 12),
    pads: Sequence[int] = (0, 1, 2, 3),
    widths: Sequence[int] = (2, 3, 4),
    seed: int = 0,
    title: str = "Explorador de máscaras",
) -> core.Explorer:
    """Explore mask patterns and their effect on attention weights.

    ``n`` tokens, the last ``pad`` of them padding; ``pattern`` one of
    :data:`PATTERNS`; ``width`` the window, stride or block size. The sliders
    offer ``lengths``, ``pads`` and ``widths``. Bad input gives an explorer
    that shows the Spanish message.
    """
    return core.build_or_error(title, lambda: MaskExplorer(
        n, pattern, pad, width, lengths=lengths, pads=pads, widths=widths, seed=seed,
        title=title))


__all__ = ["PATTERNS", "MaskExplorer", "build_mask", "mask_explorer", "weights_for"]
