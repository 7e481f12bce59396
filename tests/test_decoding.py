"""dldna.decoding on hand-built models whose next-token distributions we control.

The fake vocabulary: PAD = 0, BOS = 1, EOS = 2, A = 3, B = 4. A table maps a
prefix (the tokens after BOS) to the next-token probabilities; prefixes not in
the table end at once (EOS with probability 1).
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from torch import nn

from dldna import decoding

PAD, BOS, EOS, A, B = 0, 1, 2, 3, 4
V = 5

# Greedy takes A (0.6) and then EOS: p(A EOS) = 0.6 · 0.4 = 0.24.
# Beam search (width 2) also keeps B and finds p(B EOS) = 0.4 · 0.9 = 0.36.
TRAP = {
    (): {A: 0.6, B: 0.4},
    (A,): {EOS: 0.4, A: 0.3, B: 0.3},
    (B,): {EOS: 0.9, A: 0.1},
}


def probs_of(table, prefix) -> torch.Tensor:
    p = torch.zeros(V)
    for tok, value in table.get(tuple(prefix), {EOS: 1.0}).items():
        p[tok] = value
    return p


def table_step(*tables, calls=None):
    """A step function; row r of the batch uses ``tables[r]`` (default: the first)."""

    def step(prefix, rows):
        if calls is not None:
            calls.append(prefix.shape)
        out = []
        for pre, r in zip(prefix.tolist(), rows.tolist(), strict=True):
            body = [t for t in pre[1:]]
            table = tables[r] if r < len(tables) else tables[0]
            out.append(probs_of(table, body).log())
        return torch.stack(out)

    return step


class FakeModel(nn.Module):
    """encode/decode model whose source token picks a table; with dropout,
    to check that decoding switches to eval mode and back."""

    def __init__(self, tables):
        super().__init__()
        self.tables = tables
        self.drop = nn.Dropout(0.5)

    def encode(self, src):
        return src.float()[..., None]

    def decode(self, tgt, memory, src):
        assert not self.training, "decoding must run in eval mode"
        logits = torch.zeros(tgt.shape[0], tgt.shape[1], V)
        for i in range(tgt.shape[0]):
            table = self.tables[int(src[i, 0])]
            logits[i, -1] = probs_of(table, tgt[i, 1:].tolist()).log()
        return self.drop(logits)


def log(x):
    return math.log(x)


# -- greedy -------------------------------------------------------------------


def test_greedy_takes_the_locally_best_token_and_stops_at_eos():
    out = decoding.greedy_decode(table_step(TRAP), 1, max_len=10, bos_id=BOS, eos_id=EOS)
    assert out.tolist() == [[A, EOS]]


def test_greedy_pads_after_eos_and_stops_when_all_rows_are_done():
    long = {(): {A: 1.0}, (A,): {A: 1.0}, (A, A): {B: 1.0}}
    calls = []
    out = decoding.greedy_decode(table_step(TRAP, long, calls=calls), 2, max_len=10,
                                 bos_id=BOS, eos_id=EOS, pad_id=PAD)
    assert out.tolist() == [[A, EOS, PAD, PAD], [A, A, B, EOS]]
    assert len(calls) == 4  # stopped at the step where the last row produced EOS


def test_greedy_without_eos_stops_at_max_len():
    loop = {(): {A: 1.0}, (A,): {A: 1.0}, (A, A): {A: 1.0}}
    out = decoding.greedy_decode(table_step(loop), 1, max_len=3, bos_id=BOS, eos_id=EOS)
    assert out.tolist() == [[A, A, A]]


def test_model_path_uses_encode_decode_and_restores_training_mode():
    model = FakeModel({5: TRAP, 6: {(): {B: 1.0}, (B,): {B: 1.0}}})
    model.train()
    src = torch.tensor([[5, 7], [6, 0]])
    out = decoding.greedy_decode(model, src, max_len=4, bos_id=BOS, eos_id=EOS)
    assert out.tolist() == [[A, EOS, PAD], [B, B, EOS]]
    assert model.training


# -- beam search ----------------------------------------------------------------


def test_beam_finds_the_more_likely_output_that_greedy_misses():
    greedy = decoding.greedy_decode(table_step(TRAP), 1, 10, BOS, EOS)
    beam = decoding.beam_search(table_step(TRAP), 1, beam_width=2, max_len=10, bos_id=BOS, eos_id=EOS)
    assert greedy.tolist() == [[A, EOS]]
    assert beam.tokens.tolist() == [[B, EOS]]
    assert beam.log_probs.item() == pytest.approx(log(0.36), abs=1e-6)
    lp = decoding.sequence_log_prob(table_step(TRAP), 1, greedy, BOS, EOS)
    assert lp.item() == pytest.approx(log(0.24), abs=1e-6)


def test_beam_width_one_is_greedy():
    for table in (TRAP, {(): {A: 0.5, B: 0.5}, (B,): {A: 0.7, EOS: 0.3}}):
        greedy = decoding.greedy_decode(table_step(table), 1, 10, BOS, EOS)
        beam = decoding.beam_search(table_step(table), 1, 1, 10, BOS, EOS)
        assert beam.tokens.tolist() == greedy.tolist()


def random_table(gen, depth):
    """Every prefix of A/B up to ``depth`` gets a random distribution over EOS, A, B."""
    table = {}
    for n in range(depth):
        for prefix in itertools.product((A, B), repeat=n):
            p = torch.rand(3, generator=gen) + 0.05
            p = p / p.sum()
            table[prefix] = {EOS: p[0].item(), A: p[1].item(), B: p[2].item()}
    return table


def exhaustive_best(table, max_len):
    best, best_lp = None, -math.inf
    for n in range(max_len):
        for body in itertools.product((A, B), repeat=n):
            seq = (*body, EOS)
            lp = sum(math.log(probs_of(table, seq[:i])[seq[i]].item()) for i in range(len(seq)))
            if lp > best_lp:
                best, best_lp = seq, lp
    return list(best), best_lp


def test_wide_beam_equals_exhaustive_search_on_a_batch():
    gen = torch.Generator().manual_seed(0)
    tables = [random_table(gen, 4) for _ in range(6)]
    step = table_step(*tables)
    res = decoding.beam_search(step, len(tables), beam_width=16, max_len=5, bos_id=BOS, eos_id=EOS)
    for b, table in enumerate(tables):
        want, want_lp = exhaustive_best(table, 5)
        assert decoding.strip(res.tokens[b:b + 1], EOS)[0] + [EOS] == want
        assert res.log_probs[b].item() == pytest.approx(want_lp, abs=1e-5)
    again = decoding.sequence_log_prob(step, len(tables), res.tokens, BOS, EOS)
    assert torch.allclose(again, res.log_probs, atol=1e-5)


def test_beam_can_return_a_less_likely_output_than_greedy():
    # Greedy: A (0.5), A (0.34), EOS (1) = 0.17. Beam (width 2) keeps B A and B B
    # at step 2 (0.225 each > 0.17), prunes the greedy prefix A A, and ends with
    # B A A EOS = 0.5 · 0.45 · 0.45 · 1 ≈ 0.101 < 0.17.
    prune = {
        (): {A: 0.5, B: 0.45, EOS: 0.05},
        (A,): {A: 0.34, B: 0.33, EOS: 0.33},
        (B,): {A: 0.5, B: 0.5},
        (B, A): {A: 0.45, B: 0.45, EOS: 0.1},
        (B, B): {A: 0.45, B: 0.45, EOS: 0.1},
    }
    step = table_step(prune)
    greedy = decoding.greedy_decode(step, 1, 6, BOS, EOS)
    beam = decoding.beam_search(step, 1, 2, 6, BOS, EOS)
    assert greedy.tolist() == [[A, A, EOS]]
    assert beam.tokens.tolist() == [[B, A, A, EOS]]
    g = decoding.sequence_log_prob(step, 1, greedy, BOS, EOS)
    assert g.item() == pytest.approx(log(0.17), abs=1e-5)
    assert beam.log_probs.item() < g.item() - 0.5


def test_beam_is_better_than_greedy_on_average_on_random_tables():
    gen = torch.Generator().manual_seed(1)
    tables = [random_table(gen, 4) for _ in range(20)]
    step = table_step(*tables)
    greedy = decoding.greedy_decode(step, 20, 5, BOS, EOS)
    beam = decoding.beam_search(step, 20, 3, 5, BOS, EOS)
    g = decoding.sequence_log_prob(step, 20, greedy, BOS, EOS)
    assert beam.log_probs.mean() > g.mean()
    assert bool((beam.log_probs > g + 1e-6).any())


def test_n_best_are_sorted_and_distinct():
    res = decoding.beam_search(table_step(TRAP), 1, 3, 10, BOS, EOS, n_best=3)
    hyps = res.hypotheses[0]
    assert [h.tokens for h in hyps[:2]] == [(B, EOS), (A, EOS)]
    assert hyps[2].tokens in {(A, A, EOS), (A, B, EOS)}  # a tie: both have 0.6 · 0.3 · 1
    assert [round(math.exp(h.log_prob), 4) for h in hyps] == [0.36, 0.24, 0.18]
    assert all(h.finished for h in hyps)


def test_length_penalty_can_change_the_winner():
    table = {(): {EOS: 0.5, A: 0.5}, (A,): {A: 0.9, EOS: 0.1}, (A, A): {EOS: 0.95, A: 0.05}}
    short = decoding.beam_search(table_step(table), 1, 2, 6, BOS, EOS)
    assert short.tokens.tolist() == [[EOS]]  # 0.5 > 0.5 · 0.9 · 0.95
    longer = decoding.beam_search(table_step(table), 1, 2, 6, BOS, EOS, length_penalty_alpha=1.0)
    assert longer.tokens.tolist() == [[A, A, EOS]]
    assert decoding.length_penalty(1, 0.0) == 1.0
    assert decoding.length_penalty(7, 1.0) == pytest.approx(2.0)


def test_length_penalty_refuses_an_empty_hypothesis():
    # Beam search scores hypotheses of one token or more (EOS counts): length 0 was a silent 1.0^α.
    with pytest.raises(ValueError, match="al menos 1"):
        decoding.length_penalty(0, 0.6)


def test_next_token_probs_refuses_a_row_without_finite_logits():
    # softmax of a row of -inf is NaN, not a distribution.
    with pytest.raises(ValueError, match="ningún valor finito"):
        decoding.next_token_probs(torch.full((4,), -math.inf))
    with pytest.raises(ValueError, match="ningún valor finito"):
        decoding.next_token_probs(torch.tensor([[0.0, 1.0], [-math.inf, -math.inf]]))
    assert decoding.next_token_probs(torch.tensor([0.0, -math.inf])).tolist() == [1.0, 0.0]


def test_model_step_refuses_rows_beyond_the_batch():
    from dldna import transformer

    torch.manual_seed(0)
    cfg = transformer.TransformerConfig(10, 10, d_model=8, n_heads=2, n_encoder_layers=1,
                                        n_decoder_layers=1, d_ff=16, dropout=0.0)
    step = decoding.model_step(transformer.Transformer(cfg).eval(), torch.tensor([[3, 4, 5, 2]]))
    prefix = torch.ones(1, 1, dtype=torch.long)
    assert step(prefix, torch.tensor([0])).shape == (1, 10)
    with pytest.raises(ValueError, match="fuera del lote"):
        step(prefix, torch.tensor([3]))  # was a raw IndexError
    with pytest.raises(TypeError, match="enteros"):
        step(prefix, torch.tensor([0.5]))


def test_beam_tree_records_the_search_and_the_best_path():
    res = decoding.beam_search(table_step(TRAP), 1, 2, 10, BOS, EOS, trace=0)
    tree = res.tree
    assert tree is not None and tree.nodes[0].status == "root"
    assert tree.path_tokens(tree.best_path[-1]) == [B, EOS]
    assert [tree.nodes[i].status for i in tree.best_path] == ["root", "kept", "finished"]
    step1 = [(n.token, n.status) for n in tree.nodes if n.step == 1]
    assert step1 == [(A, "kept"), (B, "kept")]
    assert tree.count("finished") >= 2
    for node in tree.nodes[1:]:  # each node's log-prob = parent's + log p(token)
        parent = tree.nodes[node.parent]
        prefix = tree.path_tokens(parent.id)
        assert node.log_prob == pytest.approx(parent.log_prob + log(probs_of(TRAP, prefix)[node.token]),
                                              abs=1e-5)


def test_beam_search_on_the_model_path():
    model = FakeModel({5: TRAP})
    res = decoding.beam_search(model, torch.tensor([[5, 5], [5, 0]]), 2, 10, BOS, EOS)
    assert res.tokens.tolist() == [[B, EOS], [B, EOS]]


# -- sampling -------------------------------------------------------------------


def test_filter_logits_temperature_top_k_top_p():
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    logits = probs.log()
    keep = lambda **kw: torch.isfinite(decoding.filter_logits(logits, **kw)).int().tolist()  # noqa: E731
    assert keep(top_k=2) == [1, 1, 0, 0]
    assert keep(top_k=4) == [1, 1, 1, 1]
    assert keep(top_p=0.5) == [1, 0, 0, 0]
    assert keep(top_p=0.8) == [1, 1, 0, 0]
    assert keep(top_p=0.81) == [1, 1, 1, 0]
    assert keep(top_p=1.0) == [1, 1, 1, 1]
    assert keep(top_p=0.01) == [1, 0, 0, 0]  # the best token always stays
    p = decoding.next_token_probs(logits, top_k=2)
    assert p.tolist() == pytest.approx([0.625, 0.375, 0.0, 0.0])
    sharp = decoding.next_token_probs(logits, temperature=0.5)
    assert sharp.tolist() == pytest.approx((probs ** 2 / (probs ** 2).sum()).tolist())
    flat = decoding.next_token_probs(logits, temperature=1e6)
    assert flat.tolist() == pytest.approx([0.25] * 4, abs=1e-4)


def test_filter_logits_works_on_batches_row_by_row():
    logits = torch.tensor([[0.5, 0.3, 0.15, 0.05], [0.05, 0.15, 0.3, 0.5]]).log()
    kept = torch.isfinite(decoding.filter_logits(logits, top_p=0.8)).int().tolist()
    assert kept == [[1, 1, 0, 0], [0, 0, 1, 1]]


def test_sampling_is_deterministic_with_a_seed_or_a_generator():
    src = torch.tensor([[5]] * 64)
    model = FakeModel({5: TRAP})
    a = decoding.sample_decode(model, src, 10, BOS, EOS, seed=3)
    b = decoding.sample_decode(model, src, 10, BOS, EOS, generator=torch.Generator().manual_seed(3))
    c = decoding.sample_decode(model, src, 10, BOS, EOS, seed=4)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    assert set(map(tuple, decoding.strip(a, EOS))) <= {(A,), (B,), (A, A), (A, B), (B, A)}


def test_top_k_one_and_tiny_temperature_give_greedy():
    step = table_step(TRAP)
    greedy = decoding.greedy_decode(step, 8, 10, BOS, EOS)
    assert torch.equal(decoding.sample_decode(step, 8, 10, BOS, EOS, top_k=1, seed=0), greedy)
    assert torch.equal(decoding.sample_decode(step, 8, 10, BOS, EOS, temperature=1e-3, seed=0), greedy)


def test_sample_frequencies_follow_the_distribution():
    n = 20000
    first = probs_of(TRAP, ()).log()

    def step(prefix, rows):  # the first step of TRAP, for every row at once
        return first.expand(prefix.shape[0], -1)

    out = decoding.sample_decode(step, n, 1, BOS, EOS, seed=0)
    freq_a = (out[:, 0] == A).float().mean().item()
    assert freq_a == pytest.approx(0.6, abs=0.015)  # 0.015 ≈ 4 standard deviations
    out = decoding.sample_decode(step, n, 1, BOS, EOS, seed=0, temperature=0.5)
    assert (out[:, 0] == A).float().mean().item() == pytest.approx(0.36 / 0.52, abs=0.015)


# -- errors ---------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, words", [
    ({"top_k": 0}, "top_k"),
    ({"top_k": 2.5}, "top_k"),
    ({"top_p": 0.0}, "(0, 1]"),
    ({"top_p": 1.5}, "(0, 1]"),
    ({"temperature": 0}, "temperatura"),
    ({"temperature": -1.0}, "temperatura"),
    ({"temperature": float("nan")}, "temperatura"),
])
def test_bad_sampling_arguments_raise_spanish_errors(kwargs, words):
    with pytest.raises(ValueError, match="debe") as info:
        decoding.sample_decode(table_step(TRAP), 1, 5, BOS, EOS, **kwargs)
    assert words in str(info.value)
    with pytest.raises(ValueError, match="debe"):
        decoding.filter_logits(torch.zeros(4), **kwargs)


def test_bad_beam_and_length_arguments_raise_spanish_errors():
    with pytest.raises(ValueError, match="anchura del haz"):
        decoding.beam_search(table_step(TRAP), 1, 0, 5, BOS, EOS)
    with pytest.raises(ValueError, match="max_len"):
        decoding.greedy_decode(table_step(TRAP), 1, 0, BOS, EOS)
    with pytest.raises(ValueError, match="n_best"):
        decoding.beam_search(table_step(TRAP), 1, 2, 5, BOS, EOS, n_best=3)
    with pytest.raises(ValueError, match="length_penalty"):
        decoding.beam_search(table_step(TRAP), 1, 2, 5, BOS, EOS, length_penalty_alpha=-1)
    with pytest.raises(ValueError, match="src"):
        decoding.greedy_decode(FakeModel({}), torch.tensor([5, 6]), 5, BOS, EOS)
    with pytest.raises(ValueError, match="seed"):
        decoding.sample_decode(table_step(TRAP), 1, 5, BOS, EOS, seed=1,
                               generator=torch.Generator())
    with pytest.raises(TypeError, match="encode"):
        decoding.greedy_decode(object(), torch.tensor([[1]]), 5, BOS, EOS)


def test_strip():
    assert decoding.strip(torch.tensor([[3, 4, 2, 0], [3, 3, 3, 3]]), EOS) == [[3, 4], [3, 3, 3, 3]]
    assert decoding.strip([[1, 3, 2]], EOS, bos_id=1) == [[3]]


# -- special tokens, observers, non-finite logits --------------------------------

UNK = 5


def pad_lover(prefix, rows):
    """A step function whose most likely tokens are PAD, then BOS, then UNK."""
    logits = torch.tensor([9.0, 8.0, 0.0, 1.0, 0.5, 7.0])
    logits = logits.expand(prefix.shape[0], -1).clone()
    if prefix.shape[1] > 3:  # after three tokens, EOS wins
        logits[:, EOS] = 10.0
    return logits


@pytest.mark.parametrize("decode", [
    lambda s: decoding.greedy_decode(s, 4, 6, BOS, EOS, PAD, unk_id=UNK),
    lambda s: decoding.beam_search(s, 4, 3, 6, BOS, EOS, PAD, unk_id=UNK).tokens,
    lambda s: decoding.sample_decode(s, 64, 6, BOS, EOS, PAD, unk_id=UNK, seed=0, temperature=3.0),
])
def test_special_tokens_are_never_generated(decode):
    out = decode(pad_lover)
    for row in decoding.strip(out, EOS):
        assert set(row) <= {A, B}
    assert bool((out == EOS).any(dim=1).all())  # every row ends with EOS, then PAD only


def test_special_tokens_are_masked_in_scores_too():
    out = decoding.beam_search(pad_lover, 1, 2, 6, BOS, EOS, PAD, unk_id=UNK)
    again = decoding.sequence_log_prob(pad_lover, 1, out.tokens, BOS, EOS, PAD, unk_id=UNK)
    assert again.item() == pytest.approx(out.log_probs.item(), abs=1e-5)
    with_pad = torch.tensor([[PAD, A, A, EOS]])
    assert decoding.sequence_log_prob(pad_lover, 1, with_pad, BOS, EOS, PAD).item() == -math.inf


def test_an_observer_sees_every_candidate_and_the_answer():
    seen, answers = [], []

    class Spy(decoding.BeamObserver):
        def candidate(self, row, t, parent, token, log_prob, status):
            seen.append((row, t, token, status))

        def answer(self, row, kind, index):
            answers.append((row, kind))

    res = decoding.beam_search(table_step(TRAP), 2, 2, 10, BOS, EOS, observer=Spy(), trace=1)
    assert answers == [(0, "finished"), (1, "finished")]
    assert [(t, tok, st) for r, t, tok, st in seen if r == 1] == \
        [(n.step, n.token, n.status) for n in res.tree.nodes[1:]]


@pytest.mark.parametrize("bad", [float("nan"), math.inf])
def test_non_finite_logits_are_rejected(bad):
    def broken(prefix, rows):
        out = torch.zeros(prefix.shape[0], V)
        out[:, A] = bad
        return out

    for call in (lambda: decoding.greedy_decode(broken, 2, 5, BOS, EOS),
                 lambda: decoding.beam_search(broken, 2, 2, 5, BOS, EOS),
                 lambda: decoding.sample_decode(broken, 2, 5, BOS, EOS, seed=0)):
        with pytest.raises(ValueError, match="no finitos"):
            call()
