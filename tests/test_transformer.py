"""dldna.transformer: configuration, pieces, masks end to end, and torch.nn.Transformer."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from dldna import masking
from dldna.runtime import seed_everything
from dldna.training import layer_gradient_norms, seq2seq_loss
from dldna.transformer import (
    POSITIONAL_SCHEMES,
    Decoder,
    DeepStack,
    Encoder,
    EncoderLayer,
    FeedForward,
    InputEmbedding,
    PositionalEncoding,
    TokenEmbedding,
    Transformer,
    TransformerConfig,
    count_parameters,
    parameter_breakdown,
    trace_shapes,
)


def small(**changes) -> TransformerConfig:
    values = dict(src_vocab=17, tgt_vocab=19, d_model=32, n_heads=4, n_encoder_layers=2,
                  n_decoder_layers=2, d_ff=64, dropout=0.0, max_len=40)
    values.update(changes)
    return TransformerConfig(**values)


def model_and_batch(seed=0, **changes):
    seed_everything(seed)
    model = Transformer(small(**changes)).eval()
    src = torch.randint(1, 17, (3, 7))
    tgt = torch.randint(1, 19, (3, 6))
    return model, src, tgt


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("changes, words", [
    (dict(n_heads=5), "no divide a d_model"),
    (dict(d_model=0), "d_model debe ser un entero positivo"),
    (dict(d_ff=-3), "d_ff"),
    (dict(src_vocab=0), "src_vocab"),
    (dict(dropout=1.0), "[0, 1)"),
    (dict(dropout=-0.1), "[0, 1)"),
    (dict(positional="otra"), "Codificación posicional desconocida"),
    (dict(activation="tanh"), "Activación desconocida"),
    (dict(pad_id=30), "pad_id"),
    (dict(share_embeddings=True), "vocabulario común"),
    (dict(max_len=0), "max_len"),
])
def test_config_rejects_bad_values_in_spanish(changes, words):
    with pytest.raises(ValueError, match=None) as err:
        small(**changes)
    assert words in str(err.value)


def test_config_rejects_non_bool_switch():
    with pytest.raises(TypeError, match="norm_first"):
        small(norm_first=1)


def test_config_replace_validates_and_copies():
    c = small()
    assert c.replace(n_heads=8).n_heads == 8 and c.n_heads == 4
    assert c.d_k == 8
    with pytest.raises(ValueError):
        c.replace(n_heads=3)
    with pytest.raises(TypeError):
        c.replace(cabezas=2)


def test_base_model_of_the_paper_has_about_65_million_parameters():
    model = Transformer(TransformerConfig.base())
    parts = parameter_breakdown(model)
    assert parts["total"] == count_parameters(model) == 63_119_496
    assert abs(parts["total"] - 65e6) / 65e6 < 0.05
    layer_enc = 4 * (512 * 512 + 512) + (512 * 2048 + 2048 + 2048 * 512 + 512) + 2 * 2 * 512
    assert parts["codificador"] == 6 * layer_enc
    assert parts["incrustaciones"] == 37000 * 512


# ---------------------------------------------------------------------------
# Pieces
# ---------------------------------------------------------------------------


def test_token_embedding_is_scaled_by_sqrt_d_and_has_unit_variance():
    seed_everything(0)
    emb = TokenEmbedding(1000, 256, pad_id=0)
    ids = torch.arange(1000)[None]
    out = emb(ids)
    assert torch.allclose(out, emb.weight[ids] * 16.0)
    assert abs(out[0, 1:].std().item() - 1.0) < 0.02
    assert torch.equal(out[0, 0], torch.zeros(256))


def test_token_embedding_rejects_bad_ids():
    emb = TokenEmbedding(5, 4)
    with pytest.raises(ValueError, match="fuera del vocabulario"):
        emb(torch.tensor([[1, 5]]))
    with pytest.raises(TypeError, match="decimales"):
        emb(torch.tensor([[1.5]]))
    assert torch.equal(emb(torch.tensor([[1.0, 3.0]])), emb(torch.tensor([[1, 3]])))


def test_ids_are_range_checked_on_the_cpu_and_never_read_on_another_device():
    """The range check reads the ids (min and max): on the CPU, before they
    move; ids already on another device are not read, so a training step on a
    GPU does not wait for it. The meta device stands for a GPU here: reading a
    meta tensor's values fails, so any read would show."""
    from dldna import checks

    on_meta = torch.empty(2, 3, dtype=torch.long, device="meta")
    assert checks.ids(on_meta, "ids", vocab_size=5).device.type == "meta"
    gpu_like = torch.empty(1, device="meta")
    with pytest.raises(ValueError, match="fuera del vocabulario"):
        checks.ids(torch.tensor([[1, 7]]), "ids", vocab_size=5, like=gpu_like)
    assert checks.ids(torch.tensor([[1, 4]]), "ids", vocab_size=5, like=gpu_like).device.type == "meta"


def test_positional_encoding_schemes():
    x = torch.zeros(2, 5, 8)
    sin = PositionalEncoding(8, 10, "sinusoidal")(x)
    from dldna.positional import sinusoidal
    assert torch.allclose(sin[0], sinusoidal(5, 8))
    learned = PositionalEncoding(8, 10, "learned")
    assert sum(p.numel() for p in learned.parameters()) == 80
    assert torch.equal(PositionalEncoding(8, 10, "none")(x), x)
    with pytest.raises(ValueError, match="max_len"):
        PositionalEncoding(8, 4)(x)


def test_input_embedding_is_token_times_sqrt_d_plus_position():
    seed_everything(0)
    emb = InputEmbedding(11, 16, max_len=10, dropout=0.0)
    ids = torch.randint(0, 11, (2, 6))
    expected = emb.token.weight[ids] * 4.0 + emb.position.table[:6]
    assert torch.allclose(emb(ids), expected, atol=1e-6)


def test_feed_forward_acts_on_each_position_independently():
    seed_everything(0)
    ff = FeedForward(8, 32, activation="gelu").eval()
    x = torch.randn(2, 5, 8)
    out = ff(x)
    for t in range(5):
        assert torch.allclose(out[:, t], ff(x[:, t]), atol=1e-6)
    perm = torch.randperm(5)
    assert torch.allclose(ff(x[:, perm]), out[:, perm], atol=1e-6)
    conv1 = nn.Conv1d(8, 32, 1)
    conv2 = nn.Conv1d(32, 8, 1)
    with torch.no_grad():
        conv1.weight.copy_(ff.linear1.weight[:, :, None])
        conv1.bias.copy_(ff.linear1.bias)
        conv2.weight.copy_(ff.linear2.weight[:, :, None])
        conv2.bias.copy_(ff.linear2.bias)
    as_conv = conv2(nn.functional.gelu(conv1(x.transpose(1, 2)))).transpose(1, 2)
    assert torch.allclose(as_conv, out, atol=1e-5)


def test_gelu_is_x_times_normal_cdf():
    x = torch.linspace(-4, 4, 81, dtype=torch.float64)
    assert torch.allclose(nn.functional.gelu(x), x * 0.5 * (1 + torch.erf(x / math.sqrt(2))))


def test_layer_norm_and_batch_norm_average_over_different_axes():
    seed_everything(0)
    x = torch.randn(2, 3, 4) * 3 + 1
    ln = nn.LayerNorm(4, elementwise_affine=False)(x)
    mine_ln = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True)
                                                           + 1e-5)
    assert torch.allclose(ln, mine_ln, atol=1e-5)
    bn = nn.BatchNorm1d(4, affine=False).train()(x.transpose(1, 2)).transpose(1, 2)
    mine_bn = (x - x.mean((0, 1))) / torch.sqrt(x.var((0, 1), unbiased=False) + 1e-5)
    assert torch.allclose(bn, mine_bn, atol=1e-5)
    assert torch.allclose(ln.mean(-1), torch.zeros(2, 3), atol=1e-6)
    assert torch.allclose(bn.mean((0, 1)), torch.zeros(4), atol=1e-6)
    # LayerNorm of a token does not depend on the other sentences; BatchNorm does.
    other = x.clone()
    other[1] = other[1] * 10
    assert torch.allclose(nn.LayerNorm(4, elementwise_affine=False)(other)[0], ln[0])
    bn_other = nn.BatchNorm1d(4, affine=False).train()(other.transpose(1, 2)).transpose(1, 2)
    assert not torch.allclose(bn_other[0], bn[0], atol=1e-3)


def test_pre_and_post_ln_layers_follow_their_formulas():
    seed_everything(0)
    x = torch.randn(2, 5, 16)
    for norm_first in (True, False):
        layer = EncoderLayer(16, 4, 32, 0.0, norm_first=norm_first).eval()
        if norm_first:
            h = x + layer.self_attn(layer.norm1(x))[0]
            expected = h + layer.ff(layer.norm2(h))
        else:
            h = layer.norm1(x + layer.self_attn(x)[0])
            expected = layer.norm2(h + layer.ff(h))
        assert torch.allclose(layer(x), expected, atol=1e-6)


def test_residual_connections_keep_gradients_alive():
    seed_everything(0)
    x = torch.randn(64, 32)
    seed_everything(1)
    plain = DeepStack(30, 32, residual=False).gradient_norms(x)
    seed_everything(1)
    residual = DeepStack(30, 32, residual=True).gradient_norms(x)
    assert plain[0] / plain[-1] < 1e-4  # vanishes towards the input
    assert 0.3 < residual[0] / residual[-1] < 10


def test_post_ln_gradients_grow_towards_the_output_and_pre_ln_stay_flat():
    ratios = {}
    for norm_first in (False, True):
        seed_everything(0)
        model = Transformer(small(n_encoder_layers=8, n_decoder_layers=8, src_vocab=50,
                                  tgt_vocab=50, d_model=64, d_ff=256, norm_first=norm_first))
        src = torch.randint(1, 50, (16, 20))
        tgt = torch.randint(1, 50, (16, 21))
        seq2seq_loss(model, src, tgt).backward()
        norms = layer_gradient_norms(model.decoder.layers)
        ratios[norm_first] = norms[-1] / norms[0]
    assert ratios[False] > 5
    assert 1 / 3 < ratios[True] < 3


# ---------------------------------------------------------------------------
# The whole model
# ---------------------------------------------------------------------------


def test_shapes_and_log_probs():
    model, src, tgt = model_and_batch()
    logits = model(src, tgt)
    assert logits.shape == (3, 6, 19)
    assert model.encode(src).shape == (3, 7, 32)
    lp = model.log_probs(src, tgt)
    assert torch.allclose(lp.exp().sum(-1), torch.ones(3, 6), atol=1e-5)
    assert torch.allclose(lp, torch.log_softmax(logits, -1), atol=1e-6)
    assert torch.allclose(model.decode(tgt, model.encode(src), src), logits, atol=1e-6)


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_is_causal_end_to_end(norm_first):
    model, src, tgt = model_and_batch(norm_first=norm_first)
    base = model(src, tgt)
    for t in range(tgt.shape[1]):
        changed = tgt.clone()
        changed[:, t] = (changed[:, t] % 18) + 1  # another real token
        out = model(src, changed)
        assert torch.allclose(out[:, :t], base[:, :t], atol=1e-6), t
        assert not torch.allclose(out[:, t:], base[:, t:], atol=1e-4)


@pytest.mark.parametrize("scheme", POSITIONAL_SCHEMES)
def test_every_positional_scheme_runs_and_stays_causal(scheme):
    model, src, tgt = model_and_batch(positional=scheme)
    base = model(src, tgt)
    assert base.shape == (3, 6, 19)
    changed = tgt.clone()
    changed[:, 3] = (changed[:, 3] % 18) + 1
    assert torch.allclose(model(src, changed)[:, :3], base[:, :3], atol=1e-6)
    padded = torch.cat([src, torch.zeros(3, 2, dtype=torch.long)], dim=1)
    assert torch.allclose(model(padded, tgt), base, atol=1e-5)


def test_source_padding_does_not_change_outputs():
    model, src, tgt = model_and_batch()
    base = model(src, tgt)
    padded = torch.cat([src, torch.zeros(3, 5, dtype=torch.long)], dim=1)
    assert torch.allclose(model(padded, tgt), base, atol=1e-5)
    # the padding mask reaches the cross-attention: zero weight on padded keys
    cross = model.attention_maps()["cross"][0]
    assert cross[..., 7:].abs().max() == 0


def test_attention_maps_shapes():
    model, src, tgt = model_and_batch()
    model(src, tgt)
    maps = model.attention_maps()
    assert [tuple(m.shape) for m in maps["encoder"]] == [(3, 4, 7, 7)] * 2
    assert [tuple(m.shape) for m in maps["decoder"]] == [(3, 4, 6, 6)] * 2
    assert [tuple(m.shape) for m in maps["cross"]] == [(3, 4, 6, 7)] * 2
    assert torch.equal(maps["decoder"][0][0, 0].triu(1), torch.zeros(6, 6))


def test_tied_and_shared_embeddings():
    model = Transformer(small(tgt_vocab=17, tie_embeddings=True, share_embeddings=True))
    assert model.generator.weight is model.tgt_embed.token.weight
    assert model.src_embed is model.tgt_embed
    untied = Transformer(small(tgt_vocab=17))
    assert count_parameters(untied) - count_parameters(model) == 2 * 17 * 32


def test_trace_shapes_lists_every_stage():
    model, src, tgt = model_and_batch()
    rows = dict(trace_shapes(model, src, tgt, show=False))
    assert rows["encoder"] == [(3, 7, 32)]
    assert rows["decoder.layers.1.cross_attn"] == [(3, 6, 32), (3, 4, 6, 7)]
    assert rows["salida del modelo"] == [(3, 6, 19)]
    assert rows["máscara causal + relleno del destino"] == [(3, 1, 6, 6)]
    # In eval mode: a training-mode forward takes the fused path, which returns no weights.
    enc_rows = dict(trace_shapes(Encoder(16, 2, 1, 32).eval(), torch.randn(2, 9, 16), show=False))
    assert enc_rows["layers.0.self_attn"] == [(2, 9, 16), (2, 2, 9, 9)]


def test_encoder_alone_on_float_inputs_and_errors():
    enc = Encoder(16, 4, 2, 32, 0.0)
    assert enc(torch.randn(2, 9, 16)).shape == (2, 9, 16)
    with pytest.raises(ValueError, match="coma flotante"):
        enc(torch.zeros(2, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="d_model=16"):
        enc(torch.randn(2, 9, 8))
    model, src, tgt = model_and_batch()
    with pytest.raises(ValueError, match="batch, seq"):
        model(src[0], tgt)


def test_stacks_have_the_parameter_count_of_torch_transformer():
    ours = nn.ModuleDict(dict(encoder=Encoder(64, 4, 3, 256), decoder=Decoder(64, 4, 2, 256)))
    theirs = nn.Transformer(64, 4, 3, 2, 256, batch_first=True, norm_first=True)
    assert count_parameters(ours) == count_parameters(theirs)


@pytest.fixture
def one_thread():
    """Tiny models run faster on one thread, and do not stall when the CPU is shared."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_overfits_one_batch(one_thread):
    from dldna.training import train_steps
    seed_everything(0)
    model = Transformer(small(src_vocab=12, tgt_vocab=12, d_model=32, d_ff=64))
    src = torch.randint(3, 12, (8, 6))
    tgt = torch.cat([torch.ones(8, 1, dtype=torch.long), src], dim=1)  # 1 = BOS
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    history = train_steps(model, (src, tgt), opt, steps=150,
                          loss_fn=lambda m, b: seq2seq_loss(m, *b, pad_id=0))
    assert history.loss[0] > 2.0 and history.final < 0.05


def test_masks_come_from_masking():
    model, src, tgt = model_and_batch()
    src[0, -2:] = 0
    assert torch.equal(model.src_mask(src), masking.padding_mask(token_ids=src, pad_id=0))
    assert torch.equal(model.tgt_mask(tgt)[0, 0], masking.causal_mask(6))


def _small_model(**changes):
    seed_everything(0)
    config = TransformerConfig(src_vocab=11, tgt_vocab=9, d_model=16, n_heads=2, n_encoder_layers=1,
                               n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=16)
    return Transformer(config.replace(**changes)).eval()


def test_transformer_converts_numpy_lists_and_integer_floats():
    import numpy as np

    model = _small_model()
    src, tgt = [[3, 4, 5, 0]], [[1, 6, 7]]
    want = model(torch.tensor(src), torch.tensor(tgt))
    assert torch.equal(model(np.array(src), np.array(tgt)), want)
    assert torch.equal(model(src, tgt), want)
    assert torch.equal(model(torch.tensor(src, dtype=torch.float64), torch.tensor(tgt).float()), want)
    with pytest.raises(TypeError, match="decimales"):
        model(torch.tensor([[3.5, 4.0]]), torch.tensor(tgt))


def test_transformer_rejects_ids_outside_each_vocabulary():
    model = _small_model()
    message = r"src contiene el id 11, fuera del vocabulario \(ids válidos: 0 a 10"
    with pytest.raises(ValueError, match=message):
        model(torch.tensor([[3, 11]]), torch.tensor([[1, 2]]))
    with pytest.raises(ValueError, match="tgt contiene el id 9"):  # 9 is a source id, not a target one
        model(torch.tensor([[3, 9]]), torch.tensor([[1, 9]]))
    with pytest.raises(ValueError, match="id -1"):
        model(torch.tensor([[3, -1]]), torch.tensor([[1, 2]]))
    with pytest.raises(ValueError, match="unsqueeze"):
        model(torch.tensor([3, 4]), torch.tensor([[1, 2]]))


def test_training_mode_gives_the_eval_outputs_and_eval_records_the_maps():
    model = _small_model()
    src, tgt = torch.tensor([[3, 4, 5, 0]]), torch.tensor([[1, 6, 7]])
    evaluated = model(src, tgt)
    maps = model.attention_maps()
    assert [len(v) for v in maps.values()] == [1, 1, 1]
    assert torch.allclose(maps["cross"][0].sum(-1), torch.ones(1, 2, 3), atol=1e-6)
    model.train()  # dropout is 0: the same function, perhaps through the fused kernel
    assert torch.allclose(model(src, tgt), evaluated, atol=1e-5)
