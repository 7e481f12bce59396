"""Bad input a reader can type into dldna.embeddings gets a Spanish error."""

import pytest

import dldna  # noqa: F401  (pins the CPU kernels before torch)
from dldna import embeddings as E

BAD_CONFIGS = [
    ({"batch_size": 0}, "batch_size"),
    ({"dim": -3}, "dim"),
    ({"window": 1.5}, "window"),
    ({"negatives": True}, "negatives"),
    ({"epochs": "4"}, "epochs"),
    ({"n_sentences": 0}, "n_sentences"),
    ({"lr": 0}, "lr"),
    ({"lr": float("nan")}, "lr"),
]


@pytest.mark.parametrize(("kwargs", "name"), BAD_CONFIGS)
def test_word2vec_config_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name} debe ser"):
        E.Word2VecConfig(**kwargs)


def test_train_word2vec_rejects_a_config_of_the_wrong_type():
    with pytest.raises(TypeError, match="Word2VecConfig"):
        E.train_word2vec(config={"dim": 16})


@pytest.mark.parametrize("n", [0, -1, 2.5, "10", True])
def test_generate_corpus_rejects_bad_sizes(n):
    with pytest.raises(ValueError, match="entero positivo"):
        E.generate_corpus(n)


@pytest.mark.parametrize("window", [0, 1.0, None])
def test_skipgram_pairs_rejects_bad_windows(window):
    corpus = E.generate_corpus(5)
    with pytest.raises(ValueError, match="ventana"):
        E.skipgram_pairs(corpus, E.Vocabulary.from_sentences(corpus), window=window)


@pytest.mark.parametrize(("vocab", "dim"), [(0, 4), (10, 0), (10, 2.0)])
def test_skipgram_model_rejects_bad_sizes(vocab, dim):
    with pytest.raises(ValueError, match="entero positivo"):
        E.SkipGramNegativeSampling(vocab, dim)
