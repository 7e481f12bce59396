"""The GRU encoder-decoder of chapter 1: shapes, attention weights, the bottleneck."""

import random

import pytest
import torch

import dldna  # noqa: F401
from dldna import rnn


def test_shapes_and_weights_sum_to_one():
    model = rnn.GRUSeq2Seq(hidden=8, attention=True)
    src, tgt = rnn.reversal_batch(3, 5, random.Random(0))
    logits, weights = model(src, tgt)
    assert logits.shape == (3, 5, rnn.VOCAB_SIZE) and weights.shape == (3, 5, 5)
    assert torch.allclose(weights.sum(-1), torch.ones(3, 5), atol=1e-6)
    assert rnn.GRUSeq2Seq(hidden=8, attention=False)(src, tgt)[1] is None


def test_reversal_batch_is_reversed():
    src, tgt = rnn.reversal_batch(4, 6, random.Random(1))
    assert torch.equal(tgt, src.flip(1)) and int(src.max()) < 10


def test_attention_beats_the_bottleneck_on_long_strings():
    short = dict(lengths=(4, 12), steps=300, seed=0)
    plain = rnn.train_reversal(False, **short)
    attn = rnn.train_reversal(True, **short)
    assert attn.accuracy[12] > plain.accuracy[12] + 0.1
    assert plain.accuracy[4] > plain.accuracy[12]


@pytest.mark.parametrize("kwargs", [dict(lengths=()), dict(lengths=(0, 4)), dict(steps=0),
                                    dict(lr=-1.0)])
def test_train_reversal_rejects_bad_input(kwargs):
    with pytest.raises(ValueError):
        rnn.train_reversal(True, **kwargs)


def test_bad_ids_and_odd_hidden():
    with pytest.raises(ValueError, match="fuera del vocabulario"):
        rnn.GRUSeq2Seq(hidden=8)(torch.tensor([[11]]), torch.tensor([[10]]))
    with pytest.raises(ValueError, match="par"):
        rnn.GRUSeq2Seq(hidden=7)



def test_greedy_generation_matches_teacher_forcing_on_its_own_output():
    torch.manual_seed(0)
    model = rnn.GRUSeq2Seq(hidden=8).eval()
    src, _ = rnn.reversal_batch(3, 5, random.Random(2))
    out, weights = model.generate(src, 5)
    tgt_in = torch.cat([torch.full((3, 1), rnn.BOS), out[:, :-1]], 1)
    logits, forced = model(src, tgt_in)
    assert torch.equal(logits.argmax(-1), out)
    assert torch.allclose(forced, weights, atol=1e-6)
