"""Bad input a reader can type into dldna.vit and dldna.positional (issue 16), as one table.

Each row is either a call that must raise with a Spanish message (``raises``)
or a call whose silent wrong answer used to be the bug, now checked against
the correct value (``gives``).
"""

import numpy as np
import pytest
import torch

from dldna import positional as P
from dldna import runtime, vit
from dldna.tasks import lookback


def _mlp():
    runtime.seed_everything(0)
    return vit.MLP().eval()


def _images(n=4, dtype=torch.float32):
    return torch.rand(n, 1, 8, 8, generator=torch.Generator().manual_seed(0)).to(dtype)


RAISES = [
    ("accuracy: fewer labels than images",
     lambda: vit.accuracy(_mlp(), _images(4), torch.tensor([1, 2])), ValueError, r"4 imágenes y 2 etiquetas"),
    ("accuracy: more labels than images",
     lambda: vit.accuracy(_mlp(), _images(2), torch.arange(5)), ValueError, r"una etiqueta por imagen"),
    ("accuracy: no images at all",
     lambda: vit.accuracy(_mlp(), _images(0), torch.zeros(0, dtype=torch.long)), ValueError, r"vacío"),
    ("accuracy: labels with decimals",
     lambda: vit.accuracy(_mlp(), _images(2), torch.tensor([0.5, 1.0])), TypeError, r"enteros"),
    ("accuracy: batch_size 0",
     lambda: vit.accuracy(_mlp(), _images(2), torch.tensor([0, 1]), batch_size=0), ValueError,
     r"batch_size debe ser un entero positivo"),
    ("model: one image without the batch axis",
     lambda: _mlp()(torch.rand(1, 8, 8)), ValueError, r"\(batch, canales, alto, ancho\)"),
    ("model: images given as text",
     lambda: vit.VisionTransformer()("imagen"), ValueError, r"tensor \(batch, canales"),
    ("model: images with NaN",
     lambda: _mlp()(torch.full((1, 1, 8, 8), float("nan"))), ValueError, r"NaN"),
    ("interpolate_positions: a table that is not a matrix",
     lambda: vit.interpolate_positions(torch.zeros(17), 8), ValueError, r"matriz"),
    ("interpolate_positions: rows that are not a square grid",
     lambda: vit.interpolate_positions(torch.zeros(16, 4), 8), ValueError, r"cuadrícula cuadrada"),
    ("interpolate_positions: grid 0",
     lambda: vit.interpolate_positions(torch.zeros(17, 4), 0), ValueError, r"entero positivo"),
    ("interpolate_positions: unknown mode",
     lambda: vit.interpolate_positions(torch.zeros(17, 4), 8, mode="spline"), ValueError, r"bicubic"),
    ("fit: an unknown device name",
     lambda: vit.fit(_mlp(), vit.load_digits_split(), device="gpu"), ValueError,
     r"[Dd]ispositivo"),
    ("train_probe: an unknown device name",
     lambda: lookback.train_probe("rope", device="tpu"), ValueError, r"[Dd]ispositivo"),
    ("fit: data that are not a DigitsSplit",
     lambda: vit.fit(_mlp(), (torch.zeros(4, 1, 8, 8), torch.zeros(4))), TypeError, r"DigitsSplit"),
    ("t5_buckets: max_distance inside the exact buckets",
     lambda: P.t5_buckets(torch.arange(5), 16, 8, bidirectional=False), ValueError, r"max_distance \(8\)"),
    ("sinusoidal module: a string",
     lambda: P.SinusoidalPositionalEncoding(8)("hola"), TypeError, r"tensor de PyTorch"),
    ("rotary: a boolean tensor",
     lambda: P.RotaryEmbedding(8).rotate(torch.ones(3, 8, dtype=torch.bool)), TypeError, r"números reales"),
]


@pytest.mark.parametrize("call, error, message", [r[1:] for r in RAISES], ids=[r[0] for r in RAISES])
def test_bad_input_gets_a_spanish_error(call, error, message):
    with pytest.raises(error, match=message):
        call()


def _same_as_float32(make_input):
    """The model's logits for converted input equal those for the float32 tensor."""
    model = _mlp()
    x = _images(3)
    with torch.no_grad():
        return torch.allclose(model(make_input(x)), model(x), atol=1e-6)


def _sinusoidal_on_ints():
    out = P.SinusoidalPositionalEncoding(8)(torch.zeros(1, 5, 8, dtype=torch.long))
    return out.is_floating_point() and torch.allclose(out[0], P.sinusoidal(5, 8))


def _rotary_on_ints():
    x = torch.ones(4, 8, dtype=torch.long)
    return torch.allclose(P.RotaryEmbedding(8).rotate(x), P.RotaryEmbedding(8).rotate(x.float()))


GIVES = [
    ("float64 images (torch.from_numpy) are converted", lambda: _same_as_float32(lambda x: x.double())),
    ("NumPy images are converted", lambda: _same_as_float32(lambda x: x.numpy())),
    ("float64 images reach the ViT", lambda: vit.VisionTransformer().eval()(_images(2, torch.float64)).dtype
     == torch.float32),
    ("accuracy with NumPy labels",
     lambda: 0.0 <= vit.accuracy(_mlp(), _images(4), np.array([0, 1, 2, 3])) <= 1.0),
    ("sinusoidal table added to an int tensor is not truncated", _sinusoidal_on_ints),
    ("rotary on an int tensor is computed in float", _rotary_on_ints),
]


@pytest.mark.parametrize("check", [r[1] for r in GIVES], ids=[r[0] for r in GIVES])
def test_convertible_input_gives_the_correct_result(check):
    assert check()
