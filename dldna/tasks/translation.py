"""Toy translation Spanish → English from a small grammar (chapter 7d).

The grammar is small enough to learn in a minute on a laptop CPU, and has
four things that make translation more than word-for-word substitution:

* **reordering**: the Spanish adjective follows its noun, the English one
  precedes it: ``el gato negro`` → ``the black cat``;
* **agreement that English drops** (many-to-one): Spanish articles and
  adjectives agree in gender and number with the noun; English adjectives
  never change and its articles mark no gender (only the indefinite one
  marks number: ``un gato`` → ``a cat``, ``unos gatos`` → ``some cats``):
  ``el gato negro``, ``la gata negra``, ``los gatos negros``, ``las gatas
  negras`` → ``the black cat(s)``; a direct object that is a person or an
  animal takes the preposition ``a`` (``al`` = ``a`` + ``el``), which English
  does not write;
* **one word, two words**: a negation ``no come`` becomes ``does not eat``:
  the number agreement moves from the verb to the auxiliary ``does``/``do``
  and the verb takes its base form;
* **looking ahead**: the English indefinite article is ``a`` or ``an``
  depending on the sound of the *next English word*, which can be the
  adjective that comes *after* the noun in Spanish: ``un elefante negro`` →
  ``a black elephant`` but ``un elefante viejo`` → ``an old elephant``.

Sentences are ``subject [no] verb [object]``; a noun phrase is
``article noun [adjective]`` (Spanish) / ``article [adjective] noun``
(English). :class:`Sentence` is the structure both languages are rendered
from (:meth:`Sentence.spanish`, :meth:`Sentence.english`);
:func:`parse_spanish` reads a Spanish sentence back into it, so
:func:`translate` gives the reference translation of any sentence of the
grammar, and :meth:`Sentence.alignment` says which Spanish words each English
word comes from.

:class:`TranslationTask` plugs the grammar into :mod:`dldna.tasks.base`
(word tokenizers, held-out sentences never drawn for training), and
:func:`benchmark` trains the chapter's model for ``make bench``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from dldna import checks, runtime
from dldna.decoding import greedy_decode
from dldna.tasks.base import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    BenchResult,
    Example,
    Task,
    Tokenizer,
    benchmark_seeds,
    exact_match,
    greedy_decoder,
    make_batch,
    strip_output,
    train,
)
from dldna.training import FitResult, Recipe, _check_recipe
from dldna.transformer import Transformer, TransformerConfig

__all__ = [
    "NOUNS",
    "ADJECTIVES",
    "VERBS",
    "Noun",
    "Adjective",
    "Verb",
    "NounPhrase",
    "Sentence",
    "TranslationTask",
    "parse_spanish",
    "translate",
    "GrammarError",
    "setup",
    "TranslationRun",
    "train_translation",
    "AttentionRecord",
    "attention_record",
    "alignment_accuracy",
    "benchmark",
]


# ---------------------------------------------------------------------------
# Lexicon
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Noun:
    """A Spanish noun with its gender, and its English forms."""

    es: str
    es_plural: str
    feminine: bool
    en: str
    en_plural: str


@dataclass(frozen=True)
class Adjective:
    """A Spanish adjective (masculine singular, feminine singular and the two
    plurals; invariable ones repeat), and its English form."""

    es: tuple[str, str, str, str]  # m. sg., f. sg., m. pl., f. pl.
    en: str

    def form(self, feminine: bool, plural: bool) -> str:
        return self.es[2 * plural + feminine]


@dataclass(frozen=True)
class Verb:
    """A verb: Spanish 3rd person singular/plural, English 3rd person singular/plural."""

    es: str
    es_plural: str
    en: str
    en_plural: str
    transitive: bool


#: Every noun is animate, so it can be a subject and (with «a») a direct object.
#: Pairs such as gato/gata collapse in English; some plurals are irregular
#: (mouse/mice, man/men) or invariable (fish, sheep).
NOUNS: tuple[Noun, ...] = (
    Noun("gato", "gatos", False, "cat", "cats"),
    Noun("gata", "gatas", True, "cat", "cats"),
    Noun("perro", "perros", False, "dog", "dogs"),
    Noun("perra", "perras", True, "dog", "dogs"),
    Noun("niño", "niños", False, "boy", "boys"),
    Noun("niña", "niñas", True, "girl", "girls"),
    Noun("hombre", "hombres", False, "man", "men"),
    Noun("mujer", "mujeres", True, "woman", "women"),
    Noun("ratón", "ratones", False, "mouse", "mice"),
    Noun("pez", "peces", False, "fish", "fish"),
    Noun("oveja", "ovejas", True, "sheep", "sheep"),
    Noun("vaca", "vacas", True, "cow", "cows"),
    Noun("caballo", "caballos", False, "horse", "horses"),
    Noun("elefante", "elefantes", False, "elephant", "elephants"),
    Noun("búho", "búhos", False, "owl", "owls"),
    Noun("abeja", "abejas", True, "bee", "bees"),
)

ADJECTIVES: tuple[Adjective, ...] = (
    Adjective(("negro", "negra", "negros", "negras"), "black"),
    Adjective(("blanco", "blanca", "blancos", "blancas"), "white"),
    Adjective(("pequeño", "pequeña", "pequeños", "pequeñas"), "small"),
    Adjective(("grande", "grande", "grandes", "grandes"), "big"),
    Adjective(("viejo", "vieja", "viejos", "viejas"), "old"),
    Adjective(("gris", "gris", "grises", "grises"), "grey"),
    Adjective(("amarillo", "amarilla", "amarillos", "amarillas"), "yellow"),
    Adjective(("enorme", "enorme", "enormes", "enormes"), "enormous"),
)

VERBS: tuple[Verb, ...] = (
    Verb("come", "comen", "eats", "eat", False),
    Verb("duerme", "duermen", "sleeps", "sleep", False),
    Verb("corre", "corren", "runs", "run", False),
    Verb("salta", "saltan", "jumps", "jump", False),
    Verb("canta", "cantan", "sings", "sing", False),
    Verb("ve", "ven", "sees", "see", True),
    Verb("sigue", "siguen", "follows", "follow", True),
    Verb("mira", "miran", "watches", "watch", True),
    Verb("muerde", "muerden", "bites", "bite", True),
)

_VOWEL_SOUND = ("a", "e", "i", "o", "u")


def _article_es(definite: bool, feminine: bool, plural: bool) -> str:
    table = {(True, False): ("el", "los"), (True, True): ("la", "las"),
             (False, False): ("un", "unos"), (False, True): ("una", "unas")}
    return table[definite, feminine][plural]


# ---------------------------------------------------------------------------
# Structure
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NounPhrase:
    """``article noun [adjective]``: definite or not, singular or plural."""

    noun: Noun
    plural: bool
    definite: bool
    adjective: Adjective | None = None

    def spanish(self) -> list[str]:
        n = self.noun
        words = [_article_es(self.definite, n.feminine, self.plural),
                 n.es_plural if self.plural else n.es]
        if self.adjective is not None:
            words.append(self.adjective.form(n.feminine, self.plural))
        return words

    def english(self) -> list[str]:
        noun = self.noun.en_plural if self.plural else self.noun.en
        rest = ([self.adjective.en] if self.adjective is not None else []) + [noun]
        if self.definite:
            article = "the"
        elif self.plural:
            article = "some"
        else:
            article = "an" if rest[0].startswith(_VOWEL_SOUND) else "a"
        return [article, *rest]

    def alignment(self) -> list[list[int]]:
        """For each English word, the Spanish positions (within the phrase) it comes from."""
        adj = [[2]] if self.adjective is not None else []
        return [[0], *adj, [1]]


@dataclass(frozen=True)
class Sentence:
    """``subject [no] verb [object]``, the structure both languages are written from."""

    subject: NounPhrase
    verb: Verb
    object: NounPhrase | None = None
    negated: bool = False

    def __post_init__(self) -> None:
        if self.verb.transitive != (self.object is not None):
            raise ValueError(
                f"El verbo «{self.verb.es}» {'necesita' if self.verb.transitive else 'no admite'} "
                "complemento directo."
            )

    def spanish(self) -> list[str]:
        words = self.subject.spanish() + (["no"] if self.negated else [])
        words.append(self.verb.es_plural if self.subject.plural else self.verb.es)
        if self.object is not None:
            obj = self.object.spanish()
            if obj[0] == "el":  # a + el = al
                words += ["al", *obj[1:]]
            else:
                words += ["a", *obj]
        return words

    def english(self) -> list[str]:
        words = self.subject.english()
        if self.negated:  # does/do carries the agreement; the verb takes its base form
            words += ["do" if self.subject.plural else "does", "not", self.verb.en_plural]
        else:
            words.append(self.verb.en_plural if self.subject.plural else self.verb.en)
        if self.object is not None:
            words += self.object.english()
        return words

    def alignment(self) -> list[list[int]]:
        """For each English word, the positions of the Spanish words it translates.

        ``the`` of a definite object after ``al`` points at ``al``; after ``a``
        it points at both ``a`` and the article (the preposition has no English
        word of its own). In a negation, ``does``/``do`` points at ``no`` and
        the verb (it exists because of the first and agrees like the second).
        """
        out = self.subject.alignment()
        n_subj = len(self.subject.spanish())
        verb = n_subj + self.negated
        if self.negated:
            out += [[n_subj, verb], [n_subj], [verb]]
        else:
            out.append([verb])
        if self.object is not None:
            start = verb + 1
            obj = self.object.alignment()
            if self.object.spanish()[0] == "el":  # «al» is one word: shift by 0
                out += [[start + i for i in pos] for pos in obj]
            else:  # «a» + article: the article of English takes both
                shifted = [[start + 1 + i for i in pos] for pos in obj]
                shifted[0] = [start, start + 1]
                out += shifted
        return out


def random_phrase(rng: random.Random, adjective_p: float = 0.5) -> NounPhrase:
    return NounPhrase(
        noun=rng.choice(NOUNS),
        plural=rng.random() < 0.5,
        definite=rng.random() < 0.5,
        adjective=rng.choice(ADJECTIVES) if rng.random() < adjective_p else None,
    )


def random_sentence(rng: random.Random, adjective_p: float = 0.5,
                    transitive_p: float = 0.5, negation_p: float = 0.25) -> Sentence:
    subject = random_phrase(rng, adjective_p)
    negated = rng.random() < negation_p
    transitive = rng.random() < transitive_p
    verb = rng.choice([v for v in VERBS if v.transitive == transitive])
    obj = random_phrase(rng, adjective_p) if transitive else None
    return Sentence(subject, verb, obj, negated)


# ---------------------------------------------------------------------------
# Parsing (the reference translation of any sentence of the grammar)
# ---------------------------------------------------------------------------

_ARTICLES = {_article_es(d, f, p): (d, f, p)
             for d in (True, False) for f in (True, False) for p in (True, False)}
_NOUN_FORMS = {**{n.es: (n, False) for n in NOUNS}, **{n.es_plural: (n, True) for n in NOUNS}}
_VERB_FORMS = {**{v.es: (v, False) for v in VERBS}, **{v.es_plural: (v, True) for v in VERBS}}


class GrammarError(ValueError):
    """A Spanish text that the toy grammar does not generate."""


def _phrase(words: list[str], i: int, after_al: bool = False) -> tuple[NounPhrase, int]:
    if after_al:
        definite, feminine, plural = True, False, False
    else:
        if i >= len(words) or words[i] not in _ARTICLES:
            found = words[i] if i < len(words) else "el final de la frase"
            raise GrammarError(f"Se esperaba un artículo (el, la, los, las, un, una, unos, unas) "
                               f"en la posición {i}; hay «{found}».")
        definite, feminine, plural = _ARTICLES[words[i]]
        i += 1
    if i >= len(words) or words[i] not in _NOUN_FORMS:
        found = words[i] if i < len(words) else "el final de la frase"
        raise GrammarError(f"Se esperaba un sustantivo en la posición {i}; hay «{found}».")
    noun, noun_plural = _NOUN_FORMS[words[i]]
    if noun_plural != plural or noun.feminine != feminine:
        raise GrammarError(f"«{words[i]}» no concuerda en género o número con su artículo.")
    i += 1
    adjective = None
    if i < len(words):
        for adj in ADJECTIVES:
            if words[i] in adj.es:
                if adj.form(feminine, plural) != words[i]:
                    raise GrammarError(f"El adjetivo «{words[i]}» no concuerda con «{noun.es}».")
                adjective = adj
                i += 1
                break
    return NounPhrase(noun, plural, definite, adjective), i


def _words(text) -> list[str]:
    """The lower-case words of a text or of a list of words."""
    if isinstance(text, str):
        return text.lower().split()
    if not isinstance(text, (list, tuple)) or not all(isinstance(w, str) for w in text):
        raise TypeError(f"La frase debe ser un texto o una lista de palabras (textos); se recibió "
                        f"{type(text).__name__}: {text!r:.80}.")
    return [w.lower() for w in text]


def parse_spanish(text: str | Sequence[str]) -> Sentence:
    """Read a sentence of the grammar (text or list of words) into a :class:`Sentence`.

    Raises :class:`GrammarError` (a ``ValueError``) with a Spanish message
    saying where the sentence leaves the grammar.
    """
    words = _words(text)
    subject, i = _phrase(words, 0)
    negated = i < len(words) and words[i] == "no"
    i += negated
    if i >= len(words) or words[i] not in _VERB_FORMS:
        found = words[i] if i < len(words) else "el final de la frase"
        raise GrammarError(f"Se esperaba un verbo en la posición {i}; hay «{found}».")
    verb, verb_plural = _VERB_FORMS[words[i]]
    if verb_plural != subject.plural:
        raise GrammarError(f"El verbo «{words[i]}» no concuerda en número con el sujeto.")
    i += 1
    obj = None
    if verb.transitive:
        if i >= len(words) or words[i] not in ("a", "al"):
            raise GrammarError(f"«{verb.es}» lleva complemento con «a» o «al» (ve al perro, ve a la vaca).")
        if words[i] == "a" and i + 1 < len(words) and words[i + 1] == "el":
            raise GrammarError("Se escribe «al», no «a el» (ve al perro).")
        obj, i = _phrase(words, i + 1, after_al=words[i] == "al")
    if i != len(words):
        raise GrammarError(f"Sobran palabras desde la posición {i}: «{' '.join(words[i:])}».")
    return Sentence(subject, verb, obj, negated)


def translate(text: str | Sequence[str]) -> str:
    """The reference English translation of a Spanish sentence of the grammar.

    >>> translate("un elefante viejo come")
    'an old elephant eats'
    >>> translate("las gatas negras ven al ratón")
    'the black cats see the mouse'
    """
    return " ".join(parse_spanish(text).english())


# ---------------------------------------------------------------------------
# The task
# ---------------------------------------------------------------------------


def _spanish_vocabulary() -> list[str]:
    words = list(dict.fromkeys(
        [_article_es(d, f, p) for d in (True, False) for f in (False, True) for p in (False, True)]
        + ["a", "al", "no"]
        + [w for n in NOUNS for w in (n.es, n.es_plural)]
        + [w for a in ADJECTIVES for w in a.es]
        + [w for v in VERBS for w in (v.es, v.es_plural)]
    ))
    return words


def _english_vocabulary() -> list[str]:
    return list(dict.fromkeys(
        ["the", "a", "an", "some", "does", "do", "not"]
        + [w for n in NOUNS for w in (n.en, n.en_plural)]
        + [a.en for a in ADJECTIVES]
        + [w for v in VERBS for w in (v.en, v.en_plural)]
    ))


class TranslationTask(Task):
    """Spanish → English sentences of the toy grammar, as word tokens.

    ``adjective_p``: probability that a noun phrase has an adjective;
    ``transitive_p``: probability of a ``subject verb object`` sentence;
    ``negation_p``: probability of a negated sentence (``no`` → ``does not``).
    :meth:`~dldna.tasks.base.Task.test_set` holds sentences out: training
    batches never contain their Spanish side.
    """

    name = "traducción"

    def __init__(self, adjective_p: float = 0.5, transitive_p: float = 0.5, negation_p: float = 0.25):
        super().__init__()
        for value, what in ((adjective_p, "adjective_p"), (transitive_p, "transitive_p"),
                            (negation_p, "negation_p")):
            # True would silently be the probability 1.
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"{what} es una probabilidad: debe estar entre 0 y 1; se recibió {value!r}.")
        self.adjective_p = adjective_p
        self.transitive_p = transitive_p
        self.negation_p = negation_p
        self.src_tokenizer = Tokenizer(_spanish_vocabulary(), separator=" ")
        self.tgt_tokenizer = Tokenizer(_english_vocabulary(), separator=" ")

    #: Longest Spanish sentence (art noun adj no verb a art noun adj) and English
    #: one plus EOS (art adj noun does not verb art adj noun EOS).
    max_source_len = 9
    max_target_len = 10

    def sentence(self, rng: random.Random) -> Sentence:
        return random_sentence(rng, self.adjective_p, self.transitive_p, self.negation_p)

    def sample(self, rng: random.Random) -> Example:
        s = self.sentence(rng)
        return Example(tuple(s.spanish()), tuple(s.english()))

    def n_sentences(self) -> int:
        """How many different sentences the grammar can generate."""
        phrases = len(NOUNS) * 2 * 2 * (1 + len(ADJECTIVES))
        intrans = sum(not v.transitive for v in VERBS)
        return 2 * (phrases * intrans + phrases * (len(VERBS) - intrans) * phrases)


# ---------------------------------------------------------------------------
# Training the chapter's model
# ---------------------------------------------------------------------------


def setup(task: TranslationTask | None = None) -> tuple[TransformerConfig, Recipe]:
    """The chapter's model and recipe: ``(TransformerConfig, Recipe)``.

    Two encoder and two decoder layers of width 64; 300 steps of 64 fresh
    sentences; the Noam schedule (warm-up of 40 steps, peak rate 2·10⁻³, then
    a decay as 1/√t); label smoothing 0.1; the validation accuracy every 50
    steps. The same on every device (:mod:`dldna.runtime`).

    With the Noam schedule the rate of a step does not depend on the total
    number of steps, so a run of ``k`` steps (``dataclasses.replace(recipe,
    steps=k)``) is exactly the first ``k`` steps of the full run: a
    half-trained model is a shorter run with the same seed.
    """
    if task is not None and not isinstance(task, TranslationTask):
        raise TypeError(f"task debe ser una TranslationTask (o None); se recibió {type(task).__name__}.")
    task = task or TranslationTask()
    return (TransformerConfig(src_vocab=len(task.src_tokenizer), tgt_vocab=len(task.tgt_tokenizer),
                              d_model=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2,
                              d_ff=128, dropout=0.0, max_len=16, pad_id=PAD_ID),
            Recipe(steps=300, batch_size=64, lr=2e-3, warmup=40, schedule="noam", smoothing=0.1,
                   grad_clip=None, eval_every=50))


@dataclass
class TranslationRun:
    """What :func:`train_translation` returns: the trained ``model``, its
    ``task`` and held-out ``test`` sentences, the :class:`~dldna.training.FitResult`
    of training (``result.evals``: validation accuracy every
    ``recipe.eval_every`` steps) and ``accuracy``, the exact match of greedy
    decoding on ``test`` at the end."""

    model: Transformer
    task: TranslationTask
    test: list[Example]
    result: FitResult
    accuracy: float

    @property
    def history(self):
        return self.result.history

    @property
    def seconds(self) -> float:
        return self.result.wall_s

    def at(self, step: int) -> Transformer:
        """The model as it was after ``step`` (kept with ``snapshots=``), in eval mode."""
        if step not in self.result.snapshots:
            kept = sorted(self.result.snapshots)
            raise ValueError(f"No se guardó el paso {step}: pídelo con "
                             f"train_translation(snapshots=({step},)); guardados: {kept}.")
        with torch.random.fork_rng(devices=[]):  # building it must not move the reader's random stream
            model = Transformer(self.model.config).to(checks.device_of(self.model))
        model.load_state_dict(self.result.snapshots[step])
        return model.eval()


def train_translation(*, recipe: Recipe | None = None, seed: int = 0, device=None,
                      held_out: int = 1000, progress: bool = True,
                      desc: str = "traduciendo", snapshots: Sequence[int] = ()) -> TranslationRun:
    """Train the chapter's Transformer (:func:`setup`) on :class:`TranslationTask`.

    The ``held_out`` test sentences are drawn first and never used for
    training; training is :func:`dldna.tasks.train` with ``recipe`` (default:
    the chapter's, :func:`setup`); the model is built after seeding with
    ``seed``, so a run is deterministic on a CPU. ``snapshots`` (steps) keeps
    the weights of those steps in ``result.snapshots``; :meth:`TranslationRun.at`
    rebuilds the model of one of them.
    """
    held_out = checks.positive_int(held_out, "held_out (frases de prueba)")
    seed = checks.non_negative_int(seed, "seed (semilla)")
    _check_recipe(recipe, optional=True)
    progress = checks.boolean(progress, "progress")
    device = checks.device(device)
    task = TranslationTask()
    config, default = setup(task)
    recipe = default if recipe is None else recipe
    test = task.test_set(held_out)
    runtime.seed_everything(seed)
    model = Transformer(config)
    result = train(model, task, recipe, device=device, seed=seed, progress=progress, desc=desc,
                   snapshots=snapshots)
    score = exact_match(task, greedy_decoder(model, task.max_target_len), test,
                        device=result.device)
    return TranslationRun(model, task, test, result, score.accuracy)


# ---------------------------------------------------------------------------
# Looking at a trained model's attention
# ---------------------------------------------------------------------------


@dataclass
class AttentionRecord:
    """Every attention weight of one translation, ready to plot or explore.

    ``in_tokens`` are the decoder's inputs (``<bos>`` and the English words),
    ``out_tokens`` the words they produced (the English words and ``<eos>``):
    row ``i`` of ``decoder``/``cross`` is the query that produced
    ``out_tokens[i]``. Shapes: ``encoder (L, H, S, S)``, ``decoder (L, H, T, T)``,
    ``cross (L, H, T, S)``.
    """

    src_tokens: list[str]
    in_tokens: list[str]
    out_tokens: list[str]
    encoder: torch.Tensor
    decoder: torch.Tensor
    cross: torch.Tensor


def _model_and_task(model, task) -> torch.device:
    """The device of ``model`` (a Transformer that records its attention maps), after checking both."""
    checks.module(model, "model")
    if not callable(getattr(model, "attention_maps", None)):
        raise TypeError(f"model debe ser un dldna.transformer.Transformer (con attention_maps); "
                        f"se recibió {type(model).__name__}.")
    # Any task with the two tokenizers of a sequence-to-sequence task (a TranslationTask, or
    # chapter 9b's TextToTextTask that mixes it with others).
    if not isinstance(task, Task) or not all(hasattr(task, a) for a in ("src_tokenizer", "tgt_tokenizer")):
        raise TypeError(f"task debe ser una tarea de traducción (TranslationTask o TextToTextTask); "
                        f"se recibió {type(task).__name__}.")
    return checks.device_of(model)


def attention_record(model, task: TranslationTask, spanish: str | Sequence[str],
                     english: str | Sequence[str] | None = None) -> AttentionRecord:
    """Run ``model`` on one sentence and collect its attention weights.

    Without ``english`` the model's own greedy translation is used; with it,
    that translation is fed to the decoder (teacher forcing).
    """
    device = _model_and_task(model, task)
    src_tok, tgt_tok = task.src_tokenizer, task.tgt_tokenizer
    _words(spanish)  # a text or a list of words, refused in Spanish otherwise
    if english is not None:
        _words(english)
    src = torch.tensor([src_tok.encode(spanish)], device=device)
    if english is None:
        out_ids = strip_output(greedy_decode(model, src, task.max_target_len, BOS_ID, EOS_ID)[0])
    else:
        out_ids = tgt_tok.encode(english)
    training = model.training
    model.eval()
    with torch.no_grad():
        model(src, torch.tensor([[BOS_ID, *out_ids]], device=device))
        maps = model.attention_maps()
    model.train(training)
    stack = {k: torch.stack([m[0] for m in v]).cpu() for k, v in maps.items()}
    words = tgt_tok.decode(out_ids)
    return AttentionRecord(src_tok.split(spanish), ["<bos>", *words], [*words, "<eos>"],
                           stack["encoder"], stack["decoder"], stack["cross"])


def alignment_accuracy(model, task: TranslationTask, examples: Sequence[Example]) -> torch.Tensor:
    """How often each cross-attention head looks at the right Spanish word.

    For every English word of every example (teacher forcing on the
    reference translation, ``<eos>`` excluded), a head *hits* when its
    largest weight falls on one of the Spanish words that the grammar aligns
    with that word (:meth:`Sentence.alignment`). Returns the hit rate of each
    head, ``(layers, heads)``.
    """
    device = _model_and_task(model, task)
    if isinstance(examples, (str, bytes)) or not isinstance(examples, Sequence) or not examples \
            or not all(isinstance(ex, Example) for ex in examples):
        raise TypeError("examples debe ser una lista no vacía de ejemplos (Example) de la tarea, "
                        "p. ej. task.test_set(100).")
    batch = make_batch([task.encode(ex) for ex in examples]).to(device)
    training = model.training
    model.eval()
    with torch.no_grad():
        model(batch.src, batch.tgt_in)
        cross = torch.stack(model.attention_maps()["cross"]).cpu()  # (L, B, H, T, S)
    model.train(training)
    gold = torch.zeros(cross.shape[1], cross.shape[3], cross.shape[4], dtype=torch.bool)
    counted = torch.zeros(cross.shape[1], cross.shape[3], dtype=torch.bool)
    for b, ex in enumerate(examples):
        for i, cols in enumerate(parse_spanish(ex.source).alignment()):
            gold[b, i, cols] = True
            counted[b, i] = True
    pick = cross.argmax(dim=-1)  # (L, B, H, T)
    hit = gold[None, :, None].expand(cross.shape[0], -1, cross.shape[2], -1, -1).gather(
        -1, pick[..., None])[..., 0]
    mask = counted[None, :, None].expand_as(hit)
    return (hit & mask).sum(dim=(1, 3)).float() / mask.sum(dim=(1, 3)).float()


# ---------------------------------------------------------------------------
# Benchmark (``make bench``)
# ---------------------------------------------------------------------------


def benchmark(device=None, quick: bool = False) -> list[BenchResult]:
    """Rows of ``make bench``: the chapter's recipe, greedy exact match on 1,000
    unseen sentences; seed 0 alone, then seeds 0, 1 and 2 trained together."""
    return benchmark_seeds(TranslationTask, setup, device=device, quick=quick, claim=0.99,
                           note="exactitud de frase (voraz)")
