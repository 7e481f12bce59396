"""Bad input to dldna.attention, dldna.masking, dldna.runtime and dldna.checks (issue 16).

Each row is what a curious reader might type; the answer is a Spanish message
or a correct result (see ``tests/badinput.py``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from badinput import accepts, rejects, table

from dldna import attention as A
from dldna import checks, masking, runtime

INF, NAN = float("inf"), float("nan")
_rng = np.random.default_rng(0)
X64 = _rng.normal(size=(2, 5, 8))  # what torch.from_numpy gives: float64
X = torch.tensor(X64, dtype=torch.float32)


def _mha(**kw):
    torch.manual_seed(0)
    return A.MultiHeadAttention(8, 2, **kw).eval()


def _self_attention():
    torch.manual_seed(0)
    return A.SelfAttention(8)


def _close(expected, atol=1e-6):
    return lambda got: torch.allclose(got if isinstance(got, torch.Tensor) else got[0], expected, atol=atol)


def _no_cuda() -> bool:
    return not torch.cuda.is_available()


ATTENTION = [
    # float64, NumPy, lists: converted, same numbers
    accepts(
        "SelfAttention con float64 de torch.from_numpy",
        lambda: _self_attention()(torch.from_numpy(X64)),
        _close(_self_attention()(X)[0]),
    ),
    accepts(
        "SelfAttention con un array de NumPy", lambda: _self_attention()(X64), _close(_self_attention()(X)[0])
    ),
    accepts(
        "SelfAttention con una lista", lambda: _self_attention()(X.tolist()), _close(_self_attention()(X)[0])
    ),
    accepts("MultiHeadAttention con float64", lambda: _mha()(torch.from_numpy(X64)), _close(_mha()(X)[0])),
    accepts("MultiHeadAttention con float16", lambda: _mha()(X.half()), _close(_mha()(X.half().float())[0])),
    accepts(
        "MultiHeadAttention con memoria float64",
        lambda: _mha()(X, torch.from_numpy(X64)),
        _close(_mha()(X, X)[0]),
    ),
    accepts(
        "máscara de NumPy",
        lambda: _mha()(X, mask=np.tril(np.ones((5, 5), dtype=bool))),
        _close(_mha()(X, mask=masking.causal_mask(5))[0]),
    ),
    accepts(
        "sdpa con query float32 y key float64",
        lambda: A.scaled_dot_product_attention(X, torch.from_numpy(X64), X)[0],
        lambda out: out.dtype == torch.float32,
    ),
    accepts(
        "sdpa con listas",
        lambda: A.scaled_dot_product_attention([[1.0, 0.0]], [[1.0, 0.0]], [[2.0]])[0],
        lambda out: out.tolist() == [[2.0]],
    ),
    accepts(
        "dot_similarity float32 con float64",
        lambda: A.dot_similarity(X[0], torch.from_numpy(X64[0])),
        lambda s: s.dtype == torch.float32,
    ),
    accepts(
        "cosine_similarity con NumPy",
        lambda: A.cosine_similarity(X64[0]),
        lambda c: torch.allclose(c.diagonal(), torch.ones(5, dtype=torch.float64)),
    ),
    accepts(
        "BilinearScore con float64",
        lambda: A.BilinearScore(8)(torch.from_numpy(X64[0]), X[0]),
        lambda s: s.dtype == torch.float32 and s.shape == (5, 5),
    ),
    accepts(
        "DotScore con enteros", lambda: A.DotScore()([[1, 2]], [[3, 4]]), lambda s: s.tolist() == [[11.0]]
    ),
    accepts(
        "entropy de una lista", lambda: A.entropy([0.5, 0.5]), lambda h: abs(float(h) - math.log(2)) < 1e-6
    ),
    # NaN and inf: rejected, or handled as the mathematics says
    accepts(
        "softmax con temperatura diminuta",
        lambda: A.softmax(torch.tensor([3.0, 1.0]), temperature=1e-30),
        lambda p: p.tolist() == [1.0, 0.0],
    ),
    accepts(
        "softmax con +inf", lambda: A.softmax(torch.tensor([INF, 0.0])), lambda p: p.tolist() == [1.0, 0.0]
    ),
    accepts(
        "softmax con dos +inf",
        lambda: A.softmax(torch.tensor([INF, 0.0, INF])),
        lambda p: p.tolist() == [0.5, 0.0, 0.5],
    ),
    accepts(
        "softmax de una fila toda -inf",
        lambda: A.softmax(torch.tensor([-INF, -INF])),
        lambda p: p.tolist() == [0.0, 0.0],
    ),
    accepts(
        "softmax en float16 con puntuaciones grandes",
        lambda: A.softmax(torch.tensor([6e4, 0.0]).half()),
        lambda p: p.dtype == torch.float16 and p.tolist() == [1.0, 0.0],
    ),
    accepts(
        "softmax en bfloat16",
        lambda: A.softmax(torch.tensor([1.0, 2.0]).bfloat16()),
        lambda p: p.dtype == torch.bfloat16,
    ),
    rejects(
        "atención sobre entradas float32 enormes (Q·Kᵀ no cabe en float32)",
        lambda: A.scaled_dot_product_attention(X * 1e30, X * 1e30, X), ValueError, "no caben en",
    ),
    accepts(
        "atención sobre entradas float16 grandes",
        lambda: A.scaled_dot_product_attention(X.half() * 1e4, X.half() * 1e4, X.half()),
        lambda r: torch.isfinite(r[0]).all(),
    ),
    accepts(
        "MultiHeadAttention con una consulta sin claves",
        lambda: _mha()(X, mask=masking.padding_mask([5, 0], max_len=5)),
        lambda r: torch.isfinite(r[0]).all(),
    ),
    rejects("softmax con NaN", lambda: A.softmax(torch.tensor([1.0, NAN])), ValueError, "NaN"),
    rejects("SelfAttention con NaN", lambda: _self_attention()(torch.full((3, 8), NAN)), ValueError, "NaN"),
    rejects("MultiHeadAttention con inf", lambda: _mha()(X.clone().fill_(INF)), ValueError, "infinitos"),
    rejects(
        "sdpa con NaN en value",
        lambda: A.scaled_dot_product_attention(X, X, X.clone().fill_(NAN)),
        ValueError,
        "NaN",
    ),
    # wrong ranks and sizes
    rejects("MultiHeadAttention sin lote", lambda: _mha()(X[0]), ValueError, "unsqueeze"),
    rejects(
        "MultiHeadAttention con d_model equivocado",
        lambda: _mha()(torch.randn(1, 3, 6)),
        ValueError,
        "d_model=8",
    ),
    rejects("SelfAttention con un vector", lambda: _self_attention()(torch.randn(8)), ValueError, "forma"),
    rejects(
        "sdpa con un solo vector de consulta",
        lambda: A.scaled_dot_product_attention(X[0, 0], X[0], X[0]),
        ValueError,
        "x[None]",
    ),
    rejects(
        "sdpa con d_k distintos",
        lambda: A.scaled_dot_product_attention(X, X[..., :4], X),
        ValueError,
        "misma dimensión",
    ),
    rejects("split_heads con cabezas que no dividen", lambda: A.split_heads(X, 3), ValueError,
            "num_heads=3 no divide a d_model"),
    rejects("split_heads con cabezas como texto", lambda: A.split_heads(X, "2"), ValueError, "sin comillas"),
    rejects("texto donde va un tensor", lambda: A.dot_similarity("hola"), TypeError, "tensor"),
    rejects(
        "lista irregular", lambda: A.dot_similarity([[1.0, 2.0], [3.0]]), ValueError, "longitudes distintas"
    ),
    rejects("None como consulta", lambda: A.scaled_dot_product_attention(None, X, X), TypeError, "tensor"),
    # masks
    rejects(
        "máscara de unos en coma flotante", lambda: _mha()(X, mask=torch.ones(5, 5)), TypeError, "booleano"
    ),
    rejects(
        "máscara de 0 y 1 enteros",
        lambda: _mha()(X, mask=torch.ones(5, 5, dtype=torch.long)),
        TypeError,
        ".bool()",
    ),
    rejects(
        "máscara de forma equivocada",
        lambda: _mha()(X, mask=masking.causal_mask(4)),
        ValueError,
        "no se difunde",
    ),
    rejects("sesgo booleano", lambda: _mha()(X, bias=torch.ones(5, 5, dtype=torch.bool)), TypeError, "sesgo"),
    # constructors and flags
    rejects(
        "MultiHeadAttention con d_model texto", lambda: A.MultiHeadAttention("8", 2), ValueError, "d_model"
    ),
    rejects("MultiHeadAttention con cabezas 0", lambda: A.MultiHeadAttention(8, 0), ValueError, "num_heads"),
    rejects(
        "MultiHeadAttention con dropout 1",
        lambda: A.MultiHeadAttention(8, 2, dropout=1.0),
        ValueError,
        "dropout",
    ),
    rejects(
        "MultiHeadAttention con dropout None",
        lambda: A.MultiHeadAttention(8, 2, dropout=None),
        ValueError,
        "dropout",
    ),
    accepts(
        "MultiHeadAttention con enteros de NumPy",
        lambda: A.MultiHeadAttention(np.int64(8), np.int64(2)),
        lambda layer: layer.d_k == 4,
    ),
    rejects("SelfAttention con embed_dim negativo", lambda: A.SelfAttention(-4), ValueError, "embed_dim"),
    rejects(
        "SelfAttention con scaled='no'", lambda: A.SelfAttention(4, scaled="no"), TypeError, "True o False"
    ),
    rejects("BilinearScore con dimensión texto", lambda: A.BilinearScore("3"), ValueError, "query_dim"),
    rejects("need_weights='no'", lambda: _mha()(X, need_weights="no"), TypeError, "True o False"),
    rejects("temperatura 0", lambda: A.softmax(torch.zeros(3), temperature=0), ValueError, "temperatura"),
    rejects(
        "temperatura como texto",
        lambda: A.softmax(torch.zeros(3), temperature="2"),
        ValueError,
        "positivo y finito",
    ),
    rejects("dim fuera de rango", lambda: A.softmax(torch.zeros(2, 3), dim=5), ValueError, "dim"),
    rejects(
        "similitud desconocida",
        lambda: A.similarity_matrix(X[0], kind="manhattan"),
        ValueError,
        "desconocido",
    ),
    rejects(
        "from_torch con otra capa",
        lambda: A.MultiHeadAttention.from_torch(torch.nn.Linear(2, 2)),
        TypeError,
        "MultiheadAttention",
    ),
]

MASKING = [
    rejects("causal_mask con longitud texto", lambda: masking.causal_mask("5"), ValueError, "sin comillas"),
    rejects("causal_mask con None", lambda: masking.causal_mask(None), ValueError, "entero positivo"),
    rejects("causal_mask con 0", lambda: masking.causal_mask(0), ValueError, "q_len"),
    rejects("causal_mask con -3", lambda: masking.causal_mask(-3), ValueError, "q_len"),
    rejects("causal_mask con 4.0", lambda: masking.causal_mask(4.0), ValueError, "sin decimales"),
    rejects(
        "causal_mask con dispositivo 'gpu'",
        lambda: masking.causal_mask(4, device="gpu"),
        runtime.DeviceError,
        "Dispositivo desconocido",
    ),
    rejects(
        "causal_mask con dispositivo 7", lambda: masking.causal_mask(4, device=7), TypeError, "dispositivo"
    ),
    accepts(
        "causal_mask con un entero de NumPy",
        lambda: masking.causal_mask(np.int64(3)),
        lambda m: m.shape == (3, 3),
    ),
    accepts(
        "causal_mask con device='cpu'",
        lambda: masking.causal_mask(3, device="cpu"),
        lambda m: m.device.type == "cpu",
    ),
    rejects("local_window_mask con ventana 0", lambda: masking.local_window_mask(5, 0), ValueError, "window"),
    rejects(
        "local_window_mask con causal='sí'",
        lambda: masking.local_window_mask(5, 2, causal="sí"),
        TypeError,
        "True o False",
    ),
    rejects(
        "strided_mask con dispositivo 'tpu'",
        lambda: masking.strided_mask(8, 2, device="tpu"),
        runtime.DeviceError,
        "Dispositivo desconocido",
    ),
    rejects("fixed_mask con bloque texto", lambda: masking.fixed_mask(8, "4"), ValueError, "block"),
    rejects("grid_mask con radio negativo", lambda: masking.grid_mask(3, 3, radius=-1), ValueError, "radius"),
    rejects(
        "padding_mask con longitudes texto", lambda: masking.padding_mask("3, 5"), TypeError, "longitudes"
    ),
    rejects(
        "padding_mask con longitudes decimales", lambda: masking.padding_mask([2.5, 3]), TypeError, "enteros"
    ),
    rejects(
        "padding_mask con longitud negativa", lambda: masking.padding_mask([3, -1]), ValueError, "negativas"
    ),
    accepts(
        "padding_mask con un array de NumPy",
        lambda: masking.padding_mask(np.array([3, 5])),
        lambda m: torch.equal(m, masking.padding_mask([3, 5])),
    ),
    accepts(
        "padding_mask con enteros de NumPy en una lista",
        lambda: masking.padding_mask([np.int64(2), 4]),
        lambda m: torch.equal(m, masking.padding_mask([2, 4])),
    ),
    accepts(
        "padding_mask con token_ids de NumPy",
        lambda: masking.padding_mask(token_ids=np.array([[5, 0]]), pad_id=0),
        lambda m: m.tolist() == [[[[True, False]]]],
    ),
    rejects(
        "padding_mask con pad_id texto",
        lambda: masking.padding_mask(token_ids=torch.tensor([[5, 0]]), pad_id="0"),
        ValueError,
        "pad_id",
    ),
    rejects(
        "padding_mask con queries='no'",
        lambda: masking.padding_mask([2], queries="no"),
        TypeError,
        "True o False",
    ),
    rejects(
        "sequence_mask con side='izquierda'",
        lambda: masking.sequence_mask([2], side="izquierda"),
        ValueError,
        "side",
    ),
    rejects(
        "to_additive con dtype texto",
        lambda: masking.to_additive(masking.causal_mask(2), "float16"),
        TypeError,
        "coma flotante",
    ),
    rejects(
        "combine con una máscara de unos", lambda: masking.combine(torch.ones(3, 3)), TypeError, "booleano"
    ),
    accepts(
        "combine con listas de booleanos",
        lambda: masking.combine([[True, False]], masking.causal_mask(2)),
        lambda m: m.tolist() == [[True, False], [True, False]],
    ),
    rejects(
        "from_additive con NaN", lambda: masking.from_additive(torch.tensor([0.0, NAN])), ValueError, "NaN"
    ),
    # low precision: the value that fills a masked score exists in the scores' dtype
    accepts(
        "masked_scores en float16",
        lambda: masking.masked_scores(torch.ones(2, 2).half(), masking.causal_mask(2)),
        lambda s: s[0, 1].item() == -INF,
    ),
    accepts(
        "masked_scores en float16 con fill='min'",
        lambda: masking.masked_scores(torch.ones(2, 2).half(), masking.causal_mask(2), fill="min"),
        lambda s: s[0, 1].item() == -65504.0,
    ),
    accepts(
        "fila entera tapada con fill='min' y torch.softmax",
        lambda: torch.softmax(
            masking.masked_scores(
                torch.ones(1, 2).half(), torch.tensor([[False, False]]), fill="min"
            ).float(),
            -1,
        ),
        lambda p: p.tolist() == [[0.5, 0.5]],
    ),
    rejects(
        "masked_scores con fill=-1e9",
        lambda: masking.masked_scores(torch.ones(2, 2), masking.causal_mask(2), fill=-1e9),
        ValueError,
        "fill",
    ),
    rejects(
        "masked_scores con máscara de otra forma",
        lambda: masking.masked_scores(torch.ones(2, 2), masking.causal_mask(3)),
        ValueError,
        "no se difunde",
    ),
]

RUNTIME = [
    rejects(
        "get_device('gpu')", lambda: runtime.get_device("gpu"), runtime.DeviceError, "Dispositivo desconocido"
    ),
    rejects("get_device(0)", lambda: runtime.get_device(0), runtime.DeviceError, "texto"),
    accepts(
        "get_device(torch.device('cpu'))",
        lambda: runtime.get_device(torch.device("cpu")),
        lambda d: d == torch.device("cpu"),
    ),
    accepts("get_device(' CPU ')", lambda: runtime.get_device(" CPU "), lambda d: d.type == "cpu"),
    rejects("seed_everything('7')", lambda: runtime.seed_everything("7"), ValueError, "sin comillas"),
    rejects("seed_everything(None)", lambda: runtime.seed_everything(None), ValueError, "semilla"),
    rejects("seed_everything(-1)", lambda: runtime.seed_everything(-1), ValueError, "semilla"),
    rejects("seed_everything(2**64)", lambda: runtime.seed_everything(2**64), ValueError, "2**64"),
    rejects("seed_everything(1.0)", lambda: runtime.seed_everything(1.0), ValueError, "sin decimales"),
    accepts(
        "seed_everything con un entero de NumPy",
        lambda: runtime.seed_everything(np.int64(3)),
        lambda s: s == 3 and type(s) is int,
    ),
    rejects(
        "describe('tpu')", lambda: runtime.describe("tpu"), runtime.DeviceError, "Dispositivo desconocido"
    ),
    rejects("is_accelerated(3)", lambda: runtime.is_accelerated(3), runtime.DeviceError, "texto"),
]
if _no_cuda():
    RUNTIME.append(
        rejects(
            "get_device('cuda') sin GPU",
            lambda: runtime.get_device("cuda"),
            runtime.DeviceError,
            "no tiene ninguna",
        )
    )

CHECKS = [
    rejects("positive_int con texto", lambda: checks.positive_int("5", "n"), ValueError, "sin comillas"),
    rejects("positive_int con True", lambda: checks.positive_int(True, "n"), ValueError, "entero positivo"),
    rejects("positive_int con 0", lambda: checks.positive_int(0, "n"), ValueError, "entero positivo"),
    rejects("positive_int con 2.5", lambda: checks.positive_int(2.5, "n"), ValueError, "entero positivo"),
    accepts(
        "positive_int con un entero de NumPy",
        lambda: checks.positive_int(np.int32(4), "n"),
        lambda n: n == 4 and type(n) is int,
    ),
    accepts(
        "positive_int con un tensor 0-d", lambda: checks.positive_int(torch.tensor(4), "n"), lambda n: n == 4
    ),
    rejects("divides: 3 no divide a 10", lambda: checks.divides(3, 10, "num_heads", "d_model", "motivo."),
            ValueError, "num_heads=3 no divide a d_model=10: motivo. Valores de num_heads válidos para "
            "d_model=10: [1, 2, 5, 10]."),
    rejects("divides: una parte mayor que el todo", lambda: checks.divides(16, 8, "p", "n", "motivo."),
            ValueError, "p=16 no divide a n=8"),
    rejects("divides: parte 0", lambda: checks.divides(0, 8, "p", "n", "motivo."), ValueError,
            "p debe ser un entero positivo"),
    accepts("divides: 4 divide a 32", lambda: checks.divides(4, 32, "p", "n", "motivo."), lambda q: q == 8),
    rejects("probability con 1.5", lambda: checks.probability(1.5, "p"), ValueError, "probabilidad"),
    rejects("probability con NaN", lambda: checks.probability(NAN, "p"), ValueError, "probabilidad"),
    rejects(
        "positive_number con inf", lambda: checks.positive_number(INF, "lr"), ValueError, "número positivo"
    ),
    rejects("text con None", lambda: checks.text(None, "frase"), TypeError, "texto"),
    rejects("text vacío", lambda: checks.text("  ", "frase"), ValueError, "vacío"),
    rejects(
        "one_of fuera de la lista",
        lambda: checks.one_of("cúbico", "schedule", ["linear", "noam"]),
        ValueError,
        "uno de",
    ),
    rejects("boolean con 'no'", lambda: checks.boolean("no", "reverse"), TypeError, "True o False"),
    accepts(
        "boolean con un booleano de NumPy", lambda: checks.boolean(np.bool_(True), "b"), lambda b: b is True
    ),
    rejects("device con 'gpu'", lambda: checks.device("gpu"), runtime.DeviceError, "Dispositivo desconocido"),
    accepts("device opcional con None", lambda: checks.device(None, optional=True), lambda d: d is None),
    accepts(
        "features convierte float64 al dtype de la capa",
        lambda: checks.features(torch.from_numpy(X64), "x", like=torch.nn.Linear(8, 2)),
        lambda t: t.dtype == torch.float32,
    ),
    accepts(
        "features convierte un array con pasos negativos",
        lambda: checks.features(X64[:, ::-1], "x"),
        lambda t: torch.equal(t, torch.from_numpy(X64[:, ::-1].copy())),
    ),
    rejects(
        "features con booleanos",
        lambda: checks.features(torch.ones(2, dtype=torch.bool), "x"),
        TypeError,
        "números reales",
    ),
    rejects(
        "features con rango equivocado",
        lambda: checks.features(X, "x", ndim=2, what="(seq, d)"),
        ValueError,
        "(seq, d)",
    ),
    rejects(
        "features con inf y finite=True",
        lambda: checks.features([1.0, INF], "x", finite=True),
        ValueError,
        "infinitos",
    ),
    rejects("ids con decimales", lambda: checks.ids([1.5], "ids"), TypeError, "decimales"),
    rejects(
        "ids fuera del vocabulario",
        lambda: checks.ids([3, 12], "ids", vocab_size=10),
        ValueError,
        "fuera del vocabulario",
    ),
    rejects("mask de enteros", lambda: checks.mask([[1, 0]], (1, 2)), TypeError, "booleano"),
    rejects(
        "mask de forma equivocada",
        lambda: checks.mask(torch.ones(3, dtype=torch.bool), (2, 2)),
        ValueError,
        "no se difunde",
    ),
]


@table(ATTENTION + MASKING + RUNTIME + CHECKS)
def test_bad_input(case):
    case.run()


def test_the_harness_fails_when_the_promise_is_broken():
    import pytest

    with pytest.raises(AssertionError, match="no contiene"):
        rejects("mensaje inglés", lambda: int("x"), ValueError, "entero").run()
    with pytest.raises(AssertionError, match="NaN"):
        accepts("NaN callado", lambda: torch.softmax(torch.tensor([INF, 0.0]), -1)).run()
    with pytest.raises(AssertionError, match="incorrecto"):
        accepts("respuesta equivocada", lambda: 2 + 2, lambda r: r == 5).run()
    with pytest.raises(pytest.fail.Exception):
        rejects("sin error", lambda: 1, ValueError, "algo").run()


def test_features_keep_the_dtype_autocast_chose():
    layer = torch.nn.Linear(8, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        kept = checks.features(X.bfloat16(), "x", like=layer)
    assert kept.dtype == torch.bfloat16
    assert checks.features(X.bfloat16(), "x", like=layer).dtype == torch.float32
