"""Training: the Noam learning-rate rule, label smoothing, and a small training loop.

* :func:`noam_rate`, :func:`noam_lambda`, :func:`noam_scheduler` and
  :func:`noam_optimizer`: the schedule of Vaswani et al. (2017),

      lr(t) = factor · d_model^(-1/2) · min(t^(-1/2), t · warmup^(-3/2)),

  a linear warm-up during ``warmup`` steps followed by a decay as ``1/√t``;
  its peak, at ``t = warmup``, is ``factor / √(d_model · warmup)``.
* :class:`LabelSmoothingLoss`: cross-entropy against the smoothed target
  ``(1 - ε)·one_hot + ε/V`` (the same definition, and the same numbers, as
  ``nn.CrossEntropyLoss(label_smoothing=ε)``), and :func:`smoothed_targets`.
* :func:`seq2seq_loss`: teacher forcing for a :class:`dldna.transformer.Transformer`
  (the decoder reads ``tgt[:, :-1]`` and predicts ``tgt[:, 1:]``).
* :func:`train_steps`: a generic loop of optimisation steps returning a
  :class:`History`; :func:`layer_gradient_norms` measures gradients per layer.

The loop is deliberately small (chapter 6 overfits one batch with it). Every
chapter that trains uses it through one front end:

* :class:`Recipe` (steps, batch size, peak rate, warm-up in steps, schedule,
  weight decay) and :func:`warmup_linear_lambda`, a warm-up followed by a
  linear decay to 0;
* :func:`fit`: ``fit(model, batches, loss_fn, recipe, evaluate=…)`` trains
  any model on the batches ``batches(step)``, with a text progress bar
  showing the loss (``tqdm.std`` on stdout) and periodic evaluation; it
  returns a :class:`FitResult`. :func:`dldna.tasks.train` builds the three
  functions for a sequence-to-sequence task;
* :func:`save_checkpoint` / :func:`load_checkpoint`: saved only on request,
  loaded with ``weights_only=True`` onto the current device;
  :class:`CheckpointError` (Spanish message) for corrupt or mismatched files.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pickle
import sys
import time
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F
from tqdm.std import tqdm

from dldna import checks, runtime
from dldna.transformer import Transformer, TransformerConfig

__all__ = [
    "noam_rate",
    "noam_lambda",
    "noam_scheduler",
    "noam_optimizer",
    "smoothed_targets",
    "LabelSmoothingLoss",
    "seq2seq_loss",
    "History",
    "train_steps",
    "layer_gradient_norms",
    "SCHEDULES",
    "warmup_linear_lambda",
    "Recipe",
    "FitResult",
    "fit",
    "CheckpointError",
    "save_checkpoint",
    "load_checkpoint",
]


# ---------------------------------------------------------------------------
# The Noam schedule
# ---------------------------------------------------------------------------


def noam_rate(step: int, d_model: int, warmup: int = 4000, factor: float = 1.0) -> float:
    """``factor · d_model^(-1/2) · min(step^(-1/2), step · warmup^(-3/2))`` for ``step ≥ 1``."""
    checks.positive_int(step, "step (número de paso, desde 1)")
    checks.positive_int(d_model, "d_model")
    checks.positive_int(warmup, "warmup (pasos de calentamiento)")
    checks.positive_number(factor, "factor")
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def noam_lambda(d_model: int, warmup: int = 4000, factor: float = 1.0) -> Callable[[int], float]:
    """The rule as a function of the scheduler's counter (``0, 1, …``), for ``LambdaLR``.

    ``LambdaLR`` starts counting at 0 and the rule at 1, so counter ``s`` gives
    ``noam_rate(s + 1)``.
    """
    noam_rate(1, d_model, warmup, factor)  # validate once, with Spanish messages

    def rate(counter: int) -> float:
        return noam_rate(counter + 1, d_model, warmup, factor)

    return rate


def noam_scheduler(optimizer: torch.optim.Optimizer, d_model: int, warmup: int = 4000,
                   factor: float = 1.0) -> torch.optim.lr_scheduler.LambdaLR:
    """A ``LambdaLR`` that follows the Noam rule.

    ``LambdaLR`` *multiplies* the optimiser's initial ``lr`` by the rule, so
    create the optimiser with ``lr=1.0`` to get exactly the rates of
    :func:`noam_rate` (as :func:`noam_optimizer` does). Call
    ``scheduler.step()`` after every ``optimizer.step()``.
    """
    return torch.optim.lr_scheduler.LambdaLR(_optimizer(optimizer), noam_lambda(d_model, warmup, factor))


def noam_optimizer(params: Iterable, d_model: int, warmup: int = 4000, factor: float = 1.0,
                   ) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Adam with the paper's settings (β₁ = 0.9, β₂ = 0.98, ε = 10⁻⁹) and the Noam schedule."""
    noam_rate(1, d_model, warmup, factor)  # validate before building anything
    optimizer = torch.optim.Adam(_parameters(params), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    return optimizer, noam_scheduler(optimizer, d_model, warmup, factor)


def _parameters(params) -> list:
    """``params`` (``model.parameters()``, a list of tensors or of parameter groups) as a list."""
    if isinstance(params, (Tensor, str, bytes, dict)) or not isinstance(params, Iterable):
        raise TypeError("params debe ser los parámetros de un modelo, p. ej. modelo.parameters(); "
                        f"se recibió {type(params).__name__}.")
    params = list(params)
    if not params:
        raise ValueError("params está vacío: el modelo no tiene parámetros que entrenar.")
    if not all(isinstance(p, Tensor) or isinstance(p, dict) for p in params):
        raise TypeError("params debe contener tensores (los parámetros de un modelo, p. ej. "
                        "modelo.parameters()).")
    return params


def _optimizer(optimizer) -> torch.optim.Optimizer:
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError("optimizer debe ser un optimizador de PyTorch (p. ej. torch.optim.Adam); "
                        f"se recibió {type(optimizer).__name__}.")
    return optimizer


# ---------------------------------------------------------------------------
# Label smoothing
# ---------------------------------------------------------------------------


def _check_smoothing(smoothing) -> float:
    if (isinstance(smoothing, bool) or not isinstance(smoothing, (int, float))
            or not 0.0 <= smoothing <= 1.0):
        raise ValueError(
            f"El suavizado de etiquetas debe estar en [0, 1]; se recibió {smoothing!r} "
            "(0 = entropía cruzada normal; el artículo original usa 0.1)."
        )
    return float(smoothing)


def smoothed_targets(target: Tensor, n_classes: int, smoothing: float) -> Tensor:
    """The smoothed target distribution ``(1 - ε)·one_hot(target) + ε / n_classes``.

    Shapes: target ``(...)`` (class ids) → ``(..., n_classes)``; every row sums to 1.
    """
    eps = _check_smoothing(smoothing)
    n_classes = checks.positive_int(n_classes, "n_classes (número de clases)")
    target = checks.ids(target, "target (las clases correctas)", vocab_size=n_classes)
    one_hot = F.one_hot(target, n_classes).float()
    return (1.0 - eps) * one_hot + eps / n_classes


class LabelSmoothingLoss(nn.Module):
    """Cross-entropy with label smoothing (Szegedy et al., 2016), averaged over real tokens.

    With ``q = (1 - ε)·one_hot(y) + ε/V`` and ``p = softmax(logits)``::

        loss = -Σ_k q_k log p_k = (1 - ε)·(-log p_y) + ε · mean_k(-log p_k)

    This is exactly what ``nn.CrossEntropyLoss(label_smoothing=ε,
    ignore_index=…)`` computes (the ε/V mass also lands on the padding class);
    the class writes it out so that the formula can be read. Its minimum is not
    0 but the entropy of ``q``, reached when ``p = q``.

    Shapes: logits ``(..., V)``, target ``(...)`` → a scalar (``reduction="mean"``,
    over the positions whose target is not ``ignore_index``), or the loss of
    every position (``reduction="none"``, 0 where ignored).

    When every target is ``ignore_index`` the mean is 0, by choice: there is
    nothing to learn from such a batch, and a training loop should not see a
    NaN (``nn.CrossEntropyLoss`` gives NaN there: 0 / 0).
    """

    def __init__(self, smoothing: float = 0.1, ignore_index: int | None = None,
                 reduction: str = "mean"):
        super().__init__()
        self.smoothing = _check_smoothing(smoothing)
        if ignore_index is not None:
            ignore_index = checks.integer(ignore_index, "ignore_index (clase ignorada)")
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction debe ser 'mean', 'sum' o 'none'; se recibió {reduction!r}.")
        self.ignore_index, self.reduction = ignore_index, reduction

    def extra_repr(self) -> str:
        return f"smoothing={self.smoothing}, ignore_index={self.ignore_index}"

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        # NaN in the reader's own logits would come out as a NaN loss; a model's
        # logits (with a grad_fn) are not read here: fit checks the loss itself.
        logits = checks.features(logits, "logits (las predicciones)")
        if logits.dim() < 1 or logits.shape[-1] == 0:
            raise ValueError(f"logits debe tener forma (..., clases) con al menos una clase; "
                             f"tiene forma {tuple(logits.shape)}.")
        target = checks.ids(target, "target (las clases correctas)", like=logits)
        if checks.reads_values(target):
            real = target if self.ignore_index is None else target[target != self.ignore_index]
            checks.ids(real, "target (las clases correctas)", vocab_size=logits.shape[-1])
        if logits.shape[:-1] != target.shape:
            raise ValueError(
                f"Las predicciones {tuple(logits.shape)} deben tener una dimensión más (el "
                f"vocabulario) que los objetivos {tuple(target.shape)}."
            )
        log_p = torch.log_softmax(logits.float(), dim=-1)
        keep = (torch.ones_like(target, dtype=torch.bool) if self.ignore_index is None
                else target != self.ignore_index)
        safe = target.masked_fill(~keep, 0)
        nll = -log_p.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
        uniform = -log_p.mean(dim=-1)
        loss = ((1.0 - self.smoothing) * nll + self.smoothing * uniform) * keep
        if self.reduction == "none":
            return loss
        if self.reduction == "sum":
            return loss.sum()
        return loss.sum() / keep.sum().clamp_min(1)


def seq2seq_loss(model: nn.Module, src: Tensor, tgt: Tensor, *, pad_id: int = 0,
                 smoothing: float = 0.0) -> Tensor:
    """Teacher forcing: ``model(src, tgt[:, :-1])`` predicts ``tgt[:, 1:]``; padding ignored.

    ``tgt`` starts with a begin-of-sequence token, so position ``t`` of the
    decoder's input predicts the token at ``t + 1``.
    """
    checks.module(model, "model")
    tgt = checks.ids(tgt, "tgt (la salida esperada)", ndim=2)
    pad_id = checks.non_negative_int(pad_id, "pad_id")
    if tgt.shape[1] < 2:
        raise ValueError(
            "tgt debe tener forma (batch, T) con T ≥ 2: un tóken de inicio y al menos un tóken "
            f"que predecir; se recibió {tuple(tgt.shape)}."
        )
    logits = model(src, tgt[:, :-1])
    return LabelSmoothingLoss(smoothing, ignore_index=pad_id)(logits, tgt[:, 1:])


# ---------------------------------------------------------------------------
# A small training loop
# ---------------------------------------------------------------------------


@dataclass
class History:
    """What :func:`train_steps` saw: the loss and learning rate of every step."""

    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return len(self.loss)

    @property
    def final(self) -> float:
        """The last loss (``nan`` if no step ran)."""
        return self.loss[-1] if self.loss else float("nan")


def _batches(batches) -> Callable[[int], object]:
    """Normalise the ways of giving batches into a function ``step → batch``."""
    if callable(batches):
        return batches
    if isinstance(batches, tuple) and all(isinstance(b, Tensor) for b in batches):
        return lambda _step: batches  # one fixed batch, used at every step
    try:
        iterator = iter(batches)
    except TypeError:
        raise TypeError(
            "batches debe ser una función paso → lote, una lista o un generador de lotes, o una tupla "
            f"de tensores (un lote fijo); se recibió {type(batches).__name__}."
        ) from None

    def following(_step: int):
        try:
            return next(iterator)
        except StopIteration:
            raise ValueError("Se acabaron los lotes antes de completar los pasos pedidos.") from None

    return following


def train_steps(
    model: nn.Module,
    batches,
    optimizer: torch.optim.Optimizer,
    *,
    steps: int,
    loss_fn: Callable[[nn.Module, object], Tensor],
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    grad_clip: float | None = None,
    on_step: Callable[[int, History], None] | None = None,
    read_every: int = 10,
) -> History:
    """Run ``steps`` optimisation steps and return their :class:`History`.

    Args:
        batches: a tuple of tensors (the same batch at every step: to overfit
            it), an iterable of batches, or a function ``step → batch``.
        loss_fn: ``loss_fn(model, batch)`` returns the scalar loss, e.g.
            ``lambda m, b: seq2seq_loss(m, *b, pad_id=0)``.
        scheduler: stepped after every optimiser step (e.g. :func:`noam_scheduler`).
        grad_clip: clip the gradients' global norm to this value.
        on_step: called as ``on_step(steps_done, history)`` after each step.
        read_every: the losses stay on the device and are copied to
            ``history.loss`` every ``read_every`` steps (and at the end):
            reading a GPU value waits for the GPU, so reading it at every
            step would leave the GPU idle while Python prepares the next one.
            ``history.loss`` may lag behind ``steps_done`` by fewer than
            ``read_every`` steps inside ``on_step``.

    The model is put in training mode; the learning rate recorded is the one
    used by each step. A loss that stops being finite raises
    ``FloatingPointError`` when it is read (naming its step).
    """
    checks.module(model, "model")
    _optimizer(optimizer)
    checks.function(loss_fn, "loss_fn", "una función (modelo, lote) → pérdida")
    if scheduler is not None and not callable(getattr(scheduler, "step", None)):
        raise TypeError(f"scheduler debe ser un planificador de PyTorch (con .step()) o None; "
                        f"se recibió {type(scheduler).__name__}.")
    if on_step is not None:
        checks.function(on_step, "on_step", "una función (pasos hechos, historia)")
    steps = checks.non_negative_int(steps, "steps")
    read_every = checks.positive_int(read_every, "read_every")
    if grad_clip is not None:
        checks.positive_number(grad_clip, "grad_clip")
    get = _batches(batches)
    history = History()
    pending: list[Tensor] = []

    def read() -> None:
        if not pending:
            return
        values = torch.stack(pending).float().cpu().tolist()
        for value in values:
            if not math.isfinite(value):
                raise FloatingPointError(
                    f"La pérdida dejó de ser finita en el paso {len(history.loss) + 1} ({value}): "
                    "prueba una tasa de aprendizaje menor o recorta los gradientes (grad_clip)."
                )
            history.loss.append(value)
        pending.clear()

    model.train()
    for step in range(steps):
        batch = get(step)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model, batch)
        loss.backward()
        if grad_clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        history.lr.append(float(optimizer.param_groups[0]["lr"]))
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        pending.append(loss.detach())
        if len(pending) == read_every or step == steps - 1:
            read()
        if on_step is not None:
            on_step(step + 1, history)
    return history


def layer_gradient_norms(layers: Sequence[nn.Module]) -> list[float]:
    """Global norm of the gradients of each module's parameters (after a backward pass).

    Parameters without a gradient count as zero, and a module without
    trainable parameters gives 0. A module whose trainable parameters have no
    gradient at all is refused: before ``backward()`` its norm is not 0 but
    not measured yet.
    """
    if isinstance(layers, nn.Module) and not isinstance(layers, (nn.ModuleList, nn.Sequential)):
        layers = [layers]
    if isinstance(layers, (str, bytes, Tensor)) or not isinstance(layers, Iterable):
        raise TypeError("layers debe ser una lista de capas (nn.Module), p. ej. modelo.decoder.layers; "
                        f"se recibió {type(layers).__name__}.")
    layers = [checks.module(layer, "Cada capa de layers") for layer in layers]
    norms = []
    for k, layer in enumerate(layers):
        grads = [p.grad.detach().flatten() for p in layer.parameters() if p.grad is not None]
        if not grads and any(p.requires_grad for p in layer.parameters()):
            raise ValueError(f"La capa {k} de layers aún no tiene gradientes: llama antes a "
                             "pérdida.backward() (o la capa no intervino en la pérdida).")
        norms.append(float(torch.cat(grads).norm()) if grads else 0.0)
    return norms


# ---------------------------------------------------------------------------
# Training on a task (chapter 7): recipe, schedule, progress bar, evaluation
# ---------------------------------------------------------------------------


def warmup_linear_lambda(warmup: int, total: int) -> Callable[[int], float]:
    """Multiplier of the peak rate for ``LambdaLR``: linear warm-up, then linear decay to 0.

    Counter ``s`` (from 0) gives ``(s + 1) / warmup`` during the first ``warmup``
    steps and ``(total - s) / (total - warmup)`` after; the last step
    (``s = total - 1``) still moves the weights a little. Short runs converge
    better with this decay than with Noam's ``1/√t``, which never gets small.
    """
    checks.positive_int(warmup, "warmup (pasos de calentamiento)")
    checks.positive_int(total, "total (pasos de entrenamiento)")
    if warmup >= total:
        raise ValueError(
            f"El calentamiento ({warmup} pasos) debe ser más corto que el entrenamiento "
            f"({total} pasos)."
        )

    def rate(counter: int) -> float:
        if counter < warmup:
            return (counter + 1) / warmup
        return max(0.0, (total - counter) / (total - warmup))

    return rate


#: Learning-rate schedules of :class:`Recipe`.
SCHEDULES: tuple[str, ...] = ("linear", "noam", "constant")


@dataclass
class Recipe:
    """Everything that defines a training run except the model and the data.

    * ``steps``, ``batch_size``: how many optimiser steps, of how many examples;
    * ``lr``: the peak learning rate, reached after ``warmup`` steps (warm-up
      is always counted in steps);
    * ``schedule``: ``"linear"`` (:func:`warmup_linear_lambda`), ``"noam"``
      (the rule of the paper, scaled so that its peak is ``lr``) or
      ``"constant"`` (the warm-up, then ``lr`` until the end);
    * ``smoothing``: label smoothing ε; ``grad_clip``: clip the gradient norm;
    * ``eval_every``: every how many steps to evaluate (0: never);
      ``eval_size``: how many validation examples a task evaluates on;
    * ``weight_decay``: 0 gives Adam; above 0, AdamW with this decoupled decay.
    """

    steps: int
    batch_size: int
    lr: float
    warmup: int
    schedule: str = "linear"
    smoothing: float = 0.0
    grad_clip: float | None = 1.0
    eval_every: int = 0
    eval_size: int = 200
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        checks.positive_int(self.steps, "steps")
        checks.positive_int(self.batch_size, "batch_size")
        checks.positive_number(self.lr, "lr")
        checks.positive_int(self.warmup, "warmup (pasos de calentamiento)")
        if self.schedule not in SCHEDULES:
            raise ValueError(
                f"schedule debe ser 'linear' (calentamiento y bajada lineal), 'noam' o 'constant'; "
                f"se recibió {self.schedule!r}."
            )
        _check_smoothing(self.smoothing)
        if self.grad_clip is not None:
            checks.positive_number(self.grad_clip, "grad_clip")
        checks.non_negative_int(self.eval_every, "eval_every")
        checks.positive_int(self.eval_size, "eval_size")
        checks.non_negative_number(self.weight_decay, "weight_decay")
        if self.warmup >= self.steps:
            raise ValueError(
                f"El calentamiento ({self.warmup} pasos) debe ser más corto que el entrenamiento "
                f"({self.steps} pasos)."
            )

    def rate(self) -> Callable[[int], float]:
        """The schedule as a multiplier of ``lr`` for ``LambdaLR`` (counter from 0)."""
        if self.schedule == "linear":
            return warmup_linear_lambda(self.warmup, self.steps)
        if self.schedule == "constant":
            return lambda counter: min(1.0, (counter + 1) / self.warmup)
        # Noam's rule with factor √warmup peaks at 1 when t = warmup (d_model cancels).
        return noam_lambda(1, self.warmup, math.sqrt(self.warmup))

    def optimizer(self, params: Iterable) -> torch.optim.Optimizer:
        """Adam (β = (0.9, 0.98), ε = 10⁻⁹), or AdamW when ``weight_decay > 0``.

        ``foreach=True`` on every device (PyTorch picks it by default only on
        a GPU): all the parameters are updated in a few calls instead of a
        dozen per tensor, with bit-identical results (``tests/test_training.py``),
        so a CPU and a GPU run the same update.
        """
        if self.weight_decay > 0:
            return torch.optim.AdamW(params, lr=self.lr, betas=(0.9, 0.98), eps=1e-9,
                                     weight_decay=self.weight_decay, foreach=True)
        return torch.optim.Adam(params, lr=self.lr, betas=(0.9, 0.98), eps=1e-9, foreach=True)


@dataclass
class FitResult:
    """What :func:`fit` returns: the per-step :class:`History`, the evaluations
    ``(step, value)`` made every ``recipe.eval_every`` steps, and timings."""

    history: History
    recipe: Recipe
    device: str
    wall_s: float
    evals: list[tuple[int, float]] = field(default_factory=list)
    #: Seconds from the start of training to the end of each evaluation of ``evals``.
    eval_s: list[float] = field(default_factory=list)
    #: The weights after each step asked for in ``fit(..., snapshots=…)``: step → state dict.
    snapshots: dict[int, dict[str, Tensor]] = field(default_factory=dict, repr=False)
    #: How many models trained together in these steps and this wall time (:mod:`dldna.ensemble`).
    together: int = 1

    def seconds_to(self, value: float) -> float | None:
        """Wall time until an evaluation first reached ``value`` (``None`` if none did)."""
        return next((t for (_, v), t in zip(self.evals, self.eval_s, strict=True) if v >= value), None)

    @property
    def steps_per_s(self) -> float:
        """Optimisation steps per second of wall time (evaluations included)."""
        return self.history.steps / self.wall_s if self.wall_s > 0 else float("nan")

    def log(self, every: int | None = None) -> str:
        """A table (Spanish) of the mean loss, learning rate and validation
        accuracy every ``every`` steps (default: ``recipe.eval_every`` or steps/10).
        It holds no timings, so it is the same on every run of the same machine."""
        h = self.history
        every = every or self.recipe.eval_every or max(1, h.steps // 10)
        acc = dict(self.evals)
        lines = ["   paso   pérdida media   tasa de aprendizaje"
                 + ("   exactitud (validación)" if acc else "")]
        for end, loss in zip(range(every, h.steps + 1, every), self.mean_losses(every), strict=True):
            line = f"{end:7d}   {loss:13.4f}   {h.lr[end - 1]:19.2e}"
            if end in acc:
                line += f"   {100 * acc[end]:21.1f} %"
            lines.append(line)
        return "\n".join(lines)

    def mean_losses(self, every: int) -> list[float]:
        """The mean training loss of each window of ``every`` steps (the rows of
        :meth:`log`); an incomplete last window is left out."""
        every = checks.positive_int(every, "every")
        loss = self.history.loss
        return [sum(loss[end - every:end]) / every for end in range(every, self.history.steps + 1, every)]


def _check_recipe(recipe, *, optional: bool = False) -> Recipe | None:
    """``recipe`` if it is a :class:`Recipe` (or ``None`` when ``optional``)."""
    if not isinstance(recipe, Recipe) and not (optional and recipe is None):
        also = " (o None)" if optional else ""
        raise TypeError(f"recipe debe ser un dldna.training.Recipe{also}; "
                        f"se recibió {type(recipe).__name__}.")
    return recipe


def _evaluate(model: nn.Module, evaluate: Callable[[nn.Module], float]) -> float:
    """``evaluate(model)`` in eval mode and without gradients, checked to lie in [0, 1]."""
    model.eval()
    with torch.no_grad():
        value = evaluate(model)
    model.train()
    return checks.probability(value, "El valor que devuelve evaluate")


def _progress(total: int, desc: str, enabled: bool):
    """A text progress bar on stdout (``tqdm.std``, not the widget bar): in a
    stored notebook it leaves plain text, which the tests' sanitiser replaces.
    Written as the book writes numbers (``100 %``) and in Spanish (``pasos/s``,
    not tqdm's ``it/s``). 100 columns: chapter 7b's descriptions («cifra mayor
    primero, semilla 0») still leave room for the whole loss (tested)."""
    if not enabled:
        return None
    return tqdm(total=total, desc=desc, file=sys.stdout, mininterval=1.0, ascii=False,
                dynamic_ncols=False, ncols=100, leave=True, unit=" pasos",
                bar_format="{desc}: {percentage:3.0f} % |{bar}| {n_fmt}/{total_fmt} "
                           "[{elapsed}<{remaining}, {rate_fmt}{postfix}]")


def _to_device(batch, device: torch.device):
    """Move a batch (a tensor, a tuple/list of tensors, or an object with ``.to``) to ``device``."""
    if isinstance(batch, Tensor) or hasattr(batch, "to"):
        return batch.to(device)
    if isinstance(batch, (tuple, list)):
        return type(batch)(_to_device(b, device) for b in batch)
    raise TypeError(
        "Cada lote debe ser un tensor, una tupla de tensores o un objeto con método .to(); "
        f"se recibió {type(batch).__name__}."
    )


#: How often :func:`fit` copies the losses from the device (see :func:`train_steps`).
READ_EVERY = 25


def fit(model: nn.Module, batches, loss_fn: Callable[[nn.Module, object], Tensor],
        recipe: Recipe, *, evaluate: Callable[[nn.Module], float] | None = None, device=None,
        seed: int = 0, progress: bool = True, desc: str = "entrenando",
        snapshots: Sequence[int] = ()) -> FitResult:
    """Train ``model`` with ``recipe``: the one training loop of the book.

    Every step takes the batch ``batches(step)``, moves it to the device,
    computes ``loss_fn(model, batch)`` and takes one step of Adam
    (β = (0.9, 0.98), ε = 10⁻⁹; AdamW if ``recipe.weight_decay > 0``) with the
    recipe's schedule and gradient clipping. A text progress bar shows the
    loss. Every ``recipe.eval_every`` steps ``evaluate(model)`` is called
    with the model in eval mode and under ``torch.no_grad()``; its value
    (in [0, 1], e.g. an accuracy) is recorded in ``FitResult.evals``.

    Args:
        batches: ``batches(step) -> batch`` (a tensor, a tuple of tensors or
            an object with ``.to(device)``); an iterable of batches, or one
            fixed tuple of tensors, are accepted too.
        loss_fn: ``loss_fn(model, batch) -> scalar loss``.
        evaluate: ``evaluate(model) -> float in [0, 1]`` (optional).
        device: where to train (default: :func:`dldna.runtime.get_device`);
            the model is moved there.
        seed: seeds PyTorch (initialisation done later, dropout); the data are
            the business of ``batches``.
        snapshots: steps after which a copy of the weights is kept in
            ``FitResult.snapshots`` (on the training device). With a schedule
            whose rate does not depend on the total (``"constant"``,
            ``"noam"``), the snapshot at step ``k`` is the model that a run of
            ``k`` steps with the same seed would give, without training it.

    Mixed precision is not used: the book's models are a few hundred
    thousand parameters, bound by kernel launches and Python rather than by
    arithmetic, so bfloat16 would save almost nothing and would make the
    printed losses differ between a CPU and a GPU. Nor are ``torch.compile``
    or CUDA graphs. Measured on a 2-core CPU with chapter 7b's model,
    compiling took 50 s before the first step (more than twice the whole
    500-step training) and the compiled steps were slower, not faster (2.2 s
    against 1.7 s for 50 steps); the graph breaks where the range check of
    the input ids reads their values. CUDA graphs need the same shapes
    at every step, and the batches of the translation and parsing tasks are
    padded to their longest sentence, so their length changes. On a GPU
    neither has been measured.

    Returns a :class:`FitResult`; ``wall_s`` includes the evaluations, and
    on a GPU it waits for the last step to finish before stopping the clock.
    """
    checks.module(model, "model")
    dev = checks.device(device)
    get = _batches(batches)
    progress = checks.boolean(progress, "progress")
    seed = checks.non_negative_int(seed, "seed (semilla)")
    if isinstance(snapshots, (str, bytes)) or not isinstance(snapshots, Iterable):
        raise TypeError("snapshots debe ser una lista de pasos, p. ej. (100, 200); "
                        f"se recibió {type(snapshots).__name__}: {snapshots!r}.")
    if not callable(loss_fn):
        raise TypeError(f"loss_fn debe ser una función (modelo, lote) → pérdida; se recibió {loss_fn!r}.")
    if evaluate is not None and not callable(evaluate):
        raise TypeError(f"evaluate debe ser una función modelo → número; se recibió {evaluate!r}.")
    _check_recipe(recipe)
    keep = sorted({checks.positive_int(k, "cada paso de snapshots") for k in snapshots})
    if keep and keep[-1] > recipe.steps:
        raise ValueError(f"snapshots pide el paso {keep[-1]}, pero la receta tiene {recipe.steps} pasos.")
    kept: dict[int, dict[str, Tensor]] = {}
    model.to(dev)
    runtime.seed_everything(seed)
    optimizer = recipe.optimizer(model.parameters())
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, recipe.rate())
    bar = _progress(recipe.steps, desc, progress)
    evals: list[tuple[int, float]] = []
    eval_s: list[float] = []
    shown = 0

    def on_step(done: int, history: History) -> None:
        nonlocal shown
        if bar is not None:
            bar.update(1)
            if history.steps > shown:
                shown = history.steps
                bar.set_postfix_str(f"pérdida={history.final:.4f}", refresh=False)
        if done in keep:
            kept[done] = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if evaluate is not None and recipe.eval_every and done % recipe.eval_every == 0:
            evals.append((done, _evaluate(model, evaluate)))
            eval_s.append(time.perf_counter() - start)

    start = time.perf_counter()
    try:
        history = train_steps(
            model, lambda step: _to_device(get(step), dev), optimizer, steps=recipe.steps,
            loss_fn=loss_fn, scheduler=scheduler, grad_clip=recipe.grad_clip, on_step=on_step,
            read_every=READ_EVERY,
        )
    finally:
        if bar is not None:
            bar.close()
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    wall = time.perf_counter() - start
    model.eval()
    return FitResult(history, recipe, str(dev), wall, evals, eval_s, kept)


# ---------------------------------------------------------------------------
# Checkpoints
# ---------------------------------------------------------------------------


class CheckpointError(ValueError):
    """A checkpoint file is corrupt, is not a checkpoint of the book, or does
    not match the model it is loaded into."""


_CHECKPOINT_FORMAT = "dldna-transformer"


def _plain(value):
    """``value`` with NumPy scalars and arrays turned into Python numbers and
    lists, so that ``torch.load(weights_only=True)`` can read it back."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    return value


def _path(path) -> Path:
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise TypeError(f"path debe ser la ruta de un archivo (un texto o un Path); se recibió {path!r}.")
    return Path(path)


def save_checkpoint(model: nn.Module, path, *, extra: dict | None = None):
    """Save ``model`` (a :class:`dldna.transformer.Transformer`) to ``path``.

    The file holds the configuration (so :func:`load_checkpoint` can rebuild
    the model), the weights moved to the CPU (so a model trained on a GPU
    loads anywhere) and ``extra``, a dict of plain values (numbers, text,
    lists) such as the task or the accuracy reached. Nothing is saved unless
    you call this function. Returns the path.
    """
    config = getattr(model, "config", None)
    if config is None or not dataclasses.is_dataclass(config):
        raise TypeError(
            "save_checkpoint guarda modelos de dldna.transformer.Transformer (con su "
            f"configuración en model.config); se recibió {type(model).__name__}."
        )
    path = _path(path)
    if extra is not None and not isinstance(extra, dict):
        raise TypeError(f"extra debe ser un diccionario de valores simples o None; se recibió "
                        f"{type(extra).__name__}.")
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({
        "format": _CHECKPOINT_FORMAT,
        "version": 1,
        "config": dataclasses.asdict(config),
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "extra": _plain(dict(extra or {})),
    }, path)
    return path


def load_checkpoint(path, model: nn.Module | None = None, *, device=None):
    """Load a checkpoint written by :func:`save_checkpoint`.

    Reads with ``torch.load(..., weights_only=True)`` (no arbitrary code is
    run) and ``map_location`` = ``device`` (default: the current device of
    :func:`dldna.runtime.get_device`), so a GPU checkpoint loads on a CPU.

    Args:
        model: load into this model, whose configuration must be the same;
            without it, a new :class:`dldna.transformer.Transformer` is built
            from the saved configuration.

    Returns ``(model, extra)``, the model in eval mode on ``device``.

    Raises:
        FileNotFoundError: no such file.
        CheckpointError: the file is corrupt, is not a checkpoint of this
            book, or does not fit ``model`` (the message says what differs).
    """
    path = _path(path)
    dev = checks.device(device)
    if not path.is_file():
        raise FileNotFoundError(f"No existe el punto de control {str(path)!r}.")
    try:
        payload = torch.load(path, map_location=dev, weights_only=True)
    except (RuntimeError, pickle.UnpicklingError, EOFError, zipfile.BadZipFile, ValueError,
            OSError, AttributeError, TypeError, KeyError, IndexError) as error:
        raise CheckpointError(
            f"No se puede leer {str(path)!r}: el archivo está dañado o incompleto, o no es un "
            f"punto de control guardado con save_checkpoint ({type(error).__name__})."
        ) from error
    if not isinstance(payload, dict) or payload.get("format") != _CHECKPOINT_FORMAT:
        raise CheckpointError(
            f"{str(path)!r} no es un punto de control de este libro (falta la marca "
            f"{_CHECKPOINT_FORMAT!r}); guárdalo con dldna.training.save_checkpoint."
        )
    try:
        saved = TransformerConfig(**payload["config"])
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(
            f"La configuración guardada en {str(path)!r} no es válida: {error}"
        ) from error
    if model is None:
        model = Transformer(saved)
    else:
        current = getattr(model, "config", None)
        if current != saved:
            diff = ", ".join(
                f"{k}: guardado {v!r}, modelo {getattr(current, k, None)!r}"
                for k, v in payload["config"].items() if getattr(current, k, None) != v
            ) or f"el modelo es un {type(model).__name__}"
            raise CheckpointError(
                f"El punto de control {str(path)!r} no corresponde a este modelo ({diff}). "
                "Llama a load_checkpoint sin modelo para reconstruirlo con la configuración guardada."
            )
    try:
        model.load_state_dict(payload["state_dict"], strict=True)
    except (RuntimeError, KeyError) as error:
        raise CheckpointError(
            f"Los pesos de {str(path)!r} no encajan en el modelo (faltan, sobran o tienen otra "
            f"forma): {str(error).splitlines()[0]}"
        ) from error
    model.to(dev).eval()
    return model, payload.get("extra", {})
