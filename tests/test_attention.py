"""Tests of dldna.attention: similarity, softmax, scores, convexity, SelfAttention."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from dldna import attention as A


@pytest.fixture
def x():
    torch.manual_seed(0)
    return torch.randn(6, 5)


# --------------------------------------------------------------------- similarity


def test_dot_similarity_is_x_xt_and_symmetric(x):
    s = A.dot_similarity(x)
    assert torch.allclose(s, x @ x.T)
    assert torch.allclose(s, s.T)
    y = torch.randn(3, 5)
    assert A.dot_similarity(x, y).shape == (6, 3)


def test_cosine_similarity_properties(x):
    c = A.cosine_similarity(x)
    assert torch.allclose(c.diagonal(), torch.ones(6), atol=1e-6)
    assert bool((c.abs() <= 1 + 1e-6).all())
    norms = x.norm(dim=1)
    assert torch.allclose(A.dot_similarity(x), norms[:, None] * norms[None] * c, atol=1e-5)
    # the cosine ignores lengths; the dot product does not
    scaled = x * torch.arange(1.0, 7.0)[:, None]
    assert torch.allclose(A.cosine_similarity(scaled), c, atol=1e-6)
    assert not torch.allclose(A.dot_similarity(scaled), A.dot_similarity(x))


def test_similarity_matrix_kinds(x):
    assert torch.allclose(A.similarity_matrix(x, kind="scaled"), x @ x.T / math.sqrt(5))
    with pytest.raises(ValueError, match="desconocido"):
        A.similarity_matrix(x, kind="manhattan")


def test_mismatched_dimensions_and_empty_input_are_clear_errors(x):
    with pytest.raises(ValueError, match="misma dimensión"):
        A.dot_similarity(x, torch.randn(3, 4))
    with pytest.raises(ValueError, match="misma dimensión"):
        A.cosine_similarity(x, torch.randn(3, 4))
    with pytest.raises(ValueError, match="vacía"):
        A.dot_similarity(torch.zeros(0, 5))
    # a list is a reader's matrix: accepted; text is not
    assert torch.equal(A.dot_similarity([[1.0, 2.0]]), torch.tensor([[5.0]]))
    with pytest.raises(TypeError, match="tensor"):
        A.dot_similarity("hola")


# --------------------------------------------------------------------- softmax


def test_softmax_is_stable_shift_invariant_and_matches_torch():
    s = torch.tensor([[1000.0, 999.0, 998.0], [0.1, -2.0, 3.0]])
    p = A.softmax(s)
    assert torch.isfinite(p).all()
    assert torch.allclose(p, torch.softmax(s.double(), dim=-1).float(), atol=1e-6)
    assert torch.allclose(p.sum(-1), torch.ones(2))
    assert torch.allclose(A.softmax(s + 123.0), p, atol=1e-6)
    assert torch.allclose(A.softmax(3 * s[1]), A.softmax(s[1], temperature=1 / 3), atol=1e-6)


def test_temperature_goes_from_argmax_to_uniform():
    s = torch.tensor([2.0, 1.0, 0.5, -1.0])
    cold, hot = A.softmax(s, temperature=0.01), A.softmax(s, temperature=1e4)
    assert cold.argmax() == 0 and cold[0] > 0.999
    assert torch.allclose(hot, torch.full((4,), 0.25), atol=1e-3)
    entropies = [A.entropy(A.softmax(s, temperature=t)).item() for t in (0.1, 1, 4, 16)]
    assert entropies == sorted(entropies)
    assert A.entropy(hot).item() == pytest.approx(math.log(4), abs=1e-3)


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "1", True])
def test_bad_temperature_is_a_spanish_error(bad):
    with pytest.raises(ValueError, match="temperatura"):
        A.softmax(torch.zeros(3), temperature=bad)


def test_fully_masked_row_gives_zeros_not_nan():
    s = torch.tensor([[0.0, float("-inf")], [float("-inf"), float("-inf")]])
    p = A.softmax(s)
    assert torch.equal(p, torch.tensor([[1.0, 0.0], [0.0, 0.0]]))


# --------------------------------------------------------------------- basic attention, convexity


def test_basic_self_attention_is_a_weighted_average(x):
    y, w = A.basic_self_attention(x, temperature=2.0)
    assert torch.allclose(w, torch.softmax(x @ x.T / 2.0, dim=-1), atol=1e-6)
    assert torch.allclose(y, w @ x, atol=1e-6)
    assert A.is_convex_combination(w)
    row = sum(w[2, j] * x[j] for j in range(6))
    assert torch.allclose(row, y[2], atol=1e-6)
    # each coordinate stays between the smallest and the largest input
    assert bool(((y >= x.min(0).values - 1e-6) & (y <= x.max(0).values + 1e-6)).all())
    # the weights are not symmetric although the scores are
    assert not torch.allclose(w, w.T)


def test_is_convex_combination_rejects_negative_or_unnormalised_rows():
    assert not A.is_convex_combination(torch.tensor([[1.5, -0.5]]))
    assert not A.is_convex_combination(torch.tensor([[0.5, 0.4]]))
    assert A.is_convex_combination(torch.tensor([[0.5, 0.5], [1.0, 0.0]]))


def test_convex_hull_of_a_square_with_an_inner_point():
    pts = torch.tensor([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.5]])
    hull = A.convex_hull_2d(pts)
    assert sorted(hull.tolist()) == [0, 1, 2, 3]
    queries = torch.tensor([[0.2, 0.7], [1.0, 0.5], [1.2, 0.5], [-0.1, -0.1]])
    assert A.in_convex_hull_2d(queries, pts).tolist() == [True, True, False, False]


def test_attention_outputs_lie_in_the_hull_of_2d_inputs():
    torch.manual_seed(1)
    pts = torch.randn(8, 2) * 3
    y, _ = A.basic_self_attention(pts, temperature=0.7)
    assert bool(A.in_convex_hull_2d(y, pts).all())
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        A.convex_hull_2d(torch.zeros(3, 3))
    with pytest.raises(ValueError, match="alineados"):
        A.in_convex_hull_2d(torch.zeros(1, 2), torch.tensor([[0.0, 0.0], [1.0, 1.0]]))


# --------------------------------------------------------------------- scoring functions


def test_dot_and_bilinear_scores():
    torch.manual_seed(2)
    s, h = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    dot = A.DotScore()(s, h)
    assert dot.shape == (2, 3, 5)
    assert torch.allclose(dot, s @ h.transpose(-2, -1))
    bil = A.BilinearScore(4)
    with torch.no_grad():
        bil.weight.copy_(torch.eye(4))
    assert torch.allclose(bil(s, h), dot, atol=1e-6)
    other = A.BilinearScore(3, 4)
    w = other.weight.detach()
    q = torch.randn(3)
    assert torch.allclose(other(q[None], h[0])[0], torch.stack([q @ w @ k for k in h[0]]),
                          atol=1e-5)


def test_additive_score_matches_its_formula():
    torch.manual_seed(3)
    add = A.AdditiveScore(3, 4, hidden_dim=6)
    s, h = torch.randn(2, 3), torch.randn(5, 4)
    w_s, w_h, b = add.query_proj.weight, add.key_proj.weight, add.key_proj.bias
    v = add.v.weight[0]
    expected = torch.stack([
        torch.stack([v @ torch.tanh(w_s @ s[i] + w_h @ h[k] + b) for k in range(5)])
        for i in range(2)
    ])
    assert torch.allclose(add(s, h), expected, atol=1e-6)
    # vᵀ tanh(W [s; h] + b) with W = [W_s W_h]
    w = torch.cat([w_s, w_h], dim=1)
    concat = v @ torch.tanh(w @ torch.cat([s[0], h[1]]) + b)
    assert torch.allclose(add(s, h)[0, 1], concat, atol=1e-6)


def test_scores_reject_wrong_sizes():
    h = torch.randn(5, 4)
    with pytest.raises(ValueError, match="misma dimensión"):
        A.DotScore()(torch.randn(1, 3), h)
    with pytest.raises(ValueError, match="componentes"):
        A.BilinearScore(3, 4)(torch.randn(1, 2), h)
    with pytest.raises(ValueError, match="componentes"):
        A.AdditiveScore(3, 4)(torch.randn(1, 3), torch.randn(5, 2))


def test_attend_uses_the_mask():
    scores = torch.zeros(2, 3)
    values = torch.tensor([[1.0], [2.0], [3.0]])
    mask = torch.tensor([[True, True, False], [True, False, False]])
    out, w = A.attend(scores, values, mask)
    assert torch.allclose(w, torch.tensor([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]))
    assert torch.allclose(out, torch.tensor([[1.5], [1.0]]))
    with pytest.raises(ValueError, match="un valor por clave"):
        A.attend(scores, torch.zeros(4, 1))


# --------------------------------------------------------------------- SelfAttention


@pytest.mark.parametrize("shape", [(2, 7, 8), (7, 8)])
def test_self_attention_matches_torch_sdpa(shape):
    torch.manual_seed(4)
    layer = A.SelfAttention(8, d_k=4, d_v=6)
    x = torch.randn(*shape)
    out, w = layer(x)
    q, k, v = layer.query(x), layer.key(x), layer.value(x)
    assert out.shape == (*shape[:-1], 6) and w.shape == (*shape[:-1], shape[-2])
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v), atol=1e-6)
    mask = torch.tril(torch.ones(7, 7, dtype=torch.bool))
    out_m, w_m = layer(x, mask)
    assert torch.allclose(out_m, F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                          atol=1e-6)
    assert bool((w_m[..., ~mask] == 0).all())
    assert torch.allclose(w.sum(-1), torch.ones(w.shape[:-1]))


def test_unscaled_self_attention_matches_sdpa_with_scale_one():
    torch.manual_seed(5)
    layer = A.SelfAttention(8, scaled=False)
    x = torch.randn(1, 5, 8)
    out, _ = layer(x)
    q, k, v = layer.query(x), layer.key(x), layer.value(x)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v, scale=1.0), atol=1e-5)


def test_scores_are_a_bilinear_form_and_asymmetric():
    torch.manual_seed(6)
    layer = A.SelfAttention(6, d_k=3, bias=False)
    x = torch.randn(5, 6)
    wq, wk = layer.query.weight, layer.key.weight  # (d_k, d)
    bilinear = x @ wq.T @ wk @ x.T / math.sqrt(3)
    s = layer.scores(x)
    assert torch.allclose(s, bilinear, atol=1e-5)
    assert not torch.allclose(s, s.T, atol=1e-3)
    # rank of W_qᵀ W_k is at most d_k
    assert torch.linalg.matrix_rank(wq.T @ wk) <= 3
    with torch.no_grad():  # one shared projection: symmetric scores
        layer.key.weight.copy_(layer.query.weight)
    s = layer.scores(x)
    assert torch.allclose(s, s.T, atol=1e-5)


def test_self_attention_rejects_bad_input():
    layer = A.SelfAttention(8)
    with pytest.raises(ValueError, match="embed_dim=8"):
        layer(torch.randn(2, 3, 5))
    with pytest.raises(ValueError, match="vacía"):
        layer(torch.randn(2, 0, 8))
    with pytest.raises(ValueError, match="forma"):
        layer(torch.randn(8))
    with pytest.raises(TypeError, match="booleano"):
        layer(torch.randn(3, 8), torch.ones(3, 3))
    with pytest.raises(ValueError, match="no se difunde"):
        layer(torch.randn(3, 8), torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="entero positivo"):
        A.SelfAttention(0)


def test_scaled_dot_product_attention_checks_dimensions():
    with pytest.raises(ValueError, match="misma dimensión"):
        A.scaled_dot_product_attention(torch.randn(2, 4), torch.randn(3, 5), torch.randn(3, 5))
    with pytest.raises(ValueError, match="tantos valores"):
        A.scaled_dot_product_attention(torch.randn(2, 4), torch.randn(3, 4), torch.randn(2, 4))


# --------------------------------------------------------------------- why √d_k


def test_variance_of_dot_products_grows_like_d_k():
    gen = torch.Generator().manual_seed(0)
    for d_k in (4, 64, 256):
        q = torch.randn(20000, d_k, generator=gen)
        k = torch.randn(20000, d_k, generator=gen)
        dots = (q * k).sum(-1)
        assert dots.var().item() / d_k == pytest.approx(1.0, rel=0.1)
        assert (dots / math.sqrt(d_k)).var().item() == pytest.approx(1.0, rel=0.1)


def _saturation(d_k: int, scaled: bool, n: int = 10, trials: int = 200):
    """Mean max weight and mean gradient norm of softmax(q·k) with respect to the scores."""
    gen = torch.Generator().manual_seed(d_k)
    q = torch.randn(trials, 1, d_k, generator=gen)
    k = torch.randn(trials, n, d_k, generator=gen)
    scores = (q @ k.transpose(-2, -1)).squeeze(1)
    if scaled:
        scores = scores / math.sqrt(d_k)
    p = torch.softmax(scores, dim=-1)
    jac = torch.diag_embed(p) - p[..., :, None] * p[..., None, :]
    return p.max(-1).values.mean().item(), jac.norm(dim=(-2, -1)).mean().item()


def test_softmax_saturates_without_scale_and_not_with_it():
    top_small, grad_small = _saturation(4, scaled=False)
    top_big, grad_big = _saturation(1024, scaled=False)
    assert top_big > 0.9 and top_big > top_small
    assert grad_big < 0.3 * grad_small
    _, grad_scaled_small = _saturation(4, scaled=True)
    top_scaled_big, grad_scaled_big = _saturation(1024, scaled=True)
    assert top_scaled_big < 0.8
    assert grad_scaled_big == pytest.approx(grad_scaled_small, rel=0.1)


def test_attention_weights_need_n_squared_memory():
    sizes = [16, 32, 64]
    numel = [A.scaled_dot_product_attention(*(torch.randn(n, 8),) * 3)[1].numel() for n in sizes]
    assert numel == [n * n for n in sizes]


def test_equal_norms_make_every_word_attend_most_to_itself():
    torch.manual_seed(7)
    x = torch.randn(6, 4)
    x = x / x.norm(dim=1, keepdim=True)
    assert torch.equal(A.dot_similarity(x).argmax(dim=1), torch.arange(6))
    _, w = A.basic_self_attention(x, temperature=0.01)
    assert torch.allclose(w, torch.eye(6), atol=1e-3)


def _train_cycle(shared: bool) -> int:
    """Rows of a 3-cycle (0→1, 1→2, 2→0) whose largest score is the right one."""
    torch.manual_seed(0)
    x = torch.randn(3, 6)
    target = torch.tensor([1, 2, 0])
    w_q = torch.nn.Linear(6, 4, bias=False)
    w_k = w_q if shared else torch.nn.Linear(6, 4, bias=False)
    params = list(w_q.parameters()) + ([] if shared else list(w_k.parameters()))
    opt = torch.optim.Adam(params, lr=0.05)
    for _ in range(300):
        loss = F.cross_entropy(w_q(x) @ w_k(x).T, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return int(((w_q(x) @ w_k(x).T).argmax(1) == target).sum())


def test_a_cyclic_relation_needs_separate_queries_and_keys():
    # with one shared projection, z_i·z_j > |z_i|² for all three rows would need
    # cos·cos·cos > 1, which is impossible
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: one thread is much faster
    try:
        assert _train_cycle(shared=True) < 3
        assert _train_cycle(shared=False) == 3
    finally:
        torch.set_num_threads(threads)


# --------------------------------------------------------------------- softmax on hard inputs


def test_small_temperature_does_not_overflow_and_matches_torch():
    s = torch.tensor([3.0, 1.0, -2.0])
    for t in (1e-3, 1e-30, 1e-45):
        p = A.softmax(s, temperature=t)
        assert torch.equal(p, torch.tensor([1.0, 0.0, 0.0]))
    # where torch's own softmax is finite, the same numbers
    for t in (0.05, 0.5, 2.0, 100.0):
        torch.testing.assert_close(A.softmax(s, temperature=t), torch.softmax(s / t, -1))
    # the old order (divide, then subtract) overflows: s / T is inf, inf - inf is NaN
    assert torch.isnan(torch.exp(s / 1e-39 - (s / 1e-39).max())).any()


def test_plus_infinity_takes_all_the_weight_and_ties_share_it():
    inf = float("inf")
    assert A.softmax(torch.tensor([inf, 1.0, -inf])).tolist() == [1.0, 0.0, 0.0]
    assert A.softmax(torch.tensor([inf, 1.0, inf, 3.0])).tolist() == [0.5, 0.0, 0.5, 0.0]
    assert torch.isnan(torch.softmax(torch.tensor([inf, 1.0]), -1)).all()  # what torch gives


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_scores_are_computed_in_float32(dtype):
    s = torch.tensor([[60000.0, 59000.0, 0.0], [1.0, 2.0, 3.0]]).to(dtype)
    p = A.softmax(s)
    assert p.dtype == dtype and not torch.isnan(p).any()
    torch.testing.assert_close(p, torch.softmax(s.float(), -1).to(dtype))
    cold = A.softmax(s, temperature=1e-4)
    assert not torch.isnan(cold).any() and cold[1].tolist() == [0.0, 0.0, 1.0]


def test_softmax_accepts_numpy_and_lists_and_refuses_nan():
    np = pytest.importorskip("numpy")
    expected = torch.softmax(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), -1)
    torch.testing.assert_close(A.softmax(np.array([1.0, 2.0, 3.0])), expected)
    torch.testing.assert_close(A.softmax([1, 2, 3]), expected.float())
    with pytest.raises(ValueError, match="NaN"):
        A.softmax(torch.tensor([1.0, float("nan")]))
    with pytest.raises(ValueError, match="dim"):
        A.softmax(torch.zeros(2, 3), dim=2)


@pytest.mark.parametrize("dtype,big", [(torch.float32, 1e20), (torch.float32, 3e38), (torch.float64, 1e300)])
def test_scores_too_large_for_the_dtype_are_refused_not_nan(dtype, big):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 5, 8, generator=g, dtype=torch.float64).clamp(-1, 1).to(dtype) * big
               for _ in range(3))
    assert torch.isfinite(q).all()
    naive = torch.softmax(q @ k.transpose(-2, -1), -1)
    assert torch.isnan(naive).any()  # what the plain formula gives
    with pytest.raises(ValueError, match="no caben en"):
        A.scaled_dot_product_attention(q, k, v)


def test_half_precision_attention_is_computed_in_float32():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 5, 8, generator=g).clamp(-1, 1).half() * 6e4 for _ in range(3))
    out, w = A.scaled_dot_product_attention(q, k, v)  # q·k up to 2.9e10: beyond float16, not float32
    assert out.dtype == w.dtype == torch.float16 and torch.isfinite(out).all()
    torch.testing.assert_close(w.float().sum(-1), torch.ones(2, 5), atol=1e-2, rtol=0)


def test_ordinary_inputs_give_bitwise_the_plain_formula():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(3, 4, 6, generator=g) for _ in range(3))
    out, w = A.scaled_dot_product_attention(q, k, v)
    plain = torch.softmax(q @ k.transpose(-2, -1) * (1 / math.sqrt(6)), -1)
    torch.testing.assert_close(w, plain, atol=1e-7, rtol=0)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v), atol=1e-6, rtol=0)


def test_mixed_dtypes_and_numpy_inputs_are_converted():
    np = pytest.importorskip("numpy")
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(4, 3, generator=g) for _ in range(3))
    out, w = A.scaled_dot_product_attention(q, k.double(), v.numpy())
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, A.scaled_dot_product_attention(q, k, v)[0])
    layer = A.SelfAttention(3)
    x64 = torch.from_numpy(np.random.default_rng(0).normal(size=(2, 4, 3)))
    out64, _ = layer(x64)
    torch.testing.assert_close(out64, layer(x64.float())[0])
    assert A.cosine_similarity(x64[0], x64[0].float()).dtype == torch.float64


def test_sdpa_rejects_what_it_cannot_use_in_spanish():
    q = torch.randn(3, 4)
    with pytest.raises(ValueError, match="infinitos"):
        A.scaled_dot_product_attention(q, q, q.clone().fill_(float("inf")))
    with pytest.raises(ValueError, match="NaN"):
        A.scaled_dot_product_attention(q, q.clone().fill_(float("nan")), q)
    with pytest.raises(TypeError, match="booleano"):
        A.scaled_dot_product_attention(q, q, q, mask=torch.ones(3, 3))
    with pytest.raises(ValueError, match="no se difunde"):
        A.scaled_dot_product_attention(q, q, q, mask=torch.ones(2, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"x\[None\]"):
        A.scaled_dot_product_attention(q[0], q, q)
    for missing in ((None, q, q), (q, None, q), (q, q, None)):
        with pytest.raises(TypeError, match="debe ser un tensor"):
            A.scaled_dot_product_attention(*missing)
