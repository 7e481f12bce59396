"""Language models from the book's own pieces: GPT-style, BERT-style, and their measures.

One implementation, :class:`LanguageModel`: token embeddings, the
:class:`dldna.transformer.Encoder` stack and an output layer tied to the
embeddings. With ``causal=True`` every position sees only itself and the
positions before it (the causal mask of chapter 4): a **decoder-only** model
(GPT) that predicts the next token. With ``causal=False`` every position sees
the whole sentence: an **encoder-only** model (BERT) that predicts hidden
(masked) tokens. The stacks are the same; only the mask and the objective
change.

Objectives
    :func:`causal_lm_loss` (next token, teacher forcing) and
    :func:`masked_lm_loss` on the inputs of :func:`mask_tokens` (BERT's
    80/10/10 rule).

Measures
    :func:`perplexity` of a causal model, against :class:`BigramModel`
    and :func:`uniform_perplexity`; :func:`next_word_probs`;
    :func:`contextual_vectors` and :func:`sense_similarities` (the two senses
    of *banco*); :class:`SequenceClassifier` with :func:`accuracy`
    (the ``[CLS]`` vector).

Training
    :func:`pretrain` trains a fresh model of either kind with
    :data:`RECIPE` through :func:`dldna.training.fit`, the package's general training loop.

Batches
    :func:`encode_sentences` pads sentences (BOS + words + EOS) into a
    ``LongTensor``; :func:`sentence_batches` and :func:`masked_batches` give
    the ``batches(step)`` functions of :func:`dldna.training.fit`;
    :func:`prompt_step` turns a causal model and a prompt into the step
    function of :mod:`dldna.decoding`.

Shapes follow ``torch.nn``: ids ``(batch, seq)`` → logits
``(batch, seq, vocab)``; boolean masks, ``True`` = may attend.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dldna import checks, corpus, masking, runtime
from dldna.llama import LlamaLM
from dldna.tasks.base import BOS_ID, PAD_ID, BenchResult, Tokenizer, pad_batch
from dldna.training import FitResult, Recipe, _check_recipe, fit
from dldna.transformer import Encoder, InputEmbedding

__all__ = [
    "IGNORE",
    "RECIPE",
    "LanguageModel",
    "pretrain",
    "SequenceClassifier",
    "causal_lm_loss",
    "mask_tokens",
    "masked_lm_loss",
    "classification_loss",
    "SENTINELS",
    "span_corrupt",
    "span_restore",
    "encode_sentences",
    "sentence_batches",
    "masked_batches",
    "perplexity",
    "BigramModel",
    "uniform_perplexity",
    "next_word_probs",
    "prompt_step",
    "contextual_vectors",
    "sense_similarities",
    "accuracy",
    "benchmark",
]

#: Label of the positions that the loss ignores (PyTorch's ``cross_entropy`` default).
IGNORE = -100


class LanguageModel(nn.Module):
    """Encoder stack + output layer: a GPT-style (``causal=True``) or BERT-style model.

    Args:
        vocab: vocabulary size (PAD is ``0``, as in :mod:`dldna.tasks`).
        d_model, n_heads, n_layers, d_ff, dropout: as in
            :class:`dldna.transformer.TransformerConfig`.
        max_len: the longest sequence; positions are learned (as in GPT and BERT).
        causal: mask the future (next-token prediction) or not (masked tokens).
        num_kv_heads: key/value heads of every self-attention (grouped-query
            attention, :class:`dldna.attention.MultiHeadAttention`); default ``n_heads``.

    The output layer reuses the token embedding matrix (tied weights, as in
    GPT-2 and BERT). ``[CLS]`` is the BOS token at position 0.

    Shapes: ids ``(batch, seq)`` → logits ``(batch, seq, vocab)``.
    """

    def __init__(self, vocab: int, *, d_model: int = 64, n_heads: int = 4, n_layers: int = 2,
                 d_ff: int = 128, dropout: float = 0.0, max_len: int = 32, causal: bool = True,
                 num_kv_heads: int | None = None):
        super().__init__()
        checks.positive_int(vocab, "vocab", minimum=4)
        if not isinstance(causal, bool):
            raise TypeError(f"causal debe ser True o False; se recibió {causal!r}.")
        self.vocab, self.causal = vocab, causal
        self.embed = InputEmbedding(vocab, d_model, max_len=max_len, positional="learned",
                                    dropout=dropout, pad_id=PAD_ID)
        self.encoder = Encoder(d_model, n_heads, n_layers, d_ff, dropout, num_kv_heads=num_kv_heads)
        self.head = nn.Linear(d_model, vocab)
        self.head.weight = self.embed.token.weight

    def mask(self, ids: Tensor) -> Tensor:
        """``(batch, 1, seq, seq)``: padding never attended; with ``causal``, nor the future."""
        pad = masking.padding_mask(token_ids=ids, pad_id=PAD_ID)
        if not self.causal:
            return pad
        return masking.combine(pad, masking.causal_mask(ids.shape[1], device=ids.device))

    def hidden(self, ids: Tensor) -> Tensor:
        """The contextual vectors ``(batch, seq, d_model)`` (output of the last layer)."""
        ids = checks.ids(ids, "ids", vocab_size=self.vocab, like=self, ndim=2)
        return self.encoder(self.embed(ids), self.mask(ids))

    def forward(self, ids: Tensor) -> Tensor:
        return self.head(self.hidden(ids))

    def attention_maps(self) -> list[Tensor]:
        """Weights of the last call, one ``(batch, heads, seq, seq)`` per layer."""
        return self.encoder.attention_maps()


class SequenceClassifier(nn.Module):
    """A sentence classifier on top of a language model.

    ``body`` is a :class:`LanguageModel` (pre-trained or fresh); a linear
    layer maps one vector per sentence to ``n_classes`` logits. ``pooling``
    chooses that vector: ``"cls"``, the vector of ``[CLS]`` (position 0, as in
    BERT), or ``"last"``, the vector of the last real token (EOS, as in GPT:
    in a causal model only the last position has seen the whole sentence).

    Shapes: ids ``(batch, seq)`` → logits ``(batch, n_classes)``.
    """

    def __init__(self, body: LanguageModel, n_classes: int, pooling: str = "cls"):
        super().__init__()
        if not isinstance(body, LanguageModel):
            raise TypeError(f"body debe ser un LanguageModel; se recibió {type(body).__name__}.")
        checks.positive_int(n_classes, "n_classes", minimum=2)
        self.pooling = checks.one_of(pooling, "pooling", ("cls", "last"))
        self.body = body
        self.classify = nn.Linear(body.encoder.d_model, n_classes)

    def forward(self, ids: Tensor) -> Tensor:
        ids = checks.ids(ids, "ids", vocab_size=self.body.vocab, like=self, ndim=2)
        hidden = self.body.hidden(ids)
        if self.pooling == "cls":
            return self.classify(hidden[:, 0])
        last = (ids != PAD_ID).sum(1) - 1
        # A row of padding only has no last token: index -1 would silently read the last column.
        if checks.reads_values(last) and bool((last < 0).any()):
            raise ValueError("Con pooling='last' cada frase necesita al menos un tóken que no sea "
                             "relleno (PAD); ids tiene una fila solo de relleno.")
        return self.classify(hidden[torch.arange(len(ids), device=ids.device), last])


# ---------------------------------------------------------------------------
# Batches
# ---------------------------------------------------------------------------


def encode_sentences(tok: Tokenizer, sentences: Sequence) -> Tensor:
    """BOS + words + EOS for each sentence (a text, a list of words or an object
    with ``.words``), padded with PAD: ``LongTensor (n, longest + 2)``."""
    _tokenizer(tok)
    if isinstance(sentences, str) or not isinstance(sentences, Sequence):
        raise TypeError("sentences debe ser una lista de frases (textos, listas de palabras u objetos con "
                        f".words); se recibió {checks._shown(sentences)}. Para una sola frase: [frase].")
    if not len(sentences):
        raise ValueError("Hace falta al menos una frase.")
    encoded = [tok.encode(getattr(s, "words", s), bos=True, eos=True) for s in sentences]
    for i, ids in enumerate(encoded):
        if len(ids) == 2:  # BOS and EOS only
            raise ValueError(f"La frase {i} no tiene palabras: {sentences[i]!r}.")
    return pad_batch(encoded)


def _tokenizer(tok) -> Tokenizer:
    if not isinstance(tok, Tokenizer):
        raise TypeError("tok debe ser un Tokenizer (p. ej. dldna.corpus.tokenizer()); "
                        f"se recibió {checks._shown(tok)}.")
    return tok


def _sentence_ids(ids, vocab: int | None = None) -> Tensor:
    """``ids`` as a ``(n ≥ 1, seq)`` long tensor of sentences, each with a token that is not PAD."""
    ids = checks.ids(ids, "ids", vocab_size=vocab, ndim=2)
    if not len(ids) or not ids.shape[1]:
        raise ValueError(f"ids no tiene frases: tiene forma {tuple(ids.shape)}.")
    if vocab is None and checks.reads_values(ids) and int(ids.min()) < 0:
        raise ValueError(f"ids contiene el id {int(ids.min())}: los ids de tókenes empiezan en 0.")
    if checks.reads_values(ids) and not bool((ids != PAD_ID).any(1).all()):
        raise ValueError("Cada frase de ids necesita al menos un tóken que no sea relleno (PAD); "
                         "hay una fila solo de relleno.")
    return ids


def _pair(batch, names: tuple[str, str]) -> tuple:
    """A batch ``(a, b)`` of two items (inputs and labels)."""
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise TypeError(f"batch debe ser un par ({names[0]}, {names[1]}); se recibió {checks._shown(batch)}.")
    return tuple(batch)


def _rows(n: int, batch_size: int, seed: int, step: int) -> Tensor:
    generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
    return torch.randint(n, (batch_size,), generator=generator)


def sentence_batches(ids: Tensor, batch_size: int, seed: int = 0) -> Callable[[int], Tensor]:
    """``batches(step)`` for :func:`dldna.training.fit`: ``batch_size`` rows of
    ``ids`` drawn at random (the same for the same seed and step), trimmed
    of columns that are only padding."""
    ids = _sentence_ids(ids)
    checks.positive_int(batch_size, "batch_size")
    seed = checks.non_negative_int(seed, "seed")

    def batch(step: int) -> Tensor:
        step = checks.non_negative_int(step, "step")
        rows = ids[_rows(len(ids), batch_size, seed, step)]
        return rows[:, : int((rows != PAD_ID).sum(1).max())]

    return batch


def _mask_args(ids, mask_id, first_word, vocab, prob) -> Tensor:
    """The arguments of :func:`mask_tokens`, checked; returns ``ids`` as a long tensor."""
    vocab = checks.positive_int(vocab, "vocab")
    mask_id = checks.non_negative_int(mask_id, "mask_id")
    first_word = checks.non_negative_int(first_word, "first_word")
    if not mask_id < first_word < vocab:
        raise ValueError(f"Hace falta mask_id < first_word < vocab (los tókenes especiales, [MASK] "
                         f"incluido, van antes de las palabras); se recibió mask_id={mask_id}, "
                         f"first_word={first_word}, vocab={vocab}.")
    checks.probability(prob, "prob", allow_zero=False)
    return checks.ids(ids, "ids", vocab_size=vocab, ndim=2)


def mask_tokens(ids: Tensor, mask_id: int, first_word: int, vocab: int, *, prob: float = 0.15,
                generator: torch.Generator | None = None) -> tuple[Tensor, Tensor]:
    """BERT's corruption: choose ``prob`` of the words; of those, 80 % become
    ``mask_id``, 10 % a random word, 10 % stay as they are.

    Only words (ids ``>= first_word``) are chosen, never PAD, BOS, EOS or the
    mask itself; every sentence gets at least one (with sentences of a few
    words, 15 % would often choose none).

    Returns ``(inputs, labels)``, both ``(batch, seq)``: ``labels`` holds the
    original id at the chosen positions and :data:`IGNORE` elsewhere.
    """
    ids = _mask_args(ids, mask_id, first_word, vocab, prob)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError("generator debe ser un torch.Generator o None; "
                        f"se recibió {checks._shown(generator)}.")
    is_word = ids >= first_word
    if not bool(is_word.any(1).all()):
        raise ValueError("Cada frase necesita al menos una palabra que se pueda enmascarar.")
    u = torch.rand(ids.shape, generator=generator)
    chosen = is_word & (u < prob)
    # The word with the lowest draw is chosen when none was.
    lowest = torch.where(is_word, u, torch.full_like(u, 2.0)).argmin(1)
    chosen[torch.arange(len(ids)), lowest] |= ~chosen.any(1)
    labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE))
    action = torch.rand(ids.shape, generator=generator)
    random_words = torch.randint(first_word, vocab, ids.shape, generator=generator)
    inputs = ids.clone()
    inputs[chosen & (action < 0.8)] = mask_id
    swap = chosen & (action >= 0.8) & (action < 0.9)
    inputs[swap] = random_words[swap]
    return inputs, labels


def masked_batches(ids: Tensor, batch_size: int, mask_id: int, first_word: int, vocab: int, *,
                   prob: float = 0.15, seed: int = 0,
                   mask_fn: Callable[..., tuple[Tensor, Tensor]] | None = None,
                   ) -> Callable[[int], tuple[Tensor, Tensor]]:
    """``batches(step)`` of ``(inputs, labels)`` from :func:`mask_tokens`: a new
    corruption of new rows at every step: *dynamic* masking, as in RoBERTa
    (BERT masked statically: its data were duplicated 10 times, each copy with
    fixed masks).

    ``mask_fn`` replaces :func:`mask_tokens` (same signature), so that a reader
    can train with a rule of their own (chapter 9, exercise 2).
    """
    _mask_args(ids, mask_id, first_word, vocab, prob)
    if mask_fn is not None:
        checks.function(mask_fn, "mask_fn", "una función como mask_tokens (misma firma)")
    rows = sentence_batches(ids, batch_size, seed)
    # Looked up at call time, not bound as a default, so that the default is the
    # module's current mask_tokens.
    corrupt = mask_tokens if mask_fn is None else mask_fn

    def batch(step: int) -> tuple[Tensor, Tensor]:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step + 7)
        return corrupt(rows(step), mask_id, first_word, vocab, prob=prob, generator=generator)

    return batch


#: The sentinels of :func:`span_corrupt`, one per removed span, in order.
SENTINELS = tuple(f"<X{i}>" for i in range(10))


def _words(words, name: str) -> list[str]:
    """A sentence as a list of words (a text would be split into letters)."""
    if isinstance(words, str) or not isinstance(words, (list, tuple)):
        hint = " Para partir un texto en palabras: texto.split()." if isinstance(words, str) else ""
        raise TypeError(f"{name} debe ser una lista de palabras; se recibió {checks._shown(words)}.{hint}")
    for word in words:
        if not isinstance(word, str):
            raise TypeError(f"{name} debe contener palabras (textos); tiene {checks._shown(word)}.")
    return list(words)


def span_corrupt(words: Sequence[str], rng, *, rate: float = 0.15,
                 mean_span: int = 3) -> tuple[list[str], list[str]]:
    """T5's span corruption of one sentence (a list of words).

    About ``rate`` of the words, in spans of about ``mean_span`` words
    (at least one span), are removed; each span is replaced in the input by
    the next sentinel of :data:`SENTINELS`, and the output lists each
    sentinel followed by the words it replaced, then a last sentinel.
    ``rng`` is a ``random.Random``. :func:`span_restore` undoes it.
    """
    words = _words(words, "words")
    checks.rng(rng)
    if not words:
        raise ValueError("La frase no tiene palabras que corromper.")
    checks.probability(rate, "rate", allow_zero=False, allow_one=False)
    checks.positive_int(mean_span, "mean_span")
    n_spans = max(1, min(round(len(words) * rate / mean_span), len(SENTINELS) - 1, len(words) // 2))
    length = max(1, round(len(words) * rate / n_spans))
    starts: list[int] = []
    for start in rng.sample(range(len(words)), len(words)):
        if all(abs(start - other) > length for other in starts):
            starts.append(start)
        if len(starts) == n_spans:
            break
    inputs, targets = [], []
    position, spans = 0, sorted(starts)
    for i, start in enumerate(spans):
        inputs += words[position:start] + [SENTINELS[i]]
        targets += [SENTINELS[i]] + words[start:start + length]
        position = start + length
    inputs += words[position:]
    targets.append(SENTINELS[len(spans)])
    return inputs, targets


def span_restore(inputs: Sequence[str], targets: Sequence[str]) -> list[str]:
    """The original sentence from the two halves of :func:`span_corrupt`."""
    inputs, targets = _words(inputs, "inputs"), _words(targets, "targets")
    spans: dict[str, list[str]] = {}
    current = None
    for word in targets:
        if word in SENTINELS:
            current = word
            spans[word] = []
        elif current is not None:
            spans[current].append(word)
    out: list[str] = []
    for word in inputs:
        if word in SENTINELS and word not in spans:
            raise ValueError(f"El centinela {word} de inputs no está en targets: las dos mitades no son "
                             "de la misma frase.")
        out += spans[word] if word in SENTINELS else [word]
    return out


# ---------------------------------------------------------------------------
# Losses (loss_fn(model, batch) for dldna.training.fit)
# ---------------------------------------------------------------------------


def _next_token_ids(ids, vocab: int | None, *, predict: bool = True) -> Tensor:
    """``ids`` ``(batch ≥ 1, seq ≥ 2)`` of ``vocab``: tokens to read and the next ones to predict;
    with ``predict``, at least one of those is not PAD (a mean over no token is NaN)."""
    ids = checks.ids(ids, "ids", vocab_size=vocab, ndim=2)
    if ids.shape[1] < 2 or not len(ids):
        raise ValueError(f"ids necesita al menos una secuencia de 2 tókenes (uno que leer y el siguiente "
                         f"que predecir); tiene forma {tuple(ids.shape)}.")
    if predict and checks.reads_values(ids) and not bool((ids[:, 1:] != PAD_ID).any()):
        raise ValueError("ids no tiene ningún tóken que predecir: después del primero todo es relleno (PAD).")
    return ids


def _model_ids(model, ids) -> Tensor:
    """``model`` checked, and ``ids`` of its vocabulary with something to predict."""
    checks.module(model, "model")
    return _next_token_ids(ids, getattr(model, "vocab", None))


def causal_lm_loss(model: nn.Module, ids: Tensor) -> Tensor:
    """Mean cross-entropy of predicting ``ids[:, 1:]`` from ``ids[:, :-1]`` (PAD ignored)."""
    ids = _model_ids(model, ids)
    logits = model(ids[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten(), ignore_index=PAD_ID)


def _labels(labels, logits: Tensor, ignore: int | None = None) -> Tensor:
    """``labels`` as a long tensor on ``logits``' device, each a class of ``logits`` (or ``ignore``)."""
    labels = checks.as_tensor(labels, "labels")
    kept = labels[labels != ignore] if ignore is not None and checks.reads_values(labels) else labels
    checks.ids(kept, "labels", vocab_size=logits.shape[-1])
    return checks.ids(labels, "labels", like=logits)


def _class_logits(logits: Tensor) -> Tensor:
    """``logits`` of a classifier: one row ``(batch, n_classes)`` per sentence."""
    if logits.dim() != 2:
        raise ValueError(f"model debe dar una fila de logits por frase, forma (batch, clases), como "
                         f"SequenceClassifier; da forma {tuple(logits.shape)}.")
    return logits


def masked_lm_loss(model: nn.Module, batch: tuple[Tensor, Tensor]) -> Tensor:
    """Mean cross-entropy on the chosen positions of :func:`mask_tokens` only."""
    checks.module(model, "model")
    inputs, labels = _pair(batch, ("inputs", "labels"))
    logits = model(inputs)
    labels = _labels(labels, logits, IGNORE)
    if labels.shape != logits.shape[:-1]:
        raise ValueError(f"labels debe tener la forma de inputs {tuple(logits.shape[:-1])}; "
                         f"tiene {tuple(labels.shape)}.")
    if checks.reads_values(labels) and not bool((labels != IGNORE).any()):
        raise ValueError(f"Ninguna posición de labels está elegida (todas valen {IGNORE}): la pérdida "
                         "no tendría con qué promediar.")
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE)


def classification_loss(model: nn.Module, batch: tuple[Tensor, Tensor]) -> Tensor:
    """Cross-entropy of a :class:`SequenceClassifier` on ``(ids, labels)``."""
    checks.module(model, "model")
    ids, labels = _pair(batch, ("ids", "labels"))
    logits = _class_logits(model(ids))
    labels = _labels(labels, logits)
    if labels.shape != logits.shape[:1]:
        raise ValueError(f"labels debe tener una clase por frase, forma ({len(logits)},); "
                         f"tiene {tuple(labels.shape)}.")
    return F.cross_entropy(logits, labels)


# ---------------------------------------------------------------------------
# Pre-training
# ---------------------------------------------------------------------------

#: The chapter's pre-training recipe, for both kinds: 300 steps of 32 sentences
#: (about five epochs of a 2000-sentence corpus), peak rate 3·10⁻³ after 30
#: warm-up steps, linear decay. Short, so that three seeds of each kind train
#: within the chapter's time; the same on every device.
RECIPE = Recipe(steps=300, batch_size=32, lr=3e-3, warmup=30)


def pretrain(ids: Tensor, vocab: int, *, causal: bool, mask_id: int | None = None,
             first_word: int | None = None, recipe: Recipe = RECIPE, seed: int = 0, device=None,
             progress: bool = True, desc: str | None = None,
             mask_fn: Callable[..., tuple[Tensor, Tensor]] | None = None,
             architecture: Callable[..., nn.Module] | None = None,
             **model_kwargs) -> tuple[LanguageModel, FitResult]:
    """Pre-train a fresh :class:`LanguageModel` on the sentences ``ids`` (``(n, seq)``).

    ``causal=True``: next-token prediction (:func:`causal_lm_loss`, GPT);
    ``causal=False``: masked tokens (:func:`masked_lm_loss` on
    :func:`masked_batches`, BERT), which needs ``mask_id`` and ``first_word``;
    ``mask_fn`` replaces :func:`mask_tokens` there (same signature).
    ``seed`` seeds the initialisation (:func:`dldna.runtime.seed_everything`),
    the rows drawn and the corruption; ``model_kwargs`` go to
    :class:`LanguageModel`, or to ``architecture`` (a class called as
    ``architecture(vocab, causal=causal, **model_kwargs)``, e.g.
    :class:`dldna.llama.LlamaLM`), which the same data, seed and recipe then
    train. Returns the model, in eval mode, and the
    :class:`~dldna.training.FitResult`.
    """
    seed = checks.non_negative_int(seed, "seed")
    if causal is not True and causal is not False:
        raise TypeError(f"causal debe ser True o False; se recibió {causal!r}.")
    vocab = checks.positive_int(vocab, "vocab", minimum=4)
    ids = _sentence_ids(ids, vocab)
    _check_recipe(recipe)
    if desc is not None:
        checks.text(desc, "desc")
    if causal:
        batches, loss = sentence_batches(ids, recipe.batch_size, seed), causal_lm_loss
    else:
        if mask_id is None or first_word is None:
            raise ValueError("Un modelo enmascarado (causal=False) necesita mask_id y first_word: "
                             "el id de [MASK] y el de la primera palabra del vocabulario.")
        batches = masked_batches(ids, recipe.batch_size, mask_id, first_word, vocab, seed=seed,
                                 mask_fn=mask_fn)
        loss = masked_lm_loss
    if architecture is None:
        architecture = LanguageModel
    elif not callable(architecture):
        raise TypeError("architecture debe ser una clase de modelo, como dldna.llama.LlamaLM; "
                        f"se recibió {type(architecture).__name__}.")
    try:  # a misspelt argument is named here, before any work
        inspect.signature(architecture).bind(vocab, causal=causal, **model_kwargs)
    except TypeError:
        raise TypeError(f"{getattr(architecture, '__name__', 'architecture')} no tiene los argumentos "
                        f"{sorted(model_kwargs)}; sus argumentos son "
                        f"{list(inspect.signature(architecture).parameters)}.") from None
    except ValueError:  # no signature to read (a builtin): the call itself will tell
        pass
    runtime.seed_everything(seed)
    model = architecture(vocab, causal=causal, **model_kwargs)
    result = fit(model, batches, loss, recipe, device=device, seed=seed, progress=progress,
                 desc=desc or ("GPT" if causal else "BERT"))
    return model, result


# ---------------------------------------------------------------------------
# Measures
# ---------------------------------------------------------------------------


def _target_log_probs(log_probs: Tensor, ids: Tensor) -> Tensor:
    """Log-probabilities ``(n,)`` of every real next token of ``ids``."""
    target = ids[:, 1:]
    picked = log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return picked[target != PAD_ID]


@torch.no_grad()
def perplexity(model: nn.Module, ids: Tensor) -> float:
    """``exp`` of the mean negative log-likelihood of every next token of
    ``ids`` (after BOS, EOS included, PAD excluded) under a causal model."""
    ids = _model_ids(model, ids)
    was_training = model.training
    model.eval()
    try:
        device = next(model.parameters()).device
        ids = ids.to(device)
        log_probs = torch.log_softmax(model(ids[:, :-1]).float(), -1)
    finally:
        model.train(was_training)
    return math.exp(-float(_target_log_probs(log_probs, ids).mean()))


class BigramModel:
    """The next token depends only on the previous one: ``P(b | a)`` counted on
    training sentences, with add-``alpha`` smoothing over the tokens a
    sentence can continue with (every id except PAD and BOS).

    The baseline every language model must beat: it knows which words follow
    which, but nothing further back.
    """

    def __init__(self, ids: Tensor, vocab: int, alpha: float = 0.1):
        checks.positive_number(alpha, "alpha")
        # PAD and BOS never follow: at least one other token must.
        self.vocab = vocab = checks.positive_int(vocab, "vocab", minimum=3)
        ids = _next_token_ids(ids, vocab, predict=False).cpu()
        counts = torch.zeros(vocab, vocab, dtype=torch.float64)
        prev, nxt = ids[:, :-1].flatten(), ids[:, 1:].flatten()
        real = nxt != PAD_ID
        counts.index_put_((prev[real], nxt[real]), torch.ones(int(real.sum()), dtype=torch.float64),
                          accumulate=True)
        allowed = torch.ones(vocab, dtype=torch.bool)
        allowed[[PAD_ID, BOS_ID]] = False
        smoothed = (counts + alpha) * allowed
        self.probs = smoothed / smoothed.sum(1, keepdim=True)

    def log_probs(self, ids: Tensor) -> Tensor:
        """``(batch, seq, vocab)`` log-probabilities of the next token at each position."""
        return self.probs[checks.ids(ids, "ids", vocab_size=self.vocab).cpu()].log()

    def perplexity(self, ids: Tensor) -> float:
        """Like :func:`perplexity`, for the bigram model."""
        ids = _next_token_ids(ids, self.vocab).cpu()
        return math.exp(-float(_target_log_probs(self.log_probs(ids[:, :-1]), ids).mean()))


def uniform_perplexity(vocab: int) -> float:
    """The perplexity of a model that spreads its probability equally over the
    ``vocab - 2`` tokens that can follow (all but PAD and BOS): ``vocab - 2``."""
    return float(checks.positive_int(vocab, "vocab", minimum=3) - 2)


def _device(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


@torch.no_grad()
def next_word_probs(model: LanguageModel, tok: Tokenizer, prompt: str | Sequence[str],
                    k: int = 5) -> list[tuple[str, float]]:
    """The ``k`` most likely next tokens after ``prompt`` (BOS is prepended),
    with their probabilities, most likely first."""
    checks.module(model, "model")
    _tokenizer(tok)
    checks.positive_int(k, "k")
    model.eval()
    ids = torch.tensor([tok.encode(prompt, bos=True)], device=_device(model))
    probs = torch.softmax(model(ids)[0, -1].float(), -1)
    top = probs.topk(min(k, len(probs)))
    return [(tok.id_to_token(int(i)), float(p)) for p, i in zip(top.values, top.indices, strict=True)]


def prompt_step(model: LanguageModel, prompt: Tensor) -> Callable[[Tensor, Tensor], Tensor]:
    """A step function for :mod:`dldna.decoding`: continue ``prompt`` ``(B, P)``
    (ids starting with BOS, the same length for every row).

    The decoders start each row with BOS; the step function puts the row's
    prompt in its place, so that ``greedy_decode(step, B, max_len, BOS_ID,
    EOS_ID)`` returns the continuation of each prompt.
    """
    checks.module(model, "model")
    prompt = checks.ids(prompt, "prompt", vocab_size=getattr(model, "vocab", None), like=model, ndim=2)
    if not prompt.shape[1]:
        raise ValueError("prompt debe empezar por BOS: tiene 0 columnas.")

    def step(prefix: Tensor, rows: Tensor) -> Tensor:
        # A decoder run with a batch larger than the prompt's asks for rows that do not exist.
        if checks.reads_values(rows) and int(rows.max()) >= len(prompt):
            raise ValueError(f"El decodificador pide la fila {int(rows.max())} del prompt, que solo tiene "
                             f"{len(prompt)}: usa un lote de {len(prompt)} al decodificar.")
        return model(torch.cat([prompt[rows], prefix[:, 1:]], dim=1))[:, -1]

    return step


@torch.no_grad()
def contextual_vectors(model: LanguageModel, tok: Tokenizer, sentences: Sequence,
                       word: str) -> Tensor:
    """The vector of the first ``word`` of each sentence, from the model's last
    layer: ``(n, d_model)``. Raises ``ValueError`` if a sentence lacks it."""
    checks.module(model, "model")
    if not callable(getattr(model, "hidden", None)):
        raise TypeError(f"model debe ser un modelo de lenguaje con vectores contextuales (.hidden), como "
                        f"LanguageModel; se recibió {type(model).__name__}.")
    checks.text(word, "word")
    model.eval()
    ids = encode_sentences(tok, sentences).to(_device(model))
    target = tok.token_to_id(word)
    has = (ids == target).any(1)
    if not bool(has.all()):
        raise ValueError(f"La palabra {word!r} no está en todas las frases.")
    positions = (ids == target).int().argmax(1)
    return model.hidden(ids)[torch.arange(len(ids)), positions].float().cpu()


def _vectors(x, name: str) -> Tensor:
    """``(n ≥ 2, d)`` vectors with a direction: finite, with a norm that neither overflows nor is 0."""
    x = checks.features(x, name, ndim=2, what="(n, d)", finite=True)
    if len(x) < 2:
        raise ValueError(f"{name} necesita al menos 2 vectores (la media de sus pares); tiene {len(x)}.")
    norms = x.float().norm(dim=-1)
    if not bool(torch.isfinite(norms).all()) or not bool((norms > 0).all()):
        raise ValueError(f"{name} tiene un vector nulo, o tan grande o tan pequeño que su norma no cabe en "
                         "float32: su coseno no está definido.")
    return x


def sense_similarities(a: Tensor, b: Tensor) -> dict[str, float]:
    """Mean cosine between vectors of one group (``"a-a"``, ``"b-b"``, pairs of
    different rows) and across groups (``"a-b"``)."""
    a, b = (_vectors(x, name) for x, name in ((a, "a"), (b, "b")))
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a y b deben tener vectores del mismo tamaño; a tiene {a.shape[1]} y "
                         f"b {b.shape[1]}.")
    a, b = F.normalize(a.float(), dim=-1), F.normalize(b.float(), dim=-1)

    def within(x: Tensor) -> float:
        sims = x @ x.T
        n = len(x)
        return float((sims.sum() - sims.diagonal().sum()) / (n * (n - 1)))

    return {"a-a": within(a), "b-b": within(b), "a-b": float((a @ b.T).mean())}


@torch.no_grad()
def accuracy(model: nn.Module, ids: Tensor, labels: Tensor) -> float:
    """Fraction of ``ids`` rows whose predicted class equals ``labels``."""
    checks.module(model, "model")
    ids = checks.ids(ids, "ids", ndim=2)
    if not len(ids):
        raise ValueError("No hay frases que evaluar: la exactitud de un conjunto vacío no existe.")
    labels = checks.ids(labels, "labels", ndim=1)
    if len(labels) != len(ids):
        raise ValueError(f"Hay {len(ids)} frases y {len(labels)} etiquetas: hace falta una etiqueta "
                         "por frase.")
    was_training = model.training
    model.eval()
    try:
        device = _device(model)
        logits = _class_logits(model(ids.to(device)))
    finally:
        model.train(was_training)
    labels = _labels(labels, logits)
    return float((logits.argmax(-1).cpu() == labels.cpu()).float().mean())


# ---------------------------------------------------------------------------
# make bench
# ---------------------------------------------------------------------------


@torch.no_grad()
def _word_accuracy(model: LanguageModel, inputs: Tensor, labels: Tensor) -> float:
    """Top-1 accuracy at the positions whose label is not :data:`IGNORE`."""
    model.eval()
    device = _device(model)
    logits = model(inputs.to(device))
    keep = labels.to(device) != IGNORE
    return float((logits.argmax(-1)[keep] == labels.to(device)[keep]).float().mean())


def benchmark(device=None, quick: bool = False) -> list[BenchResult]:
    """Rows of ``make bench`` for chapters 9 and 10: its GPT and its BERT, seed 0; the GPT with
    grouped-query (2 key/value heads) and multi-query attention, and the Llama block.

    Both train with :data:`RECIPE` on the chapter's 2000 generated sentences
    and are scored on the held-out ones: the GPT by the next word (top-1; the
    note gives its perplexity and the bigram model's), the BERT by the masked
    word (top-1, one fixed corruption with the 80/10/10 rule). ``quick``: 5
    steps, to check the plumbing.
    """
    dev = checks.device(device)
    quick = checks.boolean(quick, "quick")
    tok = corpus.tokenizer()
    train_sentences = corpus.generate(2000, seed=0)
    ids = encode_sentences(tok, train_sentences)
    held = encode_sentences(tok, corpus.split_held_out(train_sentences, corpus.generate(1000, seed=1)))
    recipe = Recipe(steps=5, batch_size=RECIPE.batch_size, lr=RECIPE.lr, warmup=2) if quick else RECIPE
    mask_id = tok.token_to_id(corpus.MASK)
    rows = []
    gpt, fit_gpt = pretrain(ids, len(tok), causal=True, recipe=recipe, device=dev, progress=False)
    next_words = held[:, 1:].masked_fill(held[:, 1:] == PAD_ID, IGNORE)
    rows.append(BenchResult(
        "modelo de lenguaje GPT (siguiente palabra)", dev.type, recipe.steps, fit_gpt.wall_s,
        _word_accuracy(gpt, held[:, :-1], next_words),
        f"perplejidad {perplexity(gpt, held):.2f}; "
        f"bigramas {BigramModel(ids, len(tok)).perplexity(held):.2f}",
        fit_gpt.steps_per_s))
    bert, fit_bert = pretrain(ids, len(tok), causal=False, mask_id=mask_id, first_word=mask_id + 1,
                              recipe=recipe, device=dev, progress=False)
    inputs, labels = mask_tokens(held, mask_id, mask_id + 1, len(tok),
                                 generator=torch.Generator().manual_seed(0))
    rows.append(BenchResult("modelo enmascarado BERT (palabra tapada)", dev.type, recipe.steps,
                            fit_bert.wall_s, _word_accuracy(bert, inputs, labels), "", fit_bert.steps_per_s))
    # Chapter 10: fewer key/value heads, and the Llama block, on the same data and recipe.
    variants = (("GPT con GQA(2) (siguiente palabra)", {"num_kv_heads": 2}, "caché 1/2"),
                ("GPT con MQA (siguiente palabra)", {"num_kv_heads": 1}, "caché 1/4"),
                ("bloque Llama (siguiente palabra)", {"architecture": LlamaLM}, "RMSNorm, SwiGLU, RoPE"))
    for name, kwargs, note in variants:
        model, result = pretrain(ids, len(tok), causal=True, recipe=recipe, device=dev, progress=False,
                                 **kwargs)
        rows.append(BenchResult(name, dev.type, recipe.steps, result.wall_s,
                                _word_accuracy(model, held[:, :-1], next_words),
                                f"{note}; perplejidad {perplexity(model, held):.2f}", result.steps_per_s))
    return rows
