"""Several seeds of one model trained together: one step advances every member.

A lesson that checks a conclusion over three seeds trains three copies of
the same architecture. Trained one after the other they cost three times one;
trained together, as an *ensemble*, each optimisation step computes the three
losses in one batched pass. :func:`fit` is :func:`dldna.training.fit` for a
list of models:

* every member keeps what makes it its own run: its initialisation (the
  model given, built after seeding with its seed), its data (its own batch
  source) and its optimiser state;
* the parameters are stacked along a new leading dimension, one slice per
  member, and the loss of every member is computed at once by
  ``torch.func.vmap`` over ``torch.func.functional_call``: the same model
  code, called with a batch of parameter sets;
* Adam's update is elementwise, so one Adam over the stacked tensors is
  every member's own Adam; gradient clipping is computed per member, as
  ``nn.utils.clip_grad_norm_`` does for one model;
* during training each member's parameters are views of its slice, so an
  evaluation sees the current weights; at the end each member gets its own
  memory back, and the models passed in hold their trained weights.

A member learns what the same seed trained alone learns, though not to the
bit: batched matrix products add in another order than single ones, and a
difference in the last bit grows over hundreds of steps
(``tests/test_ensemble.py`` measures both).

Values (NaN, out-of-vocabulary ids) cannot be read inside ``vmap``. The first
batch of every member goes through an ordinary forward pass, where every
check of the model reads it; the later batches come from the same sources.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap
from torch.nn import functional as F

from dldna import checks, runtime
from dldna.training import (
    READ_EVERY,
    FitResult,
    History,
    Recipe,
    _batches,
    _check_recipe,
    _evaluate,
    _progress,
    _to_device,
)

__all__ = ["fit", "stack_batches"]


def _leaves(batch) -> tuple[list[Tensor], Callable[[list[Tensor]], object]]:
    """The tensors of a batch and a function that rebuilds it from tensors like them."""
    if isinstance(batch, Tensor):
        return [batch], lambda ts: ts[0]
    if isinstance(batch, (tuple, list)) and all(isinstance(b, Tensor) for b in batch):
        kind = type(batch)
        return list(batch), lambda ts: kind(ts)
    if dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        names = [f.name for f in dataclasses.fields(batch)]
        values = [getattr(batch, n) for n in names]
        if all(isinstance(v, Tensor) for v in values):
            kind = type(batch)
            return values, lambda ts: kind(**dict(zip(names, ts, strict=True)))
    raise TypeError(
        "Para entrenar varios modelos juntos, cada lote debe ser un tensor, una tupla de tensores o "
        f"una dataclass de tensores (como dldna.tasks.Batch); se recibió {type(batch).__name__}."
    )


def _padded(ts: list[Tensor], pad_id: int | None, where: str) -> list[Tensor]:
    """``ts`` brought to one shape: the largest along every dimension, filled with ``pad_id``."""
    shapes = {tuple(t.shape) for t in ts}
    if len(shapes) == 1:
        return ts
    if pad_id is None or ts[0].is_floating_point() or len({t.dim() for t in ts}) > 1:
        raise ValueError(
            f"Los lotes de los modelos tienen formas distintas en {where}: {sorted(shapes)}. Para "
            "apilarlos hacen falta formas iguales, o ids de tókenes y un pad_id con que rellenarlos."
        )
    top = [max(s[d] for s in shapes) for d in range(ts[0].dim())]
    out = []
    for t in ts:
        widths = []
        for d in reversed(range(t.dim())):
            widths += [0, top[d] - t.shape[d]]
        out.append(F.pad(t, widths, value=pad_id))
    return out


def stack_batches(batches: Sequence, pad_id: int | None = None):
    """One batch per member → the tensors of the ensemble's step, stacked
    along a new first dimension, and a function rebuilding a member's batch.

    Batches of token ids of different lengths (the tasks pad each batch to its
    longest sentence) are padded with ``pad_id`` to the longest of all; the
    book's losses ignore padding, so a member's loss does not change.
    """
    if isinstance(batches, (str, bytes)) or not isinstance(batches, Sequence) or not batches:
        raise TypeError("batches debe ser una lista no vacía de lotes, uno por modelo; se recibió "
                        f"{type(batches).__name__}.")
    if pad_id is not None:
        pad_id = checks.non_negative_int(pad_id, "pad_id")
    flat = [_leaves(b) for b in batches]
    lengths = {len(leaves) for leaves, _ in flat}
    if len(lengths) != 1:
        raise ValueError("Los lotes de los modelos no tienen la misma estructura (número de tensores).")
    stacked = []
    for j in range(lengths.pop()):
        tensors = _padded([leaves[j] for leaves, _ in flat], pad_id, f"el tensor {j}")
        if len({t.dtype for t in tensors}) > 1:
            raise TypeError(f"Los lotes de los modelos tienen tipos distintos en el tensor {j}: "
                            f"{sorted(str(t.dtype) for t in tensors)}.")
        stacked.append(torch.stack(tensors))
    return stacked, flat[0][1]


class _LossOf(nn.Module):
    """``loss_fn(model, batch)`` as a module, so that ``functional_call`` can
    give ``model`` one member's parameters while ``loss_fn`` runs."""

    def __init__(self, model: nn.Module, loss_fn: Callable) -> None:
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, batch) -> Tensor:
        return self.loss_fn(self.model, batch)


def _same_architecture(models: list[nn.Module]) -> None:
    def layout(m: nn.Module) -> list:
        return [(n, p.shape, p.dtype) for n, p in m.named_parameters()]

    first = layout(models[0])
    for i, m in enumerate(models[1:], start=1):
        if type(m) is not type(models[0]) or layout(m) != first:
            raise ValueError(
                f"Para entrenar juntos, los modelos deben tener la misma arquitectura; el modelo {i} "
                f"({type(m).__name__}) no tiene los mismos parámetros que el 0 ({type(models[0]).__name__})."
            )
    if not first:
        raise ValueError("Los modelos no tienen parámetros que entrenar.")


def _clip_per_member(grads: list[Tensor], max_norm: float) -> None:
    """``clip_grad_norm_`` for each member (each slice along dim 0) of the stacked gradients."""
    norms = torch.stack([torch.linalg.vector_norm(g.flatten(1), dim=1) for g in grads])  # (n, E)
    total = torch.linalg.vector_norm(norms, dim=0)  # (E,)
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.view(-1, *([1] * (g.dim() - 1))))


def _members(models, seeds) -> tuple[list[nn.Module], list[int]]:
    """``models`` (a list of one architecture) and ``seeds`` (one non-negative int per model)."""
    if isinstance(models, nn.Module) or not isinstance(models, Sequence) or not models:
        raise TypeError("models debe ser una lista no vacía de modelos de PyTorch (uno por semilla); "
                        f"se recibió {type(models).__name__}.")
    models = [checks.module(m, f"models[{i}]") for i, m in enumerate(models)]
    _same_architecture(models)
    seeds = _per_member(seeds, len(models), "seeds (semillas)",
                        lambda s: checks.non_negative_int(s, "cada semilla"))
    return models, seeds


def _per_member(value, n: int, name: str, check: Callable) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} debe ser una lista con un elemento por modelo ({n}); se recibió "
                        f"{type(value).__name__}.")
    if len(value) != n:
        raise ValueError(f"{name} tiene {len(value)} elementos, pero hay {n} modelos.")
    return [check(v) for v in value]


def fit(models: Sequence[nn.Module], batches: Sequence, loss_fn: Callable[[nn.Module, object], Tensor],
        recipe: Recipe, *, seeds: Sequence[int], evaluate=None, device=None, pad_id: int | None = None,
        progress: bool = True, desc: str = "entrenando") -> list[FitResult]:
    """Train ``models`` (one architecture, one per seed) together with ``recipe``.

    What :func:`dldna.training.fit` does for one model, for all of them in
    each step (see the module's docstring for how).

    Args:
        models: the members, each built after seeding with its seed.
        batches: one batch source per member (``batches[i](step) -> batch``,
            or any form :func:`dldna.training.fit` accepts).
        loss_fn: ``loss_fn(model, batch) -> scalar loss``, as for ``fit``.
        seeds: one per member; the first seeds PyTorch for dropout.
        evaluate: ``evaluate(model) -> float in [0, 1]``, or one such function
            per member; called every ``recipe.eval_every`` steps.
        pad_id: fills the shorter batches of token ids (see :func:`stack_batches`).

    Returns one :class:`~dldna.training.FitResult` per member, in order. Its
    ``wall_s`` is the time of the whole ensemble, which ``together`` counts.
    """
    models, seeds = _members(models, seeds)
    n = len(models)
    gets = _per_member(batches, n, "batches", _batches)
    checks.function(loss_fn, "loss_fn", "una función (modelo, lote) → pérdida")
    _check_recipe(recipe)
    if evaluate is None or callable(evaluate):
        evaluates = [evaluate] * n
    else:
        evaluates = _per_member(evaluate, n, "evaluate", lambda f: checks.function(
            f, "cada evaluate", "una función modelo → número"))
    if pad_id is not None:
        pad_id = checks.non_negative_int(pad_id, "pad_id")
    progress = checks.boolean(progress, "progress")
    desc = checks.text(desc, "desc")
    dev = checks.device(device)

    for m in models:
        m.to(dev)
    first = [_to_device(get(0), dev) for get in gets]
    with torch.no_grad():
        # The checks read the values here, outside vmap (see the module's docstring).
        for m, batch in zip(models, first, strict=True):
            loss_fn(m, batch)
    params, buffers = stack_module_state(models)  # parameters: new leaves, (n, ...) each
    for i, m in enumerate(models):
        for name, p in m.named_parameters():
            p.data = params[name].data[i]
    params = {f"model.{k}": v for k, v in params.items()}
    buffers = {f"model.{k}": v for k, v in buffers.items()}
    holder = _LossOf(models[0], loss_fn)

    def member_loss(p, b, tensors, rebuild):
        return functional_call(holder, (p, b), (rebuild(tensors),))

    runtime.seed_everything(seeds[0])
    optimizer = recipe.optimizer(list(params.values()))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, recipe.rate())
    histories = [History() for _ in models]
    evals: list[list[tuple[int, float]]] = [[] for _ in models]
    eval_s: list[list[float]] = [[] for _ in models]
    pending: list[Tensor] = []
    bar = _progress(recipe.steps, f"{desc} ({n} juntos)", progress)

    def read() -> None:
        if not pending:
            return
        rows = torch.stack(pending).float().cpu().tolist()
        for row in rows:
            for i, value in enumerate(row):
                if not math.isfinite(value):
                    raise FloatingPointError(
                        f"La pérdida del modelo {i} (semilla {seeds[i]}) dejó de ser finita en el paso "
                        f"{histories[i].steps + 1} ({value}): prueba una tasa de aprendizaje menor."
                    )
                histories[i].loss.append(value)
        pending.clear()

    for m in models:
        m.train()
    start = time.perf_counter()
    try:
        for step in range(recipe.steps):
            parts = first if step == 0 else [_to_device(get(step), dev) for get in gets]
            tensors, rebuild = stack_batches(parts, pad_id)
            optimizer.zero_grad(set_to_none=True)
            with checks.values_checked(), warnings.catch_warnings():
                # PyTorch warns (in English) that its fused CPU attention has no batching
                # rule and runs member by member; measured, the explicit formula is no faster.
                warnings.filterwarnings("ignore", message="There is a performance drop")
                losses = vmap(member_loss, in_dims=(0, 0, 0, None), randomness="different")(
                    params, buffers, tensors, rebuild)
            losses.sum().backward()
            if recipe.grad_clip is not None:
                _clip_per_member([p.grad for p in params.values()], recipe.grad_clip)
            lr = float(optimizer.param_groups[0]["lr"])
            for h in histories:
                h.lr.append(lr)
            optimizer.step()
            scheduler.step()
            pending.append(losses.detach())
            if len(pending) == READ_EVERY or step == recipe.steps - 1:
                read()
            done = step + 1
            if bar is not None:
                bar.update(1)
                if histories[0].steps:
                    bar.set_postfix_str("pérdidas=" + " ".join(f"{h.final:.3f}" for h in histories),
                                        refresh=False)
            if recipe.eval_every and done % recipe.eval_every == 0:
                for i, (m, ev) in enumerate(zip(models, evaluates, strict=True)):
                    if ev is None:
                        continue
                    evals[i].append((done, _evaluate(m, ev)))
                    eval_s[i].append(time.perf_counter() - start)
    finally:
        if bar is not None:
            bar.close()
        for m in models:
            for p in m.parameters():
                p.data = p.data.clone()  # each member's own memory, not a view of the stack
            m.eval()
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    wall = time.perf_counter() - start
    return [FitResult(h, recipe, str(dev), wall, e, s, together=n)
            for h, e, s in zip(histories, evals, eval_s, strict=True)]
