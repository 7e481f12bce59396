"""The Llama block (dldna.llama), RoPE's scaling and the receptive field of a sliding window (chapter 10b)."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from dldna import language_models as lm
from dldna import llama, masking, runtime
from dldna import positional as P
from dldna.tasks import lookback


def _model(num_kv_heads=None, seed=0, **kwargs) -> llama.LlamaLM:
    runtime.seed_everything(seed)
    model = llama.LlamaLM(40, num_kv_heads=num_kv_heads, **kwargs).eval()
    with torch.no_grad():  # gains away from 1, so that a misplaced norm would show
        for module in model.modules():
            if isinstance(module, llama.RMSNorm):
                module.weight.normal_(1.0, 0.3)
    return model


# --- RMSNorm and SwiGLU --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rmsnorm_equals_torch(dtype):
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(3, 7, 24, generator=g) * 5 + 2).to(dtype)
    ours, theirs = llama.RMSNorm(24, eps=1e-5).to(dtype), torch.nn.RMSNorm(24, eps=1e-5).to(dtype)
    with torch.no_grad():
        ours.weight.copy_(torch.randn(24, generator=g))
        theirs.weight.copy_(ours.weight)
    torch.testing.assert_close(ours(x), theirs(x))


def test_rmsnorm_gives_unit_root_mean_square_and_keeps_the_mean():
    x = torch.randn(4, 32, generator=torch.Generator().manual_seed(1)) + 3.0
    out = llama.RMSNorm(32)(x)
    torch.testing.assert_close(out.pow(2).mean(-1).sqrt(), torch.ones(4), atol=1e-5, rtol=0)
    assert (out.mean(-1) > 0.5).all()  # not centred, unlike LayerNorm


def test_rmsnorm_half_precision_is_computed_wide():
    x = torch.full((2, 8), 300.0, dtype=torch.float16)  # x² overflows float16
    out = llama.RMSNorm(8).half()(x)
    assert out.dtype == torch.float16 and torch.isfinite(out).all()
    torch.testing.assert_close(out.float(), torch.ones(2, 8))


@pytest.mark.parametrize("d_ff", [3, 64, 128, 1000, 4 * 4096])
def test_swiglu_width_matches_the_parameters(d_ff):
    h = llama.swiglu_width(d_ff)
    assert abs(3 * h - 2 * d_ff) <= 1.5  # the nearest integer to 2·d_ff/3


def test_swiglu_is_the_gated_formula():
    layer = llama.SwiGLU(8, 5)
    x = torch.randn(2, 3, 8)
    gate, up = x @ layer.gate_proj.weight.T, x @ layer.up_proj.weight.T
    expected = (gate * torch.sigmoid(gate) * up) @ layer.down_proj.weight.T
    torch.testing.assert_close(layer(x), expected)
    assert all(m.bias is None for m in (layer.gate_proj, layer.up_proj, layer.down_proj))


# --- The model and Hugging Face -------------------------------------------------------------------


def test_llama_is_causal_and_has_no_biases():
    model = _model()
    ids = torch.randint(3, 40, (2, 9))
    changed = ids.clone()
    changed[:, 6:] = 5
    torch.testing.assert_close(model(ids)[:, :6], model(changed)[:, :6])
    assert not (model(ids)[:, 6:] - model(changed)[:, 6:]).abs().max() < 1e-6
    assert not [n for n, _ in model.named_parameters() if n.endswith("bias")]
    assert model.lm_head.weight is model.embed_tokens.weight


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
def test_hugging_face_llama_gives_the_same_logits(num_kv_heads):
    model = _model(num_kv_heads)
    hf = LlamaForCausalLM(LlamaConfig(**llama.hf_config(model))).eval()
    hf.load_state_dict(llama.hf_state_dict(model), strict=True)
    ids = torch.randint(3, 40, (3, 13), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        torch.testing.assert_close(model(ids), hf(ids).logits, atol=1e-5, rtol=1e-5)


def test_without_reordering_rope_pairs_the_logits_differ():
    model = _model(init_std=0.3)  # weights large enough for attention to matter in the logits
    plain = {hf: model.state_dict()[book] for book, hf in llama.hf_names(model)}
    plain["lm_head.weight"] = plain["model.embed_tokens.weight"]
    hf = LlamaForCausalLM(LlamaConfig(**llama.hf_config(model))).eval()
    hf.load_state_dict(plain, strict=True)
    ids = torch.randint(3, 40, (1, 13), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert (model(ids) - hf(ids).logits).abs().max() > 1e-2


def test_hf_names_cover_every_weight_of_the_hf_model():
    model = _model(2)
    hf = LlamaForCausalLM(LlamaConfig(**llama.hf_config(model)))
    assert set(llama.hf_state_dict(model)) == set(hf.state_dict())
    pair = ("layers.0.self_attn.out_proj.weight", "model.layers.0.self_attn.o_proj.weight")
    assert pair in llama.hf_names(model)


def test_llama_rejects_what_it_cannot_be():
    with pytest.raises(ValueError, match="causal"):
        llama.LlamaLM(40, causal=False)
    with pytest.raises(ValueError, match=r"n_heads=4 no divide a d_model=30: .* \[1, 2, 3, 5, 6, 10, 15, 30\]"):  # noqa: E501
        llama.LlamaLM(40, d_model=30, n_heads=4)
    with pytest.raises(TypeError, match="LlamaLM"):
        llama.hf_config(lm.LanguageModel(40))


def test_init_std_none_uses_the_scales_of_chapter_9():
    default, scaled = _model(), _model(init_std=None)
    assert abs(default.embed_tokens.weight.std().item() - 0.02) < 0.005
    assert abs(scaled.embed_tokens.weight.std().item() - 64 ** -0.5) < 0.02
    assert scaled.layers[0].mlp.up_proj.weight.std() > 2 * default.layers[0].mlp.up_proj.weight.std()


def test_pretrain_trains_another_architecture():
    runtime.seed_everything(0)
    ids = torch.randint(3, 40, (64, 10))
    recipe = dataclasses.replace(lm.RECIPE, steps=30, warmup=3)
    model, result = lm.pretrain(ids, 40, causal=True, architecture=llama.LlamaLM, recipe=recipe,
                                progress=False, d_model=32, n_heads=2, n_layers=1, d_ff=64)
    assert isinstance(model, llama.LlamaLM)
    assert result.history.loss[-1] < result.history.loss[0]
    with pytest.raises(TypeError, match="architecture"):
        lm.pretrain(ids, 40, causal=True, architecture="llama", recipe=recipe, progress=False)


# --- RoPE's scaling -------------------------------------------------------------------------------


def test_rope_frequencies_linear_and_ntk():
    base = P.rope_frequencies(16)
    torch.testing.assert_close(base, P.frequencies(16))
    torch.testing.assert_close(P.rope_frequencies(16, scaling="linear", factor=4), base / 4)
    ntk = P.rope_frequencies(16, scaling="ntk", factor=4)
    assert ntk[0] == base[0]  # the fastest pair keeps its angle
    torch.testing.assert_close(ntk[-1], base[-1] / 4)  # the slowest is interpolated
    ratios = base / ntk
    assert (ratios[1:] > ratios[:-1]).all()  # between, a geometric progression
    torch.testing.assert_close(P.rope_frequencies(16, scaling="ntk", factor=1), base)


def test_position_interpolation_turns_position_s_p_like_p():
    plain, interpolated = P.RotaryEmbedding(8), P.RotaryEmbedding(8, scaling="linear", factor=4)
    v = torch.randn(8).expand(1, 40, 8).contiguous()  # the same vector at every position
    torch.testing.assert_close(interpolated.rotate(v)[0, ::4], plain.rotate(v)[0, :10])
    assert not torch.allclose(interpolated.rotate(v)[0, :10], plain.rotate(v)[0, :10])


def test_scaled_rotary_keeps_relative_scores():
    rope = P.RotaryEmbedding(16).scaled("ntk", 4)
    q, k = torch.randn(1, 1, 16), torch.randn(1, 1, 16)
    near = rope.rotate(q, 3)[0, 0] @ rope.rotate(k, 0)[0, 0]
    far = rope.rotate(q, 53)[0, 0] @ rope.rotate(k, 50)[0, 0]
    torch.testing.assert_close(near, far, atol=1e-5, rtol=1e-5)
    assert rope.scaling == "ntk" and rope.factor == 4.0


@pytest.mark.parametrize("kwargs, match", [
    ({"scaling": "cubic"}, "scaling"),
    ({"scaling": "linear", "factor": 0.5}, "≥ 1"),
    ({"scaling": None, "factor": 2.0}, "solo tiene sentido"),
    ({"scaling": "ntk", "factor": math.nan}, "factor"),
])
def test_rope_scaling_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        P.RotaryEmbedding(16, **kwargs)


def test_ntk_needs_two_frequencies():
    with pytest.raises(ValueError, match="d_k ≥ 4"):
        P.rope_frequencies(2, scaling="ntk", factor=2)


# --- Sliding window -------------------------------------------------------------------------------


@pytest.mark.parametrize("window, layers", [(1, 3), (2, 1), (4, 2), (4, 4), (3, 5)])
def test_receptive_field_of_a_causal_window(window, layers):
    n = 20
    field = masking.receptive_field(masking.local_window_mask(n, window, causal=True), layers)
    back = torch.arange(n)[:, None] - torch.arange(n)[None, :]
    torch.testing.assert_close(field, (back >= 0) & (back <= layers * (window - 1)))


def test_receptive_field_is_reachability():
    g = torch.Generator().manual_seed(0)
    mask = torch.rand(7, 7, generator=g) < 0.3
    reach = mask.clone()
    for _ in range(2):  # three layers: paths of exactly three steps
        reach = torch.stack([(reach[i][:, None] & mask).any(0) for i in range(7)])
    torch.testing.assert_close(masking.receptive_field(mask, 3), reach)
    with pytest.raises(ValueError, match="cuadrada"):
        masking.receptive_field(torch.ones(3, 4, dtype=torch.bool), 2)
    with pytest.raises(TypeError, match="booleano"):
        masking.receptive_field(torch.ones(3, 3), 2)


# --- A probe trained on, at another length ----------------------------------------------------------


def test_train_probe_goes_on_training_the_given_model():
    recipe = dataclasses.replace(lookback.RECIPE, steps=5)
    probe, _ = lookback.train_probe("rope", recipe, length=12, seed=0)
    before = probe.embed.weight.detach().clone()
    again, _ = lookback.train_probe("rope", recipe, length=24, seed=0, model=probe)
    assert again is probe and not torch.equal(before, probe.embed.weight)
    with pytest.raises(ValueError, match="scheme"):
        lookback.train_probe("alibi", recipe, model=probe)
    with pytest.raises(TypeError, match="PositionProbe"):
        lookback.train_probe("rope", recipe, model=torch.nn.Linear(2, 2))
