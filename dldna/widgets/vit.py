"""Patch-size explorer: cut a digit into patches of 1, 2, 4 or 8 pixels and see how
many tokens that makes, what one image costs and how accurate the ViT was.

The accuracies are measured by the chapter (a ViT trained for each patch size
with the same cheap settings) and handed in; a size that was not trained
shows «sin entrenar». Tokens and cost come from :func:`dldna.vit.patch_cost`.
The live picture is :func:`dldna.viz.vit.plot_patch_size`; the static view
(kind "vit_patches" of ``static/explorer.js``) draws the same numbers as SVG.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

from dldna import checks, vit
from dldna.viz import vit as vv
from dldna.widgets import core

ALT = (
    "A la izquierda, un dígito de 8×8 píxeles cortado en parches; a la derecha, tres gráficos de "
    "barras por tamaño de parche: número de tókenes, coste en multiplicaciones-acumulaciones por "
    "imagen y exactitud en prueba del ViT entrenado con ese tamaño."
)


def patch_table(accuracies: Mapping[int, float | None], *, image_size: int = 8, d_model: int = 64,
                d_ff: int = 128, n_layers: int = 3) -> dict[int, dict]:
    """``{p: {"tokens", "pairs", "attention_macs", "total_macs", "accuracy"}}`` for every ``p``.

    ``accuracies`` maps each patch size to its test accuracy in ``[0, 1]``, or
    ``None`` for a size that was not trained.
    """
    if not isinstance(accuracies, Mapping):
        raise TypeError(
            "accuracies debe ser un diccionario {tamaño de parche: exactitud en [0, 1] o None}, "
            f"p. ej. {{2: 0.9, 4: None}}; se recibió {type(accuracies).__name__}."
        )
    if not accuracies:
        raise ValueError("Hace falta al menos un tamaño de parche.")
    table = {}
    sizes = {checks.positive_int(p, "El tamaño de parche"): acc for p, acc in accuracies.items()}
    for p, acc in sorted(sizes.items()):
        if acc is not None and not (isinstance(acc, (int, float)) and 0.0 <= acc <= 1.0):
            raise ValueError(
                f"La exactitud del parche {p} debe estar en [0, 1] o ser None; se recibió {acc!r}."
            )
        row = vit.patch_cost(image_size, p, d_model, d_ff, n_layers)
        row["accuracy"] = None if acc is None else float(acc)
        table[int(p)] = row
    return table


class PatchSizeExplorer(core.Explorer):
    """Explorer of the patch size (build it with :func:`patch_size_explorer`).

    Live controls: ``"patch_size"`` and ``"image"`` (index into the images).
    """

    view = "vit_patches"

    def __init__(self, images, labels: Sequence[str], table: Mapping[int, Mapping], patch_size: int,
                 *, title: str):
        super().__init__(title, ALT)
        if isinstance(images, torch.Tensor):
            images = images.detach().cpu().numpy()
        imgs = np.asarray(images, dtype=np.float64)
        while imgs.ndim > 3 and imgs.shape[1] == 1:
            imgs = imgs[:, 0]
        if imgs.ndim != 3 or len(imgs) == 0:
            raise ValueError(
                f"Las imágenes deben tener forma (n, alto, ancho) o (n, 1, alto, ancho); se recibió "
                f"{imgs.shape}."
            )
        if len(labels) != len(imgs):
            raise ValueError(f"Hay {len(imgs)} imágenes y {len(labels)} etiquetas: deben coincidir.")
        if patch_size not in table:
            raise ValueError(f"El tamaño de parche {patch_size!r} no está en la tabla ({sorted(table)}).")
        h, w = imgs.shape[1:]
        for p in table:
            if h % p or w % p:
                raise ValueError(f"El tamaño de parche {p} no divide a las imágenes de {h}×{w}.")
        self.images = np.clip(imgs, 0.0, 1.0)
        self.labels = [str(v) for v in labels]
        self.table = {int(p): dict(row) for p, row in sorted(table.items())}
        self.sizes = list(self.table)
        self.initial = {"patch_size": int(patch_size), "image": 0}

    def _make_controls(self) -> dict:
        import ipywidgets as w

        return {
            "patch_size": w.SelectionSlider(options=[(str(p), p) for p in self.sizes],
                                            value=self.initial["patch_size"],
                                            description="parche p:", continuous_update=False),
            "image": w.Dropdown(options=[(lab, k) for k, lab in enumerate(self.labels)],
                                value=self.initial["image"], description="imagen:"),
        }

    def _check_state(self, state: dict) -> tuple[int, int]:
        image, p = state["image"], state["patch_size"]
        if isinstance(image, bool) or not isinstance(image, (int, np.integer)) \
                or not 0 <= image < len(self.images):
            raise ValueError(f"La imagen {image!r} no existe: hay {len(self.images)} (índices 0 a "
                             f"{len(self.images) - 1}).")
        if isinstance(p, bool) or p not in self.table:
            raise ValueError(f"El tamaño de parche {p!r} no está entre los calculados ({self.sizes}).")
        return int(image), int(p)

    def _figure(self, state: dict):
        self._check_state(state)
        return vv.plot_patch_size(self.images[state["image"]], state["patch_size"], self.table,
                                  title=self.title)

    def _alt(self, state: dict) -> str:
        _, p = self._check_state(state)
        row = self.table[p]
        acc = ("sin entrenar" if row["accuracy"] is None
               else f"exactitud {100 * row['accuracy']:.1f} %")
        return (f"{ALT} Estado: {self.labels[state['image']]}, parches de {p}×{p}: "
                f"{row['tokens']} tókenes, {row['total_macs'] / 1000:.0f} mil MAC por imagen, {acc}.")

    def _payload(self) -> dict:
        h, w = self.images.shape[1:]
        return {
            "images": core.pack(self.images, 8, 0.0, 1.0),
            "height": int(h),
            "width": int(w),
            "labels": self.labels,
            "sizes": self.sizes,
            "tokens": [int(self.table[p]["tokens"]) for p in self.sizes],
            "kmacs": [round(self.table[p]["total_macs"] / 1000, 1) for p in self.sizes],
            "accuracy": [None if self.table[p]["accuracy"] is None
                         else round(100 * self.table[p]["accuracy"], 1) for p in self.sizes],
            "controls": [
                {"name": "patch_size", "label": "tamaño del parche p", "type": "range",
                 "options": core.options(self.sizes), "value": self.initial["patch_size"]},
                {"name": "image", "label": "imagen", "type": "select",
                 "options": core.options(range(len(self.labels)), self.labels), "value": 0},
            ],
        }


def patch_size_explorer(
    images,
    accuracies: Mapping[int, float | None],
    *,
    labels: Sequence[str] | None = None,
    patch_size: int = 2,
    image_size: int = 8,
    d_model: int = 64,
    d_ff: int = 128,
    n_layers: int = 3,
    title: str = "Explorador del tamaño del parche",
) -> core.Explorer:
    """Explore the patch size: tokens, cost per image and measured accuracy.

    ``images``: a few digits ``(n, 1, 8, 8)`` or ``(n, 8, 8)`` with values in
    ``[0, 1]``; ``accuracies``: ``{p: test accuracy or None}``; the cost is
    that of a ViT with ``d_model``, ``d_ff`` and ``n_layers`` (see
    :func:`dldna.vit.patch_cost`). Bad input gives an explorer that shows the
    Spanish message.
    """
    def build():
        if images is None or isinstance(images, str) or not hasattr(images, "__len__"):
            raise TypeError(
                "Las imágenes deben ser un tensor o un array de forma (n, 1, alto, ancho) o "
                f"(n, alto, ancho); se recibió {type(images).__name__}."
            )
        n = len(images)
        names = list(labels) if labels is not None else [f"ejemplo {k + 1}" for k in range(n)]
        table = patch_table(accuracies, image_size=image_size, d_model=d_model, d_ff=d_ff,
                            n_layers=n_layers)
        return PatchSizeExplorer(images, names, table, patch_size, title=title)

    return core.build_or_error(title, build)


__all__ = ["PatchSizeExplorer", "patch_size_explorer", "patch_table"]
