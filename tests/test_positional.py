"""dldna.positional: the defining property of every position scheme."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dldna import positional as P
from dldna.attention import MultiHeadAttention, scaled_dot_product_attention
from dldna.tasks import lookback
from dldna.training import FitResult, Recipe

# ---------------------------------------------------------------------------
# Without positions, self-attention is permutation equivariant
# ---------------------------------------------------------------------------


def test_self_attention_without_positions_is_permutation_equivariant():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(1, 7, 16)
    perm = torch.tensor([3, 0, 6, 1, 5, 2, 4])
    out, _ = mha(x)
    out_perm, _ = mha(x[:, perm])
    torch.testing.assert_close(out_perm, out[:, perm])


def test_adding_positions_breaks_the_equivariance():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).eval()
    pe = P.SinusoidalPositionalEncoding(16)
    x = torch.randn(1, 7, 16)
    perm = torch.tensor([3, 0, 6, 1, 5, 2, 4])
    out, _ = mha(pe(x))
    out_perm, _ = mha(pe(x[:, perm]))
    assert not torch.allclose(out_perm, out[:, perm], atol=1e-3)


# ---------------------------------------------------------------------------
# Sinusoidal encoding
# ---------------------------------------------------------------------------


def test_sinusoidal_table_matches_formula_and_wavelengths():
    table = P.sinusoidal(50, 8)
    p, i = 17, 2
    omega = 10000 ** (-2 * i / 8)
    assert table[p, 2 * i].item() == pytest.approx(math.sin(p * omega), abs=1e-6)
    assert table[p, 2 * i + 1].item() == pytest.approx(math.cos(p * omega), abs=1e-6)
    lam = P.wavelengths(8)
    assert lam[0].item() == pytest.approx(2 * math.pi)
    assert lam[-1].item() == pytest.approx(2 * math.pi * 10000 ** (6 / 8), rel=1e-6)
    # One full wavelength later, pair 0 comes back (up to float error).
    torch.testing.assert_close(P.frequencies(8) * lam.double(), torch.full((4,), 2 * math.pi,
                                                                           dtype=torch.float64))


@pytest.mark.parametrize("k", [1, 5, -3, 40])
def test_shift_is_a_rotation_independent_of_position(k):
    d = 16
    table = P.sinusoidal(200, d).double()
    R = P.shift_rotation(k, d)
    for p in (50, 60, 120):
        torch.testing.assert_close(R @ table[p], table[p + k], atol=1e-6, rtol=0)
    torch.testing.assert_close(R.T @ R, torch.eye(d, dtype=torch.float64), atol=1e-12, rtol=0)
    if k:
        assert not torch.allclose(R @ table[50], table[50], atol=1e-3)


def test_dot_product_of_encodings_depends_only_on_distance():
    table = P.sinusoidal(300, 32).double()
    gram = table @ table.T
    torch.testing.assert_close(gram[10, 17], gram[200, 207])
    torch.testing.assert_close(gram[10, 17], gram[17, 10])
    expected = torch.cos(7 * P.frequencies(32)).sum()
    torch.testing.assert_close(gram[10, 17], expected, atol=1e-6, rtol=0)
    assert abs(gram[10, 17] - gram[10, 18]) > 1e-3


def test_block_rotation_shapes_and_errors():
    R = P.block_rotation(torch.tensor([0.0, math.pi / 2]))
    expected = torch.tensor([[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, -1], [0, 0, 1, 0]])
    torch.testing.assert_close(R, expected, atol=1e-7, rtol=0)
    with pytest.raises(ValueError, match="vector"):
        P.block_rotation(torch.zeros(2, 2))
    with pytest.raises(ValueError, match="entero"):
        P.shift_rotation(1.5, 8)


def test_sinusoidal_module_adds_table_and_scales():
    pe = P.SinusoidalPositionalEncoding(8, scale_input=True)
    x = torch.ones(2, 5, 8)
    out = pe(x, offset=3)
    torch.testing.assert_close(out, math.sqrt(8) * x + P.sinusoidal(8, 8)[3:])
    assert pe(torch.zeros(1, 1000, 8)).shape == (1, 1000, 8)  # any length
    with pytest.raises(ValueError, match="batch, seq, d_model"):
        pe(torch.zeros(5, 8))


# ---------------------------------------------------------------------------
# Learned absolute encoding
# ---------------------------------------------------------------------------


def test_learned_encoding_adds_its_rows():
    torch.manual_seed(0)
    pe = P.LearnedPositionalEncoding(4, max_len=6)
    x = torch.randn(2, 6, 4)
    torch.testing.assert_close(pe(x), x + pe.table.weight)


def test_learned_encoding_fails_past_its_table_with_spanish_message():
    pe = P.LearnedPositionalEncoding(4, max_len=6)
    pe(torch.zeros(1, 6, 4))
    with pytest.raises(ValueError, match=r"posición 6.*solo tiene 6 filas"):
        pe(torch.zeros(1, 7, 4))
    clamp = P.LearnedPositionalEncoding(4, max_len=6, overflow="clamp")
    out = clamp(torch.zeros(1, 9, 4))
    torch.testing.assert_close(out[0, 6:], clamp.table.weight[5].expand(3, 4))
    with pytest.raises(ValueError, match="overflow"):
        P.LearnedPositionalEncoding(4, 6, overflow="wrap")


# ---------------------------------------------------------------------------
# Relative schemes
# ---------------------------------------------------------------------------


def _is_toeplitz(m: torch.Tensor) -> bool:
    """Entry (i, j) equals entry (i + 1, j + 1): a function of j - i only."""
    return torch.allclose(m[..., 1:, 1:], m[..., :-1, :-1], atol=1e-5)


def test_relative_and_clipped_distances():
    d = P.relative_distances(3, 5)
    assert d.tolist() == [[0, 1, 2, 3, 4], [-1, 0, 1, 2, 3], [-2, -1, 0, 1, 2]]
    c = P.clipped_distances(6, max_distance=2)
    assert c.min().item() == -2 and c.max().item() == 2
    assert c[0, 5].item() == 2 and c[5, 0].item() == -2 and c[3, 2].item() == -1


def test_shaw_vectors_depend_on_clipped_distance_only():
    torch.manual_seed(0)
    rel = P.ShawRelativePosition(4, max_distance=2)
    a = rel.key_vectors(7)
    assert a.shape == (7, 7, 4)
    assert _is_toeplitz(a.permute(2, 0, 1))
    torch.testing.assert_close(a[0, 6], rel.keys.weight[4])  # distance +6 → clipped to +2
    torch.testing.assert_close(a[0, 6], a[0, 2])
    assert not torch.allclose(a[0, 1], a[0, 2])


def test_shaw_attention_matches_the_formula():
    torch.manual_seed(0)
    rel = P.ShawRelativePosition(4, max_distance=2)
    q, k, v = torch.randn(3, 2, 5, 4).unbind(0)
    out, w = P.shaw_attention(q, k, v, rel)
    ak, av = rel.key_vectors(5), rel.value_vectors(5)
    scores = torch.einsum("bid,bijd->bij", q, k[:, None] + ak[None]) / 2.0
    w_ref = torch.softmax(scores, -1)
    out_ref = torch.einsum("bij,bijd->bid", w_ref, v[:, None] + av[None])
    torch.testing.assert_close(w, w_ref)
    torch.testing.assert_close(out, out_ref)
    # With no relative vectors it is plain attention.
    torch.nn.init.zeros_(rel.keys.weight)
    torch.nn.init.zeros_(rel.values.weight)
    torch.testing.assert_close(P.shaw_attention(q, k, v, rel)[0], scaled_dot_product_attention(q, k, v)[0])


def test_shaw_attention_is_not_permutation_equivariant():
    torch.manual_seed(0)
    rel = P.ShawRelativePosition(4, max_distance=3)
    x = torch.randn(1, 6, 4)
    out, _ = P.shaw_attention(x, x, x, rel)
    perm = torch.tensor([2, 0, 1, 5, 3, 4])
    out_perm, _ = P.shaw_attention(x[:, perm], x[:, perm], x[:, perm], rel)
    assert not torch.allclose(out_perm, out[:, perm], atol=1e-3)


def test_t5_buckets_exact_then_logarithmic_then_saturated():
    dist = torch.arange(-200, 201)
    b = P.t5_buckets(dist, num_buckets=32, max_distance=128)
    back = b[dist <= 0].flip(0)  # bucket of "0, 1, 2, … places back"
    assert back[:8].tolist() == list(range(8))  # exact for short distances
    assert (back.diff() >= 0).all()  # never decreasing with distance
    assert back[128:].unique().tolist() == [15]  # every distance ≥ max_distance shares one bucket
    assert set(b[dist > 0].tolist()) <= set(range(16, 32))  # keys ahead use the other half
    causal = P.t5_buckets(dist, num_buckets=16, max_distance=32, bidirectional=False)
    assert causal[dist > 0].unique().tolist() == [0]


def test_t5_bias_is_a_function_of_distance():
    torch.manual_seed(0)
    t5 = P.T5RelativeBias(3, num_buckets=8, max_distance=16)
    torch.nn.init.normal_(t5.bias.weight)
    bias = t5(10, 10)
    assert bias.shape == (1, 3, 10, 10)
    assert _is_toeplitz(bias)
    assert not torch.allclose(bias[0, :, 0, 1], bias[0, :, 0, 2])


def test_alibi_slopes_and_bias():
    torch.testing.assert_close(P.alibi_slopes(8), torch.tensor([2.0 ** -k for k in range(1, 9)]))
    torch.testing.assert_close(P.alibi_slopes(4), torch.tensor([0.25, 0.0625, 0.015625, 0.00390625]))
    assert P.alibi_slopes(6).shape == (6,)
    bias = P.ALiBi(4)(5, 5)
    assert bias.shape == (1, 4, 5, 5)
    assert _is_toeplitz(bias)
    torch.testing.assert_close(bias[0, 0, 4, 1], torch.tensor(-3 * 0.25))
    assert (bias <= 0).all() and (bias.diagonal(dim1=-2, dim2=-1) == 0).all()


def test_rope_preserves_norms_and_gives_relative_scores():
    torch.manual_seed(0)
    rope = P.RotaryEmbedding(8)
    q, k = torch.randn(8), torch.randn(8)

    def score(i: int, j: int) -> float:
        qi = rope.rotate(q.expand(i + 1, 8))[i]
        kj = rope.rotate(k.expand(j + 1, 8))[j]
        return float(qi @ kj)

    assert score(3, 7) == pytest.approx(score(10, 14), abs=1e-5)
    assert score(3, 7) == pytest.approx(score(50, 54), abs=1e-5)
    assert score(3, 7) != pytest.approx(score(3, 8), abs=1e-3)
    x = torch.randn(2, 10, 8)
    torch.testing.assert_close(rope.rotate(x).norm(dim=-1), x.norm(dim=-1))


def test_rope_rotate_is_the_block_rotation():
    rope = P.RotaryEmbedding(6)
    x = torch.randn(6, dtype=torch.float64)
    p = 9
    R = P.block_rotation(p * P.frequencies(6))
    rotated = rope.rotate(x.float().expand(p + 1, 6))[p].double()
    torch.testing.assert_close(rotated, R @ x, atol=1e-5, rtol=0)
    # R_iᵀ R_j = R_{j-i}
    Ri, Rj = P.block_rotation(3 * P.frequencies(6)), P.block_rotation(8 * P.frequencies(6))
    torch.testing.assert_close(Ri.T @ Rj, P.block_rotation(5 * P.frequencies(6)))


def test_rope_forward_puts_queries_at_the_last_positions():
    rope = P.RotaryEmbedding(4)
    k = torch.randn(1, 1, 6, 4)
    q_full, k_rot = rope(k, k)
    q_last, _ = rope(k[..., -2:, :], k)
    torch.testing.assert_close(q_last, q_full[..., -2:, :])


# ---------------------------------------------------------------------------
# The extrapolation experiment's pieces
# ---------------------------------------------------------------------------


def test_lookback_batch_targets():
    x, y = P.lookback_batch(4, 10, lag=3, generator=torch.Generator().manual_seed(0))
    assert (y[:, :3] == -100).all()
    assert torch.equal(y[:, 3:], x[:, :-3])


@pytest.mark.parametrize("scheme", P.SCHEMES)
def test_probe_runs_at_any_length(scheme):
    torch.manual_seed(0)
    model = P.PositionProbe(scheme, max_len=8)
    assert model(torch.randint(0, 16, (2, 20))).shape == (2, 20, 16)


def test_probe_is_causal():
    torch.manual_seed(0)
    model = P.PositionProbe("rope").eval()
    x = torch.randint(0, 16, (1, 12))
    y = x.clone()
    y[0, 8:] = (y[0, 8:] + 1) % 16
    torch.testing.assert_close(model(x)[0, :8], model(y)[0, :8])


def test_probe_unknown_scheme():
    with pytest.raises(ValueError, match="desconocido"):
        P.PositionProbe("absoluta")


def test_train_probe_uses_the_book_loop_and_is_deterministic():
    recipe = Recipe(steps=5, batch_size=8, lr=3e-3, warmup=1, schedule="constant", grad_clip=None)
    a, result = lookback.train_probe("shaw", recipe, length=8, seed=3, device="cpu")
    b, _ = lookback.train_probe("shaw", recipe, length=8, seed=3, device="cpu")
    assert isinstance(result, FitResult) and result.history.steps == 5
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    acc = P.probe_accuracy(a, 16, start=8, samples=8)
    assert 0.0 <= acc <= 1.0


def test_train_probe_learns_the_lookback_task():
    recipe = Recipe(steps=120, batch_size=32, lr=3e-3, warmup=1, schedule="constant", grad_clip=None)
    model, result = lookback.train_probe("shaw", recipe, length=12, seed=0, device="cpu")
    assert result.history.loss[-1] < 0.5 * result.history.loss[0]
    assert P.probe_accuracy(model, 12, samples=64) > 0.5


# ---------------------------------------------------------------------------
# Explorer kinds for RoPE and ALiBi (dldna.viz.positional)
# ---------------------------------------------------------------------------


def test_explorer_rope_kind_similarity_depends_only_on_distance():
    import numpy as np

    from dldna.viz import positional as vp

    data = vp.positional_data("rope", n_positions=30, d_model=8)
    sim = data.similarity
    np.testing.assert_allclose(sim[1:, 1:], sim[:-1, :-1], atol=1e-12)
    theta = P.frequencies(8).numpy()
    np.testing.assert_allclose(sim[3, 10], np.cos(7 * theta).mean(), atol=1e-12)
    np.testing.assert_allclose(np.hypot(data.table[:, 0::2], data.table[:, 1::2]), 1.0)  # unit pairs


def test_explorer_alibi_kind_is_linear_bias_per_head():
    import numpy as np

    from dldna.viz import positional as vp

    data = vp.positional_data("alibi", n_positions=20, d_model=8)
    np.testing.assert_allclose(data.table[5], -5 * P.alibi_slopes(8).double().numpy())
    assert data.wavelengths is None and data.value_range == (-19.0, 0.0)
    assert data.table.min() >= data.value_range[0] and data.similarity.max() == 0


def test_explorer_shows_all_three_kinds():
    from dldna import widgets

    explorer = widgets.positional_explorer(kinds=("sinusoidal", "rope", "alibi"))
    assert getattr(explorer, "error", None) is None
    html = explorer._repr_mimebundle_()["text/html"]
    assert "RoPE" in html and "ALiBi" in html


def test_probe_t5_buckets_default_to_the_training_length():
    """With max_distance = training length, every longer distance falls in a bucket training reached."""
    probe = P.PositionProbe("t5", max_len=24)
    assert probe.relative.max_distance == 24
    seen = set(P.t5_buckets(P.relative_distances(24), 16, 24, bidirectional=False).unique().tolist())
    longer = set(P.t5_buckets(P.relative_distances(96), 16, 24, bidirectional=False).unique().tolist())
    assert longer <= seen
    # The old setting (max_distance 32) leaves buckets that only longer sequences reach.
    seen32 = set(P.t5_buckets(P.relative_distances(24), 16, 32, bidirectional=False).unique().tolist())
    longer32 = set(P.t5_buckets(P.relative_distances(96), 16, 32, bidirectional=False).unique().tolist())
    assert longer32 - seen32
    assert P.PositionProbe("t5", max_len=24, bucket_distance=32).relative.max_distance == 32


def test_encodings_on_integer_input_are_computed_in_float():
    x = torch.zeros(1, 6, 8, dtype=torch.long)
    torch.testing.assert_close(P.SinusoidalPositionalEncoding(8)(x)[0], P.sinusoidal(6, 8))
    ints = torch.ones(6, 8, dtype=torch.int32)
    rope = P.RotaryEmbedding(8)
    torch.testing.assert_close(rope.rotate(ints), rope.rotate(ints.float()))


def test_alibi_custom_slopes_replace_the_standard_ones():
    bias = P.ALiBi(2, slopes=[2.0, 1.0])(4, 4)
    torch.testing.assert_close(bias[0, :, 3, 0], torch.tensor([-6.0, -3.0]))
    probe = P.PositionProbe("alibi", alibi_slopes=[2.0, 1.0])
    torch.testing.assert_close(probe.relative.slopes, torch.tensor([2.0, 1.0]))
    # The default stays Press et al.'s geometric sequence.
    torch.testing.assert_close(P.PositionProbe("alibi").relative.slopes, P.alibi_slopes(2))
    for wrong in ([1.0], [1.0, 0.0], [1.0, float("nan")]):
        with pytest.raises(ValueError, match="pendientes"):
            P.ALiBi(2, slopes=wrong)


def test_probe_and_its_measures_check_their_arguments():
    probe = P.PositionProbe("rope", d_model=8, num_heads=2, layers=1, max_len=8)
    # start past the sequence left no position to score: NaN before.
    with pytest.raises(ValueError, match="ninguna posición"):
        P.probe_accuracy(probe, 8, start=8, samples=4)
    with pytest.raises(TypeError, match="PositionProbe"):
        P.lag_attention(torch.nn.Linear(2, 2), 8)
    with pytest.raises(ValueError, match="solo se usa con scheme='alibi'"):
        P.PositionProbe("rope", alibi_slopes=[1.0, 2.0])
    with pytest.raises(ValueError, match="par"):
        P.PositionProbe("rope", d_model=6, num_heads=2)
    with pytest.raises(ValueError, match="fuera del vocabulario"):
        probe(torch.full((1, 4), 16))
    # NumPy integers are integers; lists are tensors.
    assert probe(np.array([[1, 2, 3]])).shape == (1, 3, 16)
    assert P.sinusoidal(np.int64(4), 8).shape == (4, 8)


def test_lag_profile_follows_the_head_of_lag_attention():
    torch.manual_seed(0)
    probe = P.PositionProbe("rope", d_model=16, num_heads=2, layers=2, max_len=8).eval()
    n, far, start = 12, 8, 8
    on_lag, beyond = P.lag_profile(probe, n, far, start=start, samples=16)
    assert on_lag == pytest.approx(P.lag_attention(probe, n, start=start, samples=16))
    # Recomputed query by query from the weights the probe returns.
    x, _ = P.lookback_batch(16, n, 3, 16, generator=torch.Generator().manual_seed(1234))
    with torch.no_grad():
        _, weights = probe(x, return_weights=True)

    def measure(w):  # (batch, q, k) of one head
        lag = torch.stack([w[:, q, q - 3] for q in range(start, n)]).mean()
        away = torch.stack([w[:, q, :q - far + 1].sum(-1) for q in range(start, n)]).mean()
        return lag.item(), away.item()

    heads = [measure(w[:, h]) for w in weights for h in range(w.shape[1])]
    assert len(heads) == 4
    assert (on_lag, beyond) == pytest.approx(max(heads, key=lambda m: m[0]), abs=1e-6)
    # An untrained head spreads its weight: some reaches the far keys, never more than all of it.
    assert 0 < beyond and on_lag + beyond <= 1 + 1e-6
    for bad in (0, 12, 50, "8"):
        with pytest.raises(ValueError, match="far"):
            P.lag_profile(probe, n, bad)


def test_shaw_attention_takes_lists_and_refuses_other_tables():
    torch.manual_seed(0)
    rel = P.ShawRelativePosition(4, 2)
    q = torch.randn(2, 3, 4)
    out, weights = P.shaw_attention(q.tolist(), q, q, rel)
    torch.testing.assert_close(out, P.shaw_attention(q, q, q, rel)[0])
    with pytest.raises(TypeError, match="ShawRelativePosition"):
        P.shaw_attention(q, q, q, None)
    with pytest.raises(ValueError, match="dimensiones de lote"):
        P.shaw_attention(q[:1], q, q, rel)
