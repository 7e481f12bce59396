"""Tests of dldna.embeddings: the generated corpus, one-hot vectors and word2vec."""

from __future__ import annotations

import pytest
import torch

from dldna import embeddings as E


@pytest.fixture(scope="module")
def corpus():
    return E.generate_corpus(n_sentences=6000, seed=0)


@pytest.fixture(scope="module")
def vectors(corpus):
    return E.train_word2vec(corpus, E.Word2VecConfig(), seed=0, device="cpu")


# --------------------------------------------------------------------- corpus


def test_corpus_is_deterministic_and_depends_on_the_seed():
    a = E.generate_corpus(200, seed=3)
    assert a == E.generate_corpus(200, seed=3)
    assert a != E.generate_corpus(200, seed=4)
    assert len(a) == 200 and all(len(s) >= 3 for s in a)


def test_corpus_does_not_touch_the_global_random_state():
    import random

    random.seed(11)
    expected = random.random()
    random.seed(11)
    E.generate_corpus(50, seed=0)
    assert random.random() == expected


def test_subjects_agree_in_gender_with_their_article(corpus):
    feminine = {pair[1] for pair in E.PEOPLE + E.ANIMALS}
    masculine = {pair[0] for pair in E.PEOPLE + E.ANIMALS}
    for sentence in corpus:
        article, noun = sentence[:2]
        assert noun in feminine | masculine
        assert article == ("la" if noun in feminine else "el")


def test_animals_eat_only_their_food_and_the_ambiguous_word_has_two_contexts(corpus):
    for sentence in corpus:
        noun = sentence[1]
        base = {f: m for m, f in E.ANIMALS}.get(noun, noun)
        if base in E.ANIMAL_FOOD and "come" in sentence:
            food = sentence[sentence.index("come") + 1:]
            assert any(w in E.ANIMAL_FOOD[base] for w in food[:2])
    banco = [s for s in corpus if "banco" in s]
    assert any("parque" in s for s in banco) and any("dinero" in s for s in banco)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "10"])
def test_corpus_size_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="entero positivo"):
        E.generate_corpus(bad)


# --------------------------------------------------------------------- vocabulary, one-hot


def test_tokenize_lowercases_and_drops_punctuation():
    assert E.tokenize("La gata, ¡bebe leche!") == ["la", "gata", "bebe", "leche"]


@pytest.mark.parametrize("bad", ["", "   ", "¿?!"])
def test_empty_sentence_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="vacía"):
        E.tokenize(bad)


def test_vocabulary_is_sorted_by_frequency_and_unknown_words_raise_keyerror(corpus):
    vocab = E.Vocabulary.from_sentences(corpus)
    assert vocab.counts == sorted(vocab.counts, reverse=True)
    assert sum(vocab.counts) == sum(len(s) for s in corpus)
    assert vocab.words[vocab.index("perro")] == "perro"
    with pytest.raises(KeyError, match="no está en el vocabulario") as info:
        vocab.index("dragón")
    assert "dragón" in str(info.value) and not str(info.value).startswith('"')


def test_empty_corpus_is_an_error():
    with pytest.raises(ValueError, match="vacío"):
        E.Vocabulary.from_sentences([])


def test_vocabulary_refuses_repeated_words():
    # Two rows for "el" were accepted; index() then gave only the last one.
    with pytest.raises(ValueError, match="repetir palabras.*el"):
        E.Vocabulary(["el", "el"], [1, 2])


def test_nearest_refuses_more_neighbours_than_words_left():
    vectors = E.WordVectors(E.Vocabulary(["el", "gato"], [2, 1]), torch.ones(2, 4))
    assert [w for w, _ in vectors.nearest("el", k=1)] == ["gato"]
    with pytest.raises(ValueError, match=r"k \(5\).*\(1: 2 del vocabulario menos 1 excluidas\)"):
        vectors.nearest("el", k=5)  # silently returned a single word


def test_one_hot_vectors_are_orthonormal_and_select_rows(corpus):
    vocab = E.Vocabulary.from_sentences(corpus)
    words = ["perro", "perra", "pan", "casa"]
    u = E.one_hot(words, vocab)
    assert u.shape == (4, len(vocab))
    assert torch.equal(u @ u.T, torch.eye(4))
    emb = torch.randn(len(vocab), 5)
    assert torch.equal(u @ emb, emb[torch.tensor(vocab.encode(words))])
    with pytest.raises(ValueError, match="vacía"):
        E.one_hot([], vocab)


# --------------------------------------------------------------------- skip-gram


def test_skipgram_pairs_count_and_content():
    sentence = ["a", "b", "c", "d", "e"]
    vocab = E.Vocabulary.from_sentences([sentence])
    pairs = E.skipgram_pairs([sentence], vocab, window=2)
    # positions 0..4 have 2, 3, 4, 3, 2 neighbours within two words
    assert len(pairs) == 14
    names = {(vocab.words[c], vocab.words[o]) for c, o in pairs.tolist()}
    assert ("c", "a") in names and ("a", "d") not in names and ("c", "c") not in names
    with pytest.raises(ValueError, match="ventana"):
        E.skipgram_pairs([sentence], vocab, window=0)


def test_sgns_loss_matches_its_formula():
    torch.manual_seed(0)
    model = E.SkipGramNegativeSampling(10, 4)
    torch.nn.init.normal_(model.context.weight)
    c, o, n = torch.tensor([1, 2]), torch.tensor([3, 4]), torch.tensor([[5, 6], [7, 8]])
    v, u = model.center.weight, model.context.weight
    expected = []
    for b in range(2):
        term = -torch.log(torch.sigmoid(u[o[b]] @ v[c[b]]))
        term -= sum(torch.log(torch.sigmoid(-u[k] @ v[c[b]])) for k in n[b])
        expected.append(term)
    assert torch.allclose(model(c, o, n), torch.stack(expected).mean(), atol=1e-6)


def test_training_is_reproducible_and_restores_threads():
    small = E.generate_corpus(300, seed=1)
    cfg = E.Word2VecConfig(epochs=1, n_sentences=300)
    threads = torch.get_num_threads()
    a = E.train_word2vec(small, cfg, seed=5, device="cpu")
    b = E.train_word2vec(small, cfg, seed=5, device="cpu")
    assert torch.equal(a.vectors, b.vectors)
    assert torch.get_num_threads() == threads


def test_one_configuration_on_every_device():
    # The prose says 16 dimensions (and √16 = 4) whatever the device.
    assert not hasattr(E, "default_config")
    assert E.Word2VecConfig().dim == 16


def test_grammar_uses_ser_for_traits_and_drinks_milk():
    corpus = E.generate_corpus(3000, seed=0)
    pairs = {tuple(s[2:4]) for s in corpus}
    traits = {w for pair in E.TRAITS for w in pair}
    states = {w for pair in E.STATES for w in pair}
    assert not any(verb == "está" and adj in traits for verb, adj in pairs)
    assert not any(verb == "es" and adj in states for verb, adj in pairs)
    assert ("es", "pequeño") in pairs and ("está", "cansado") in pairs
    assert all("leche" not in s or s[s.index("leche") - 1] == "bebe" for s in corpus)


def test_training_lowers_the_loss_and_learns_the_groups(vectors):
    assert vectors.losses[-1] < vectors.losses[0]
    groups = ["personas", "animales", "comida", "lugares", "verbos"]
    words = [w for w in vectors.vocab.words if E.category_of(w) in groups]
    labels = [E.category_of(w) for w in words]
    x = vectors.matrix(words)
    x = x / x.norm(dim=1, keepdim=True)
    cos = x @ x.T
    same = torch.tensor([[a == b for b in labels] for a in labels])
    off = ~torch.eye(len(words), dtype=torch.bool)
    assert cos[same & off].mean() > cos[~same].mean() + 0.2


def test_neighbours_and_the_analogy_that_works(vectors):
    assert vectors.nearest("perro", k=1)[0][0] in {"lobo", "conejo", "gato", "perra"}
    assert "perro" not in [w for w, _ in vectors.nearest("perro", k=5)]
    assert vectors.nearest("casa", k=2)[0][0] in {"escuela", "ciudad", "mercado"}
    assert vectors.analogy("perro", "perra", "gato", k=1)[0][0] == "gata"
    top = vectors.analogy("niño", "casa", "perro", k=3)
    assert {w for w, _ in top} <= set(E.WILD_PLACES + E.SHARED_PLACES)


def test_similarity_is_a_cosine(vectors):
    assert vectors.similarity("perro", "perro") == pytest.approx(1.0, abs=1e-6)
    s = vectors.similarity("perro", "pan")
    assert -1.0 <= s <= 1.0
    assert s == pytest.approx(vectors.similarity("pan", "perro"))


def test_word_vectors_reject_bad_input(vectors):
    with pytest.raises(KeyError, match="no está en el vocabulario"):
        vectors["dragón"]
    with pytest.raises(KeyError):
        vectors.matrix("el dragón come")
    with pytest.raises(ValueError, match="vacía"):
        vectors.matrix("")
    with pytest.raises(ValueError, match="dimensiones"):
        vectors.nearest(torch.zeros(3))
    with pytest.raises(ValueError, match="entero positivo"):
        vectors.nearest("perro", k=0)
    with pytest.raises(ValueError, match="matriz"):
        E.WordVectors(vectors.vocab, torch.zeros(3, 4))


# --------------------------------------------------------------------- projection


def test_pca_projection_keeps_weighted_averages(vectors):
    x = vectors.matrix("la gata bebe leche en el campo")
    coords, explained = E.pca_2d(x)
    assert coords.shape == (7, 2) and 0 < explained <= 1
    project = E.projector_2d(x)
    assert torch.allclose(project(x), coords, atol=1e-5)
    assert torch.allclose(coords.mean(0), torch.zeros(2), atol=1e-5)
    weights = torch.softmax(torch.randn(7, 7), dim=1)
    assert torch.allclose(project(weights @ x), weights @ project(x), atol=1e-5)
    with pytest.raises(ValueError, match="dimensiones"):
        project(torch.zeros(2, 3))
    with pytest.raises(ValueError):
        E.pca_2d(torch.zeros(1, 4))


def test_the_analogies_chapter_1_explains(vectors):
    # «montaña» answers niño:casa::perro because it is the only feminine wild
    # place; with a masculine town place the answer is a masculine wild place.
    assert [p for p in E.WILD_PLACES if p in E.FEMININE_PLACES] == ["montaña"]
    assert vectors.analogy("niño", "casa", "perro")[0][0] == "montaña"
    assert vectors.analogy("niño", "mercado", "perro")[0][0] in {"bosque", "campo", "río"}
    # The failure: lobo and conejo are nearly the same vector, so the analogy
    # gives the rabbit's food for both.
    lobo = {w for w, _ in vectors.analogy("gato", "pescado", "lobo", k=2)}
    conejo = {w for w, _ in vectors.analogy("gato", "pescado", "conejo", k=2)}
    assert lobo == conejo == {"lechuga", "zanahoria"}
    assert vectors.similarity("lobo", "conejo") > 0.85


def test_one_word_has_no_favourite_sense(vectors):
    seat = [vectors.similarity("banco", w) for w in ("parque", "descansa")]
    money = [vectors.similarity("banco", w) for w in ("dinero", "guarda", "saca")]
    assert abs(sum(seat) / 2 - sum(money) / 3) < 0.1


def test_scaled_self_match_grows_like_sqrt_d():
    # Chapter 1: with q = k = x, ‖x‖²/√d grows like √d while q·k/√d for
    # independent q, k stays near 1.
    g = torch.Generator().manual_seed(0)
    for d in (16, 256):
        x = torch.randn(2000, d, generator=g)
        assert abs((x * x).sum(1).mean() / d**0.5 - d**0.5) < 0.1 * d**0.5
        assert abs((x[:-1] * x[1:]).sum(1).div(d**0.5).std() - 1) < 0.1
