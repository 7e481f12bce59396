"""dldna.ensemble: several seeds trained together learn what each seed learns alone."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from dldna import checks, ensemble, runtime
from dldna.tasks import PAD_ID, exact_match, greedy_decoder, make_batch, train, train_together
from dldna.tasks.copy import CopyTask
from dldna.training import Recipe, seq2seq_loss
from dldna.transformer import Transformer, TransformerConfig

SEEDS = (0, 1, 2)


def small(task, d_model=32):
    return TransformerConfig(src_vocab=len(task.src_tokenizer), tgt_vocab=len(task.tgt_tokenizer),
                             d_model=d_model, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                             d_ff=2 * d_model, dropout=0.0, max_len=32)


def models_for(config, seeds=SEEDS):
    out = []
    for s in seeds:
        runtime.seed_everything(s)
        out.append(Transformer(config))
    return out


@pytest.fixture(scope="module")
def trained():
    """Copy of 6 symbols, 150 steps: each seed alone, then the three together."""
    task = CopyTask(length=6, n_symbols=10)
    config = small(task)
    recipe = Recipe(steps=150, batch_size=32, lr=3e-3, warmup=20, eval_every=75, eval_size=50)
    test = task.test_set(300)
    alone = models_for(config)
    alone_runs = [train(m, task, recipe, seed=s, progress=False) for m, s in zip(alone, SEEDS, strict=True)]
    together = models_for(config)
    runs = train_together(together, task, recipe, seeds=SEEDS, progress=False)
    return task, test, alone, alone_runs, together, runs


def test_a_member_learns_what_its_seed_learns_alone(trained):
    task, test, alone, alone_runs, together, runs = trained
    for a, b, ra, rb in zip(alone, together, alone_runs, runs, strict=True):
        acc_a = exact_match(task, greedy_decoder(a, task.max_target_len), test).accuracy
        acc_b = exact_match(task, greedy_decoder(b, task.max_target_len), test).accuracy
        assert 0.3 < acc_a < 1.0, "la prueba necesita una exactitud intermedia para ser informativa"
        assert abs(acc_a - acc_b) <= 0.03
        # The first step: the same initial weights and the same batch give the same loss, bit for bit.
        assert ra.history.loss[0] == rb.history.loss[0]
        # Later the batched products add in another order: close, not equal.
        assert rb.history.final == pytest.approx(ra.history.final, rel=0.02)
        assert [s for s, _ in rb.evals] == [s for s, _ in ra.evals] == [75, 150]
        assert rb.together == 3 and ra.together == 1


def test_members_differ_from_each_other(trained):
    """Each member is its own run: different seeds give different weights (not one model three times)."""
    *_, together, runs = trained
    w = [m.generator.weight for m in together]
    assert not torch.equal(w[0], w[1]) and not torch.equal(w[1], w[2])
    assert len({r.history.final for r in runs}) == 3


def test_members_own_their_memory_after_training(trained):
    *_, together, _ = trained
    for m in together:
        for p in m.parameters():
            assert p.untyped_storage().nbytes() == p.numel() * p.element_size()
    pointers = {p.data_ptr() for m in together for p in m.parameters()}
    assert len(pointers) == sum(1 for m in together for _ in m.parameters())


def test_clipping_is_per_member():
    torch.manual_seed(0)
    grads = [torch.randn(3, 4, 5) * torch.tensor([0.1, 10.0, 3.0]).view(3, 1, 1), torch.randn(3, 7)]
    expected = []
    for i in range(3):
        member = [nn.Parameter(g[i].clone()) for g in grads]
        for p, g in zip(member, grads, strict=True):
            p.grad = g[i].clone()
        nn.utils.clip_grad_norm_(member, 1.0)
        expected.append([p.grad for p in member])
    ensemble._clip_per_member(grads, 1.0)
    for i in range(3):
        for got, want in zip((g[i] for g in grads), expected[i], strict=True):
            torch.testing.assert_close(got, want)
    # The small member (norm below 1) is untouched; the large ones are scaled to norm 1.
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads]).norm(dim=0)
    assert norms[0] < 1.0 and norms[1:].sub(1.0).abs().max() < 1e-5


def test_padding_to_the_longest_batch_leaves_the_loss_unchanged():
    task = CopyTask(length=6, min_length=2, n_symbols=10)
    model = models_for(small(task), seeds=(0,))[0].eval()
    short = make_batch([task.encode(e) for e in task.examples(4, __import__("random").Random(1))])
    long = make_batch([task.encode(e) for e in task.examples(4, __import__("random").Random(2))])
    (src, tgt), rebuild = ensemble.stack_batches([short, long], pad_id=PAD_ID)
    assert src.shape[0] == 2 and src.shape[1:] == torch.Size(
        [4, max(short.src.shape[1], long.src.shape[1])])
    padded = rebuild([src[0], tgt[0]])
    with torch.no_grad():
        a = seq2seq_loss(model, short.src, short.tgt, pad_id=PAD_ID)
        b = seq2seq_loss(model, padded.src, padded.tgt, pad_id=PAD_ID)
    torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)


def test_bad_calls_are_refused_in_spanish():
    task = CopyTask(length=4, n_symbols=6)
    config = small(task)
    recipe = Recipe(steps=2, batch_size=4, lr=1e-3, warmup=1)
    two = models_for(config, seeds=(0, 1))
    other = Transformer(small(task, d_model=16))
    with pytest.raises(ValueError, match="misma arquitectura"):
        train_together([two[0], other], task, recipe, seeds=(0, 1))
    with pytest.raises(ValueError, match="3 elementos, pero hay 2 modelos"):
        train_together(two, task, recipe, seeds=(0, 1, 2))
    with pytest.raises(TypeError, match="lista"):
        train_together(two[0], task, recipe, seeds=(0,))
    a, b = torch.zeros(2, 3), torch.zeros(2, 4)
    with pytest.raises(ValueError, match="formas distintas"):
        ensemble.stack_batches([a, b])
    # A bad first batch is read outside vmap, where the model's checks give their own message.
    bad = [lambda step: make_batch([([99, 4], [1, 4, 2])])] * 2
    with pytest.raises(ValueError, match="fuera del vocabulario"):
        ensemble.fit(two, bad, lambda m, b: seq2seq_loss(m, b.src, b.tgt), recipe, seeds=(0, 1))


def test_values_checked_is_scoped():
    x = torch.tensor([float("nan")])
    assert checks.reads_values(x)
    with checks.values_checked():
        assert not checks.reads_values(x)
        checks.features(x, "x")  # not read inside
    assert checks.reads_values(x)
    with pytest.raises(ValueError, match="NaN"):
        checks.features(x, "x")
