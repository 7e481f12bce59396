"""Bad input to dldna.decoding and to the Transformer's ids: a Spanish error
that names the argument, or the correct result. One row per input a reader
can type."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dldna import decoding
from dldna.runtime import seed_everything
from dldna.transformer import Transformer, TransformerConfig

PAD, BOS, EOS = 0, 1, 2
V = 6


def uniform(prefix, rows):
    return torch.zeros(prefix.shape[0], V)


def returning(value):
    def step(prefix, rows):
        out = torch.zeros(prefix.shape[0], V)
        out[:, 3] = value
        return out
    return step


def model():
    seed_everything(0)
    return Transformer(TransformerConfig(src_vocab=8, tgt_vocab=V, d_model=16, n_heads=2,
                                         n_encoder_layers=1, n_decoder_layers=1, d_ff=32,
                                         dropout=0.0, max_len=16))


def greedy(step=uniform, src=2, max_len=4, **kw):
    return decoding.greedy_decode(step, src, max_len, BOS, EOS, **kw)


def sample(step=uniform, src=2, max_len=4, **kw):
    return decoding.sample_decode(step, src, max_len, BOS, EOS, seed=0, **kw)


def beam(step=uniform, src=2, width=2, max_len=4, **kw):
    return decoding.beam_search(step, src, width, max_len, BOS, EOS, **kw)


# (call, exception, words of the Spanish message)
ROWS = {
    "top_k mayor que el vocabulario": (lambda: sample(top_k=V + 1), ValueError, "mayor que el vocabulario"),
    "top_k cero": (lambda: sample(top_k=0), ValueError, "top_k debe ser"),
    "top_k decimal": (lambda: sample(top_k=1.5), ValueError, "top_k debe ser"),
    "top_p cero": (lambda: sample(top_p=0.0), ValueError, "(0, 1]"),
    "top_p mayor que 1": (lambda: sample(top_p=1.01), ValueError, "(0, 1]"),
    "top_p NaN": (lambda: sample(top_p=math.nan), ValueError, "(0, 1]"),
    "temperatura cero": (lambda: sample(temperature=0), ValueError, "temperatura"),
    "temperatura negativa": (lambda: sample(temperature=-0.5), ValueError, "temperatura"),
    "temperatura infinita": (lambda: sample(temperature=math.inf), ValueError, "temperatura"),
    "anchura del haz cero": (lambda: beam(width=0), ValueError, "anchura del haz"),
    "anchura del haz decimal": (lambda: beam(width=2.5), ValueError, "anchura del haz"),
    "max_len cero (voraz)": (lambda: greedy(max_len=0), ValueError, "max_len"),
    "max_len cero (haz)": (lambda: beam(max_len=0), ValueError, "max_len"),
    "max_len cero (muestreo)": (lambda: sample(max_len=0), ValueError, "max_len"),
    "n_best mayor que el haz": (lambda: beam(n_best=3), ValueError, "n_best"),
    "trace fuera del lote": (lambda: beam(trace=5), ValueError, "trace"),
    "logits NaN (voraz)": (lambda: greedy(returning(math.nan)), ValueError, "no finitos"),
    "logits NaN (haz)": (lambda: beam(returning(math.nan)), ValueError, "no finitos"),
    "logits +inf (muestreo)": (lambda: sample(returning(math.inf)), ValueError, "no finitos"),
    "logits NaN en filter_logits": (lambda: decoding.filter_logits(torch.tensor([0.0, math.nan])),
                                    ValueError, "no finitos"),
    "solo tókenes especiales posibles": (
        lambda: greedy(lambda p, r: torch.tensor([[0.0, 0.0, -math.inf, -math.inf]]).expand(p.shape[0], -1)),
        ValueError, "ningún tóken es posible"),
    "unk_id negativo": (lambda: greedy(unk_id=-1), ValueError, "unk_id"),
    "tamaño del lote cero": (lambda: greedy(src=0), ValueError, "tamaño del lote"),
    "src de una dimensión": (lambda: decoding.greedy_decode(model(), torch.tensor([3, 4]), 4, BOS, EOS),
                             ValueError, "unsqueeze"),
    "src con decimales": (lambda: decoding.greedy_decode(model(), torch.tensor([[3.5]]), 4, BOS, EOS),
                          TypeError, "decimales"),
    "src fuera del vocabulario": (
        lambda: decoding.greedy_decode(model(), torch.tensor([[3, 8]]), 4, BOS, EOS),
        ValueError, "fuera del vocabulario"),
    "src texto": (lambda: decoding.greedy_decode(model(), "hola", 4, BOS, EOS), TypeError, "src debe ser"),
    "Transformer: tgt fuera del vocabulario": (
        lambda: model()(torch.tensor([[3, 7]]), torch.tensor([[1, 7]])), ValueError, "tgt contiene el id 7"),
    "Transformer: src vacío": (lambda: model()(torch.zeros(1, 0, dtype=torch.long), torch.tensor([[1]])),
                               ValueError, "vacío"),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_bad_input_gets_a_spanish_message(name):
    call, error, words = ROWS[name]
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)


# Inputs that are unusual but valid: the correct result, not an error.
def test_numpy_and_list_sources_give_the_tensor_result():
    m = model().eval()
    src = [[3, 4, 5], [6, 7, 0]]
    want = decoding.greedy_decode(m, torch.tensor(src), 5, BOS, EOS)
    assert torch.equal(decoding.greedy_decode(m, np.array(src), 5, BOS, EOS), want)
    assert torch.equal(decoding.greedy_decode(m, src, 5, BOS, EOS), want)
    assert torch.equal(decoding.beam_search(m, np.array(src), 1, 5, BOS, EOS).tokens,
                       decoding.beam_search(m, torch.tensor(src), 1, 5, BOS, EOS).tokens)


def test_top_k_equal_to_the_vocabulary_keeps_every_token():
    logits = torch.tensor([0.5, 0.3, 0.2]).log()
    assert torch.equal(decoding.filter_logits(logits, top_k=3), logits)


def test_minus_inf_logits_are_allowed():
    def ruled_out(prefix, rows):
        out = torch.zeros(prefix.shape[0], V)
        out[:, 4] = -math.inf
        out[:, EOS] = 1.0
        return out
    assert greedy(ruled_out).tolist() == [[EOS], [EOS]]
