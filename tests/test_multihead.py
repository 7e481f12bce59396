"""dldna.attention.MultiHeadAttention and friends against torch.nn.MultiheadAttention."""

from __future__ import annotations

import math

import pytest
import torch

from dldna import masking
from dldna.attention import (
    CollaborativeAttention,
    MultiHeadAttention,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
)
from dldna.runtime import seed_everything

D, H = 16, 4


@pytest.fixture
def pair():
    seed_everything(0)
    reference = torch.nn.MultiheadAttention(D, H, batch_first=True)
    torch.nn.init.normal_(reference.in_proj_bias)  # non-zero biases, so they are checked too
    torch.nn.init.normal_(reference.out_proj.bias)
    return MultiHeadAttention.from_torch(reference), reference


def _compare(ours, theirs):
    out_a, w_a = ours
    out_b, w_b = theirs
    assert out_a.shape == out_b.shape and w_a.shape == w_b.shape
    assert torch.allclose(out_a, out_b, atol=1e-6)
    assert torch.allclose(w_a, w_b, atol=1e-6)


def test_same_numbers_as_torch_without_mask(pair):
    ours, ref = pair
    x = torch.randn(2, 5, D)
    _compare(ours(x), ref(x, x, x, average_attn_weights=False))


def test_same_numbers_as_torch_with_causal_and_padding_masks(pair):
    ours, ref = pair
    x = torch.randn(3, 6, D)
    lengths = [6, 4, 2]
    causal = masking.causal_mask(6)
    _compare(ours(x, mask=causal), ref(x, x, x, attn_mask=~causal, average_attn_weights=False))
    pad = masking.padding_mask(lengths)
    key_pad = ~masking.sequence_mask(lengths)
    _compare(ours(x, mask=pad), ref(x, x, x, key_padding_mask=key_pad, average_attn_weights=False))
    both = masking.combine(pad, causal)
    _compare(
        ours(x, mask=both),
        ref(x, x, x, attn_mask=~causal, key_padding_mask=key_pad, average_attn_weights=False),
    )


def test_same_numbers_as_torch_in_cross_attention(pair):
    ours, ref = pair
    queries, memory = torch.randn(2, 3, D), torch.randn(2, 7, D)
    pad = masking.padding_mask([7, 5])
    out, weights = ours(queries, memory, mask=pad)
    assert out.shape == (2, 3, D) and weights.shape == (2, H, 3, 7)
    assert (weights[1, :, :, 5:] == 0).all()
    _compare(
        (out, weights),
        ref(queries, memory, memory, key_padding_mask=~masking.sequence_mask([7, 5]),
            average_attn_weights=False),
    )


def test_weights_are_distributions_per_head(pair):
    ours, _ = pair
    _, weights = ours(torch.randn(2, 5, D), mask=masking.causal_mask(5))
    assert weights.shape == (2, H, 5, 5)
    assert torch.allclose(weights.sum(-1), torch.ones(2, H, 5))
    assert (weights.triu(1) == 0).all()


def test_split_and_merge_heads_are_inverse_and_slice_features():
    x = torch.randn(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    assert torch.equal(heads[:, 1], x[..., 4:8])
    assert torch.equal(merge_heads(heads), x)


def test_concat_then_output_projection_is_sum_over_heads(pair):
    ours, _ = pair
    x = torch.randn(2, 5, D)
    q, k, v = (split_heads(p(x), H) for p in (ours.q_proj, ours.k_proj, ours.v_proj))
    heads, _ = scaled_dot_product_attention(q, k, v)
    concat = merge_heads(heads) @ ours.out_proj.weight.T
    w_o = ours.out_proj.weight.T  # (d_model, d_model): rows h·d_k … belong to head h
    d_k = D // H
    summed = sum(heads[:, h] @ w_o[h * d_k:(h + 1) * d_k] for h in range(H))
    assert torch.allclose(concat, summed, atol=1e-6)
    assert torch.allclose(concat + ours.out_proj.bias, ours(x)[0], atol=1e-6)


def test_parameter_count_equals_one_full_width_head():
    mha = MultiHeadAttention(D, H)
    count = sum(p.numel() for p in mha.parameters())
    assert count == 4 * D * D + 4 * D
    assert count == sum(p.numel() for p in torch.nn.MultiheadAttention(D, H).parameters())
    assert count == sum(p.numel() for p in MultiHeadAttention(D, 1).parameters())


def test_fully_masked_query_gets_zero_weights_and_finite_output(pair):
    ours, _ = pair
    mask = masking.padding_mask([3, 3], queries=True)
    x = torch.randn(2, 3, D)
    mask = mask.clone()
    mask[0, 0, 1] = False  # query 1 of sentence 0 may attend to nothing
    out, weights = ours(x, mask=mask)
    assert torch.isfinite(out).all()
    assert (weights[0, :, 1] == 0).all()
    assert torch.allclose(out[0, 1], ours.out_proj.bias)


def test_errors_are_clear():
    message = r"num_heads=3 no divide a d_model=10: cada cabeza recibe d_model / num_heads"
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(10, 3)
    layer = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="d_model=8"):
        layer(torch.randn(1, 4, 6))
    with pytest.raises(ValueError, match="unsqueeze"):
        layer(torch.randn(4, 8))
    with pytest.raises(TypeError, match="booleano"):
        layer(torch.randn(1, 4, 8), mask=torch.ones(4, 4))
    with pytest.raises(ValueError, match="no se difunde"):
        layer(torch.randn(1, 4, 8), mask=masking.causal_mask(5))
    with pytest.raises(ValueError, match="num_heads"):
        layer.load_torch(torch.nn.MultiheadAttention(8, 4))


def test_collaborative_heads_contain_standard_multihead(pair):
    ours, _ = pair
    d_k = D // H
    collab = CollaborativeAttention(D, H, d_shared=D, scale=1 / math.sqrt(d_k))
    with torch.no_grad():
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            getattr(collab, name).load_state_dict(getattr(ours, name).state_dict())
        collab.mixing.copy_(torch.block_diag(*[torch.ones(1, d_k)] * H))
    x = torch.randn(2, 5, D)
    mask = masking.causal_mask(5)
    _compare(collab(x, mask=mask), ours(x, mask=mask))


def test_collaborative_heads_use_fewer_parameters():
    collab = CollaborativeAttention(64, 8, d_shared=16)
    standard = MultiHeadAttention(64, 8)
    n_collab = sum(p.numel() for p in collab.parameters())
    assert n_collab == 2 * (64 * 16 + 16) + 8 * 16 + 2 * (64 * 64 + 64)
    assert n_collab < sum(p.numel() for p in standard.parameters())
    out, weights = collab(torch.randn(2, 5, 64), torch.randn(2, 7, 64))
    assert out.shape == (2, 5, 64) and weights.shape == (2, 8, 5, 7)


# --------------------------------------------------------------------- fused path, dropout


def _masks(batch, q_len, k_len):
    lengths = [k_len, max(1, k_len - 2), 1][:batch]
    pad = masking.padding_mask(lengths, max_len=k_len)
    causal = masking.causal_mask(q_len, k_len)
    both = masking.combine(pad, causal)
    return {"ninguna": None, "causal": causal, "relleno": pad, "causal + relleno": both}


@pytest.mark.parametrize("name", ["ninguna", "causal", "relleno", "causal + relleno"])
def test_fused_path_gives_the_numbers_of_the_explicit_one(pair, name):
    ours, _ = pair
    ours.eval()
    x = torch.randn(3, 6, D)
    mask = _masks(3, 6, 6)[name]
    explicit, weights = ours(x, mask=mask)
    fused, none = ours(x, mask=mask, need_weights=False)
    assert none is None and weights is not None
    torch.testing.assert_close(fused, explicit, atol=1e-6, rtol=1e-5)


def test_fused_path_matches_torch_with_need_weights_false(pair):
    ours, ref = pair
    x, memory = torch.randn(3, 4, D), torch.randn(3, 6, D)
    lengths = [6, 3, 1]
    theirs, _ = ref(x, memory, memory, key_padding_mask=~masking.sequence_mask(lengths), need_weights=False)
    mine, _ = ours(x, memory, mask=masking.padding_mask(lengths), need_weights=False)
    torch.testing.assert_close(mine, theirs, atol=1e-6, rtol=1e-5)
    causal = masking.causal_mask(4)
    theirs, _ = ref(x, x, x, attn_mask=~causal, need_weights=False)  # True = blocked there
    torch.testing.assert_close(ours(x, mask=causal, need_weights=False)[0], theirs, atol=1e-6, rtol=1e-5)


def test_fused_path_with_bias_and_fully_masked_queries(pair):
    ours, _ = pair
    x = torch.randn(2, 5, D)
    bias = torch.randn(H, 5, 5)
    mask = masking.padding_mask([5, 3], queries=True)  # queries 3 and 4 of sentence 1 see nothing
    explicit, _ = ours(x, mask=mask, bias=bias)
    x.requires_grad_(True)
    fused, _ = ours(x, mask=mask, bias=bias, need_weights=False)
    torch.testing.assert_close(fused, explicit.detach(), atol=1e-6, rtol=1e-5)
    fused.sum().backward()
    assert torch.isfinite(x.grad).all()
    torch.testing.assert_close(fused[1, 3], ours.out_proj.bias.detach())


def _count_weight_products(layer, x):
    """How many matrix products a forward pass makes outside the Linear layers."""
    from torch.overrides import TorchFunctionMode

    class Count(TorchFunctionMode):
        n = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") in ("matmul", "__matmul__"):
                Count.n += 1
            return func(*args, **(kwargs or {}))

    with Count():
        layer(x)
    return Count.n


def test_dropout_multiplies_the_weights_by_v_once():
    seed_everything(0)
    layer = MultiHeadAttention(D, H, dropout=0.5).train()
    x = torch.randn(2, 5, D)
    # Q Kᵀ and (weights) V: two products, with or without dropout
    assert _count_weight_products(layer, x) == 2
    assert _count_weight_products(layer.eval(), x) == 2
    layer.train()
    seed_everything(1)
    out, weights = layer(x)
    seed_everything(1)
    q, k, v = (split_heads(p(x), H) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    heads = torch.nn.functional.dropout(weights, 0.5) @ v
    torch.testing.assert_close(out, layer.out_proj(merge_heads(heads)))
    assert torch.allclose(weights.sum(-1), torch.ones(2, H, 5))  # returned before dropout


def test_float64_numpy_and_half_inputs():
    np = pytest.importorskip("numpy")
    seed_everything(0)
    layer = MultiHeadAttention(D, H).eval()
    x = np.random.default_rng(0).normal(size=(2, 5, D))
    out, _ = layer(torch.from_numpy(x))
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, layer(torch.tensor(x, dtype=torch.float32))[0])
    torch.testing.assert_close(layer(x)[0], out)
    torch.testing.assert_close(layer(torch.from_numpy(x).half())[0], out, atol=2e-2, rtol=1e-2)
    with pytest.raises(ValueError, match="NaN"):
        layer(torch.full((1, 3, D), float("nan")))
    with pytest.raises(TypeError, match="True o False"):
        layer(out, need_weights="no")
