"""Tests of dldna.corpus: the generated Spanish corpus of chapter 9."""

from __future__ import annotations

import random

import pytest

from dldna import corpus


def test_generation_is_deterministic_and_depends_on_the_seed():
    a = corpus.generate(300, seed=3)
    assert a == corpus.generate(300, seed=3)
    assert a != corpus.generate(300, seed=4)


def test_generation_leaves_the_global_random_state_alone():
    random.seed(11)
    expected = random.random()
    random.seed(11)
    corpus.generate(50, seed=0)
    assert random.random() == expected


def test_every_kind_appears_and_kinds_can_be_restricted():
    kinds = {s.kind for s in corpus.generate(400, seed=0)}
    assert kinds == set(corpus.KINDS)
    only = corpus.generate(100, seed=0, kinds=("dinero",))
    assert {s.kind for s in only} == {"dinero"}


def test_both_senses_of_banco_use_the_same_token():
    money = corpus.generate(200, seed=0, kinds=("dinero",))
    seat = corpus.generate(200, seed=0, kinds=("asiento",))
    assert all("banco" in s.words for s in money + seat)
    assert all("dinero" not in s.words for s in seat)
    assert all(set(s.words) & {"parque", "jardín", "paseo"} for s in seat)


def test_the_show_agrees_with_the_place():
    for s in corpus.generate(500, seed=1, kinds=("ocio",)):
        place = s.words[3]
        article, new, show = corpus.SHOWS[place]
        after = s.words[s.words.index("ver") + 1:]
        assert after[:3] in ((article, new, show), (article, show, *after[2:3]))
        assert show in after[:3]


def test_held_out_sentences_are_new():
    train = corpus.generate(500, seed=0)
    held = corpus.split_held_out(train, corpus.generate(500, seed=1))
    assert held and not {s.words for s in held} & {s.words for s in train}


def test_with_word_at_selects_by_position():
    sentences = corpus.generate(400, seed=2, kinds=("dinero", "asiento"))
    picked = corpus.with_word_at(sentences, "banco", 4)
    assert picked and all(s.words[4] == "banco" for s in picked)
    assert len(picked) < len(sentences)


def test_with_word_at_refuses_a_position_beyond_the_longest_sentence():
    # The grammar's longest sentence has 14 words (checked against 20 000 draws below);
    # index 99 silently returned [].
    assert max(len(s.words) for s in corpus.generate(20000, seed=0)) == 14
    assert corpus.with_word_at(corpus.generate(3), "banco", 13) == []  # reachable, just not there
    with pytest.raises(ValueError, match="la última posición es 13"):
        corpus.with_word_at(corpus.generate(3), "banco", 99)
    with pytest.raises(ValueError, match="la última posición es 13"):
        corpus.with_word_at(corpus.generate(3), "banco", 14)
    longer = corpus.Sentence(tuple("abcdefghijklmnopqrst"), "ocio")  # a reader's own longer sentence
    assert corpus.with_word_at([longer], "t", 19) == [longer]


def test_tokenizer_covers_the_grammar_with_mask_first():
    tok = corpus.tokenizer()
    assert tok.itos[3] == corpus.MASK
    for s in corpus.generate(1000, seed=5):
        assert tok.decode(tok.encode(s.words)) == list(s.words)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "10"])
def test_bad_sizes_give_spanish_errors(bad):
    with pytest.raises((ValueError, TypeError)):
        corpus.generate(bad)


def test_unknown_kind_gives_a_spanish_error():
    with pytest.raises(ValueError, match="kinds"):
        corpus.generate(10, kinds=("deporte",))
