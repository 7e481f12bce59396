"""Attention-level position schemes: the ``bias`` and ``rotary`` arguments of dldna.attention."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from dldna import positional
from dldna.attention import MultiHeadAttention, scaled_dot_product_attention, split_heads


def _qkv(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) for _ in range(3))


def test_bias_none_is_the_old_behaviour():
    q, k, v = _qkv(2, 5, 8)
    out0, w0 = scaled_dot_product_attention(q, k, v)
    out1, w1 = scaled_dot_product_attention(q, k, v, bias=None)
    assert torch.equal(out0, out1) and torch.equal(w0, w1)


def test_bias_is_added_to_the_scaled_scores_like_pytorch():
    q, k, v = _qkv(2, 3, 5, 8)
    bias = torch.randn(3, 5, 5)
    out, w = scaled_dot_product_attention(q, k, v, bias=bias)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    torch.testing.assert_close(out, ref)
    scores = q @ k.transpose(-2, -1) / math.sqrt(8) + bias
    torch.testing.assert_close(w, torch.softmax(scores, -1))


def test_bias_then_mask_masked_keys_get_zero_weight():
    q, k, v = _qkv(1, 4, 6)
    bias = torch.full((4, 4), 50.0)  # a large bias cannot reopen a masked key
    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    _, w = scaled_dot_product_attention(q, k, v, mask=mask, bias=bias)
    assert torch.all(w[..., ~mask] == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(1, 4))


def test_constant_bias_changes_nothing():
    q, k, v = _qkv(2, 5, 8)
    out0, _ = scaled_dot_product_attention(q, k, v)
    out1, _ = scaled_dot_product_attention(q, k, v, bias=torch.tensor(3.0))
    torch.testing.assert_close(out0, out1)


def test_bias_errors_are_spanish():
    q, k, v = _qkv(1, 4, 6)
    with pytest.raises(TypeError, match="sesgo"):
        scaled_dot_product_attention(q, k, v, bias=torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="no se difunde"):
        scaled_dot_product_attention(q, k, v, bias=torch.zeros(3, 4))


def test_mha_defaults_unchanged_and_bias_matches_manual():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).eval()
    x = torch.randn(2, 6, 16)
    out0, w0 = mha(x)
    out1, w1 = mha(x, bias=None, rotary=None)
    assert torch.equal(out0, out1) and torch.equal(w0, w1)
    bias = positional.ALiBi(4)(6, 6)
    out, w = mha(x, bias=bias)
    q = split_heads(mha.q_proj(x), 4)
    k = split_heads(mha.k_proj(x), 4)
    scores = q @ k.transpose(-2, -1) / 2.0 + bias
    torch.testing.assert_close(w, torch.softmax(scores, -1))
    assert not torch.allclose(w, w0)


def test_mha_bias_shape_is_checked():
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="no se difunde"):
        mha(torch.randn(1, 4, 8), bias=torch.zeros(1, 3, 4, 4))


def test_mha_rotary_makes_scores_depend_on_relative_position_only():
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 2).eval()
    rope = positional.RotaryEmbedding(8)
    token = torch.randn(1, 1, 16)
    x = token.expand(1, 7, 16)  # the same token everywhere: only positions differ
    _, w = mha(x, rotary=rope)
    q = split_heads(mha.q_proj(x), 2)
    k = split_heads(mha.k_proj(x), 2)
    q, k = rope(q, k)
    scores = q @ k.transpose(-2, -1)
    # Toeplitz: entry (i, j) equals entry (i+1, j+1).
    torch.testing.assert_close(scores[..., 1:, 1:], scores[..., :-1, :-1], atol=1e-5, rtol=1e-5)
    # Without rotation every score would be equal; with it they are not.
    assert scores[0, 0, 3].std() > 1e-3
    torch.testing.assert_close(w, torch.softmax(scores / math.sqrt(8), -1))


def test_mha_rotary_must_be_callable():
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(TypeError, match="rotary"):
        mha(torch.randn(1, 3, 8), rotary=3)
