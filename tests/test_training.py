"""dldna.training: Noam schedule, label smoothing, the small training loop; and its figures."""

from __future__ import annotations

import math
import re

import pytest
import torch
from matplotlib.figure import Figure
from torch import nn
from torch.nn import functional as F

from dldna import training
from dldna.runtime import seed_everything
from dldna.training import (
    History,
    LabelSmoothingLoss,
    Recipe,
    fit,
    layer_gradient_norms,
    noam_lambda,
    noam_optimizer,
    noam_rate,
    noam_scheduler,
    smoothed_targets,
    train_steps,
)
from dldna.viz import transformer as vt


def test_noam_rate_formula_peak_and_decay():
    d, w = 512, 4000
    assert noam_rate(1, d, w) == pytest.approx(d ** -0.5 * w ** -1.5)
    peak = noam_rate(w, d, w)
    assert peak == pytest.approx(1 / math.sqrt(d * w))
    assert max(noam_rate(s, d, w) for s in range(1, 3 * w)) == pytest.approx(peak)
    assert noam_rate(4 * w, d, w) == pytest.approx(peak / 2)  # decays as 1/sqrt(t)
    assert noam_rate(w // 2, d, w) == pytest.approx(peak / 2)  # linear warm-up
    with pytest.raises(ValueError, match="step"):
        noam_rate(0, d, w)
    with pytest.raises(ValueError, match="warmup"):
        noam_lambda(d, 0)


def test_noam_scheduler_gives_the_rates_of_the_rule():
    model = nn.Linear(3, 3)
    opt, sched = noam_optimizer(model.parameters(), d_model=64, warmup=10, factor=2.0)
    seen = []
    for _ in range(30):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert seen == pytest.approx([noam_rate(s, 64, 10, 2.0) for s in range(1, 31)])
    other = torch.optim.SGD(model.parameters(), lr=1.0)
    assert isinstance(noam_scheduler(other, 64, 10), torch.optim.lr_scheduler.LambdaLR)


def test_smoothed_targets_rows_sum_to_one():
    q = smoothed_targets(torch.tensor([2, 0]), 5, 0.1)
    assert torch.allclose(q.sum(-1), torch.ones(2))
    assert q[0, 2].item() == pytest.approx(0.9 + 0.02)
    assert q[0, 1].item() == pytest.approx(0.02)


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.3])
def test_label_smoothing_matches_torch_cross_entropy(eps):
    seed_everything(0)
    logits = torch.randn(4, 6, 11)
    target = torch.randint(0, 11, (4, 6))
    target[0, -2:] = 0
    ours = LabelSmoothingLoss(eps, ignore_index=0)(logits, target)
    theirs = nn.CrossEntropyLoss(label_smoothing=eps, ignore_index=0)(
        logits.reshape(-1, 11), target.reshape(-1))
    assert torch.allclose(ours, theirs, atol=1e-6)
    q = smoothed_targets(target, 11, eps)
    direct = -(q * torch.log_softmax(logits, -1)).sum(-1)
    keep = target != 0
    assert torch.allclose(ours, direct[keep].mean(), atol=1e-6)


def test_label_smoothing_minimum_is_the_entropy_of_the_target():
    eps, v = 0.1, 7
    target = torch.tensor([3])
    q = smoothed_targets(target, v, eps)
    best = LabelSmoothingLoss(eps)(q.log(), target)
    entropy = -(q * q.log()).sum()
    assert best.item() == pytest.approx(entropy.item(), abs=1e-6)
    sharp = torch.full((1, v), -20.0)
    sharp[0, 3] = 20.0
    assert LabelSmoothingLoss(eps)(sharp, target) > best


def test_label_smoothing_rejects_bad_values():
    with pytest.raises(ValueError, match="suavizado"):
        LabelSmoothingLoss(1.5)
    with pytest.raises(ValueError, match="dimensión más"):
        LabelSmoothingLoss(0.1)(torch.randn(3, 4), torch.zeros(2, dtype=torch.long))


def test_train_steps_batches_history_and_errors():
    seed_everything(0)
    model = nn.Linear(4, 1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = lambda m, b: nn.functional.mse_loss(m(b[0]), b[1])  # noqa: E731
    history = train_steps(model, (x, y), opt, steps=50, loss_fn=loss)
    assert isinstance(history, History) and history.steps == 50
    assert history.final < history.loss[0] and history.lr == [0.1] * 50
    seen = []
    train_steps(model, lambda s: (x[s:s + 2], y[s:s + 2]), opt, steps=3, loss_fn=loss,
                on_step=lambda done, h: seen.append(done))
    assert seen == [1, 2, 3]
    with pytest.raises(ValueError, match="Se acabaron"):
        train_steps(model, [(x, y)], opt, steps=2, loss_fn=loss)
    with pytest.raises(ValueError, match="steps"):
        train_steps(model, (x, y), opt, steps=-1, loss_fn=loss)


def test_layer_gradient_norms():
    layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
    # Before backward() there is no gradient to measure: it used to report 0.0, as if measured.
    with pytest.raises(ValueError, match=r"capa 0 .*aún no tiene gradientes.*backward\(\)"):
        layer_gradient_norms(layers)
    layers[1](layers[0](torch.ones(1, 2))).sum().backward()
    norms = layer_gradient_norms(layers)
    expected = torch.cat([p.grad.flatten() for p in layers[0].parameters()]).norm().item()
    assert norms[0] == pytest.approx(expected)
    # A module without trainable parameters measures 0, as documented (frozen, or none at all).
    frozen = nn.Linear(2, 2).requires_grad_(False)
    assert layer_gradient_norms([nn.ReLU(), frozen]) == [0.0, 0.0]


def test_label_smoothing_with_every_target_ignored_is_zero_not_nan():
    # The documented choice: PyTorch's CrossEntropyLoss gives NaN (0 / 0) here.
    logits, target = torch.randn(2, 3, 5), torch.zeros(2, 3, dtype=torch.long)
    assert LabelSmoothingLoss(0.1, ignore_index=0)(logits, target).item() == 0.0
    assert nn.CrossEntropyLoss(ignore_index=0)(logits.reshape(-1, 5), target.reshape(-1)).isnan()


def test_figures_are_returned_without_pyplot():
    figures = [
        vt.gradient_norms_plot({"a": [1, 2, 3], "b": [3, 2, 1]}),
        vt.noam_plot(64, (10, 40), steps=200),
        vt.loss_plot([3.0, 1.0, 0.1]),
        vt.normalization_plot(torch.randn(2, 3, 4)),
        vt.activations_plot(),
    ]
    assert all(isinstance(f, Figure) and f.axes for f in figures)
    curves = vt.noam_curves(64, (10,), 30)
    assert curves[10][9] == pytest.approx(training.noam_rate(10, 64, 10))
    with pytest.raises(ValueError):
        vt.loss_plot([])


def test_train_steps_reads_the_losses_every_few_steps_only():
    seed_everything(0)
    model = nn.Linear(4, 1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = lambda m, b: nn.functional.mse_loss(m(b[0]), b[1])  # noqa: E731
    read = []
    history = train_steps(model, (x, y), opt, steps=12, loss_fn=loss, read_every=5,
                          on_step=lambda done, h: read.append(h.steps))
    assert read == [0, 0, 0, 0, 5, 5, 5, 5, 5, 10, 10, 12]
    assert history.steps == 12 and all(type(v) is float for v in history.loss)
    again = train_steps(nn.Linear(4, 1), (x, y), torch.optim.SGD(model.parameters(), lr=0.01),
                        steps=3, loss_fn=loss, read_every=1)
    assert again.steps == 3


def test_train_steps_stops_at_a_non_finite_loss_and_names_its_step():
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def loss(m, step):
        out = m(torch.ones(1, 2)).sum()
        return out * float("nan") if step == 6 else out

    with pytest.raises(FloatingPointError, match="paso 7"):
        train_steps(model, lambda s: s, opt, steps=20, loss_fn=loss, read_every=5)


# -- the front end: fit ------------------------------------------------------------


def _regression():
    seed_everything(0)
    w = torch.tensor([[1.0, -2.0, 0.5]])
    x = torch.randn(256, 3)
    return x, x @ w.T


def test_fit_trains_any_model_with_a_batch_function_and_evaluates():
    from dldna.training import FitResult, Recipe, fit

    x, y = _regression()
    model = nn.Linear(3, 1)
    modes = []

    def evaluate(m):
        modes.append((m.training, torch.is_grad_enabled()))
        return float(nn.functional.mse_loss(m(x), y) < 0.05)

    recipe = Recipe(steps=60, batch_size=32, lr=0.1, warmup=5, eval_every=20, schedule="constant")
    result = fit(model, lambda s: (x[(s % 8) * 32:(s % 8 + 1) * 32], y[(s % 8) * 32:(s % 8 + 1) * 32]),
                 lambda m, b: nn.functional.mse_loss(m(b[0]), b[1]), recipe,
                 evaluate=evaluate, device="cpu", progress=False)
    assert isinstance(result, FitResult) and result.history.steps == 60, result.history.final
    assert [s for s, _ in result.evals] == [20, 40, 60] and result.evals[-1][1] == 1.0
    assert modes == [(False, False)] * 3  # eval mode, no gradients
    assert not model.training and result.steps_per_s > 0
    assert result.history.final < 0.1 * result.history.loss[0]


def test_fit_is_seeded_and_checks_its_arguments():
    from dldna.training import Recipe, fit

    x, y = _regression()
    recipe = Recipe(steps=10, batch_size=8, lr=0.01, warmup=2)
    loss = lambda m, b: nn.functional.mse_loss(m(b[0]), b[1])  # noqa: E731

    def run(seed):
        return fit(nn.Sequential(nn.Dropout(0.5), nn.Linear(3, 1)), (x, y), loss, recipe,
                   device="cpu", seed=seed, progress=False).history.loss

    # The model is built before fit, so only dropout sees the seed here.
    assert run(0) != run(1)
    with pytest.raises(ValueError, match="Dispositivo desconocido"):
        fit(nn.Linear(3, 1), (x, y), loss, recipe, device="gpu")
    with pytest.raises(TypeError, match="dispositivo debe ser un texto"):
        fit(nn.Linear(3, 1), (x, y), loss, recipe, device=0.5)
    with pytest.raises(ValueError, match="probabilidad"):
        fit(nn.Linear(3, 1), (x, y), loss, Recipe(steps=4, batch_size=8, lr=0.01, warmup=1, eval_every=2),
            evaluate=lambda m: 3.0, device="cpu", progress=False)
    with pytest.raises(TypeError, match="batches debe ser"):
        fit(nn.Linear(3, 1), 5, loss, recipe, device="cpu", progress=False)


def test_recipe_weight_decay_gives_adamw():
    from dldna.training import Recipe

    params = [nn.Parameter(torch.ones(2))]
    assert type(Recipe(steps=4, batch_size=1, lr=0.1, warmup=1).optimizer(params)) is torch.optim.Adam
    decayed = Recipe(steps=4, batch_size=1, lr=0.1, warmup=1, weight_decay=0.01).optimizer(params)
    assert type(decayed) is torch.optim.AdamW and decayed.param_groups[0]["weight_decay"] == 0.01
    assert decayed.param_groups[0]["betas"] == (0.9, 0.98)
    with pytest.raises(ValueError, match="weight_decay"):
        Recipe(steps=4, batch_size=1, lr=0.1, warmup=1, weight_decay=-1)
    with pytest.raises(ValueError, match="eval_size"):
        Recipe(steps=4, batch_size=1, lr=0.1, warmup=1, eval_size=0)


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_recipe_optimizer_is_foreach_and_bit_identical_to_the_per_tensor_one(weight_decay):
    """The multi-tensor update is only faster: the same weights, bit for bit."""
    from dldna.training import Recipe

    recipe = Recipe(steps=4, batch_size=1, lr=0.01, warmup=1, weight_decay=weight_decay)

    def trained(foreach: bool) -> torch.Tensor:
        seed_everything(0)
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.LayerNorm(16), nn.Linear(16, 3))
        optimizer = recipe.optimizer(model.parameters())
        assert optimizer.defaults["foreach"] is True
        optimizer.defaults["foreach"] = foreach
        for group in optimizer.param_groups:
            group["foreach"] = foreach
        data = torch.Generator().manual_seed(1)
        for _ in range(20):
            x, y = torch.randn(32, 6, generator=data), torch.randint(0, 3, (32,), generator=data)
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        return torch.cat([p.detach().flatten() for p in model.parameters()])

    assert torch.equal(trained(True), trained(False))


def test_fit_keeps_the_snapshots_it_is_asked_for():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    recipe = Recipe(steps=6, batch_size=16, lr=0.1, warmup=1, schedule="constant")
    result = fit(model, lambda _s: (x, y), lambda m, b: F.mse_loss(m(b[0]), b[1]), recipe,
                 device="cpu", progress=False, snapshots=(2, 6))
    assert sorted(result.snapshots) == [2, 6]
    assert torch.equal(result.snapshots[6]["weight"], model.weight.detach())
    assert not torch.equal(result.snapshots[2]["weight"], result.snapshots[6]["weight"])
    with pytest.raises(ValueError, match="snapshots pide el paso 7"):
        fit(model, lambda _s: (x, y), lambda m, b: F.mse_loss(m(b[0]), b[1]), recipe,
            device="cpu", progress=False, snapshots=(7,))


def test_the_progress_bar_is_spanish_and_the_sanitiser_hides_it(capsys):
    """The bar says «100 %» and «pasos/s» (the book's number convention, in Spanish), and
    the nbval sanitiser (tests/nbval_sanitize.cfg) replaces the whole of it, timings included."""
    from pathlib import Path

    from nbval.plugin import get_sanitize_patterns

    model = nn.Linear(3, 1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    fit(model, (x, y), lambda m, b: F.mse_loss(m(b[0]), b[1]),
        Recipe(steps=3, batch_size=8, lr=1e-3, warmup=1), device="cpu", progress=True)
    out = capsys.readouterr().out
    last = out.split("\r")[-1]
    assert "100 % |" in last and "pasos/s" in last and "it/s" not in out, last
    hidden = last
    for regex, replace in get_sanitize_patterns(
            Path(__file__).with_name("nbval_sanitize.cfg").read_text(encoding="utf-8")):
        hidden = re.sub(regex, replace, hidden)
    assert hidden.strip() == "entrenando: <barra de progreso>", hidden


def test_the_progress_bar_keeps_the_whole_loss_with_chapter_7bs_descriptions(capsys):
    """Chapter 7b's bars carry the book's longest descriptions (built by
    ``compare_orders`` from the order names); they must not cut the loss
    («pérdida=0.1» would read as a rounded value)."""
    from dldna.tasks.addition import _ORDER

    model = nn.Linear(3, 1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    longest = max(_ORDER.values(), key=len)
    fit(model, (x, y), lambda m, b: F.mse_loss(m(b[0]), b[1]),
        Recipe(steps=3, batch_size=8, lr=1e-3, warmup=1), device="cpu", progress=True,
        desc=f"{longest}, semilla 0")
    last = capsys.readouterr().out.split("\r")[-1].strip()
    assert re.search(r"pérdida=\d+\.\d{4}\]$", last), last


def test_mean_losses_are_the_rows_of_the_log():
    result = training.FitResult(history=training.History(loss=[1.0, 2, 3, 4, 5, 6, 7], lr=[0.1] * 7),
                                recipe=training.Recipe(steps=7, batch_size=1, lr=0.1, warmup=1),
                                device="cpu", wall_s=1.0)
    # Windows of 3 steps: 1-3 and 4-6; step 7 is an incomplete window, left out.
    assert result.mean_losses(3) == [2.0, 5.0]
    rows = [float(line.split()[1]) for line in result.log(every=3).splitlines()[1:]]
    assert rows == result.mean_losses(3)
    with pytest.raises(ValueError, match="every"):
        result.mean_losses(0)
