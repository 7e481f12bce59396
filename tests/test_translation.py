"""dldna.tasks.translation (the toy grammar, the task, training, attention tools)
and dldna.viz.decoding (its figures)."""

from __future__ import annotations

import dataclasses
import random

import pytest
import torch
from matplotlib.figure import Figure

from dldna import decoding
from dldna.tasks import translation as tr
from dldna.tasks.base import BOS_ID, EOS_ID, PAD_ID, Task, exact_match
from dldna.viz import decoding as vd


@pytest.fixture(scope="module")
def task():
    return tr.TranslationTask()


@pytest.fixture(scope="module")
def trained():
    """A short CPU run (the chapter's recipe with fewer steps)."""
    torch.set_num_threads(min(2, torch.get_num_threads()))
    _, recipe = tr.setup()
    return tr.train_translation(recipe=dataclasses.replace(recipe, steps=150, eval_every=75),
                                held_out=200, device="cpu", progress=False)


# -- grammar ----------------------------------------------------------------------


@pytest.mark.parametrize("spanish, english", [
    ("el gato negro come", "the black cat eats"),
    ("la gata negra come", "the black cat eats"),
    ("los gatos negros comen", "the black cats eat"),
    ("las gatas negras comen", "the black cats eat"),
    ("un elefante viejo come", "an old elephant eats"),
    ("un elefante negro come", "a black elephant eats"),
    ("una abeja come", "a bee eats"),
    ("unos ratones grises corren", "some grey mice run"),
    ("el perro ve al gato", "the dog sees the cat"),
    ("el perro ve a la vaca", "the dog sees the cow"),
    ("el perro no ve al gato", "the dog does not see the cat"),
    ("los hombres no duermen", "the men do not sleep"),
    ("las ovejas blancas miran a unos peces", "the white sheep watch some fish"),
])
def test_reference_translations(spanish, english):
    assert tr.translate(spanish) == english
    assert " ".join(tr.parse_spanish(spanish).spanish()) == spanish


def test_many_to_one_four_spanish_phrases_one_english():
    forms = {tr.translate(f"{a} {n} {j} come" if a in ("el", "la") else f"{a} {n} {j} comen")
             for a, n, j in [("el", "gato", "negro"), ("la", "gata", "negra"),
                             ("los", "gatos", "negros"), ("las", "gatas", "negras")]}
    assert forms == {"the black cat eats", "the black cats eat"}


def test_parse_round_trip_and_alignment_lengths():
    rng = random.Random(0)
    for _ in range(3000):
        s = tr.random_sentence(rng)
        assert tr.parse_spanish(s.spanish()) == s
        align = s.alignment()
        assert len(align) == len(s.english())
        assert all(0 <= j < len(s.spanish()) for cols in align for j in cols)
        assert len(s.spanish()) <= tr.TranslationTask.max_source_len
        assert len(s.english()) + 1 <= tr.TranslationTask.max_target_len


def test_alignment_swaps_adjective_and_noun():
    s = tr.parse_spanish("el gato negro come")
    assert s.english() == ["the", "black", "cat", "eats"]
    assert s.alignment() == [[0], [2], [1], [3]]
    neg = tr.parse_spanish("el gato no ve a la vaca")
    assert neg.english() == ["the", "cat", "does", "not", "see", "the", "cow"]
    assert neg.alignment() == [[0], [1], [2, 3], [2], [3], [4, 5], [6]]


@pytest.mark.parametrize("bad, words", [
    ("el gata come", "concuerda"),
    ("los gatos come", "número"),
    ("el gato ve el perro", "«a» o «al»"),
    ("el gato ve a el perro", "al"),
    ("el gato come pan", "Sobran"),
    ("gato come", "artículo"),
])
def test_grammar_errors_are_spanish(bad, words):
    with pytest.raises(tr.GrammarError, match=words):
        tr.parse_spanish(bad)


def test_task_tokenizers_round_trip_and_specials(task):
    assert isinstance(task, Task)
    ex = task.sample(random.Random(3))
    assert task.src_tokenizer.decode(task.src_tokenizer.encode(ex.source)) == list(ex.source)
    assert task.tgt_tokenizer.decode(task.tgt_tokenizer.encode(ex.target)) == list(ex.target)
    assert task.src_tokenizer.itos[:3] == ["<pad>", "<bos>", "<eos>"]
    assert min(task.tgt_tokenizer.encode("the black cat eats")) >= 3
    assert task.n_sentences() > 1_000_000


def test_held_out_sentences_are_never_trained_on():
    task = tr.TranslationTask()
    test = task.test_set(300, seed=7)
    held = {ex.source for ex in test}
    assert len(held) == 300
    rng = random.Random(0)
    for _ in range(20):
        batch = task.batch(200, rng)
        for row in batch.src:
            assert tuple(task.src_tokenizer.decode(row)) not in held


def test_bad_probabilities():
    with pytest.raises(ValueError, match="entre 0 y 1"):
        tr.TranslationTask(negation_p=1.5)


# -- training and attention (a short run) -------------------------------------------


def test_short_training_learns_held_out_sentences(trained):
    assert trained.accuracy >= 0.8  # 150 steps; the chapter's 300 reach ≈ 99.8 %
    assert [s for s, _ in trained.result.evals] == [75, 150] and trained.history.steps == 150
    assert len(trained.test) == 200
    again = exact_match(trained.task, lambda src: decoding.greedy_decode(
        trained.model, src, 10, BOS_ID, EOS_ID, PAD_ID), trained.test)
    assert again.accuracy == pytest.approx(trained.accuracy)


def test_a_shorter_run_is_the_beginning_of_the_longer_one():
    """With the Noam schedule a run of k steps is the first k steps of a longer run:
    the «half-trained» model of chapter 7e is a shorter run with the same seed."""
    _, recipe = tr.setup()
    recipe = dataclasses.replace(recipe, warmup=4, eval_every=0)
    short = tr.train_translation(recipe=dataclasses.replace(recipe, steps=10), held_out=50,
                                 device="cpu", progress=False)
    long = tr.train_translation(recipe=dataclasses.replace(recipe, steps=20), held_out=50,
                                device="cpu", progress=False, snapshots=(10,))
    assert short.history.loss == long.history.loss[:10]
    assert short.history.lr == long.history.lr[:10]
    # The snapshot kept at step 10 of the long run is the short run's model, bit for bit
    # (chapter 7e takes its half-trained model from it instead of training it again).
    halfway = long.at(10)
    short_weights = short.model.state_dict()
    assert all(torch.equal(v, short_weights[k]) for k, v in halfway.state_dict().items())
    assert not all(torch.equal(v, short_weights[k]) for k, v in long.model.state_dict().items())
    with pytest.raises(ValueError, match="No se guardó el paso 5"):
        long.at(5)
    assert short.history.loss != tr.train_translation(
        recipe=dataclasses.replace(recipe, steps=10), held_out=50, device="cpu",
        progress=False, seed=1).history.loss


def test_setup_is_one_configuration_and_checks_held_out():
    config, recipe = tr.setup()
    assert config.d_model == 64 and recipe.steps == 300 and recipe.schedule == "noam"
    with pytest.raises(ValueError, match="held_out"):
        tr.train_translation(held_out=0)


def test_attention_record_shapes_and_rows(trained):
    rec = tr.attention_record(trained.model, trained.task, "el gato negro come",
                              "the black cat eats")
    L, H = trained.model.config.n_decoder_layers, trained.model.config.n_heads
    assert rec.cross.shape == (L, H, 5, 4)
    assert rec.encoder.shape == (trained.model.config.n_encoder_layers, H, 4, 4)
    assert rec.decoder.shape == (L, H, 5, 5)
    assert rec.in_tokens == ["<bos>", "the", "black", "cat", "eats"]
    assert rec.out_tokens == ["the", "black", "cat", "eats", "<eos>"]
    assert torch.allclose(rec.cross.sum(-1), torch.ones(L, H, 5), atol=1e-5)
    assert float(rec.decoder.triu(1).abs().max()) == 0.0  # causal


def test_alignment_accuracy_is_a_rate_per_head(trained):
    acc = tr.alignment_accuracy(trained.model, trained.task, trained.test[:50])
    cfg = trained.model.config
    assert acc.shape == (cfg.n_decoder_layers, cfg.n_heads)
    assert bool(((acc >= 0) & (acc <= 1)).all())
    assert float(acc.max()) > 0.5  # some head follows the alignment


def test_beam_scores_at_least_greedy_on_average_on_the_model(trained):
    """Beam search can prune the greedy path (see test_decoding's counterexample),
    so it is not better on every sentence; on average it finds outputs at least
    as probable as greedy's."""
    src = torch.tensor([trained.task.src_tokenizer.encode(ex.source)
                        for ex in trained.test[:60] if len(ex.source) == 4])
    greedy = decoding.greedy_decode(trained.model, src, 10, BOS_ID, EOS_ID)
    beam = decoding.beam_search(trained.model, src, 3, 10, BOS_ID, EOS_ID)
    g = decoding.sequence_log_prob(trained.model, src, greedy, BOS_ID, EOS_ID)
    assert float(beam.log_probs.mean()) >= float(g.mean()) - 1e-4


# -- figures -------------------------------------------------------------------------


def test_beam_tree_figure_and_layout():
    first = torch.tensor([0.0, 0.0, 0.0, 0.6, 0.4]).log()  # A = 0.6, B = 0.4, then EOS

    def step(prefix, rows):
        if prefix.shape[1] == 1:
            return first.expand(prefix.shape[0], -1)
        return torch.tensor([0.0, 0.0, 1.0, 0.0, 0.0]).log().expand(prefix.shape[0], -1)

    res = decoding.beam_search(step, 1, 2, 5, 1, 2, trace=0)
    pos = vd.beam_tree_layout(res.tree)
    assert set(pos) == {n.id for n in res.tree.nodes}
    fig = vd.beam_tree(res.tree, ["<pad>", "<bos>", "<eos>", "A", "B"])
    assert isinstance(fig, Figure)
    assert "haz" in fig.axes[0].get_title()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any(t.startswith("B") and "0.400" in t for t in texts)
    # A label function must give text: an int id was Python's "unsupported operand" in English.
    with pytest.raises(TypeError, match="texto"):
        vd.beam_tree(res.tree, lambda i: i)
    assert isinstance(vd.beam_tree(res.tree, lambda i: str(i)), Figure)


def test_sampling_and_temperature_figures():
    p = torch.tensor([0.5, 0.3, 0.15, 0.05])
    fig = vd.sampling_filters(p, list("abcd"), [("top-k = 2", decoding.next_token_probs(p.log(), top_k=2))])
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    fig = vd.temperature_tradeoff([0.5, 1, 2], [0.99, 0.9, 0.5], [1.0, 1.5, 4.0], greedy_accuracy=1.0)
    assert fig.axes[0].get_xlabel() == "temperatura T"
    with pytest.raises(ValueError, match="etiquetas"):
        vd.sampling_filters(p, list("abc"), [])
    # A selection of tokens may sum to less than 1 (the chapter shows the top 8), never to more.
    assert isinstance(vd.sampling_filters(p[:2], list("ab"), [("k", [0.6, 0.0])]), Figure)
    with pytest.raises(ValueError, match="como mucho 1"):
        vd.sampling_filters([0.5, 0.3, 0.3], list("abc"), [("k", [1.0, 0.0, 0.0])])
    with pytest.raises(ValueError, match="como mucho 1"):
        vd.sampling_filters([0.5, 0.3, 0.2], list("abc"), [("k", [0.6, 0.6, 0.0])])


def test_alignment_heatmap_outlines_gold_cells():
    w = torch.eye(3)
    fig = vd.alignment_heatmap(w, ["a", "b", "c"], ["x", "y", "z"], gold=[[0], [2], [1]])
    ax = fig.axes[0]
    outlined = [p for p in ax.patches if isinstance(p, __import__("matplotlib").patches.Rectangle)
                and not p.get_fill()]
    assert len(outlined) >= 3
    assert ax.get_xlabel() == "palabra del español (clave)"
    # One list per produced word: 2 lists for 3 rows was drawn without a word.
    with pytest.raises(ValueError, match="una por fila"):
        vd.alignment_heatmap(w, ["a", "b", "c"], ["x", "y", "z"], gold=[[0], [2]])
