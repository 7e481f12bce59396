"""Chapter 10's pieces: KV cache, grouped-query attention, online softmax, byte-pair encoding."""

import math

import pytest
import torch
import torch.nn.functional as F

from dldna import corpus, kv_cache, online_softmax, subwords
from dldna.attention import MultiHeadAttention, merge_heads, repeat_kv, scaled_dot_product_attention
from dldna.language_models import LanguageModel
from dldna.transformer import Encoder


def lm(num_kv_heads=None, seed=0, max_len=40):
    torch.manual_seed(seed)
    return LanguageModel(30, max_len=max_len, num_kv_heads=num_kv_heads).eval()


# ----------------------------------------------------------------- KV cache
@pytest.mark.parametrize("groups", [None, 2, 1])
def test_cached_logits_equal_recomputed(groups):
    model = lm(groups)
    ids = torch.randint(3, 30, (2, 17), generator=torch.Generator().manual_seed(1))
    full = model(ids)
    first, cache = kv_cache.forward_cached(model, ids[:, :9])
    one, cache1 = kv_cache.forward_cached(model, ids[:, 9:10], cache)
    rest, cache2 = kv_cache.forward_cached(model, ids[:, 10:], cache1)
    torch.testing.assert_close(torch.cat([first, one, rest], 1), full, atol=1e-5, rtol=1e-5)
    assert cache.length == 9 and cache2.length == 17  # the input cache is not modified
    heads = 4 if groups is None else groups
    assert cache2.nbytes == kv_cache.cache_bytes(2, heads, 16, 17, batch=2) == 2 * 2 * heads * 16 * 17 * 4 * 2


def test_greedy_with_and_without_cache_agree():
    model = lm(max_len=60)
    prompt = torch.tensor([[1, 5, 7], [1, 9, 4]])
    with_cache = kv_cache.greedy_generate(model, prompt, 40)
    without = kv_cache.greedy_generate(model, prompt, 40, use_cache=False)
    assert with_cache.shape == (2, 43) and torch.equal(with_cache, without)


def test_step_seconds_is_positive():
    model = lm()
    ids = torch.randint(3, 30, (1, 20))
    assert kv_cache.step_seconds(model, ids, use_cache=True, repeats=2) > 0
    assert kv_cache.step_seconds(model, ids, use_cache=False, repeats=2) > 0


def test_compare_step_seconds_gives_both_times():
    model = lm()
    ids = torch.randint(3, 30, (1, 20))
    without, with_cache = kv_cache.compare_step_seconds(model, ids, repeats=2)
    assert without > 0 and with_cache > 0
    with pytest.raises(ValueError, match="dos posiciones"):
        kv_cache.compare_step_seconds(model, ids[:, :1])


def test_cache_bad_inputs_in_spanish():
    model = lm()
    with pytest.raises(ValueError, match="evaluación"):
        kv_cache.forward_cached(model.train(), torch.tensor([[1, 4]]))
    model.eval()
    with pytest.raises(ValueError, match="causal"):
        kv_cache.forward_cached(LanguageModel(30, causal=False).eval(), torch.tensor([[1, 4]]))
    with pytest.raises(ValueError, match="relleno"):
        kv_cache.forward_cached(model, torch.tensor([[1, 0, 4]]))
    with pytest.raises(ValueError, match="max_len"):
        kv_cache.forward_cached(model, torch.randint(3, 30, (1, 41)))
    with pytest.raises(TypeError, match="LanguageModel"):
        kv_cache.forward_cached(torch.nn.Linear(2, 2), torch.tensor([[1]]))
    _, cache = kv_cache.forward_cached(model, torch.tensor([[1, 4]]))
    with pytest.raises(ValueError, match="lote"):
        kv_cache.forward_cached(model, torch.tensor([[1], [2]]), cache)
    with pytest.raises(ValueError, match="n_layers"):
        kv_cache.cache_bytes(0, 4, 16, 10)
    with pytest.raises(ValueError, match="dos posiciones"):
        kv_cache.step_seconds(model, torch.tensor([[1]]), use_cache=True)


# ------------------------------------------------------ grouped-query attention
def test_default_attention_is_unchanged():
    torch.manual_seed(0)
    a = MultiHeadAttention(32, 4)
    torch.manual_seed(0)
    b = MultiHeadAttention(32, 4, num_kv_heads=4)
    assert a.num_kv_heads == 4 and repr(a) == repr(b)
    for (na, ta), (nb, tb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert na == nb and torch.equal(ta, tb)


def test_gqa_h_is_mha_and_gqa_1_is_mqa():
    x = torch.randn(2, 6, 32, generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 4).eval()
    gqa = MultiHeadAttention(32, 4, num_kv_heads=4).eval()
    gqa.load_state_dict(mha.state_dict())
    assert torch.equal(mha(x)[0], gqa(x)[0])
    # MQA: one key/value head; the same as MHA whose heads all copy that head's K and V.
    mqa = MultiHeadAttention(32, 4, num_kv_heads=1).eval()
    assert mqa.k_proj.out_features == 8
    copy = MultiHeadAttention(32, 4).eval()
    with torch.no_grad():
        copy.q_proj.load_state_dict(mqa.q_proj.state_dict())
        copy.out_proj.load_state_dict(mqa.out_proj.state_dict())
        for big, small in ((copy.k_proj, mqa.k_proj), (copy.v_proj, mqa.v_proj)):
            big.weight.copy_(small.weight.repeat(4, 1))
            big.bias.copy_(small.bias.repeat(4))
    torch.testing.assert_close(mqa(x)[0], copy(x)[0])


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_gqa_equals_torch_enable_gqa(groups):
    x = torch.randn(2, 7, 32, generator=torch.Generator().manual_seed(3))
    attn = MultiHeadAttention(32, 4, num_kv_heads=groups).eval()
    q, k, v = attn.project(x, x, x)
    mask = torch.tril(torch.ones(7, 7, dtype=torch.bool))
    ref = attn.out_proj(merge_heads(F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)))
    torch.testing.assert_close(attn(x, mask=mask)[0], ref, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(attn(x, mask=mask, need_weights=False)[0], ref, atol=1e-6, rtol=1e-5)


def test_gqa_bad_inputs_in_spanish():
    with pytest.raises(ValueError, match=r"num_kv_heads=3 no divide a num_heads=4: .* \[1, 2, 4\]"):
        MultiHeadAttention(32, 4, num_kv_heads=3)
    with pytest.raises(ValueError, match="num_kv_heads"):
        MultiHeadAttention(32, 4, num_kv_heads=0)
    with pytest.raises(ValueError, match="agrupa"):
        MultiHeadAttention(32, 4, num_kv_heads=2).load_torch(torch.nn.MultiheadAttention(32, 4))
    with pytest.raises(ValueError, match="kv_heads"):
        repeat_kv(torch.zeros(1, 3, 2, 4), 4)
    with pytest.raises(ValueError, match="num_kv_heads"):
        Encoder(32, 4, 1, 64, num_kv_heads="dos")


# ------------------------------------------------------------ online softmax
@pytest.mark.parametrize("tile", [1, 3, 8, 64])
@pytest.mark.parametrize("causal", [False, True])
def test_online_attention_equals_full_softmax(tile, causal):
    g = torch.Generator().manual_seed(tile)
    q, k, v = (torch.randn(2, 3, 20, 8, generator=g) * 3 for _ in range(3))
    result = online_softmax.online_attention(q, k, v, tile, causal=causal)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(result.output, ref, atol=1e-5, rtol=1e-5)
    mask = torch.tril(torch.ones(20, 20, dtype=torch.bool)) if causal else None
    torch.testing.assert_close(result.output, scaled_dot_product_attention(q, k, v, mask)[0],
                               atol=1e-5, rtol=1e-5)
    assert result.peak_weight_bytes == 2 * 3 * online_softmax.weight_bytes(20, 20, tile)


def test_online_attention_refuses_causal_with_more_queries_than_keys():
    # The first two queries saw no key and came out as rows of zeros, silently.
    q, k, v = torch.randn(1, 4, 2), torch.randn(1, 2, 2), torch.randn(1, 2, 2)
    with pytest.raises(ValueError, match=r"más consultas \(4\) que claves \(2\)"):
        online_softmax.online_attention(q, k, v, 2, causal=True)
    assert online_softmax.online_attention(q, k, v, 2).output.shape == (1, 4, 2)  # not causal: fine


def test_online_trace_ends_at_the_answer():
    q, k, v = torch.randn(1, 4), torch.randn(10, 4), torch.randn(10, 2)
    result = online_softmax.online_attention(q, k, v, 4, trace=True)
    assert [s["stop"] for s in result.trace] == [4, 8, 10]
    scores = q @ k.T / 2
    assert math.isclose(float(result.trace[-1]["m"]), float(scores.max()), rel_tol=1e-6)
    assert math.isclose(float(result.trace[-1]["l"]), float(torch.exp(scores - scores.max()).sum()),
                        rel_tol=1e-5)
    torch.testing.assert_close(result.trace[-1]["output"], result.output)


def test_online_bad_inputs_in_spanish():
    q = torch.randn(3, 4)
    with pytest.raises(ValueError, match="tile"):
        online_softmax.online_attention(q, q, q, 0)
    with pytest.raises(ValueError, match="misma dimensión"):
        online_softmax.online_attention(q, torch.randn(3, 5), q, 2)
    with pytest.raises(ValueError, match="tantos valores"):
        online_softmax.online_attention(q, q, torch.randn(2, 4), 2)
    with pytest.raises(ValueError, match="k_len"):
        online_softmax.weight_bytes(4, 0)


# --------------------------------------------------------------- subwords
def test_bpe_equals_tokenizers_on_the_corpus():
    counts = subwords.word_counts(s.words for s in corpus.generate(500, seed=0))
    for n in (5, 40, 500):
        ours = subwords.train_bpe(counts, n)
        assert ours == subwords.train_tokenizers_bpe(counts, n)
    assert len(ours) < 500  # it stopped: every word became one symbol
    assert all(subwords.encode_word(w, ours) == [w] for w in counts)


def test_bpe_ties_follow_the_symbol_order():
    # Every pair occurs once: the first pair in code-point order wins, then the newest symbols.
    assert subwords.train_bpe({"dcba": 1}, 3) == [("b", "a"), ("c", "ba"), ("d", "cba")]
    assert subwords.train_tokenizers_bpe({"dcba": 1}, 3) == [("b", "a"), ("c", "ba"), ("d", "cba")]
    assert subwords.train_bpe({"aaaa": 1}, 2) == [("a", "a"), ("aa", "aa")]


def test_unseen_word_is_split_into_known_pieces():
    counts = {"banco": 5, "bancos": 1, "cine": 4, "cines": 2}
    merges = subwords.train_bpe(counts, 20)
    vocab = set(subwords.vocabulary(counts, merges))
    pieces = subwords.encode_word("banqueros", merges)  # «q» never seen: a symbol of its own
    assert "".join(pieces) == "banqueros" and "banc" not in pieces
    assert subwords.encode("cines bancos", merges) == ["cines", "bancos"]
    assert all(p in vocab for p in subwords.encode_word("bancine", merges))


def test_bpe_bad_inputs_in_spanish():
    with pytest.raises(ValueError, match="ninguna palabra"):
        subwords.word_counts([""])
    with pytest.raises(TypeError, match="diccionario"):
        subwords.train_bpe(["banco"], 3)
    with pytest.raises(ValueError, match="sin espacios"):
        subwords.train_bpe({"el banco": 2}, 3)
    with pytest.raises(ValueError, match="num_merges"):
        subwords.train_bpe({"banco": 2}, -1)
    with pytest.raises(ValueError, match="sin espacios"):
        subwords.encode_word("", [])
    with pytest.raises(TypeError, match="pares"):
        subwords.encode_word("banco", [("b",)])
