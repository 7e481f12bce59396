"""dldna.masking: shapes, values, combination, errors, and what masks guarantee."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from dldna import masking
from dldna.attention import MultiHeadAttention, scaled_dot_product_attention, softmax
from dldna.runtime import seed_everything


def test_padding_mask_from_lengths_shape_and_values():
    mask = masking.padding_mask([3, 5, 1], max_len=5)
    assert mask.shape == (3, 1, 1, 5)
    assert mask.dtype == torch.bool
    assert mask[:, 0, 0].int().tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]]


def test_padding_mask_from_token_ids_matches_lengths():
    ids = torch.tensor([[5, 7, 2, 0, 0], [4, 4, 4, 4, 4]])
    assert torch.equal(masking.padding_mask(token_ids=ids, pad_id=0), masking.padding_mask([3, 5]))


def test_padding_mask_left_side_and_queries():
    left = masking.sequence_mask([2, 4], max_len=4, side="left")
    assert left.int().tolist() == [[0, 0, 1, 1], [1, 1, 1, 1]]
    both = masking.padding_mask([2, 3], queries=True)
    assert both.shape == (2, 1, 3, 3)
    assert both[0, 0].int().tolist() == [[1, 1, 0], [1, 1, 0], [0, 0, 0]]
    assert masking.fully_masked_rows(both)[:, 0].tolist() == [[False, False, True], [False] * 3]


def test_causal_mask_is_lower_triangular_with_diagonal():
    mask = masking.causal_mask(4)
    i, j = torch.meshgrid(torch.arange(4), torch.arange(4), indexing="ij")
    assert torch.equal(mask, j <= i)
    # Queries that are the last positions of a longer key sequence.
    offset = masking.causal_mask(2, 5)
    assert offset.int().tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]


def test_combine_broadcasts_to_batch_heads_q_k():
    combined = masking.combine(masking.padding_mask([2, 4]), masking.causal_mask(4))
    assert combined.shape == (2, 1, 4, 4)
    assert combined[0, 0].int().tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]]
    assert torch.equal(combined[1, 0], masking.causal_mask(4))
    scores = torch.zeros(2, 3, 4, 4)
    assert torch.broadcast_shapes(combined.shape, scores.shape) == scores.shape
    assert masking.combine(None, None) is None


def test_combine_is_logical_and():
    a = masking.local_window_mask(6, 2)
    b = masking.causal_mask(6)
    assert torch.equal(masking.combine(a, b), a & b)
    assert torch.equal(masking.combine(a, b), masking.local_window_mask(6, 2, causal=True))


def test_additive_and_boolean_masks_give_the_same_weights():
    seed_everything(0)
    scores = torch.randn(2, 3, 5, 5)
    mask = masking.combine(masking.padding_mask([5, 3]), masking.causal_mask(5))
    additive = masking.to_additive(mask)
    assert additive.unique().tolist() == [float("-inf"), 0.0]
    boolean = softmax(scores.masked_fill(~mask, float("-inf")))
    added = softmax(scores + additive)
    assert torch.equal(boolean, added)
    assert torch.equal(masking.from_additive(additive), mask)
    assert torch.equal(masking.from_additive(torch.zeros(mask.shape).masked_fill(~mask, -1e9)), mask)


def test_fully_masked_row_nan_with_naive_softmax_zero_with_dldna():
    scores = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    mask = torch.tensor([[True, True, False], [False, False, False]])
    masked = scores.masked_fill(~mask, float("-inf"))
    naive = torch.exp(masked) / torch.exp(masked).sum(-1, keepdim=True)
    assert torch.isnan(naive[1]).all() and not torch.isnan(naive[0]).any()
    assert torch.isnan(torch.softmax(masked, dim=-1)[1]).all()
    safe = softmax(masked)
    assert safe[1].tolist() == [0.0, 0.0, 0.0]
    assert torch.allclose(safe[0], naive[0])
    out, weights = scaled_dot_product_attention(
        torch.randn(2, 4), torch.randn(3, 4), torch.randn(3, 2), mask=mask
    )
    assert torch.isfinite(out).all() and out[1].tolist() == [0.0, 0.0]


def _jacobian_blocks(layer, x, mask):
    """|d out_i / d x_j| summed over features: shape (seq, seq)."""
    def f(inp):
        return layer(inp, mask=mask)[0]

    jac = torch.autograd.functional.jacobian(f, x)  # (1, n, d, 1, n, d)
    return jac[0, :, :, 0].abs().sum(dim=(1, 3))


def test_causal_mask_makes_future_gradients_exactly_zero():
    seed_everything(0)
    n, d = 5, 8
    layer = MultiHeadAttention(d, 2)
    x = torch.randn(1, n, d)
    with_mask = _jacobian_blocks(layer, x, masking.causal_mask(n))
    without = _jacobian_blocks(layer, x, None)
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    assert (with_mask[future] == 0).all()
    assert (with_mask[~future] > 0).all()
    assert (without[future] > 0).all()


def test_padding_contents_do_not_change_valid_outputs():
    seed_everything(1)
    layer = MultiHeadAttention(8, 2)
    lengths = [3, 5]
    x = torch.randn(2, 5, 8)
    changed = x.clone()
    changed[0, 3:] = 100 * torch.randn(2, 8)
    mask = masking.padding_mask(lengths)
    out_a, _ = layer(x, mask=mask)
    out_b, _ = layer(changed, mask=mask)
    assert torch.equal(out_a[0, :3], out_b[0, :3])
    assert torch.equal(out_a[1], out_b[1])
    # Without the mask the valid outputs do change.
    assert not torch.allclose(layer(x)[0][0, :3], layer(changed)[0][0, :3])


def test_local_window_counts():
    mask = masking.local_window_mask(7, 3)
    assert mask.sum(-1).tolist() == [3, 4, 5, 5, 5, 4, 3]
    causal = masking.local_window_mask(7, 3, causal=True)
    assert causal.sum(-1).tolist() == [1, 2, 3, 3, 3, 3, 3]
    assert torch.equal(masking.local_window_mask(4, 1), torch.eye(4, dtype=torch.bool))


def test_strided_and_fixed_match_child_et_al_definitions():
    n, l, c = 12, 4, 1
    strided = masking.strided_mask(n, l)
    fixed = masking.fixed_mask(n, l, summary=c)
    for i in range(n):
        for j in range(n):
            in_strided = j <= i and (i - j <= l or (i - j) % l == 0)
            in_fixed = j <= i and (j // l == i // l or j % l >= l - c)
            assert bool(strided[i, j]) == in_strided, (i, j)
            assert bool(fixed[i, j]) == in_fixed, (i, j)
    both_ways = masking.strided_mask(n, l, causal=False)
    assert torch.equal(both_ways, both_ways.T)
    assert torch.equal(both_ways & masking.causal_mask(n), strided)
    assert int(strided.sum()) < int(masking.causal_mask(n).sum())


def test_grid_mask_is_a_convolution_neighbourhood():
    mask = masking.grid_mask(4, 5)
    assert mask.shape == (20, 20)
    counts = mask.sum(-1).view(4, 5)
    assert counts[0, 0] == 4 and counts[0, 2] == 6 and counts[1, 1] == 9
    assert torch.equal(mask, mask.T)
    # pixel (1, 1) = index 6 sees rows 0-2 and columns 0-2
    seen = {int(p) for p in torch.nonzero(mask[6]).flatten()}
    assert seen == {0, 1, 2, 5, 6, 7, 10, 11, 12}
    assert torch.equal(masking.grid_mask(3, 3, radius=0), torch.eye(9, dtype=torch.bool))


def test_two_layers_of_sparse_patterns_reach_the_whole_past():
    n = 16
    causal = masking.causal_mask(n)

    def reach_in_two(m):
        return (m.float() @ m.float()) > 0

    assert torch.equal(reach_in_two(masking.strided_mask(n, 4)), causal)
    assert torch.equal(reach_in_two(masking.fixed_mask(n, 4)), causal)
    assert not torch.equal(reach_in_two(masking.local_window_mask(n, 4, causal=True)), causal)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: masking.padding_mask([3, -1]), ValueError, "negativas"),
        (lambda: masking.padding_mask([3, 6], max_len=5), ValueError, "max_len"),
        (lambda: masking.padding_mask([2.5, 3]), TypeError, "enteros"),
        (lambda: masking.padding_mask(), ValueError, "lengths"),
        (lambda: masking.padding_mask(token_ids=torch.zeros(2, 3, dtype=torch.long)),
         ValueError, "pad_id"),
        (lambda: masking.local_window_mask(5, 0), ValueError, "window"),
        (lambda: masking.causal_mask(0), ValueError, "q_len"),
        (lambda: masking.causal_mask(4, 2), ValueError, "más consultas"),
        (lambda: masking.strided_mask(5, 0), ValueError, "stride"),
        (lambda: masking.grid_mask(3, 3, radius=-1), ValueError, "radius"),
        (lambda: masking.fixed_mask(8, 2, summary=3), ValueError, "summary"),
        (lambda: masking.combine(torch.ones(3, 3)), TypeError, "booleano"),
        (lambda: masking.combine(masking.causal_mask(3), masking.causal_mask(4)),
         ValueError, "difusión"),
        (lambda: masking.to_additive(torch.ones(2, 2)), TypeError, "booleano"),
    ],
)
def test_bad_inputs_raise_spanish_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_describe_counts():
    text = masking.describe(masking.causal_mask(4))
    assert "10 de 16 pares (consulta, clave) permitidos" in text and "(62.5 %)" in text
    assert "filas sin ninguna clave: 0" in text
    # A 1-D mask has no queries: what it allows are keys.
    assert "2 de 3 claves permitidas" in masking.describe(torch.tensor([True, False, True]))
    # The book's number convention: thousands grouped by a space from five digits on.
    assert "32 896 de 65 536" in masking.describe(masking.causal_mask(256))


def test_mask_explorer_masks_weights_and_errors():
    from dldna.widgets.masking import build_mask, mask_explorer, weights_for

    mask = build_mask("causal+padding", 6, pad=2)
    assert torch.equal(mask, masking.combine(masking.padding_mask([4], max_len=6)[0, 0],
                                             masking.causal_mask(6)))
    weights = weights_for(mask)
    assert (weights[~mask] == 0).all() and torch.allclose(weights.sum(-1), torch.ones(6))
    explorer = mask_explorer()
    ids = re.compile(r"dldna-masks-\d+")  # the id counts explorers in the session
    assert ids.sub("", explorer.to_html()) == ids.sub("", mask_explorer().to_html())  # deterministic
    assert 'data-dldna-view="masks"' in explorer.to_html()
    assert "relleno" in mask_explorer(pad=9).error
    assert "Patrón desconocido" in mask_explorer(pattern="diagonal").error


def test_minus_1e9_overflows_float16_and_masked_scores_does_not():
    scores = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]).half()
    mask = torch.tensor([[True, True, False], [False, False, False]])
    with pytest.raises(RuntimeError, match="overflow"):
        scores.masked_fill(~mask, -1e9)
    blocked = masking.masked_scores(scores, mask)
    assert blocked.dtype == torch.float16 and blocked[0, 2].item() == float("-inf")
    weights = softmax(blocked)
    assert weights[0].tolist() == torch.softmax(scores[0, :2].float(), -1).half().tolist() + [0.0]
    assert weights[1].tolist() == [0.0, 0.0, 0.0]  # nothing to attend to: zeros, not NaN
    assert torch.isnan(torch.softmax(blocked.float(), -1)[1]).all()  # torch.softmax: NaN
    lowest = masking.masked_scores(scores, mask, fill="min")
    assert lowest[0, 2].item() == torch.finfo(torch.float16).min
    # with the finite minimum torch.softmax gives no NaN, but a blocked row is uniform
    assert torch.softmax(lowest.float(), -1)[1].tolist() == pytest.approx([1 / 3] * 3)
    assert torch.softmax(lowest.float(), -1)[0, 2].item() == 0.0


def test_masks_accept_device_names_and_numpy_integers():
    assert masking.causal_mask(np.int64(3), device="cpu").device.type == "cpu"
    with pytest.raises(ValueError, match="Dispositivo desconocido"):
        masking.local_window_mask(4, 2, device="gpu")
    assert torch.equal(masking.padding_mask(np.array([2, 3])), masking.padding_mask([2, 3]))
