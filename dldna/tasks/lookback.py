"""Chapter 5's extrapolation probe: "repeat the token ``lag`` places back", trained with ``fit``.

The task and the model are in :mod:`dldna.positional` (:func:`~dldna.positional.lookback_batch`,
:class:`~dldna.positional.PositionProbe`, :func:`~dldna.positional.probe_accuracy`); this
module only trains them, with :func:`dldna.training.fit`, so that the probe has
no loop of its own.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

from dldna import checks, runtime
from dldna.positional import PositionProbe, lookback_batch
from dldna.training import FitResult, Recipe, fit

__all__ = ["RECIPE", "train_probe"]

#: The probe's recipe: 200 steps of Adam at a constant rate after a one-step warm-up, no clipping
#: (short, so that seven schemes × three seeds fit in the time of a chapter).
RECIPE = Recipe(steps=200, batch_size=64, lr=3e-3, warmup=1, schedule="constant", grad_clip=None)


def train_probe(scheme: str, recipe: Recipe = RECIPE, *, length: int = 24, lag: int = 3, seed: int = 0,
                device=None, progress: bool = False, model: PositionProbe | None = None,
                **model_kwargs) -> tuple[PositionProbe, FitResult]:
    """Train a :class:`~dldna.positional.PositionProbe` on sequences of ``length`` tokens.

    The model is initialised after :func:`dldna.runtime.seed_everything` (``seed``) and
    the batches come from a generator seeded with ``seed + 1``, so a call is
    reproducible on the same machine. ``model_kwargs`` go to ``PositionProbe``
    (``max_len`` is ``length``). Trains on ``device`` (default: the book's device)
    with the same recipe on every device. Returns the model, in eval mode, and
    the :class:`~dldna.training.FitResult`.

    ``model``: go on training this probe (a fine-tune, for instance at a longer
    ``length``) instead of a fresh one; ``scheme`` must be its scheme, and
    ``model_kwargs`` are not allowed. It is trained in place.
    """
    length = checks.positive_int(length, "length")
    lag = checks.positive_int(lag, "lag")
    seed = checks.non_negative_int(seed, "seed")
    if model is None:
        runtime.seed_everything(seed)
        model = PositionProbe(scheme, max_len=length, **model_kwargs)
    elif not isinstance(model, PositionProbe):
        raise TypeError(f"model debe ser una PositionProbe ya creada; se recibió {type(model).__name__}.")
    elif model.scheme != scheme or model_kwargs:
        raise ValueError(f"Para seguir entrenando una sonda, scheme debe ser el suyo ({model.scheme!r}) y no "
                         f"se pasan medidas del modelo; se recibió {scheme!r} y {sorted(model_kwargs)}.")
    vocab = model.head[-1].out_features
    generator = torch.Generator().manual_seed(seed + 1)

    def batches(_step: int):
        return lookback_batch(recipe.batch_size, length, lag, vocab, generator=generator)

    def loss_fn(m, batch):
        x, y = batch
        return F.cross_entropy(m(x).flatten(0, 1), y.flatten())

    result = fit(model, batches, loss_fn, recipe, device=device, seed=seed, progress=progress,
                 desc=f"sonda {scheme}")
    return model.eval(), result
