"""The Vision Transformer (Dosovitskiy et al., 2021) on scikit-learn's 8×8 digits.

An image becomes a sequence: it is cut into ``p × p`` patches, each patch is
flattened and projected to ``d_model`` (the same numbers as a convolution
whose kernel and stride are ``p``), a learnable class token ``[CLS]`` is put
in front, learned position embeddings are added, and the encoder stack of
:mod:`dldna.transformer` (the very same :class:`~dldna.transformer.Encoder`
as the text Transformer) mixes the tokens. A linear head reads the class
from the final vector of ``[CLS]``.

Contents:

* :func:`patchify` / :func:`unpatchify`: images ``(B, C, H, W)`` ↔ patch
  vectors ``(B, N, C·p·p)``, patches numbered row by row;
* :class:`PatchEmbedding` (``kind="linear"`` or ``"conv"``, with
  :meth:`PatchEmbedding.convert` to move the weights from one form to the other);
* :class:`ViTConfig` (validated, Spanish messages) and :class:`VisionTransformer`;
* the data: :func:`load_digits_split` (a fixed stratified split of the 1 797
  bundled digits, no download) and :class:`DigitsSplit`;
* the baselines :class:`TinyCNN` and :class:`MLP`;
* training: :data:`RECIPE` and :func:`fit` (the package's general loop,
  :func:`dldna.training.fit`) and :func:`accuracy`;
* looking inside: :func:`cls_attention`, :func:`attention_rollout` (Abnar &
  Zuidema, 2020), :func:`position_similarity`, :func:`neighbour_agreement`;
* transfer to another resolution: :func:`interpolate_positions`;
* the cost of a patch size, :func:`patch_cost`, and Swin's windows,
  :func:`window_mask`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from dldna import checks, runtime
from dldna.tasks.base import BenchResult
from dldna.training import FitResult, LabelSmoothingLoss, Recipe, _check_recipe
from dldna.training import fit as train
from dldna.transformer import Encoder, PositionalEncoding, _check_layer_args

__all__ = [
    "patchify",
    "unpatchify",
    "PatchEmbedding",
    "ViTConfig",
    "VisionTransformer",
    "DigitsSplit",
    "load_digits_split",
    "TinyCNN",
    "MLP",
    "RECIPE",
    "fit",
    "accuracy",
    "cls_attention",
    "attention_rollout",
    "position_similarity",
    "neighbour_agreement",
    "interpolate_positions",
    "patch_cost",
    "window_mask",
]


# ---------------------------------------------------------------------------
# Checks (Spanish messages: a reader calls these functions directly)
# ---------------------------------------------------------------------------


def _check_images(images, name: str = "Las imágenes", like: nn.Module | None = None) -> Tensor:
    # NumPy arrays, float64 and integer grey levels are converted (to the module's dtype and device).
    # A pixel is a grey level: inf is refused as well as NaN (a convolution of inf gives NaN logits).
    if isinstance(images, (Tensor, np.ndarray, list, tuple)):
        images = checks.features(images, name, like=like, finite=True)
    if not isinstance(images, Tensor) or images.dim() != 4:
        got = f"forma {tuple(images.shape)}" if isinstance(images, Tensor) else type(images).__name__
        raise ValueError(
            f"{name} deben ser un tensor (batch, canales, alto, ancho); se recibió "
            f"{got}. Para una sola imagen de 8×8 usa imagen.view(1, 1, 8, 8)."
        )
    return images


def _check_divisible(height: int, width: int, patch_size: int) -> None:
    if height % patch_size or width % patch_size:
        valid = [p for p in range(1, min(height, width) + 1) if height % p == 0 and width % p == 0]
        raise ValueError(
            f"El tamaño de parche {patch_size} no divide a la imagen de {height}×{width}: los parches "
            f"deben cubrirla sin solaparse ni sobrar píxeles. Tamaños válidos: {valid}."
        )


# ---------------------------------------------------------------------------
# Patches
# ---------------------------------------------------------------------------


def patchify(images: Tensor, patch_size: int) -> Tensor:
    """Cut images into non-overlapping ``p × p`` patches and flatten each one.

    Patches are numbered row by row (patch ``k`` is at grid row ``k // (W/p)``,
    column ``k % (W/p)``); inside a patch the values are ordered
    channel, row, column, the layout of a ``Conv2d`` kernel.

    Shapes: ``(B, C, H, W)`` → ``(B, (H/p)·(W/p), C·p·p)``.
    """
    images = _check_images(images)
    p = checks.positive_int(patch_size, "patch_size (tamaño del parche)")
    b, c, h, w = images.shape
    _check_divisible(h, w, p)
    x = images.reshape(b, c, h // p, p, w // p, p)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (B, H/p, W/p, C, p, p)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def unpatchify(patches: Tensor, patch_size: int, height: int, width: int | None = None) -> Tensor:
    """Inverse of :func:`patchify`: ``(B, N, C·p·p)`` → ``(B, C, H, W)``."""
    p = checks.positive_int(patch_size, "patch_size (tamaño del parche)")
    height = checks.positive_int(height, "height (alto de la imagen)")
    width = height if width is None else checks.positive_int(width, "width (ancho de la imagen)")
    _check_divisible(height, width, p)
    patches = checks.features(patches, "Los parches", ndim=3, what="(batch, parches, valores por parche)")
    b, n, dim = patches.shape
    gh, gw = height // p, width // p
    if n != gh * gw or dim % (p * p):
        raise ValueError(
            f"{n} parches de {dim} valores no forman una imagen de {height}×{width} con parches "
            f"de {p}×{p} (harían falta {gh * gw} parches de C·{p * p} valores)."
        )
    c = dim // (p * p)
    x = patches.reshape(b, gh, gw, c, p, p).permute(0, 3, 1, 4, 2, 5)
    return x.reshape(b, c, height, width)


class PatchEmbedding(nn.Module):
    """Patches → vectors of ``d_model``: a linear map shared by every patch.

    ``kind="linear"``: ``Linear(C·p·p, d_model)`` applied to :func:`patchify`'s
    output, the way the ViT paper writes it. ``kind="conv"``: a
    ``Conv2d(C, d_model, kernel_size=p, stride=p)``, the way most code writes
    it. With the same weights (:meth:`convert`) both give the same numbers:
    a convolution whose stride equals its kernel sees every patch exactly
    once, and at each place it computes the same dot products.

    Shapes: images ``(B, C, H, W)`` → ``(B, (H/p)·(W/p), d_model)``.
    """

    KINDS = ("linear", "conv")

    def __init__(self, patch_size: int, in_channels: int, d_model: int, kind: str = "linear"):
        super().__init__()
        self.patch_size = checks.positive_int(patch_size, "patch_size (tamaño del parche)")
        self.in_channels = checks.positive_int(in_channels, "in_channels (canales)")
        self.d_model = checks.positive_int(d_model, "d_model")
        if kind not in self.KINDS:
            raise ValueError(
                f"Tipo de incrustación de parches desconocido: {kind!r}. Los válidos son 'linear' "
                "(aplanar y proyectar) y 'conv' (convolución con paso = tamaño del parche)."
            )
        self.kind = kind
        p = self.patch_size
        if kind == "linear":
            self.proj = nn.Linear(in_channels * p * p, d_model)
        else:
            self.proj = nn.Conv2d(in_channels, d_model, kernel_size=p, stride=p)

    def extra_repr(self) -> str:
        return f"kind={self.kind!r}, patch_size={self.patch_size}, d_model={self.d_model}"

    def forward(self, images: Tensor) -> Tensor:
        images = _check_images(images, like=self)
        if images.shape[1] != self.in_channels:
            raise ValueError(
                f"Las imágenes tienen {images.shape[1]} canales y la incrustación espera "
                f"{self.in_channels}."
            )
        if self.kind == "linear":
            return self.proj(patchify(images, self.patch_size))
        _check_divisible(images.shape[2], images.shape[3], self.patch_size)
        return self.proj(images).flatten(2).transpose(1, 2)

    @torch.no_grad()
    def convert(self, kind: str) -> PatchEmbedding:
        """A new embedding of ``kind`` holding the same weights (same outputs)."""
        other = PatchEmbedding(self.patch_size, self.in_channels, self.d_model, kind)
        other.proj.weight.copy_(self.proj.weight.reshape(other.proj.weight.shape))
        other.proj.bias.copy_(self.proj.bias)
        return other


# ---------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------


@dataclass
class ViTConfig:
    """The sizes of a Vision Transformer (defaults: the chapter's model for 8×8 digits).

    * ``image_size``: side of the (square) image, in pixels;
    * ``patch_size``: side of a patch (must divide ``image_size``);
    * ``in_channels``: 1 for grey images, 3 for colour;
    * ``n_classes``: outputs of the classification head;
    * ``d_model``, ``n_heads`` (must divide ``d_model``), ``n_layers``, ``d_ff``,
      ``dropout``, ``norm_first``, ``activation``: the encoder, as in
      :class:`dldna.transformer.Encoder` (Pre-LN by default; GELU, as in ViT);
    * ``patch_embedding``: ``"linear"`` or ``"conv"`` (same function, see
      :class:`PatchEmbedding`).
    """

    image_size: int = 8
    patch_size: int = 2
    in_channels: int = 1
    n_classes: int = 10
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 3
    d_ff: int = 128
    dropout: float = 0.1
    norm_first: bool = True
    activation: str = "gelu"
    patch_embedding: str = "linear"

    def __post_init__(self) -> None:
        for name in ("image_size", "in_channels"):
            checks.positive_int(getattr(self, name), name)
        checks.non_negative_int(self.n_layers, "n_layers")
        checks.positive_int(self.n_classes, "n_classes", minimum=2)
        checks.divides(self.patch_size, self.image_size, "patch_size", "image_size",
                       "la imagen debe partirse en parches enteros, sin solaparse ni sobrar píxeles.")
        _check_layer_args(self.d_model, self.n_heads, self.d_ff, self.dropout, self.norm_first,
                          self.activation)
        if self.patch_embedding not in PatchEmbedding.KINDS:
            raise ValueError(
                f"patch_embedding debe ser 'linear' o 'conv'; se recibió {self.patch_embedding!r}."
            )

    @property
    def grid(self) -> int:
        """Patches per side: ``image_size // patch_size``."""
        return self.image_size // self.patch_size

    @property
    def n_patches(self) -> int:
        """Number of patch tokens: ``grid²``."""
        return self.grid ** 2

    @property
    def seq_len(self) -> int:
        """Tokens the encoder sees: the patches plus ``[CLS]``."""
        return self.n_patches + 1

    @property
    def patch_dim(self) -> int:
        """Values in one flattened patch: ``C·p·p``."""
        return self.in_channels * self.patch_size ** 2

    def replace(self, **changes) -> ViTConfig:
        """A copy with some fields changed (validated again)."""
        unknown = set(changes) - {f.name for f in fields(self)}
        if unknown:
            raise TypeError(f"Campos desconocidos de ViTConfig: {sorted(unknown)}.")
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return ViTConfig(**values)


class VisionTransformer(nn.Module):
    """ViT: patches → tokens, ``[CLS]`` in front, learned positions, encoder, head on ``[CLS]``.

    Parts: ``patch_embed`` (:class:`PatchEmbedding`), ``cls_token``
    (a parameter ``(1, 1, d_model)``), ``position``
    (:class:`dldna.transformer.PositionalEncoding` with ``kind="learned"``,
    a table ``(seq_len, d_model)``; row 0 belongs to ``[CLS]``), ``encoder``
    (:class:`dldna.transformer.Encoder`, Pre-LN with its final LayerNorm) and
    ``head`` (``Linear(d_model, n_classes)``).

    Shapes: images ``(B, C, H, W)`` → logits ``(B, n_classes)``.
    """

    def __init__(self, config: ViTConfig | None = None):
        super().__init__()
        if config is None:
            config = ViTConfig()
        if not isinstance(config, ViTConfig):
            raise TypeError(f"VisionTransformer necesita un ViTConfig; se recibió {type(config).__name__}.")
        self.config = c = config
        self.patch_embed = PatchEmbedding(c.patch_size, c.in_channels, c.d_model, c.patch_embedding)
        self.cls_token = nn.Parameter(torch.randn(1, 1, c.d_model) * 0.02)
        self.position = PositionalEncoding(c.d_model, max_len=c.seq_len, kind="learned")
        self.dropout = nn.Dropout(c.dropout)
        self.encoder = Encoder(c.d_model, c.n_heads, c.n_layers, c.d_ff, c.dropout,
                               norm_first=c.norm_first, activation=c.activation)
        self.head = nn.Linear(c.d_model, c.n_classes)

    @property
    def position_embeddings(self) -> Tensor:
        """The learned table ``(seq_len, d_model)``; row 0 is ``[CLS]``'s, rows 1… the patches'."""
        return self.position.table

    def tokens(self, images: Tensor) -> Tensor:
        """The encoder's input: ``[CLS]`` + patch embeddings, plus positions: ``(B, N+1, d_model)``."""
        images = _check_images(images, like=self)
        c = self.config
        if tuple(images.shape[1:]) != (c.in_channels, c.image_size, c.image_size):
            raise ValueError(
                f"Este modelo espera imágenes de forma ({c.in_channels}, {c.image_size}, "
                f"{c.image_size}); se recibió {tuple(images.shape[1:])}."
            )
        patches = self.patch_embed(images)
        cls = self.cls_token.expand(images.shape[0], -1, -1)
        return self.dropout(self.position(torch.cat([cls, patches], dim=1)))

    def features(self, images: Tensor) -> Tensor:
        """The encoder's output for every token: ``(B, N+1, d_model)``."""
        return self.encoder(self.tokens(images))

    def forward(self, images: Tensor) -> Tensor:
        return self.head(self.features(images)[:, 0])

    def attention_maps(self) -> list[Tensor]:
        """Self-attention weights of the last call: one ``(B, heads, N+1, N+1)`` per layer."""
        return self.encoder.attention_maps()


# ---------------------------------------------------------------------------
# Data: scikit-learn's digits, with a fixed stratified split
# ---------------------------------------------------------------------------


@dataclass
class DigitsSplit:
    """The 8×8 digits split into training and test sets.

    Images are float tensors ``(n, 1, 8, 8)`` with values in ``[0, 1]`` (the
    original grey levels 0…16 divided by 16); labels are ``(n,)`` integers 0…9.
    """

    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor
    seed: int = 0

    def __repr__(self) -> str:
        return (f"DigitsSplit(entrenamiento={len(self.y_train)}, prueba={len(self.y_test)}, "
                f"imagen={tuple(self.x_train.shape[1:])}, semilla={self.seed})")

    def to(self, device) -> DigitsSplit:
        return DigitsSplit(self.x_train.to(device), self.y_train.to(device),
                           self.x_test.to(device), self.y_test.to(device), self.seed)

    def subset(self, n_train: int, seed: int = 0) -> DigitsSplit:
        """The same test set with only ``n_train`` training images, drawn by class.

        The draw is stratified (each digit keeps its share) and fixed by
        ``seed``; ``n_train`` equal to the whole set returns it unchanged. For a
        learning curve: accuracy on the same test images against the number of
        training images.
        """
        from sklearn.model_selection import train_test_split

        total = len(self.y_train)
        n_train = checks.positive_int(n_train, "n_train (imágenes de entrenamiento)")
        classes = int(self.y_train.max()) + 1
        if not classes <= n_train <= total:
            raise ValueError(
                f"n_train debe estar entre {classes} (una imagen por clase) y {total} (todas); "
                f"se recibió {n_train}."
            )
        if n_train == total:
            return self
        keep, _ = train_test_split(np.arange(total), train_size=n_train,
                                   stratify=self.y_train.cpu().numpy(),
                                   random_state=checks.non_negative_int(seed, "seed (semilla)"))
        keep = torch.as_tensor(np.sort(keep), device=self.y_train.device)
        return DigitsSplit(self.x_train[keep], self.y_train[keep], self.x_test, self.y_test, self.seed)


def load_digits_split(test_size: float = 0.25, seed: int = 0) -> DigitsSplit:
    """scikit-learn's bundled digits (1 797 images, no download), split 75/25 by class.

    The split is stratified (every digit keeps its share in both sets) and
    fixed by ``seed``, so every run and every chapter sees the same test set.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if (isinstance(test_size, bool) or not isinstance(test_size, (int, float))
            or not 0.0 < test_size < 1.0):
        raise ValueError(
            f"test_size es la fracción de prueba y debe estar en (0, 1); se recibió {test_size!r}."
        )
    seed = checks.non_negative_int(seed, "seed (semilla)")
    digits = load_digits()
    n_test = math.ceil(test_size * len(digits.target))  # as train_test_split counts it
    if not 10 <= n_test <= len(digits.target) - 10:
        raise ValueError(
            f"test_size={test_size!r} deja {n_test} imágenes de prueba de {len(digits.target)}: cada "
            "conjunto necesita al menos una imagen de cada uno de los 10 dígitos."
        )
    x_tr, x_te, y_tr, y_te = train_test_split(
        digits.images, digits.target, test_size=test_size, stratify=digits.target, random_state=seed)

    def images(a: np.ndarray) -> Tensor:
        return torch.tensor(a, dtype=torch.float32).unsqueeze(1) / 16.0

    def labels(a: np.ndarray) -> Tensor:
        return torch.tensor(a, dtype=torch.long)

    return DigitsSplit(images(x_tr), labels(y_tr), images(x_te), labels(y_te), seed)


# ---------------------------------------------------------------------------
# Baselines
# ---------------------------------------------------------------------------


class TinyCNN(nn.Module):
    """A small convolutional network for 8×8 digits.

    ``conv 3×3 (16) → ReLU → conv 3×3 (32) → ReLU → max-pool 2 → dropout → linear``.

    Shapes: ``(B, 1, 8, 8)`` → ``(B, 10)``.
    """

    def __init__(self, channels: int = 16, n_classes: int = 10, dropout: float = 0.1):
        super().__init__()
        c = checks.positive_int(channels, "channels (canales)")
        self.net = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(checks.probability(dropout, "dropout")),
            nn.Linear(2 * c * 16, checks.positive_int(n_classes, "n_classes", minimum=2)),
        )

    def forward(self, images: Tensor) -> Tensor:
        images = _check_images(images, like=self)
        if tuple(images.shape[1:]) != (1, 8, 8):
            raise ValueError(f"TinyCNN espera imágenes de forma (1, 8, 8); "
                             f"se recibió {tuple(images.shape[1:])}.")
        return self.net(images)


class MLP(nn.Module):
    """A multilayer perceptron on the 64 pixels: ``64 → hidden → ReLU → dropout → 10``.

    Shapes: ``(B, 1, 8, 8)`` → ``(B, 10)``.
    """

    def __init__(self, hidden: int = 128, n_classes: int = 10, dropout: float = 0.1,
                 n_pixels: int = 64):
        super().__init__()
        self.n_pixels = checks.positive_int(n_pixels, "n_pixels")
        self.net = nn.Sequential(
            nn.Flatten(), nn.Linear(self.n_pixels, checks.positive_int(hidden, "hidden")), nn.ReLU(),
            nn.Dropout(checks.probability(dropout, "dropout")),
            nn.Linear(hidden, checks.positive_int(n_classes, "n_classes", minimum=2)),
        )

    def forward(self, images: Tensor) -> Tensor:
        images = _check_images(images, like=self)
        if images[0].numel() != self.n_pixels:
            raise ValueError(f"Este MLP espera imágenes de {self.n_pixels} píxeles; se recibió la forma "
                             f"{tuple(images.shape[1:])} ({images[0].numel()} valores).")
        return self.net(images)


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


#: The chapter's recipe for the 8×8 digits: 40 passes over the 1 347 training images
#: (11 batches of 128 each), 10 % of the steps of warm-up, AdamW, label smoothing.
RECIPE = Recipe(steps=440, batch_size=128, lr=3e-3, warmup=44, smoothing=0.1, weight_decay=0.1)


@torch.no_grad()
def accuracy(model: nn.Module, images: Tensor, labels: Tensor, batch_size: int = 512) -> float:
    """Fraction of ``images`` whose predicted class (arg max of the logits) is ``labels``."""
    checks.module(model, "model")
    images = _check_images(images, like=model)
    labels = checks.ids(labels, "Las etiquetas", ndim=1)
    if len(labels) != len(images):
        raise ValueError(
            f"Hay {len(images)} imágenes y {len(labels)} etiquetas: hace falta exactamente una "
            "etiqueta por imagen."
        )
    if len(labels) == 0:
        raise ValueError("No hay imágenes que evaluar: la exactitud de un conjunto vacío no existe.")
    batch_size = checks.positive_int(batch_size, "batch_size")
    model.eval()
    device = checks.device_of(model)
    hits = 0
    for k in range(0, len(labels), batch_size):
        logits = model(images[k:k + batch_size].to(device))
        # A label the model has no class for would only ever count as a miss.
        checks.ids(labels[k:k + batch_size], "Las etiquetas", vocab_size=logits.shape[-1])
        hits += int((logits.argmax(-1).cpu() == labels[k:k + batch_size].cpu()).sum())
    return hits / len(labels)


def fit(model: nn.Module, data: DigitsSplit, recipe: Recipe = RECIPE, *, seed: int = 0,
        device=None, progress: bool = False, desc: str = "entrenando") -> FitResult:
    """Train ``model`` on ``data.x_train`` with the package's general loop, :func:`dldna.training.fit`.

    Each pass over the training set (an epoch) takes a fresh permutation,
    drawn from a generator seeded with ``seed``; a batch is
    ``min(recipe.batch_size, n)`` images. The loss is
    :class:`dldna.training.LabelSmoothingLoss` with ``recipe.smoothing``; the
    optimiser, schedule and clipping are the recipe's. Seed the model's
    initialisation yourself (``seed_everything`` before building it); ``fit``
    seeds dropout. Measure the result with :func:`accuracy`.
    """
    checks.module(model, "model")
    if not isinstance(data, DigitsSplit):
        raise TypeError(
            f"data debe ser un DigitsSplit (load_digits_split); se recibió {type(data).__name__}."
        )
    _check_recipe(recipe)
    dev = checks.device(device)
    seed = checks.non_negative_int(seed, "seed (semilla)")
    x, y = data.x_train.to(dev), data.y_train.to(dev)
    n = len(y)
    size = min(recipe.batch_size, n)
    per_epoch = math.ceil(n / size)
    generator = torch.Generator().manual_seed(seed)
    order: list[Tensor] = []

    def batches(step: int):
        if step % per_epoch == 0:
            order[:] = [torch.randperm(n, generator=generator).to(dev)]
        idx = order[0][(step % per_epoch) * size:(step % per_epoch + 1) * size]
        return x[idx], y[idx]

    criterion = LabelSmoothingLoss(recipe.smoothing)
    return train(model, batches, lambda m, b: criterion(m(b[0]), b[1]), recipe, device=dev,
                 seed=seed, progress=progress, desc=desc)


def benchmark(device=None, quick: bool = False) -> BenchResult:
    """The row of ``make bench`` for chapter 8: the chapter's ViT (default
    :class:`ViTConfig`, seed 0) trained with :data:`RECIPE` on the digits,
    accuracy on the held-out images. ``quick``: 5 steps."""
    data = load_digits_split()
    recipe = Recipe(steps=5, batch_size=RECIPE.batch_size, lr=RECIPE.lr, warmup=2) if quick else RECIPE
    dev = checks.device(device)
    runtime.seed_everything(0)
    model = VisionTransformer(ViTConfig())
    result = fit(model, data, recipe, device=dev)
    return BenchResult("ViT, dígitos 8×8", dev.type, recipe.steps, result.wall_s,
                       accuracy(model, data.x_test, data.y_test), "", result.steps_per_s)


# ---------------------------------------------------------------------------
# Looking inside a trained ViT
# ---------------------------------------------------------------------------


def _check_maps(maps: Sequence[Tensor]) -> list[Tensor]:
    if isinstance(maps, Tensor):
        maps = [maps]
    if not isinstance(maps, (list, tuple)):
        raise TypeError(f"maps debe ser una lista de mapas de atención (tensores), como la de "
                        f"model.attention_maps(); se recibió {type(maps).__name__}.")
    maps = list(maps)
    if not maps:
        raise ValueError(
            "No hay mapas de atención: llama antes al modelo (model(imágenes)) y pasa "
            "model.attention_maps()."
        )
    # A map typed as a (nested) list or NumPy array is converted, as everywhere else.
    maps = [checks.features(a, f"El mapa de la capa {k}") if isinstance(a, (np.ndarray, list, tuple)) else a
            for k, a in enumerate(maps)]
    for k, a in enumerate(maps):
        if not isinstance(a, Tensor) or a.dim() != 4 or a.shape[-1] != a.shape[-2]:
            got = tuple(a.shape) if isinstance(a, Tensor) else type(a).__name__
            raise ValueError(
                f"El mapa de la capa {k} debe tener forma (batch, cabezas, n, n); se recibió {got}."
            )
        if checks.reads_values(a.detach()):
            a = checks.features(a.detach(), f"El mapa de la capa {k}", finite=True)
            if a.numel() and bool((a < 0).any()):
                raise ValueError(f"El mapa de la capa {k} tiene pesos negativos; los pesos de atención "
                                 "son probabilidades (≥ 0).")
    return maps


def _check_same_tokens(maps: list[Tensor]) -> None:
    # Rollout multiplies the layers' matrices: every layer must see the same tokens of the same batch.
    first = tuple(maps[0].shape[i] for i in (0, 2))
    for k, a in enumerate(maps[1:], start=1):
        if (a.shape[0], a.shape[2]) != first:
            raise ValueError(
                f"Los mapas de todas las capas deben tener el mismo lote y el mismo número de tókenes: "
                f"la capa 0 tiene forma {tuple(maps[0].shape)} y la capa {k}, {tuple(a.shape)}. "
                "Pasa los mapas de un mismo modelo y una misma llamada (model.attention_maps())."
            )


def _grid_side(n_patches: int) -> int:
    side = math.isqrt(n_patches)
    if side * side != n_patches:
        raise ValueError(f"{n_patches} parches no forman una cuadrícula cuadrada.")
    return side


def cls_attention(weights: Tensor) -> Tensor:
    """How much ``[CLS]`` attends to each patch, per head, laid out on the patch grid.

    ``weights``: one layer's map ``(B, heads, N+1, N+1)`` (token 0 = ``[CLS]``).
    Returns ``(B, heads, g, g)`` with ``g = √N``: row 0 of the map without its
    first column (the weight ``[CLS]`` gives itself), so a head's grid sums to
    ``1 − weight on itself``.
    """
    (weights,) = _check_maps([weights])
    g = _grid_side(weights.shape[-1] - 1)
    return weights[:, :, 0, 1:].reshape(*weights.shape[:2], g, g)


def attention_rollout(maps: Sequence[Tensor], residual: bool = True, head_fusion: str = "mean") -> Tensor:
    """Attention rollout (Abnar & Zuidema, 2020): how much each token's output comes from each input.

    Each layer's heads are fused (``"mean"``, ``"max"`` or ``"min"``) into one
    matrix ``A``; with ``residual`` the skip connection is added as
    ``Â = ½·A + ½·I`` and the rows renormalised; the layers are then chained:
    ``R = Â_L · … · Â_2 · Â_1``. Every row of ``R`` sums to 1.

    Shapes: a list of ``(B, heads, n, n)`` → ``(B, n, n)``.
    """
    maps = _check_maps(maps)
    _check_same_tokens(maps)
    residual = checks.boolean(residual, "residual")
    if head_fusion not in ("mean", "max", "min"):
        raise ValueError(f"head_fusion debe ser 'mean', 'max' o 'min'; se recibió {head_fusion!r}.")
    rollout = None
    for a in maps:
        a = a.detach().float()
        if head_fusion == "mean":
            fused = a.mean(dim=1)
        elif head_fusion == "max":
            fused = a.amax(dim=1)
        else:
            fused = a.amin(dim=1)
        if residual:
            eye = torch.eye(fused.shape[-1], device=fused.device)
            fused = 0.5 * fused + 0.5 * eye
        elif checks.reads_values(fused.detach()) and bool((fused.sum(dim=-1) <= 0).any()):
            raise ValueError(
                "Sin la conexión residual, una fila de pesos que suma 0 no se puede normalizar "
                "(el flujo se perdería): usa residual=True o mapas cuyas filas sumen más de 0."
            )
        fused = fused / fused.sum(dim=-1, keepdim=True)
        rollout = fused if rollout is None else fused @ rollout
    return rollout


def position_similarity(table: Tensor, drop_first: bool = True) -> Tensor:
    """Cosine similarity of every patch's position embedding with every other's.

    ``table``: ``(N+1, d)`` (``drop_first`` removes the ``[CLS]`` row) or
    ``(N, d)``. Returns ``(g, g, g, g)``: entry ``[r, c]`` is a ``g × g`` map of
    how similar patch ``(r, c)`` is to every patch, the layout of figure 7 of
    the ViT paper.
    """
    if isinstance(table, (Tensor, np.ndarray, list, tuple)):
        table = checks.features(table, "La tabla de posiciones", finite=True)
    drop_first = checks.boolean(drop_first, "drop_first")
    if not isinstance(table, Tensor) or table.dim() != 2:
        raise ValueError("La tabla de posiciones debe ser una matriz (posiciones, d_model).")
    t = table.detach().float()
    if drop_first:
        t = t[1:]
    g = _grid_side(t.shape[0])
    unit = F.normalize(t, dim=-1)
    return (unit @ unit.T).reshape(g, g, g, g)


def neighbour_agreement(similarity: Tensor) -> float:
    """Fraction of patches whose most similar *other* patch is a grid neighbour (up to 8).

    ``similarity``: ``(g, g, g, g)`` from :func:`position_similarity`. A table
    that has learned the 2-D grid scores near 1; for random vectors the
    expected score is the fraction of neighbours among the other patches
    (about ``8 / (g² − 1)`` away from the border).
    """
    similarity = checks.features(similarity, "similarity", ndim=4, what="(g, g, g, g)")
    g = similarity.shape[0]
    if tuple(similarity.shape) != (g,) * 4 or g < 2:
        raise ValueError(f"similarity debe tener forma (g, g, g, g) con g ≥ 2, como la que devuelve "
                         f"position_similarity; tiene forma {tuple(similarity.shape)}.")
    flat = similarity.reshape(g * g, g * g).clone()
    flat.fill_diagonal_(-float("inf"))
    best = flat.argmax(dim=-1)
    rows, cols = torch.arange(g * g) // g, torch.arange(g * g) % g
    close = ((rows - rows[best]).abs() <= 1) & ((cols - cols[best]).abs() <= 1)
    return float(close.float().mean())


def interpolate_positions(table: Tensor, grid: int, *, has_cls: bool = True,
                          mode: str = "bicubic") -> Tensor:
    """A position table for a larger (or smaller) patch grid, by 2-D interpolation.

    What ViT does to fine-tune at a higher resolution (Dosovitskiy et al.,
    2021, section 3.2): the patch rows of ``table`` are laid out on their
    ``g × g`` grid, each of the ``d`` columns is resampled as an image to
    ``grid × grid`` (``mode``: ``"bicubic"``, ``"bilinear"`` or ``"nearest"``,
    corners aligned, so the four corner rows are kept exactly) and read back
    row by row; the ``[CLS]`` row (row 0 when ``has_cls``) is kept as it is.

    Shapes: ``(1 + g², d)`` (or ``(g², d)``) → ``(1 + grid², d)`` (or ``(grid², d)``).
    """
    if isinstance(table, (Tensor, np.ndarray, list, tuple)):
        table = checks.features(table, "La tabla de posiciones", finite=True)
    has_cls = checks.boolean(has_cls, "has_cls")
    if not isinstance(table, Tensor) or table.dim() != 2:
        raise ValueError("La tabla de posiciones debe ser una matriz (posiciones, d_model).")
    grid = checks.positive_int(grid, "grid (parches por lado)")
    if mode not in ("bicubic", "bilinear", "nearest"):
        raise ValueError(f"mode debe ser 'bicubic', 'bilinear' o 'nearest'; se recibió {mode!r}.")
    t = checks.features(table.detach(), "La tabla de posiciones")
    cls, patches = (t[:1], t[1:]) if has_cls else (t[:0], t)
    g = _grid_side(patches.shape[0])
    image = patches.T.reshape(1, -1, g, g)  # (1, d, g, g): one channel per column of the table
    corners = {} if mode == "nearest" else {"align_corners": True}
    resized = F.interpolate(image, size=(grid, grid), mode=mode, **corners)
    return torch.cat([cls, resized.reshape(-1, grid * grid).T], dim=0)


# ---------------------------------------------------------------------------
# Cost of a patch size, and Swin's windows
# ---------------------------------------------------------------------------


def patch_cost(image_size: int = 8, patch_size: int = 2, d_model: int = 64, d_ff: int = 128,
               n_layers: int = 3, in_channels: int = 1) -> dict[str, int]:
    """Tokens and multiply-accumulates (MACs) of one image through a ViT.

    Per layer: projections Q, K, V and output ``4·n·d²``; scores ``QKᵀ`` and
    the weighted sum of values ``2·n²·d``; feed-forward ``2·n·d·d_ff``;
    plus the patch embedding ``N·C·p²·d`` once (``n = N + 1`` with ``[CLS]``).
    LayerNorm, softmax and biases are left out: they are small.

    Returns ``{"tokens", "pairs" (n², attention scores per head and layer),
    "attention_macs", "total_macs"}``.
    """
    p = checks.positive_int(patch_size, "patch_size")
    size = checks.positive_int(image_size, "image_size")
    _check_divisible(size, size, p)
    n_patches = (size // p) ** 2
    n = n_patches + 1
    d = checks.positive_int(d_model, "d_model")
    per_layer_attn = 4 * n * d * d + 2 * n * n * d
    per_layer = per_layer_attn + 2 * n * d * checks.positive_int(d_ff, "d_ff")
    layers = checks.non_negative_int(n_layers, "n_layers")
    embed = n_patches * checks.positive_int(in_channels, "in_channels") * p * p * d
    return {"tokens": n, "pairs": n * n, "attention_macs": layers * 2 * n * n * d,
            "total_macs": embed + layers * per_layer}


def window_mask(height: int, width: int, window: int, shift: int = 0) -> Tensor:
    """Swin's window attention on a ``height × width`` grid of tokens, as a mask.

    Tokens are numbered row by row (as :func:`patchify` numbers patches). With
    ``shift=0`` the grid is cut into ``window × window`` windows and a token
    may attend only to the tokens of its own window. With ``shift = window // 2``
    the cuts move by ``shift`` (Swin's *shifted windows*): the windows of the
    next layer straddle the borders of the previous ones, and the partial
    windows at the edges stay separate (what Swin obtains with a cyclic shift
    plus a mask).

    Shape ``(height·width, height·width)``, ``True`` = may attend.
    """
    h = checks.positive_int(height, "height (alto)")
    w = checks.positive_int(width, "width (ancho)")
    win = checks.positive_int(window, "window (tamaño de la ventana)")
    s = checks.non_negative_int(shift, "shift (desplazamiento)")
    if h % win or w % win:
        raise ValueError(f"La ventana de {win}×{win} debe dividir la cuadrícula de {h}×{w}.")
    if s >= win:
        raise ValueError(f"El desplazamiento ({s}) debe ser menor que la ventana ({win}).")
    pos = torch.arange(h * w)
    rows, cols = pos // w, pos % w
    shifted = (win - s) % win  # windows start at rows/columns ≡ -shift (mod window)
    win_r, win_c = (rows + shifted) // win, (cols + shifted) // win
    ids = win_r * (w // win + 1) + win_c
    return ids[:, None] == ids[None, :]
