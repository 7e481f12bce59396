"""The book's number convention (dldna.fmt): decimal point, grouped thousands, spaced percent."""

import math

import numpy as np
import pytest
import torch

from dldna import fmt


@pytest.mark.parametrize(("value", "decimals", "text"), [
    (1050624, 0, "1 050 624"),
    (4096, 0, "4096"),
    (12345.678, 2, "12 345.68"),
    (-0.7349, 2, "-0.73"),
    (-0.001, 2, "0.00"),
    (0.5, 0, "0"),
    (999999.6, 0, "1 000 000"),
])
def test_number(value, decimals, text):
    assert fmt.number(value, decimals) == text


def test_integer_and_percent():
    assert fmt.integer(1050624) == "1 050 624"
    assert fmt.integer(np.int64(12)) == "12"
    assert fmt.integer(torch.tensor(65536)) == "65 536"
    assert fmt.percent(0.153) == "15.3 %"
    assert fmt.percent(1.0, 0) == "100 %"
    assert fmt.percent(torch.tensor(0.5)) == "50.0 %"


@pytest.mark.parametrize(("call", "error", "fragment"), [
    (lambda: fmt.number("3"), TypeError, "debe ser un número"),
    (lambda: fmt.number(True), TypeError, "debe ser un número"),
    (lambda: fmt.number(math.nan), ValueError, "finito"),
    (lambda: fmt.percent(math.inf), ValueError, "finito"),
    (lambda: fmt.number(1.0, -1), ValueError, "decimals"),
    (lambda: fmt.number(1.0, 1.5), ValueError, "decimals"),
    (lambda: fmt.integer(2.5), ValueError, "entero"),
    (lambda: fmt.number(torch.ones(3)), TypeError, "debe ser un número"),
])
def test_bad_input(call, error, fragment):
    with pytest.raises(error, match=fragment):
        call()
