"""The encoder-decoder Transformer (Vaswani et al., 2017), built from the book's pieces.

The parts, in the order chapter 6 meets them:

* :class:`TransformerConfig`: every size of the model, validated (Spanish
  messages for the mistakes a reader can make), with :meth:`TransformerConfig.base`,
  the "base" model of the original paper;
* :class:`TokenEmbedding` (embedding × √d_model), :class:`PositionalEncoding`
  (a scheme of :mod:`dldna.positional`) and :class:`InputEmbedding`, which adds
  them and applies dropout;
* :class:`FeedForward`, the position-wise network ``W₂ act(W₁ x + b₁) + b₂``;
* :class:`EncoderLayer` and :class:`DecoderLayer`, each sub-layer wrapped in a
  residual connection and a layer normalisation, Pre-LN
  (``x + f(norm(x))``) or Post-LN (``norm(x + f(x))``) by ``norm_first``;
* :class:`Encoder` and :class:`Decoder`, the stacks (float inputs
  ``(batch, seq, d_model)``: the Vision Transformer reuses :class:`Encoder`);
* :class:`Transformer`, the whole model from token ids to logits, with
  :meth:`Transformer.encode`, :meth:`Transformer.decode`,
  :meth:`Transformer.log_probs` and :meth:`Transformer.attention_maps`;
* tools to look inside: :func:`count_parameters`, :func:`parameter_breakdown`,
  :func:`trace_shapes`, and :class:`DeepStack`, the small network that shows
  why residual connections keep gradients alive.

Conventions of the book: tensors are ``batch_first``; masks are boolean with
``True`` = may attend and come from :mod:`dldna.masking`; a query whose every
key is masked gets zero weights (see :func:`dldna.attention.softmax`).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, fields

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from dldna import checks, masking, positional
from dldna.attention import MultiHeadAttention, _check_heads

__all__ = [
    "ACTIVATIONS",
    "POSITIONAL_SCHEMES",
    "TransformerConfig",
    "TokenEmbedding",
    "PositionalEncoding",
    "InputEmbedding",
    "FeedForward",
    "EncoderLayer",
    "DecoderLayer",
    "Encoder",
    "Decoder",
    "Transformer",
    "DeepStack",
    "count_parameters",
    "parameter_breakdown",
    "trace_shapes",
]

#: Activations of the feed-forward network.
ACTIVATIONS: tuple[str, ...] = ("relu", "gelu")

#: Positional schemes added to the embeddings (the others act inside attention).
ADDITIVE_SCHEMES: tuple[str, ...] = ("sinusoidal", "learned", "none")


#: Positional schemes that act inside attention: ``"rope"`` (the ``rotary=``
#: hook of :class:`~dldna.attention.MultiHeadAttention`), ``"alibi"`` and
#: ``"t5"`` (the ``bias=`` hook); see :mod:`dldna.positional`.
ATTENTION_SCHEMES: tuple[str, ...] = ("rope", "alibi", "t5")

POSITIONAL_SCHEMES: tuple[str, ...] = ADDITIVE_SCHEMES + ATTENTION_SCHEMES


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------


def _check_dropout(value) -> float:
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or not 0.0 <= value < 1.0):
        raise ValueError(
            f"dropout es una probabilidad y debe estar en [0, 1); se recibió {value!r}. "
            "Con 0 no se apaga ninguna activación; el artículo original usa 0.1."
        )
    return float(value)


def _check_activation(activation) -> str:
    if activation not in ACTIVATIONS:
        raise ValueError(
            f"Activación desconocida: {activation!r}. Las válidas son 'relu' (la del artículo "
            "original) y 'gelu' (la de BERT y GPT)."
        )
    return activation


def _check_layer_args(d_model, n_heads, d_ff, dropout, norm_first, activation) -> None:
    _check_heads(d_model, n_heads, "n_heads")  # also checks both are positive integers
    checks.positive_int(d_ff, "d_ff")
    _check_dropout(dropout)
    checks.boolean(norm_first, "norm_first")
    _check_activation(activation)


@dataclass
class TransformerConfig:
    """All the sizes of an encoder-decoder Transformer.

    Fields (defaults are the paper's base model, with Pre-LN):

    * ``src_vocab``, ``tgt_vocab``: vocabulary sizes of source and target;
    * ``d_model``: width of every vector that flows between layers;
    * ``n_heads``: attention heads (must divide ``d_model``);
    * ``n_encoder_layers``, ``n_decoder_layers``: depth of each stack;
    * ``d_ff``: hidden width of the feed-forward network (usually ``4·d_model``);
    * ``dropout``: probability in ``[0, 1)``;
    * ``max_len``: longest sequence the positional table covers;
    * ``positional``: one of :data:`POSITIONAL_SCHEMES` (``"none"`` adds nothing);
    * ``norm_first``: Pre-LN (``True``) or Post-LN (``False``, the paper's);
    * ``activation``: ``"relu"`` or ``"gelu"``;
    * ``tie_embeddings``: the output projection reuses the target embedding matrix;
    * ``share_embeddings``: source and target use one embedding table (needs
      ``src_vocab == tgt_vocab``, a shared vocabulary as in the paper);
    * ``pad_id``: the padding token id (masked as a key, embedding fixed at zero).

    Invalid values raise ``ValueError``/``TypeError`` with a Spanish message.
    """

    src_vocab: int
    tgt_vocab: int
    d_model: int = 512
    n_heads: int = 8
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 512
    positional: str = "sinusoidal"
    norm_first: bool = True
    activation: str = "relu"
    tie_embeddings: bool = False
    pad_id: int = 0
    share_embeddings: bool = False

    def __post_init__(self) -> None:
        for name in ("src_vocab", "tgt_vocab", "d_model", "n_heads", "d_ff", "max_len"):
            checks.positive_int(getattr(self, name), name)
        for name in ("n_encoder_layers", "n_decoder_layers"):
            checks.non_negative_int(getattr(self, name), name)
        _check_heads(self.d_model, self.n_heads, "n_heads")
        self.dropout = _check_dropout(self.dropout)
        if self.positional not in POSITIONAL_SCHEMES:
            raise ValueError(
                f"Codificación posicional desconocida: {self.positional!r}. Las disponibles son "
                f"{', '.join(repr(s) for s in POSITIONAL_SCHEMES)}."
            )
        if self.positional == "sinusoidal" and self.d_model % 2:
            raise ValueError(
                f"La codificación sinusoidal necesita un d_model par (senos y cosenos por "
                f"parejas); se recibió d_model={self.d_model}."
            )
        if self.positional == "rope" and self.d_k % 2:
            raise ValueError(
                f"RoPE gira las consultas y claves de cada cabeza por parejas de dimensiones: "
                f"d_model / n_heads = {self.d_k} debe ser par."
            )
        _check_activation(self.activation)
        for name in ("norm_first", "tie_embeddings", "share_embeddings"):
            checks.boolean(getattr(self, name), name)
        checks.non_negative_int(self.pad_id, "pad_id")
        if self.pad_id >= min(self.src_vocab, self.tgt_vocab):
            raise ValueError(
                f"pad_id={self.pad_id} debe ser un identificador válido en los dos vocabularios "
                f"(src_vocab={self.src_vocab}, tgt_vocab={self.tgt_vocab})."
            )
        if self.share_embeddings and self.src_vocab != self.tgt_vocab:
            raise ValueError(
                "share_embeddings=True hace que origen y destino usen la misma tabla de "
                f"embeddings, y eso exige un vocabulario común: src_vocab={self.src_vocab} y "
                f"tgt_vocab={self.tgt_vocab} son distintos."
            )

    @property
    def d_k(self) -> int:
        """Width of each head: ``d_model // n_heads``."""
        return self.d_model // self.n_heads

    def replace(self, **changes) -> TransformerConfig:
        """A copy with some fields changed (validated again)."""
        unknown = set(changes) - {f.name for f in fields(self)}
        if unknown:
            raise TypeError(f"Campos desconocidos de TransformerConfig: {sorted(unknown)}.")
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return TransformerConfig(**values)

    @classmethod
    def base(cls, vocab: int = 37000, **changes) -> TransformerConfig:
        """The base model of Vaswani et al. (2017): d=512, h=8, N=6, d_ff=2048, Post-LN.

        The paper uses a shared source-target vocabulary of about 37 000 byte-pair
        tokens and one matrix for both embeddings and the output projection.
        """
        config = dict(src_vocab=vocab, tgt_vocab=vocab, d_model=512, n_heads=8,
                      n_encoder_layers=6, n_decoder_layers=6, d_ff=2048, dropout=0.1,
                      positional="sinusoidal", norm_first=False, activation="relu",
                      tie_embeddings=True, share_embeddings=True)
        config.update(changes)
        return cls(**config)


# ---------------------------------------------------------------------------
# Embeddings
# ---------------------------------------------------------------------------


class TokenEmbedding(nn.Module):
    """Token ids → vectors, multiplied by ``√d_model``.

    The table is initialised with standard deviation ``1/√d_model``, so after the
    multiplication every component has variance about 1, the scale of the
    positional encoding. (The same matrix, when tied to the output projection,
    then has the scale of a well-initialised linear layer.) The row of
    ``pad_id`` starts at zero and the lookup gives it no gradient; when the
    matrix is tied to the output projection, that projection does (the
    softmax pushes the ``<pad>`` logit down), so the row moves.

    Ids may be a tensor, a NumPy array or a list of integers (floats with
    integer values are converted); they are moved to the table's device.

    Shapes: ids ``(batch, seq)`` → ``(batch, seq, d_model)``.
    """

    def __init__(self, vocab: int, d_model: int, pad_id: int | None = None):
        super().__init__()
        checks.positive_int(vocab, "vocab")
        checks.positive_int(d_model, "d_model")
        self.d_model, self.vocab, self.pad_id = d_model, vocab, pad_id
        if pad_id is not None:
            checks.non_negative_int(pad_id, "pad_id")
            if pad_id >= vocab:
                raise ValueError(f"pad_id={pad_id} no cabe en un vocabulario de {vocab} tókenes.")
        self.weight = nn.Parameter(torch.randn(vocab, d_model) * d_model ** -0.5)
        if pad_id is not None:
            with torch.no_grad():
                self.weight[pad_id].zero_()

    def extra_repr(self) -> str:
        return f"vocab={self.vocab}, d_model={self.d_model}, pad_id={self.pad_id}"

    def forward(self, ids: Tensor) -> Tensor:
        ids = checks.ids(ids, "Los tókenes (ids)", vocab_size=self.vocab, like=self.weight)
        return F.embedding(ids, self.weight, self.pad_id) * math.sqrt(self.d_model)


class PositionalEncoding(nn.Module):
    """Adds the position of each vector: ``x + P[:seq]``.

    ``kind``: ``"sinusoidal"`` (fixed table of :func:`dldna.positional.sinusoidal`,
    a buffer), ``"learned"`` (a trainable table ``(max_len, d_model)``) or
    ``"none"``; the attention-level schemes (``"rope"``, ``"alibi"``, ``"t5"``)
    add nothing here (identity): :class:`Transformer` passes them to attention.

    Shapes: ``(batch, seq, d_model)`` → same, with ``seq <= max_len``.
    """

    def __init__(self, d_model: int, max_len: int = 512, kind: str = "sinusoidal"):
        super().__init__()
        checks.positive_int(d_model, "d_model")
        checks.positive_int(max_len, "max_len")
        if kind not in POSITIONAL_SCHEMES:
            raise ValueError(
                f"Codificación posicional desconocida: {kind!r}. Las disponibles son "
                f"{', '.join(repr(s) for s in POSITIONAL_SCHEMES)}."
            )
        self.kind, self.d_model, self.max_len = kind, d_model, max_len
        self.table: Tensor | None
        if kind == "sinusoidal":
            self.register_buffer("table", positional.sinusoidal(max_len, d_model), persistent=False)
        elif kind == "learned":
            self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
        else:
            self.table = None

    def extra_repr(self) -> str:
        return f"kind={self.kind!r}, d_model={self.d_model}, max_len={self.max_len}"

    def forward(self, x: Tensor) -> Tensor:
        seq = x.shape[-2]
        if seq > self.max_len:
            raise ValueError(
                f"La secuencia mide {seq} posiciones, más que max_len={self.max_len}: aumenta "
                "max_len en la configuración o acorta la secuencia."
            )
        if self.table is None:
            return x
        return x + self.table[:seq].to(x.dtype)


class InputEmbedding(nn.Module):
    """``dropout(TokenEmbedding(ids) + PositionalEncoding)``: the input of a stack.

    Shapes: ids ``(batch, seq)`` → ``(batch, seq, d_model)``.
    """

    def __init__(self, vocab: int, d_model: int, *, max_len: int = 512,
                 positional: str = "sinusoidal", dropout: float = 0.1, pad_id: int | None = None):
        super().__init__()
        self.token = TokenEmbedding(vocab, d_model, pad_id)
        self.position = PositionalEncoding(d_model, max_len, positional)
        self.dropout = nn.Dropout(_check_dropout(dropout))

    def forward(self, ids: Tensor) -> Tensor:
        return self.dropout(self.position(self.token(ids)))


# ---------------------------------------------------------------------------
# Feed-forward network and layers
# ---------------------------------------------------------------------------


def _activation(name: str) -> nn.Module:
    return nn.ReLU() if _check_activation(name) == "relu" else nn.GELU()


class FeedForward(nn.Module):
    """Position-wise feed-forward network ``W₂ · dropout(act(W₁ x + b₁)) + b₂``.

    ``d_model → d_ff → d_model`` (the paper: 512 → 2048 → 512). It acts on every
    position independently and identically: ``ff(x)[:, t] == ff(x[:, t])``.

    Shapes: ``(..., d_model)`` → ``(..., d_model)``.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        checks.positive_int(d_model, "d_model")
        checks.positive_int(d_ff, "d_ff")
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = _activation(activation)
        self.dropout = nn.Dropout(_check_dropout(dropout))
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class EncoderLayer(nn.Module):
    """Self-attention and feed-forward, each with a residual connection and LayerNorm.

    ``norm_first=True`` (Pre-LN)::

        x = x + dropout(self_attn(norm1(x)))
        x = x + dropout(ff(norm2(x)))

    ``norm_first=False`` (Post-LN, the original paper)::

        x = norm1(x + dropout(self_attn(x)))
        x = norm2(x + dropout(ff(x)))

    The weights of the last call are kept in ``attn_weights``
    ``(batch, heads, seq, seq)`` (detached); in training mode they are not
    computed when the attention offers the fused kernel (``None``).

    ``num_kv_heads``: grouped-query self-attention (see
    :class:`dldna.attention.MultiHeadAttention`); default, one key/value head per head.

    Shapes: x ``(batch, seq, d_model)``; mask boolean broadcastable to
    ``(batch, heads, seq, seq)``, ``True`` = may attend → ``(batch, seq, d_model)``.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.1, *,
                 norm_first: bool = True, activation: str = "relu", num_kv_heads: int | None = None):
        super().__init__()
        _check_layer_args(d_model, n_heads, d_ff, dropout, norm_first, activation)
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout, num_kv_heads=num_kv_heads)
        self.ff = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.attn_weights: Tensor | None = None

    def _attend(self, x: Tensor, mask: Tensor | None, bias: Tensor | None, rotary) -> Tensor:
        out, self.attn_weights = _attention(self.self_attn, self.training, x, mask=mask,
                                            **_position_kwargs(bias, rotary))
        return self.dropout1(out)

    def forward(self, x: Tensor, mask: Tensor | None = None, *, bias: Tensor | None = None,
                rotary=None) -> Tensor:
        """``bias``/``rotary``: attention-level position schemes (see :mod:`dldna.positional`)."""
        x = _check_stack_input(x, self.norm1.normalized_shape[0], "La entrada de la capa", self)
        if self.norm_first:
            x = x + self._attend(self.norm1(x), mask, bias, rotary)
            return checks.no_overflow(x + self.dropout2(self.ff(self.norm2(x))), "La capa del codificador")
        x = self.norm1(x + self._attend(x, mask, bias, rotary))
        return checks.no_overflow(self.norm2(x + self.dropout2(self.ff(x))), "La capa del codificador")


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention and feed-forward, each residual + LayerNorm.

    The cross-attention takes its queries from the decoder and its keys and
    values from ``memory``, the output of the encoder. Pre-LN
    (``norm_first=True``)::

        x = x + dropout(self_attn(norm1(x), mask=self_mask))
        x = x + dropout(cross_attn(norm2(x), memory, mask=memory_mask))
        x = x + dropout(ff(norm3(x)))

    and Post-LN applies ``norm_i(x + …)`` instead. The weights of the last call
    are kept in ``self_weights`` ``(batch, heads, T, T)`` and ``cross_weights``
    ``(batch, heads, T, S)`` (``None`` after a training-mode call with the
    fused kernel: put the model in eval mode to look at them).

    Shapes: x ``(batch, T, d_model)``; memory ``(batch, S, d_model)``;
    self_mask broadcastable to ``(batch, heads, T, T)`` (causal);
    memory_mask to ``(batch, heads, T, S)`` (source padding) → ``(batch, T, d_model)``.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.1, *,
                 norm_first: bool = True, activation: str = "relu"):
        super().__init__()
        _check_layer_args(d_model, n_heads, d_ff, dropout, norm_first, activation)
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.ff = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.self_weights: Tensor | None = None
        self.cross_weights: Tensor | None = None

    def _self(self, x: Tensor, mask: Tensor | None, bias: Tensor | None, rotary) -> Tensor:
        out, self.self_weights = _attention(self.self_attn, self.training, x, mask=mask,
                                            **_position_kwargs(bias, rotary))
        return self.dropout1(out)

    def _cross(self, x: Tensor, memory: Tensor, mask: Tensor | None) -> Tensor:
        out, self.cross_weights = _attention(self.cross_attn, self.training, x, memory, mask=mask)
        return self.dropout2(out)

    def forward(self, x: Tensor, memory: Tensor, self_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, *, bias: Tensor | None = None,
                rotary=None) -> Tensor:
        """``bias``/``rotary`` act on the masked self-attention only (not on the cross-attention)."""
        d_model = self.norm1.normalized_shape[0]
        x = _check_stack_input(x, d_model, "La entrada de la capa", self)
        memory = _check_stack_input(memory, d_model, "La memoria (salida del codificador)", self)
        if self.norm_first:
            x = x + self._self(self.norm1(x), self_mask, bias, rotary)
            x = x + self._cross(self.norm2(x), memory, memory_mask)
            return checks.no_overflow(x + self.dropout3(self.ff(self.norm3(x))), "La capa del decodificador")
        x = self.norm1(x + self._self(x, self_mask, bias, rotary))
        x = self.norm2(x + self._cross(x, memory, memory_mask))
        return checks.no_overflow(self.norm3(x + self.dropout3(self.ff(x))), "La capa del decodificador")


def _attention(attn: MultiHeadAttention, training: bool, *args, **kwargs) -> tuple[Tensor, Tensor | None]:
    """``attn(*args, **kwargs)`` → ``(output, detached weights)``. In training
    mode the weights are not recorded (``None``), so the fused kernel can run."""
    if training:
        kwargs["need_weights"] = False
    out, weights = attn(*args, **kwargs)
    return out, None if weights is None else weights.detach()


def _position_kwargs(bias: Tensor | None, rotary) -> dict:
    """Keyword arguments for the attention-level position hooks, only those given."""
    kwargs = {}
    if bias is not None:
        kwargs["bias"] = bias
    if rotary is not None:
        kwargs["rotary"] = rotary
    return kwargs


def _check_stack_input(x, d_model: int, name: str, module: nn.Module) -> Tensor:
    """``x`` as a floating ``(batch, seq, d_model)`` tensor in ``module``'s dtype
    (float64 from NumPy and lists of numbers are converted); token ids are
    refused with a pointer to the embedding, never read as vectors."""
    if isinstance(x, Tensor) and not x.dtype.is_floating_point or x is None or isinstance(x, (str, bool)):
        got = (f"forma {tuple(x.shape)} y tipo {x.dtype}" if isinstance(x, Tensor)
               else type(x).__name__)
        raise ValueError(
            f"{name} debe ser un tensor de coma flotante (batch, seq, d_model); se recibió {got}. "
            "Si tienes identificadores de tókenes, pásalos antes por un InputEmbedding."
        )
    x = checks.features(x, name, like=module, ndim=3, what="(batch, seq, d_model)")
    if x.shape[-1] != d_model:
        raise ValueError(
            f"{name} tiene {x.shape[-1]} rasgos por posición, pero la pila espera d_model={d_model}."
        )
    return x


class _Stack(nn.Module):
    """``n_layers`` copies of ``layer_class``, plus a final LayerNorm when ``norm_first``.

    In Pre-LN the residual stream is never normalised inside the layers, so the
    stack ends with one LayerNorm; in Post-LN every layer already ends with one.
    """

    layer_class: type[nn.Module]
    config_layers: str  # the TransformerConfig field with this stack's depth

    def __init__(self, d_model: int, n_heads: int, n_layers: int, d_ff: int,
                 dropout: float = 0.1, *, norm_first: bool = True, activation: str = "relu",
                 num_kv_heads: int | None = None):
        super().__init__()
        checks.non_negative_int(n_layers, "n_layers")
        _check_layer_args(d_model, n_heads, d_ff, dropout, norm_first, activation)
        self.d_model = d_model
        # Only layers that know grouped-query attention (EncoderLayer) receive it.
        grouped = {} if num_kv_heads is None else {"num_kv_heads": num_kv_heads}
        self.layers = nn.ModuleList(
            self.layer_class(d_model, n_heads, d_ff, dropout, norm_first=norm_first,
                             activation=activation, **grouped)
            for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()

    @classmethod
    def from_config(cls, config: TransformerConfig):
        return cls(config.d_model, config.n_heads, getattr(config, cls.config_layers), config.d_ff,
                   config.dropout, norm_first=config.norm_first, activation=config.activation)


class Encoder(_Stack):
    """A stack of :class:`EncoderLayer`, plus a final LayerNorm when ``norm_first``.

    Works on any vectors, not only token embeddings (the Vision Transformer
    feeds it patches).

    Shapes: x ``(batch, seq, d_model)``; mask boolean broadcastable to
    ``(batch, heads, seq, seq)`` → ``(batch, seq, d_model)``.
    """

    layer_class = EncoderLayer
    config_layers = "n_encoder_layers"

    def forward(self, x: Tensor, mask: Tensor | None = None, *, bias: Tensor | None = None,
                rotary=None) -> Tensor:
        x = _check_stack_input(x, self.d_model, "La entrada del codificador", self)
        for layer in self.layers:
            x = layer(x, mask, bias=bias, rotary=rotary)
        return checks.no_overflow(self.norm(x), "El codificador")

    def attention_maps(self) -> list[Tensor]:
        """Self-attention weights of the last call, one ``(batch, heads, seq, seq)`` per layer."""
        return [layer.attn_weights for layer in self.layers if layer.attn_weights is not None]


class Decoder(_Stack):
    """A stack of :class:`DecoderLayer`, plus a final LayerNorm when ``norm_first``.

    Shapes: x ``(batch, T, d_model)``; memory ``(batch, S, d_model)``; masks as
    in :class:`DecoderLayer` → ``(batch, T, d_model)``.
    """

    layer_class = DecoderLayer
    config_layers = "n_decoder_layers"

    def forward(self, x: Tensor, memory: Tensor, self_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, *, bias: Tensor | None = None,
                rotary=None) -> Tensor:
        x = _check_stack_input(x, self.d_model, "La entrada del decodificador", self)
        memory = _check_stack_input(memory, self.d_model, "La memoria (salida del codificador)", self)
        for layer in self.layers:
            x = layer(x, memory, self_mask, memory_mask, bias=bias, rotary=rotary)
        return checks.no_overflow(self.norm(x), "El decodificador")

    def attention_maps(self) -> tuple[list[Tensor], list[Tensor]]:
        """``(self, cross)`` weights of the last call, one tensor per layer."""
        return ([layer.self_weights for layer in self.layers if layer.self_weights is not None],
                [layer.cross_weights for layer in self.layers if layer.cross_weights is not None])


# ---------------------------------------------------------------------------
# The whole model
# ---------------------------------------------------------------------------


def _check_ids(ids, name: str, vocab: int, model: nn.Module) -> Tensor:
    """Ids ``(batch, seq)`` as a long tensor on ``model``'s device, each below ``vocab``
    (NumPy arrays, lists and integer-valued floats are converted)."""
    ids = checks.ids(ids, name, vocab_size=vocab, like=model)
    if ids.dim() != 2:
        raise ValueError(
            f"{name} debe ser un tensor de identificadores de forma (batch, seq); se recibió "
            f"{tuple(ids.shape)}. Para una sola frase añade el lote con ids.unsqueeze(0)."
        )
    if ids.shape[1] == 0:
        raise ValueError(f"{name} está vacío: hace falta al menos una posición.")
    return ids


class Transformer(nn.Module):
    """Encoder-decoder Transformer: source ids and target ids → logits over the target vocabulary.

    Parts: ``src_embed`` and ``tgt_embed`` (:class:`InputEmbedding`; the same
    object if ``share_embeddings``), ``encoder`` (:class:`Encoder`), ``decoder``
    (:class:`Decoder`) and ``generator`` (``nn.Linear(d_model, tgt_vocab)``,
    whose weight *is* the target embedding matrix if ``tie_embeddings``).

    Masks are built from the ids: source padding (``pad_id``) is never
    attended, by the encoder or by the cross-attention; the decoder's
    self-attention is causal (and ignores target padding).

    Shapes: src ``(batch, S)``, tgt ``(batch, T)`` (long) →
    logits ``(batch, T, tgt_vocab)``.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise TypeError(
                f"Transformer necesita un TransformerConfig; se recibió {type(config).__name__}."
            )
        self.config = c = config
        embed = dict(max_len=c.max_len, positional=c.positional, dropout=c.dropout, pad_id=c.pad_id)
        self.src_embed = InputEmbedding(c.src_vocab, c.d_model, **embed)
        self.tgt_embed = (self.src_embed if c.share_embeddings
                          else InputEmbedding(c.tgt_vocab, c.d_model, **embed))
        self.encoder = Encoder.from_config(c)
        self.decoder = Decoder.from_config(c)
        self.generator = nn.Linear(c.d_model, c.tgt_vocab)
        # Attention-level position schemes: one module per stack, shared by its layers.
        self.rotary = positional.RotaryEmbedding(c.d_k) if c.positional == "rope" else None
        self.src_position_bias = self.tgt_position_bias = None
        if c.positional == "alibi":
            self.src_position_bias = self.tgt_position_bias = positional.ALiBi(c.n_heads)
        elif c.positional == "t5":
            self.src_position_bias = positional.T5RelativeBias(c.n_heads, bidirectional=True)
            self.tgt_position_bias = positional.T5RelativeBias(c.n_heads, bidirectional=False)
        self._reset_parameters()
        if c.tie_embeddings:
            self.generator.weight = self.tgt_embed.token.weight

    def _reset_parameters(self) -> None:
        """Xavier-uniform for every matrix of the stacks and the output; zero biases there."""
        for module in (self.encoder, self.decoder, self.generator):
            for sub in module.modules():
                if isinstance(sub, nn.Linear):
                    nn.init.xavier_uniform_(sub.weight)
                    nn.init.zeros_(sub.bias)

    # -- masks ---------------------------------------------------------------

    def src_mask(self, src: Tensor) -> Tensor:
        """Source padding mask ``(batch, 1, 1, S)``: ``True`` where ``src != pad_id``."""
        return masking.padding_mask(token_ids=src, pad_id=self.config.pad_id)

    def tgt_mask(self, tgt: Tensor) -> Tensor:
        """Causal mask combined with target padding: ``(batch, 1, T, T)``."""
        causal = masking.causal_mask(tgt.shape[1], device=tgt.device)
        return masking.combine(masking.padding_mask(token_ids=tgt, pad_id=self.config.pad_id),
                               causal)

    # -- forward -------------------------------------------------------------

    def encode(self, src: Tensor) -> Tensor:
        """Source ids ``(batch, S)`` → memory ``(batch, S, d_model)``."""
        src = _check_ids(src, "src", self.config.src_vocab, self)
        s = src.shape[1]
        bias = self.src_position_bias(s, s) if self.src_position_bias is not None else None
        return self.encoder(self.src_embed(src), self.src_mask(src), bias=bias,
                            rotary=self.rotary)

    def decode_hidden(self, tgt: Tensor, memory: Tensor, src: Tensor | None = None) -> Tensor:
        """Target ids and memory → the decoder's output vectors ``(batch, T, d_model)``."""
        tgt = _check_ids(tgt, "tgt", self.config.tgt_vocab, self)
        memory = _check_stack_input(memory, self.config.d_model, "La memoria (salida del codificador)", self)
        if memory.shape[0] != tgt.shape[0]:
            raise ValueError(
                f"La memoria tiene {memory.shape[0]} frases y tgt {tgt.shape[0]}: deben coincidir."
            )
        memory_mask = None
        if src is not None:
            src = _check_ids(src, "src", self.config.src_vocab, self)
            if src.shape[:2] != memory.shape[:2]:
                raise ValueError(
                    f"src {tuple(src.shape)} no corresponde a la memoria {tuple(memory.shape)}: "
                    "pasa los mismos identificadores con los que se llamó a encode."
                )
            memory_mask = self.src_mask(src)
        t = tgt.shape[1]
        bias = self.tgt_position_bias(t, t) if self.tgt_position_bias is not None else None
        return self.decoder(self.tgt_embed(tgt), memory, self.tgt_mask(tgt), memory_mask,
                            bias=bias, rotary=self.rotary)

    def decode(self, tgt: Tensor, memory: Tensor, src: Tensor | None = None) -> Tensor:
        """Target ids ``(batch, T)``, memory ``(batch, S, d_model)`` → logits ``(batch, T, tgt_vocab)``.

        ``src`` (the ids given to :meth:`encode`) masks the source padding in the
        cross-attention; without it every memory position is attended.
        """
        return self.generator(self.decode_hidden(tgt, memory, src))

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        """``decode(tgt, encode(src), src)``: logits ``(batch, T, tgt_vocab)``."""
        return self.decode(tgt, self.encode(src), src)

    def log_probs(self, src: Tensor, tgt: Tensor) -> Tensor:
        """Log-softmax of the logits: ``(batch, T, tgt_vocab)``; ``exp`` sums to 1 over the vocabulary."""
        return torch.log_softmax(self(src, tgt), dim=-1)

    def attention_maps(self) -> dict[str, list[Tensor]]:
        """Attention weights of the last forward pass, for visualisation.

        ``{"encoder": [(B, H, S, S)] per layer, "decoder": [(B, H, T, T)],
        "cross": [(B, H, T, S)]}`` (detached, before dropout).
        """
        self_maps, cross_maps = self.decoder.attention_maps()
        return {"encoder": self.encoder.attention_maps(), "decoder": self_maps, "cross": cross_maps}


# ---------------------------------------------------------------------------
# Looking inside
# ---------------------------------------------------------------------------


def count_parameters(module: nn.Module, trainable_only: bool = False) -> int:
    """Number of parameters; a tensor shared by two modules (tied weights) counts once."""
    checks.dtype_of(module)  # a Spanish TypeError for anything but an nn.Module
    trainable_only = checks.boolean(trainable_only, "trainable_only")
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)


def parameter_breakdown(model: Transformer) -> dict[str, int]:
    """Parameters of each part of a :class:`Transformer` (shared tensors counted where first met).

    Keys (Spanish, for printing): embeddings, codificador, decodificador,
    proyección de salida, total.
    """
    if not isinstance(model, Transformer):
        raise TypeError("model debe ser un dldna.transformer.Transformer; "
                        f"se recibió {type(model).__name__}.")
    seen: set[int] = set()

    def fresh(module: nn.Module) -> int:
        total = 0
        for p in module.parameters():
            if id(p) not in seen:
                seen.add(id(p))
                total += p.numel()
        return total

    parts = {
        "incrustaciones": fresh(model.src_embed) + fresh(model.tgt_embed),
        "codificador": fresh(model.encoder),
        "decodificador": fresh(model.decoder),
        "proyección de salida": fresh(model.generator),
    }
    parts["total"] = sum(parts.values())
    return parts


def _depth(name: str) -> int:
    return len([part for part in name.split(".") if not part.isdigit()])


_SKIP = (nn.Dropout, nn.Identity, nn.ModuleList, nn.ReLU, nn.GELU)


def trace_shapes(model: nn.Module, *inputs, max_depth: int = 3,
                 show: bool = True) -> list[tuple[str, list[tuple[int, ...]]]]:
    """Run ``model(*inputs)`` and record the shape of every stage, in execution order.

    Every sub-module whose dotted name has at most ``max_depth`` non-numeric
    parts (``encoder.layers.0.self_attn`` has 3) is traced when its call
    returns; a tuple output (attention: output and weights) gives all its
    shapes. For a :class:`Transformer` the masks are listed too. Dropout,
    activations and identity layers are skipped.

    Returns ``[(stage, [shape, …]), …]`` and, with ``show``, prints it as a table.
    Works on any module (an :class:`Encoder` on float vectors, a ViT…).
    """
    checks.module(model, "model")
    checks.positive_int(max_depth, "max_depth")
    show = checks.boolean(show, "show")
    try:  # the number of inputs, before any hook is registered
        inspect.signature(model.forward).bind(*inputs)
    except TypeError:
        wanted = list(inspect.signature(model.forward).parameters)
        raise TypeError(f"{type(model).__name__} no puede llamarse con {len(inputs)} entrada(s): "
                        f"su forward recibe {wanted}.") from None
    rows: list[tuple[str, list[tuple[int, ...]]]] = []
    for k, x in enumerate(inputs):
        if isinstance(x, Tensor):
            rows.append((f"entrada {k}", [tuple(x.shape)]))
    masks_at = len(rows)  # the masks are listed here, once the model's call has checked the inputs

    def shapes(out) -> list[tuple[int, ...]]:
        if isinstance(out, Tensor):
            return [tuple(out.shape)]
        if isinstance(out, (tuple, list)):
            return [s for item in out for s in shapes(item)]
        return []

    handles = []
    seen: set[int] = set()
    for name, sub in model.named_modules():
        if not name or isinstance(sub, _SKIP) or _depth(name) > max_depth or id(sub) in seen:
            continue
        seen.add(id(sub))  # a shared module (shared embeddings) is traced under its first name

        def hook(_module, _args, out, name=name):
            rows.append((name, shapes(out)))

        handles.append(sub.register_forward_hook(hook))
    try:
        with torch.no_grad():
            out = model(*inputs)
    except RuntimeError as err:  # a module of PyTorch's own (nn.Linear…) that does not fit the input
        given = [tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__ for x in inputs]
        raise ValueError(f"{type(model).__name__} no puede procesar entradas de forma {given}; revisa "
                         "su forma (el error de PyTorch va encadenado debajo).") from err
    finally:
        for h in handles:
            h.remove()
    if isinstance(model, Transformer) and len(inputs) >= 2:
        rows[masks_at:masks_at] = [
            ("máscara de relleno del origen", [tuple(model.src_mask(checks.ids(inputs[0], "src")).shape)]),
            ("máscara causal + relleno del destino",
             [tuple(model.tgt_mask(checks.ids(inputs[1], "tgt")).shape)]),
        ]
    rows.append(("salida del modelo", shapes(out)))
    if show:
        width = max(len(name) for name, _ in rows) + 2
        print(f"{'etapa':{width}s}forma")
        for name, found in rows:
            print(f"{name:{width}s}{'  y  '.join(str(s) for s in found)}")
    return rows


class DeepStack(nn.Module):
    """``depth`` blocks ``f(x) = tanh(W x + b)``, plain (``x ← f(x)``) or residual (``x ← x + f(x)``).

    The small network chapter 6 uses to measure how gradients fade with depth.
    :meth:`gradient_norms` gives the norm of the gradient of each block's
    weight after one backward pass of ``loss = mean(output²)``.

    Shapes: ``(batch, width)`` → ``(batch, width)``.
    """

    def __init__(self, depth: int, width: int, *, residual: bool):
        super().__init__()
        checks.positive_int(depth, "depth")
        checks.positive_int(width, "width")
        self.residual = checks.boolean(residual, "residual")
        # PyTorch's default initialisation of nn.Linear, the one a reader gets.
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x: Tensor) -> Tensor:
        for block in self.blocks:
            x = x + torch.tanh(block(x)) if self.residual else torch.tanh(block(x))
        return x

    def gradient_norms(self, x: Tensor) -> list[float]:
        """Norm of ``∂loss/∂W`` for each block (first block first), ``loss = mean(out²)``."""
        self.zero_grad()
        self(x).pow(2).mean().backward()
        return [float(block.weight.grad.norm()) for block in self.blocks]
