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

The loop is deliberately small (chapter 6 overfits one batch with it). The
training chapters (7a–7c) build on it:

* :class:`Recipe` (steps, batch size, peak rate, warm-up, schedule) and
  :func:`warmup_linear_lambda`, a warm-up followed by a linear decay to 0;
* :func:`fit`: trains a model on a :class:`dldna.tasks.Task` with fresh
  batches, a text progress bar showing the loss (``tqdm.std`` on stdout) and
  periodic greedy evaluation; it returns a :class:`FitResult`;
* :func:`save_checkpoint` / :func:`load_checkpoint`: saved only on request,
  loaded with ``weights_only=True`` onto the current device;
  :class:`CheckpointError` (Spanish message) for corrupt or mismatched files.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn
from torch.nn import functional as F

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


def _check_positive(value, name: str, integer: bool = False) -> None:
    kinds = (int,) if integer else (int, float)
    if (isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value)
            or value <= 0):
        what = "un entero positivo" if integer else "un número positivo"
        raise ValueError(f"{name} debe ser {what}; se recibió {value!r}.")


def noam_rate(step: int, d_model: int, warmup: int = 4000, factor: float = 1.0) -> float:
    """``factor · d_model^(-1/2) · min(step^(-1/2), step · warmup^(-3/2))`` for ``step ≥ 1``."""
    _check_positive(step, "step (número de paso, desde 1)", integer=True)
    _check_positive(d_model, "d_model", integer=True)
    _check_positive(warmup, "warmup (pasos de calentamiento)", integer=True)
    _check_positive(factor, "factor")
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
    return torch.optim.lr_scheduler.LambdaLR(optimizer, noam_lambda(d_model, warmup, factor))


def noam_optimizer(params: Iterable, d_model: int, warmup: int = 4000, factor: float = 1.0,
                   ) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Adam with the paper's settings (β₁ = 0.9, β₂ = 0.98, ε = 10⁻⁹) and the Noam schedule."""
    optimizer = torch.optim.Adam(params, lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    return optimizer, noam_scheduler(optimizer, d_model, warmup, factor)


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
    """

    def __init__(self, smoothing: float = 0.1, ignore_index: int | None = None,
                 reduction: str = "mean"):
        super().__init__()
        self.smoothing = _check_smoothing(smoothing)
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction debe ser 'mean', 'sum' o 'none'; se recibió {reduction!r}.")
        self.ignore_index, self.reduction = ignore_index, reduction

    def extra_repr(self) -> str:
        return f"smoothing={self.smoothing}, ignore_index={self.ignore_index}"

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
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
    if tgt.dim() != 2 or tgt.shape[1] < 2:
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
    iterator = iter(batches)

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
    on_step: Callable[[int, float], None] | None = None,
) -> History:
    """Run ``steps`` optimisation steps and return their :class:`History`.

    Args:
        batches: a tuple of tensors (the same batch at every step: to overfit
            it), an iterable of batches, or a function ``step → batch``.
        loss_fn: ``loss_fn(model, batch)`` returns the scalar loss, e.g.
            ``lambda m, b: seq2seq_loss(m, *b, pad_id=0)``.
        scheduler: stepped after every optimiser step (e.g. :func:`noam_scheduler`).
        grad_clip: clip the gradients' global norm to this value.
        on_step: called as ``on_step(step, loss)`` after each step.

    The model is put in training mode; the learning rate recorded is the one
    used by each step.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps debe ser un entero no negativo; se recibió {steps!r}.")
    if grad_clip is not None:
        _check_positive(grad_clip, "grad_clip")
    get = _batches(batches)
    history = History()
    model.train()
    for step in range(steps):
        batch = get(step)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model, batch)
        if not torch.isfinite(loss):
            raise FloatingPointError(
                f"La pérdida dejó de ser finita en el paso {step} ({loss.item()}): prueba una "
                "tasa de aprendizaje menor o recorta los gradientes (grad_clip)."
            )
        loss.backward()
        if grad_clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        history.lr.append(float(optimizer.param_groups[0]["lr"]))
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        history.loss.append(float(loss.detach()))
        if on_step is not None:
            on_step(step, history.loss[-1])
    return history


def layer_gradient_norms(layers: Sequence[nn.Module]) -> list[float]:
    """Global norm of the gradients of each module's parameters (after a backward pass).

    Parameters without a gradient count as zero.
    """
    norms = []
    for layer in layers:
        grads = [p.grad.detach().flatten() for p in layer.parameters() if p.grad is not None]
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
    _check_positive(warmup, "warmup (pasos de calentamiento)", integer=True)
    _check_positive(total, "total (pasos de entrenamiento)", integer=True)
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
    """Everything that defines a training run except the model.

    * ``steps``, ``batch_size``: how many optimiser steps, of how many fresh examples;
    * ``lr``: the peak learning rate, reached after ``warmup`` steps;
    * ``schedule``: ``"linear"`` (:func:`warmup_linear_lambda`), ``"noam"``
      (the rule of the paper, scaled so that its peak is ``lr``) or
      ``"constant"`` (the warm-up, then ``lr`` until the end);
    * ``smoothing``: label smoothing ε; ``grad_clip``: clip the gradient norm;
    * ``eval_every``: every how many steps to measure the exact match on
      ``eval_size`` validation examples (0: never).
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

    def __post_init__(self) -> None:
        _check_positive(self.steps, "steps", integer=True)
        _check_positive(self.batch_size, "batch_size", integer=True)
        _check_positive(self.lr, "lr")
        _check_positive(self.warmup, "warmup", integer=True)
        if self.schedule not in SCHEDULES:
            raise ValueError(
                f"schedule debe ser 'linear' (calentamiento y bajada lineal), 'noam' o 'constant'; "
                f"se recibió {self.schedule!r}."
            )
        _check_smoothing(self.smoothing)
        if isinstance(self.eval_every, bool) or not isinstance(self.eval_every, int) or self.eval_every < 0:
            raise ValueError(f"eval_every debe ser un entero ≥ 0; se recibió {self.eval_every!r}.")
        if self.warmup >= self.steps:
            raise ValueError(
                f"El calentamiento ({self.warmup} pasos) debe ser más corto que el entrenamiento "
                f"({self.steps} pasos)."
            )


@dataclass
class FitResult:
    """What :func:`fit` returns: the per-step :class:`History`, the validation
    exact match measured every ``recipe.eval_every`` steps, and timings."""

    history: History
    recipe: Recipe
    device: str
    wall_s: float
    evals: list[tuple[int, float]] = field(default_factory=list)

    def log(self, every: int | None = None) -> str:
        """A table (Spanish) of the mean loss, learning rate and validation
        accuracy every ``every`` steps (default: ``recipe.eval_every`` or steps/10).
        It holds no timings, so it is the same on every run of the same machine."""
        h = self.history
        every = every or self.recipe.eval_every or max(1, h.steps // 10)
        acc = dict(self.evals)
        lines = ["   paso   pérdida media   tasa de aprendizaje"
                 + ("   exactitud (validación)" if acc else "")]
        for end in range(every, h.steps + 1, every):
            chunk = h.loss[end - every:end]
            line = f"{end:7d}   {sum(chunk) / len(chunk):13.4f}   {h.lr[end - 1]:19.2e}"
            if end in acc:
                line += f"   {100 * acc[end]:21.1f} %"
            lines.append(line)
        return "\n".join(lines)


def _progress(total: int, desc: str, enabled: bool):
    """A text progress bar on stdout (``tqdm.std``, not the widget bar): in a
    stored notebook it leaves plain text, which the tests' sanitiser replaces."""
    if not enabled:
        return None
    import sys

    from tqdm.std import tqdm

    return tqdm(total=total, desc=desc, file=sys.stdout, mininterval=1.0, ascii=False,
                dynamic_ncols=False, ncols=90, leave=True)


def fit(model: nn.Module, task, recipe: Recipe, *, device=None, seed: int = 0,
        progress: bool = True, desc: str = "entrenando") -> FitResult:
    """Train an encoder-decoder ``model`` on a :class:`dldna.tasks.Task` with ``recipe``.

    Every step draws a *fresh* batch from ``task.batch`` (never a held-out
    example: make the test set with ``task.test_set`` before calling ``fit``),
    computes the teacher-forcing loss (:func:`seq2seq_loss`, padding ignored),
    and takes one Adam step (β = (0.9, 0.98), ε = 10⁻⁹) with the schedule of
    the recipe. A text progress bar shows the loss; every
    ``recipe.eval_every`` steps the model decodes ``recipe.eval_size``
    validation examples greedily and the exact match is recorded.

    Args:
        device: where to train (default: :func:`dldna.runtime.get_device`);
            the model is moved there.
        seed: seeds the data stream and PyTorch (dropout), so that two runs on
            the same machine give the same numbers.

    Returns a :class:`FitResult`; ``wall_s`` includes the validation.
    """
    import random
    import time

    from dldna import runtime
    from dldna.tasks.base import PAD_ID, exact_match, greedy_decoder

    dev = runtime.get_device() if device is None else torch.device(device)
    model.to(dev)
    runtime.seed_everything(seed)
    rng = random.Random(seed)
    validation = []
    if recipe.eval_every:
        # The same validation set for the same seed, whatever was held out
        # before (so that two runs see the same batches); held out from now on.
        validation = task.examples(recipe.eval_size, random.Random(seed + 1), unique=True)
        task.hold_out(validation)
    optimizer = torch.optim.Adam(model.parameters(), lr=recipe.lr, betas=(0.9, 0.98), eps=1e-9)
    if recipe.schedule == "linear":
        rule = warmup_linear_lambda(recipe.warmup, recipe.steps)
    elif recipe.schedule == "constant":
        def rule(counter: int) -> float:
            return min(1.0, (counter + 1) / recipe.warmup)
    else:
        d_model = model.config.d_model
        factor = recipe.lr * math.sqrt(d_model * recipe.warmup)  # peak = lr at t = warmup
        noam = noam_lambda(d_model, recipe.warmup, factor)

        def rule(counter: int) -> float:
            return noam(counter) / recipe.lr

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, rule)
    decode = greedy_decoder(model, task.max_target_len)
    bar = _progress(recipe.steps, desc, progress)
    evals: list[tuple[int, float]] = []

    def on_step(step: int, loss: float) -> None:
        if bar is not None:
            bar.set_postfix_str(f"pérdida={loss:.4f}", refresh=False)
            bar.update(1)
        if recipe.eval_every and (step + 1) % recipe.eval_every == 0:
            evals.append((step + 1, exact_match(task, decode, validation, device=dev).accuracy))
            model.train()

    start = time.perf_counter()
    try:
        history = train_steps(
            model, lambda _step: task.batch(recipe.batch_size, rng).to(dev), optimizer,
            steps=recipe.steps,
            loss_fn=lambda m, b: seq2seq_loss(m, b.src, b.tgt, pad_id=PAD_ID, smoothing=recipe.smoothing),
            scheduler=scheduler, grad_clip=recipe.grad_clip, on_step=on_step,
        )
    finally:
        if bar is not None:
            bar.close()
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    wall = time.perf_counter() - start
    model.eval()
    return FitResult(history, recipe, str(dev), wall, evals)


# ---------------------------------------------------------------------------
# Checkpoints
# ---------------------------------------------------------------------------


class CheckpointError(ValueError):
    """A checkpoint file is corrupt, is not a checkpoint of the book, or does
    not match the model it is loaded into."""


_CHECKPOINT_FORMAT = "dldna-transformer"


def save_checkpoint(model: nn.Module, path, *, extra: dict | None = None):
    """Save ``model`` (a :class:`dldna.transformer.Transformer`) to ``path``.

    The file holds the configuration (so :func:`load_checkpoint` can rebuild
    the model), the weights moved to the CPU (so a model trained on a GPU
    loads anywhere) and ``extra``, a dict of plain values (numbers, text,
    lists) such as the task or the accuracy reached. Nothing is saved unless
    you call this function. Returns the path.
    """
    import dataclasses
    from pathlib import Path

    config = getattr(model, "config", None)
    if config is None or not dataclasses.is_dataclass(config):
        raise TypeError(
            "save_checkpoint guarda modelos de dldna.transformer.Transformer (con su "
            f"configuración en model.config); se recibió {type(model).__name__}."
        )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({
        "format": _CHECKPOINT_FORMAT,
        "version": 1,
        "config": dataclasses.asdict(config),
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "extra": dict(extra or {}),
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
    import pickle
    import zipfile
    from pathlib import Path

    from dldna import runtime
    from dldna.transformer import Transformer, TransformerConfig

    path = Path(path)
    dev = runtime.get_device() if device is None else torch.device(device)
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
