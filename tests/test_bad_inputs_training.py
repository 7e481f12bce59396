# ruff: noqa: E501  (one row of the table per line, easier to read than wrapped rows)
"""Bad inputs to the training front end and the tasks: a Spanish message, or the right result.

Each row: a call a reader could type, and either the exception type and a
fragment of its Spanish message, or ``None`` and a check of the (correct) result.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from torch import nn

from dldna import training
from dldna.tasks import Tokenizer, exact_match, train
from dldna.tasks.addition import AdditionTask
from dldna.tasks.copy import CopyTask
from dldna.tasks.parsing import parse
from dldna.tasks.translation import train_translation

TOK = Tokenizer(list("abc"), separator="")
COPY = CopyTask(length=3, n_symbols=3)
EXAMPLES = COPY.examples(4, random.Random(0))
RECIPE = training.Recipe(steps=4, batch_size=2, lr=1e-3, warmup=1)


def _identity(src):
    return src


def _fit(**kw):
    x = torch.randn(8, 2)
    return training.fit(nn.Linear(2, 1), (x, x[:, :1]), lambda m, b: (m(b[0]) - b[1]).pow(2).mean(),
                        kw.pop("recipe", RECIPE), progress=False, **kw)


ERRORS = [
    # (description, call, exception, fragment of the message)
    ("CopyTask(length='5')", lambda: CopyTask(length="5"), ValueError, "length (longitud de las secuencias) debe ser un entero positivo"),
    ("CopyTask(length=0)", lambda: CopyTask(length=0), ValueError, "entero positivo"),
    ("CopyTask(n_symbols=30)", lambda: CopyTask(n_symbols=30), ValueError, "entre 1 y 26"),
    ("CopyTask(min_length > length)", lambda: CopyTask(length=3, min_length=5), ValueError, "min_length ≤ length"),
    ("AdditionTask(reverse='no')", lambda: AdditionTask(reverse="no"), TypeError, "reverse debe ser True"),
    ("AdditionTask(reverse=1)", lambda: AdditionTask(reverse=1), TypeError, "reverse debe ser True"),
    ("AdditionTask(digits=2.0)", lambda: AdditionTask(digits=2.0), ValueError, "digits (número de cifras)"),
    ("AdditionTask(digits=12)", lambda: AdditionTask(digits=12), ValueError, "entre 1 y 9"),
    ("parse(None)", lambda: parse(None), TypeError, "parse espera un texto"),
    ("parse(12)", lambda: parse(12), TypeError, "parse espera un texto"),
    ("exact_match(batch_size=0)", lambda: exact_match(COPY, _identity, EXAMPLES, batch_size=0), ValueError, "batch_size (ejemplos por lote de evaluación)"),
    ("exact_match(batch_size='10')", lambda: exact_match(COPY, _identity, EXAMPLES, batch_size="10"), ValueError, "entero positivo"),
    ("exact_match without examples", lambda: exact_match(COPY, _identity, []), ValueError, "No hay ejemplos"),
    ("exact_match(device='gpu')", lambda: exact_match(COPY, _identity, EXAMPLES, device="gpu"), ValueError, "Dispositivo desconocido"),
    ("decode of a 2-D tensor", lambda: TOK.decode(torch.tensor([[3, 4], [4, 5]])), ValueError, "una sola secuencia"),
    ("decode of a list of lists", lambda: TOK.decode([[3, 4], [4, 5]]), ValueError, "una sola secuencia"),
    ("Recipe(eval_every=-1)", lambda: training.Recipe(steps=4, batch_size=2, lr=1e-3, warmup=1, eval_every=-1), ValueError, "eval_every"),
    ("Recipe(steps='400')", lambda: training.Recipe(steps="400", batch_size=2, lr=1e-3, warmup=1), ValueError, "steps debe ser un entero positivo"),
    ("Recipe(lr=nan)", lambda: training.Recipe(steps=4, batch_size=2, lr=float("nan"), warmup=1), ValueError, "lr debe ser un número positivo"),
    ("Recipe(weight_decay=-0.1)", lambda: training.Recipe(steps=4, batch_size=2, lr=1e-3, warmup=1, weight_decay=-0.1), ValueError, "weight_decay"),
    ("Recipe(grad_clip=0)", lambda: training.Recipe(steps=4, batch_size=2, lr=1e-3, warmup=1, grad_clip=0), ValueError, "grad_clip"),
    ("fit(device='gpu')", lambda: _fit(device="gpu"), ValueError, "Dispositivo desconocido"),
    ("fit(device=3)", lambda: _fit(device=3), TypeError, "El dispositivo debe ser un texto"),
    ("fit(recipe=dict)", lambda: _fit(recipe={"steps": 4}), TypeError, "recipe debe ser un dldna.training.Recipe"),
    ("train(task='copia')", lambda: train(nn.Linear(2, 2), "copia", RECIPE), TypeError, "task debe ser una tarea"),
    ("train(seed=-1)", lambda: train(nn.Linear(2, 2), COPY, RECIPE, seed=-1), ValueError, "seed (semilla)"),
    ("train_translation(held_out=0)", lambda: train_translation(held_out=0), ValueError, "held_out"),
    ("load_checkpoint(device='tpu')", lambda: training.load_checkpoint("x.pt", device="tpu"), ValueError, "Dispositivo desconocido"),
]


@pytest.mark.parametrize("call, error, fragment", [row[1:] for row in ERRORS], ids=[row[0] for row in ERRORS])
def test_bad_input_gets_a_spanish_message(call, error, fragment):
    with pytest.raises(error) as raised:
        call()
    assert fragment in str(raised.value)


def _checkpoint_with_numpy_extra(tmp_path):
    from dldna.transformer import Transformer, TransformerConfig

    model = Transformer(TransformerConfig(src_vocab=8, tgt_vocab=8, d_model=8, n_heads=2, n_encoder_layers=1,
                                          n_decoder_layers=1, d_ff=16, dropout=0.0, max_len=8))
    path = training.save_checkpoint(model, tmp_path / "m.pt", extra={"exactitud": np.float64(0.5)})
    return training.load_checkpoint(path, device="cpu")[1]


def test_valid_but_unusual_inputs_give_the_right_result(tmp_path):
    assert TOK.decode(torch.tensor([1, 3, 4, 2, 5])) == ["a", "b"]  # a 1-D tensor is one sequence
    assert TOK.decode(np.array([3, 5])) == ["a", "c"]
    assert parse(list("x=1")) == parse("x=1")
    assert CopyTask(length=np.int64(4)).length == 4  # NumPy integers are integers
    assert AdditionTask(digits=np.int64(2), reverse=False).max_target_len == 4
    assert exact_match(COPY, _identity, EXAMPLES, batch_size=np.int64(2)).total == 4
    assert _checkpoint_with_numpy_extra(tmp_path) == {"exactitud": 0.5}
