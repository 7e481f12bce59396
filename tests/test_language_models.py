"""Tests of dldna.language_models: causal and masked models, their objectives and measures.

The trained-model claims of chapter 9 are checked here with the chapter's own
recipe: perplexity below the bigram and uniform baselines on held-out
sentences, and contextual vectors of *banco* that separate its two senses
far more than an untrained model's.
"""

from __future__ import annotations

import copy
import math
import random

import pytest
import torch

from dldna import corpus, decoding, runtime, training
from dldna import language_models as lm
from dldna.tasks import BOS_ID, EOS_ID, PAD_ID

TOK = corpus.tokenizer()
V = len(TOK)
MASK_ID = TOK.token_to_id(corpus.MASK)
RECIPE = lm.RECIPE  # the chapter's


@pytest.fixture(scope="module")
def data():
    train = corpus.generate(2000, seed=0)
    held = corpus.split_held_out(train, corpus.generate(1000, seed=1))
    return lm.encode_sentences(TOK, train), lm.encode_sentences(TOK, held)


@pytest.fixture(scope="module")
def gpt(data):
    return lm.pretrain(data[0], V, causal=True, device="cpu", progress=False)[0]


@pytest.fixture(scope="module")
def bert(data):
    return lm.pretrain(data[0], V, causal=False, mask_id=MASK_ID, first_word=MASK_ID + 1, device="cpu",
                       progress=False)[0]


# ------------------------------------------------------------------ the model


def test_causal_model_does_not_see_the_future():
    runtime.seed_everything(0)
    model = lm.LanguageModel(V, causal=True).eval()
    ids = lm.encode_sentences(TOK, ["ana va al cine a ver una película"])
    other = ids.clone()
    other[0, 5] = TOK.token_to_id("banco")
    a, b = model(ids), model(other)
    assert torch.allclose(a[0, :5], b[0, :5])
    assert not torch.allclose(a[0, 5], b[0, 5])


def test_bidirectional_model_sees_the_future():
    runtime.seed_everything(0)
    model = lm.LanguageModel(V, causal=False).eval()
    ids = lm.encode_sentences(TOK, ["ana va al cine a ver una película"])
    other = ids.clone()
    other[0, 5] = TOK.token_to_id("banco")
    assert not torch.allclose(model(ids)[0, :5], model(other)[0, :5])


def test_padding_does_not_change_the_real_positions():
    runtime.seed_everything(0)
    for causal in (True, False):
        model = lm.LanguageModel(V, causal=causal).eval()
        short = lm.encode_sentences(TOK, ["ana come pan en casa"])
        padded = torch.cat([short, torch.full((1, 3), PAD_ID)], dim=1)
        n = short.shape[1]
        assert torch.allclose(model(short), model(padded)[:, :n], atol=1e-5)


def test_output_layer_is_tied_to_the_embeddings():
    model = lm.LanguageModel(V)
    assert model.head.weight is model.embed.token.weight


def test_bad_ids_give_spanish_errors():
    model = lm.LanguageModel(V)
    with pytest.raises(ValueError, match="fuera del vocabulario"):
        model(torch.tensor([[1, V + 5]]))
    with pytest.raises(ValueError):
        model(torch.tensor([1, 4, 5]))
    with pytest.raises(TypeError):
        lm.LanguageModel(V, causal="sí")


# ------------------------------------------------------------------- masking


def test_mask_tokens_follows_the_80_10_10_rule():
    ids = lm.encode_sentences(TOK, corpus.generate(4000, seed=0))
    inputs, labels = lm.mask_tokens(ids, MASK_ID, MASK_ID + 1, V,
                                    generator=torch.Generator().manual_seed(0))
    chosen = labels != lm.IGNORE
    words = ids > MASK_ID
    assert not chosen[~words].any()  # never PAD, BOS, EOS
    assert chosen.any(1).all()  # at least one per sentence
    assert 0.15 <= float(chosen.sum() / words.sum()) < 0.25
    assert torch.equal(labels[chosen], ids[chosen])
    masked = float((inputs[chosen] == MASK_ID).float().mean())
    kept = float((inputs[chosen] == ids[chosen]).float().mean())
    assert abs(masked - 0.8) < 0.02
    assert 0.09 < kept < 0.13  # 10 % kept, plus random words that hit the original
    assert torch.equal(inputs[~chosen], ids[~chosen])


def test_masked_batches_are_reproducible_and_change_with_the_step(data):
    a = lm.masked_batches(data[0], 16, MASK_ID, MASK_ID + 1, V, seed=3)
    b = lm.masked_batches(data[0], 16, MASK_ID, MASK_ID + 1, V, seed=3)
    assert all(torch.equal(x, y) for x, y in zip(a(5), b(5), strict=True))
    assert not torch.equal(a(5)[0], a(6)[0])


# ------------------------------------------------------------------ measures


def test_bigram_model_is_a_distribution_and_beats_uniform(data):
    bigram = lm.BigramModel(data[0], V)
    assert torch.allclose(bigram.probs.sum(1), torch.ones(V, dtype=torch.float64))
    assert (bigram.probs[:, [PAD_ID, BOS_ID]] == 0).all()
    assert bigram.perplexity(data[1]) < lm.uniform_perplexity(V)


def test_perplexity_of_a_uniform_model_is_its_number_of_choices():
    class Uniform(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(1))

        def forward(self, ids):
            return torch.zeros(*ids.shape, 10) + self.w

    ids = torch.tensor([[1, 4, 5, 2, 0], [1, 6, 2, 0, 0]])
    assert math.isclose(lm.perplexity(Uniform(), ids), 10.0, rel_tol=1e-6)


def test_gpt_beats_the_bigram_and_uniform_baselines(gpt, data):
    bigram = lm.BigramModel(data[0], V).perplexity(data[1])
    ppl = lm.perplexity(gpt, data[1])
    assert ppl < 0.85 * bigram < lm.uniform_perplexity(V)


def test_gpt_uses_the_place_several_words_back(gpt):
    cine = lm.next_word_probs(gpt, TOK, "ana va al cine a ver una nueva", k=1)[0]
    teatro = lm.next_word_probs(gpt, TOK, "ana va al teatro a ver una nueva", k=1)[0]
    assert cine[0] == "película" and cine[1] > 0.8
    assert teatro[0] == "obra" and teatro[1] > 0.8


def test_prompt_step_drives_the_decoders(gpt):
    prompt = torch.tensor([TOK.encode("ana va al cine a ver una nueva", bos=True)])
    step = lm.prompt_step(gpt, prompt)
    greedy = decoding.greedy_decode(step, prompt, max_len=5, bos_id=BOS_ID, eos_id=EOS_ID)
    assert TOK.decode(greedy[0])[0] == "película"
    beam = decoding.beam_search(step, prompt, beam_width=3, max_len=5, bos_id=BOS_ID, eos_id=EOS_ID)
    assert TOK.decode(beam.tokens[0])[0] == "película"


def test_bert_fills_in_from_the_right(bert):
    ids = torch.tensor([TOK.encode(f"ana va al {corpus.MASK} a ver una nueva obra", bos=True, eos=True)])
    with torch.no_grad():
        guess = TOK.id_to_token(int(bert(ids)[0, 4].argmax()))
    assert guess == "teatro"


@pytest.mark.parametrize("same_position", [True, False])
@pytest.mark.parametrize("name", ["bert", "gpt"])
def test_contextual_vectors_separate_the_senses_of_banco(name, same_position, request):
    model = request.getfixturevalue(name)
    money = corpus.generate(600 if same_position else 80, seed=5, kinds=("dinero",))
    seat = corpus.generate(600 if same_position else 80, seed=6, kinds=("asiento",))
    if same_position:  # banco as the fifth word in both senses
        money = corpus.with_word_at(money, "banco", 4)[:40]
        seat = corpus.with_word_at(seat, "banco", 4)[:40]

    def gap(m):
        s = lm.sense_similarities(lm.contextual_vectors(m, TOK, money, "banco"),
                                  lm.contextual_vectors(m, TOK, seat, "banco"))
        return (s["a-a"] + s["b-b"]) / 2 - s["a-b"]

    untrained = []
    for seed in range(3):
        runtime.seed_everything(seed)
        # an untrained model of the same kind (causal or not) is the control
        untrained.append(gap(lm.LanguageModel(V, causal=name == "gpt")))
    assert gap(model) > 3 * max(untrained)


def test_sense_similarities_on_known_vectors():
    a = torch.tensor([[1.0, 0.0], [2.0, 0.0]])
    b = torch.tensor([[0.0, 1.0], [0.0, 3.0]])
    s = lm.sense_similarities(a, b)
    assert s == pytest.approx({"a-a": 1.0, "b-b": 1.0, "a-b": 0.0})


def test_contextual_vectors_need_the_word():
    with pytest.raises(ValueError, match="banco"):
        lm.contextual_vectors(lm.LanguageModel(V), TOK, ["ana come pan en casa"], "banco")


# ------------------------------------------------------------ classification


@pytest.mark.parametrize("pooling", ["cls", "last"])
def test_classifier_learns_a_few_labels(pooling):
    few = corpus.generate(4, seed=1, kinds=("dinero",)) + corpus.generate(4, seed=2, kinds=("asiento",))
    ids = lm.encode_sentences(TOK, few)
    labels = torch.tensor([s.kind == "dinero" for s in few]).long()
    runtime.seed_everything(0)
    clf = lm.SequenceClassifier(lm.LanguageModel(V, causal=pooling == "last"), 2, pooling)
    recipe = training.Recipe(steps=60, batch_size=8, lr=3e-3, warmup=5, schedule="constant")
    training.fit(clf, lambda step: (ids, labels), lm.classification_loss, recipe, device="cpu",
                 progress=False)
    assert lm.accuracy(clf, ids, labels) == 1.0


def test_last_pooling_reads_the_last_real_token():
    runtime.seed_everything(0)
    clf = lm.SequenceClassifier(lm.LanguageModel(V, causal=True), 2, "last").eval()
    short = lm.encode_sentences(TOK, ["ana come pan en casa"])
    padded = torch.cat([short, torch.full((1, 4), PAD_ID)], dim=1)
    assert torch.allclose(clf(short), clf(padded), atol=1e-5)


def test_classifier_rejects_bad_arguments():
    with pytest.raises(TypeError):
        lm.SequenceClassifier(torch.nn.Linear(2, 2), 2)
    with pytest.raises(ValueError):
        lm.SequenceClassifier(lm.LanguageModel(V), 2, pooling="max")


def test_a_first_layer_head_looks_back_at_the_place(gpt):
    words = "ana va al cine a ver una nueva"
    ids = torch.tensor([TOK.encode(words, bos=True)])
    with torch.no_grad():
        gpt(ids)
    first = gpt.attention_maps()[0][0]  # (heads, T, T)
    cine = 1 + words.split().index("cine")
    uniform = 1 / ids.shape[1]
    assert float(first[:, -1, cine].max()) > 5 * uniform


def test_span_corruption_round_trips_and_removes_spans():
    import random

    rng = random.Random(0)
    removed = total = 0
    for s in corpus.generate(300, seed=4):
        inputs, targets = lm.span_corrupt(s.words, rng)
        assert lm.span_restore(inputs, targets) == list(s.words)
        sentinels = [w for w in inputs if w in lm.SENTINELS]
        assert sentinels and sentinels == list(lm.SENTINELS[:len(sentinels)])
        assert targets[-1] == lm.SENTINELS[len(sentinels)]
        removed += len(targets) - len(sentinels) - 1
        total += len(s.words)
    assert 0.08 < removed / total < 0.35


def test_span_corruption_rejects_bad_input():
    import random

    with pytest.raises(ValueError):
        lm.span_corrupt([], random.Random(0))
    with pytest.raises(ValueError):
        lm.span_corrupt(["a", "b"], random.Random(0), rate=1.5)


def test_pretraining_beats_scratch_on_unseen_templates(gpt):
    """Chapter 9.8: labels from two templates per sense, cut at «banco»; the test
    uses the other templates, where the surface words of the labels do not help."""
    labelled = {"saca", "ingresa", "se", "descansa"}

    def cut(s):
        return corpus.Sentence(s.words[:s.words.index("banco") + 1], s.kind)

    def encode(sentences):
        x = lm.encode_sentences(TOK, sentences)
        x[x == EOS_ID] = PAD_ID
        return x, torch.tensor([s.kind == "dinero" for s in sentences]).long()

    few = []
    for kind, base in (("dinero", 100), ("asiento", 200)):
        few += [cut(s) for s in corpus.generate(100, seed=base, kinds=(kind,)) if s.words[1] in labelled][:4]
    test = sorted({cut(s) for s in corpus.generate(3000, seed=50, kinds=("dinero", "asiento"))
                   if s.words[1] not in labelled}, key=lambda s: s.words)
    assert corpus.split_held_out(few, test) == test
    batch, (ids, labels) = encode(few), encode(test)

    def accuracy(body):
        runtime.seed_everything(0)
        clf = lm.SequenceClassifier(body, 2, pooling="last")
        recipe = training.Recipe(steps=50, batch_size=8, lr=3e-4, warmup=5, schedule="constant")
        training.fit(clf, lambda step: batch, lm.classification_loss, recipe, device="cpu", progress=False)
        return lm.accuracy(clf, ids, labels)

    assert accuracy(copy.deepcopy(gpt)) > accuracy(lm.LanguageModel(V, causal=True)) + 0.2


def test_pretrain_is_the_books_loop_with_each_objective(data):
    """lm.pretrain is fit with the kind's batches and loss: the same weights as by hand."""
    short = training.Recipe(steps=12, batch_size=8, lr=3e-3, warmup=2)
    for causal in (True, False):
        kind = dict(mask_id=MASK_ID, first_word=MASK_ID + 1) if not causal else {}
        model, result = lm.pretrain(data[0], V, causal=causal, recipe=short, seed=3, device="cpu",
                                    progress=False, d_model=32, n_heads=2, n_layers=1, d_ff=64, **kind)
        assert not model.training and len(result.history.loss) == 12
        runtime.seed_everything(3)
        by_hand = lm.LanguageModel(V, causal=causal, d_model=32, n_heads=2, n_layers=1, d_ff=64)
        batches = (lm.sentence_batches(data[0], 8, seed=3) if causal
                   else lm.masked_batches(data[0], 8, MASK_ID, MASK_ID + 1, V, seed=3))
        loss = lm.causal_lm_loss if causal else lm.masked_lm_loss
        training.fit(by_hand, batches, loss, short, device="cpu", seed=3, progress=False)
        for a, b in zip(model.parameters(), by_hand.parameters(), strict=True):
            assert torch.equal(a, b)


def test_pretrain_trains_with_the_masking_function_it_is_given(data):
    """mask_fn replaces mask_tokens in the batches pretrain draws (chapter 9, exercise 2)."""
    seen = []

    def always_mask(ids, mask_id, first_word, vocab, *, prob, generator):
        inputs, labels = lm.mask_tokens(ids, mask_id, first_word, vocab, prob=prob, generator=generator)
        inputs = torch.where(labels != lm.IGNORE, torch.full_like(ids, mask_id), ids)  # 100/0/0
        seen.append((inputs, labels))
        return inputs, labels

    short = training.Recipe(steps=3, batch_size=8, lr=3e-3, warmup=1)
    lm.pretrain(data[0], V, causal=False, mask_id=MASK_ID, first_word=MASK_ID + 1, recipe=short,
                device="cpu", progress=False, mask_fn=always_mask, d_model=32, n_heads=2, n_layers=1, d_ff=64)
    assert len(seen) == 3
    for inputs, labels in seen:
        chosen = labels != lm.IGNORE
        assert bool((inputs[chosen] == MASK_ID).all()) and bool((inputs[~chosen] != MASK_ID).all())
    # Without mask_fn the package's rule leaves some chosen words visible.
    inputs, labels = lm.masked_batches(data[0], 64, MASK_ID, MASK_ID + 1, V, seed=0)(0)
    assert not bool((inputs[labels != lm.IGNORE] == MASK_ID).all())


def test_pretrain_rejects_bad_arguments(data):
    with pytest.raises(ValueError, match="mask_id y first_word"):
        lm.pretrain(data[0], V, causal=False)
    with pytest.raises(TypeError, match="causal debe ser True o False"):
        lm.pretrain(data[0], V, causal="sí")
    with pytest.raises(ValueError, match="seed"):
        lm.pretrain(data[0], V, causal=True, seed=-1)


def _tiny(causal=True):
    torch.manual_seed(0)
    return lm.LanguageModel(V, d_model=8, n_heads=2, n_layers=1, d_ff=16, causal=causal).eval()


def test_measures_refuse_what_would_be_nan_or_silently_wrong():
    ids = lm.encode_sentences(TOK, ["ana va al cine", "luis va al teatro"])
    pad = torch.zeros(2, 5, dtype=torch.long)
    # Nothing to predict (only padding after the first token): the mean over no token was NaN.
    with pytest.raises(ValueError, match="ningún tóken que predecir"):
        lm.perplexity(_tiny(), pad)
    with pytest.raises(ValueError, match="ningún tóken que predecir"):
        lm.BigramModel(ids, V).perplexity(pad)
    # Every position IGNORE: NaN loss before.
    with pytest.raises(ValueError, match="Ninguna posición"):
        lm.masked_lm_loss(_tiny(False), (ids, torch.full_like(ids, lm.IGNORE)))
    # A label the model has no class for, labels of the wrong length, an empty set.
    classifier = lm.SequenceClassifier(_tiny(False), 2)
    with pytest.raises(ValueError, match="fuera"):
        lm.accuracy(classifier, ids, torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="una etiqueta por frase"):
        lm.accuracy(classifier, ids, torch.tensor([0]))
    with pytest.raises(ValueError, match="vacío"):
        lm.accuracy(classifier, ids[:0], torch.tensor([], dtype=torch.long))
    # One vector has no pairs to average; a zero vector no direction (its cosine was a silent 0).
    with pytest.raises(ValueError, match="al menos 2 vectores"):
        lm.sense_similarities(torch.ones(1, 4), torch.ones(2, 4))
    with pytest.raises(ValueError, match="nulo"):
        lm.sense_similarities(torch.zeros(2, 4), torch.ones(2, 4))
    # The valid calls still give finite numbers.
    assert math.isfinite(lm.perplexity(_tiny(), ids))
    assert 0.0 <= lm.accuracy(classifier, ids, [0, 1]) <= 1.0


def test_text_is_not_split_into_letters_and_arguments_are_checked_before_work():
    with pytest.raises(TypeError, match="lista de frases"):
        lm.encode_sentences(TOK, "ana va al cine")
    with pytest.raises(TypeError, match="lista de palabras"):
        lm.span_corrupt("el gato come", random.Random(0))
    with pytest.raises(ValueError, match="centinela"):
        lm.span_restore(["el", "<X1>"], ["<X0>", "gato"])
    with pytest.raises(ValueError, match="mask_id < first_word < vocab"):
        lm.mask_tokens(torch.tensor([[1, 5, 6, 2]]), MASK_ID, MASK_ID, V)
    with pytest.raises(TypeError, match="d_modle"):
        lm.pretrain(torch.tensor([[1, 5, 6, 2]]), V, causal=True, d_modle=8)
    with pytest.raises(TypeError, match="quick"):
        lm.benchmark(quick="no")
