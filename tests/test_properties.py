"""Property-based tests of bad input (issue 29): every public function of ``dldna``.

The list of public functions is derived from the package
(:func:`properties.public_names`), and every name must be in exactly one of:

* :data:`SPECS`: how to call it, with a kind per argument (``tests/properties.py``).
  Hypothesis then draws, for each function, valid arguments (the result has
  no NaN), invalid ones (a Spanish ``ValueError``/``TypeError``; for an
  explorer, an explorer that shows the Spanish message) and huge/tiny ones
  (a finite result or a Spanish refusal);
* :data:`RETURNED`: result containers and exceptions the package returns or
  raises (dataclasses and exception classes, checked to be so);
* :data:`PENDING`: public names that do not yet have a spec (the list can
  only shrink: a name that gets a spec must leave it).

A new public function in none of them fails :func:`test_every_public_name_is_registered`.

Profiles (``tests/conftest.py``): ``make`` (default) and ``HYPOTHESIS_PROFILE=deep``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import random
import tempfile
from pathlib import Path

import matplotlib
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from properties import (
    Bool,
    Choice,
    Fixed,
    Floats,
    Ids,
    Int,
    Mask,
    Num,
    Spec,
    Text,
    finite,
    is_spanish,
    public_names,
    resolve,
)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dldna import attention as A  # noqa: E402
from dldna import (  # noqa: E402,E501  # noqa: E402
    checks,
    decoding,
    embeddings,
    kv_cache,
    language_models,
    masking,
    online_softmax,
    positional,
    training,
    transformer,
    vit,
)
from dldna.tasks import addition, copy, parsing  # noqa: E402
from dldna.viz import online_softmax as viz_online  # noqa: E402

# ---------------------------------------------------------------------------
# Small fixtures, built once
# ---------------------------------------------------------------------------


@functools.cache
def _model() -> transformer.Transformer:
    torch.manual_seed(0)
    cfg = transformer.TransformerConfig(10, 10, d_model=8, n_heads=2, n_encoder_layers=1,
                                        n_decoder_layers=1, d_ff=16, dropout=0.0)
    return transformer.Transformer(cfg).eval()


@functools.cache
def _tree() -> decoding.BeamTree:
    return decoding.beam_search(_model(), torch.tensor([[3, 4, 5]]), 2, 3, 1, 2, trace=0).tree


@functools.cache
def _gpt() -> language_models.LanguageModel:
    torch.manual_seed(0)
    return language_models.LanguageModel(12, d_model=8, n_heads=2, n_layers=1, d_ff=16, dropout=0.0,
                                         max_len=16, causal=True).eval()


def _layer(cls):
    torch.manual_seed(0)
    return cls(8, 2, 16, 0.0).eval()


def _no_grad(fn):
    @functools.wraps(fn)
    def run(**kw):
        with torch.no_grad():
            return fn(**kw)
    return run


@functools.cache
def _tmp() -> Path:
    return Path(tempfile.mkdtemp(prefix="dldna-props-"))


def _in_tmp(name):
    return _tmp() / name if isinstance(name, str) and name.strip() else name


@functools.cache
def _checkpoint_file() -> str:
    return str(training.save_checkpoint(_model(), _tmp() / "modelo.pt", extra={"paso": 1}))


#: "Build it inside the call" (a model and its optimizer must be made together).
_OWN = object()


def _linear() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Linear(3, 1)


def _xy():
    g = torch.Generator().manual_seed(0)
    return torch.randn(8, 3, generator=g), torch.randn(8, 1, generator=g)


def _mse(model, batch):
    x, y = batch
    return torch.nn.functional.mse_loss(model(x), y)


def _recipe() -> training.Recipe:
    return training.Recipe(steps=2, batch_size=8, lr=0.01, warmup=1, eval_every=1)


def _train_steps(model, optimizer, **kw):
    model = _linear() if model is _OWN else model
    if optimizer is _OWN:
        optimizer = torch.optim.SGD(model.parameters() if isinstance(model, torch.nn.Module)
                                    else _linear().parameters(), lr=0.01)
    return training.train_steps(model, optimizer=optimizer, **kw)


def _layers_with_grads():
    layers = [_linear(), torch.nn.Linear(1, 2)]
    sum(layer(torch.ones(1, 3 if i == 0 else 1)).sum() for i, layer in enumerate(layers)).backward()
    return layers


TEMPERATURE = Num(0, None, open_lo=True, typical=(0.05, 20.0))
PROBABILITY = Num(0, 1)
NOT_A_MODULE = (None, "modelo", 3)
SEED = Int(0, 2**31, refuse_below=True)

SPECS: dict[str, Spec] = {
    # --- checks: the validators themselves ------------------------------------
    "dldna.checks.integer": Spec({"value": Int(-50, 50, refuse_below=False), "name": Fixed(lambda: "n")}),
    "dldna.checks.positive_int": Spec({"value": Int(1, 50), "name": Fixed(lambda: "n")}),
    "dldna.checks.non_negative_int": Spec({"value": Int(0, 50), "name": Fixed(lambda: "n")}),
    "dldna.checks.real": Spec({"value": Num(), "name": Fixed(lambda: "x")}),
    "dldna.checks.positive_number": Spec({"value": Num(0, None, open_lo=True), "name": Fixed(lambda: "x")}),
    "dldna.checks.non_negative_number": Spec({"value": Num(0, None), "name": Fixed(lambda: "x")}),
    "dldna.checks.probability": Spec({"value": PROBABILITY, "name": Fixed(lambda: "p")}),
    "dldna.checks.text": Spec({"value": Text(), "name": Fixed(lambda: "t")}),
    "dldna.checks.boolean": Spec({"value": Bool(), "name": Fixed(lambda: "b")}),
    "dldna.checks.one_of": Spec({"value": Choice(("a", "b")), "name": Fixed(lambda: "c"),
                                 "choices": Fixed(lambda: ("a", "b"))}),
    "dldna.checks.sequence": Spec({"values": Fixed(lambda: [1, 2], bad=(None, "12", [1, "x"], [0])),
                                   "name": Fixed(lambda: "v"), "each": Fixed(lambda: checks.positive_int)}),
    "dldna.checks.features": Spec({"x": Floats((2, 3), any_rank=True), "name": Fixed(lambda: "x")}),
    "dldna.checks.ids": Spec({"x": Ids((2, 3), 7), "name": Fixed(lambda: "ids"),
                              "vocab_size": Fixed(lambda: 7)}),
    "dldna.checks.id_list": Spec({"values": Ids((4,), 7), "name": Fixed(lambda: "ids"),
                                  "vocab_size": Fixed(lambda: 7)}),
    "dldna.checks.mask": Spec({"value": Mask((3, 3)), "target": Fixed(lambda: (2, 3, 3))}),
    "dldna.checks.as_tensor": Spec({"x": Floats((2, 2), any_rank=True, bool_ok=True, nan_ok=True),
                                    "name": Fixed(lambda: "x")},
                                   call=lambda x, name: checks.as_tensor(x, name)),
    "dldna.checks.device": Spec({"value": Fixed(lambda: "cpu", bad=(3, "gpu", "cpu:x", ["cpu"]))}),
    "dldna.checks.device_of": Spec({"module": Fixed(lambda: torch.nn.Linear(2, 2), bad=NOT_A_MODULE)}),
    "dldna.checks.dtype_of": Spec({"module": Fixed(lambda: torch.nn.Linear(2, 2), bad=NOT_A_MODULE)}),
    "dldna.checks.module": Spec({"value": Fixed(lambda: torch.nn.Linear(2, 2), bad=NOT_A_MODULE),
                                 "name": Fixed(lambda: "model")}),
    "dldna.checks.function": Spec({"value": Fixed(lambda: len, bad=(None, "f", 3)),
                                   "name": Fixed(lambda: "fn")}),
    # --- fmt ---------------------------------------------------------------------
    "dldna.fmt.integer": Spec({"value": Fixed(lambda: 1050624, bad=("12", None, 2.5, float("nan"), True))}),
    "dldna.fmt.number": Spec({"value": Num(typical=(-1e6, 1e6)), "decimals": Int(0, 4)}),
    "dldna.fmt.percent": Spec({"fraction": Num(typical=(-2.0, 2.0)), "decimals": Int(0, 3)}),
    # --- runtime, cpu --------------------------------------------------------------
    "dldna.runtime.get_device": Spec({"name": Fixed(lambda: "cpu", bad=(3, "gpu", "cpu:x"))}),
    "dldna.runtime.seed_everything": Spec({"seed": SEED}),
    "dldna.runtime.available_devices": Spec(),
    "dldna.runtime.in_colab": Spec(),
    "dldna.runtime.is_accelerated": Spec({"device": Fixed(lambda: "cpu", bad=(3, "gpu"))}),
    "dldna.runtime.describe": Spec({"device": Fixed(lambda: "cpu", bad=(3, "gpu"))}),
    "dldna.cpu.is_x86": Spec(),
    "dldna.cpu.describe": Spec(),
    # --- masking -------------------------------------------------------------------
    "dldna.masking.causal_mask": Spec({"q_len": Int(1, 12)}),
    "dldna.masking.local_window_mask": Spec({"size": Int(1, 10), "window": Int(1, 4)}),
    "dldna.masking.strided_mask": Spec({"size": Int(1, 10), "stride": Int(1, 4), "causal": Bool()}),
    "dldna.masking.fixed_mask": Spec({"size": Int(1, 10), "block": Int(1, 4), "causal": Bool()}),
    "dldna.masking.grid_mask": Spec({"height": Int(1, 5), "width": Int(1, 5), "radius": Int(0, 2)}),
    "dldna.masking.to_additive": Spec({"mask": Mask((3, 4))}),
    "dldna.masking.fully_masked_rows": Spec({"mask": Mask((3, 4))}),
    "dldna.masking.describe": Spec({"mask": Mask((3, 4))}),
    "dldna.masking.masked_scores": Spec({"scores": Floats((3, 4), forms=("float32", "float64")),
                                         "mask": Mask((3, 4))}),
    # --- attention -----------------------------------------------------------------
    "dldna.attention.softmax": Spec({"scores": Floats((3, 4), any_rank=True), "temperature": TEMPERATURE}),
    "dldna.attention.attention_weights": Spec({"query": Floats((2, 3, 4)), "key": Floats((2, 5, 4)),
                                               "temperature": TEMPERATURE}),
    "dldna.attention.scaled_dot_product_attention": Spec(
        {"query": Floats((2, 3, 4), any_rank=True), "key": Floats((2, 5, 4), any_rank=True),
         "value": Floats((2, 5, 6), any_rank=True)}),
    "dldna.attention.dot_similarity": Spec({"x": Floats((3, 4)), "y": Floats((5, 4))}),
    "dldna.attention.cosine_similarity": Spec({"x": Floats((3, 4)), "y": Floats((5, 4))}),
    "dldna.attention.similarity_matrix": Spec({"x": Floats((3, 4)), "kind": Choice(("dot", "cosine"))}),
    "dldna.attention.basic_self_attention": Spec({"x": Floats((4, 6)), "temperature": TEMPERATURE}),
    "dldna.attention.attend": Spec({"scores": Floats((3, 5), any_rank=True),
                                    "values": Floats((5, 4), any_rank=True),
                                    "temperature": TEMPERATURE}),
    "dldna.attention.split_heads": Spec({"x": Floats((2, 3, 8), bool_ok=True, nan_ok=True),
                                         "num_heads": Choice((1, 2, 4, 8))}),
    "dldna.attention.merge_heads": Spec({"x": Floats((2, 2, 3, 4), bool_ok=True, nan_ok=True)}),
    "dldna.attention.convex_hull_2d": Spec({"points": Floats((6, 2))}),
    "dldna.attention.in_convex_hull_2d": Spec({"queries": Floats((3, 2)), "points": Floats((6, 2))}),
    "dldna.attention.SelfAttention": Spec({"x": Floats((2, 5, 8), any_rank=True)}, call=_no_grad(
        lambda x: A.SelfAttention(8)(x))),
    "dldna.attention.MultiHeadAttention": Spec(
        {"n_heads": Choice((1, 2, 4, 8)), "x": Floats((2, 5, 8))},
        call=_no_grad(lambda n_heads, x: A.MultiHeadAttention(8, n_heads)(x))),
    # --- positional ----------------------------------------------------------------
    "dldna.positional.frequencies": Spec({"d_model": Choice((2, 4, 8, 16)),
                                          "base": Num(1, None, open_lo=True, typical=(1.5, 1e5))}),
    "dldna.positional.wavelengths": Spec({"d_model": Choice((2, 4, 8, 16)),
                                          "base": Num(1, None, open_lo=True, typical=(1.5, 1e5))}),
    "dldna.positional.sinusoidal": Spec({"n_positions": Int(1, 20), "d_model": Choice((2, 4, 8)),
                                         "base": Num(1, None, open_lo=True, typical=(1.5, 1e5))}),
    "dldna.positional.shift_rotation": Spec({"shift": Int(-5, 5, refuse_below=False),
                                             "d_model": Choice((2, 4, 8))}),
    "dldna.positional.relative_distances": Spec({"q_len": Int(1, 8)}),
    "dldna.positional.clipped_distances": Spec({"q_len": Int(1, 8), "max_distance": Int(1, 4)}),
    "dldna.positional.alibi_slopes": Spec({"num_heads": Int(1, 16)}),
    "dldna.positional.block_rotation": Spec({"angles": Floats((3,))}),
    "dldna.positional.lookback_batch": Spec({"batch": Int(1, 4), "length": Int(4, 10), "lag": Int(1, 3)}),
    # --- training ------------------------------------------------------------------
    "dldna.training.noam_rate": Spec({"step": Int(1, 10**4), "d_model": Int(1, 512), "warmup": Int(1, 4000),
                                      "factor": Num(0, None, open_lo=True, typical=(0.01, 10.0))}),
    "dldna.training.noam_lambda": Spec({"d_model": Int(1, 512), "warmup": Int(1, 4000)},
                                       call=lambda **kw: training.noam_lambda(**kw)(10)),
    "dldna.training.warmup_linear_lambda": Spec({"warmup": Int(1, 10), "total": Int(20, 100)},
                                                call=lambda **kw: training.warmup_linear_lambda(**kw)(5)),
    "dldna.training.smoothed_targets": Spec({"target": Ids((4,), 5), "n_classes": Fixed(lambda: 5),
                                             "smoothing": PROBABILITY}),
    "dldna.training.LabelSmoothingLoss": Spec(
        {"smoothing": PROBABILITY, "logits": Floats((3, 5)), "target": Ids((3,), 5)},
        call=lambda smoothing, logits, target: training.LabelSmoothingLoss(smoothing)(logits, target)),
    # --- decoding ------------------------------------------------------------------
    "dldna.decoding.length_penalty": Spec({"length": Int(1, 50), "alpha": Num(0, None, typical=(0, 3))}),
    "dldna.decoding.filter_logits": Spec({"logits": Floats((2, 6)), "temperature": TEMPERATURE,
                                          "top_k": Int(1, 6, refuse_above=True),
                                          "top_p": Num(0, 1, open_lo=True)}),
    "dldna.decoding.next_token_probs": Spec({"logits": Floats((2, 6)), "temperature": TEMPERATURE,
                                             "top_k": Int(1, 6, refuse_above=True),
                                             "top_p": Num(0, 1, open_lo=True)}),
    "dldna.decoding.greedy_decode": Spec(
        {"src": Ids((2, 4), 10), "max_len": Int(1, 6), "eos_id": Int(2, 9, refuse_below=False,
                                                                       refuse_above=True)},
        call=lambda src, max_len, eos_id: decoding.greedy_decode(_model(), src, max_len, 1, eos_id)),
    "dldna.decoding.sample_decode": Spec(
        {"src": Ids((2, 4), 10), "max_len": Int(1, 6), "temperature": TEMPERATURE,
         "eos_id": Int(2, 9, refuse_below=False, refuse_above=True)},
        call=lambda src, max_len, temperature, eos_id: decoding.sample_decode(
            _model(), src, max_len, 1, eos_id, temperature=temperature, seed=0)),
    "dldna.decoding.sequence_log_prob": Spec(
        {"src": Ids((2, 4), 10), "tgt": Ids((2, 3), 10)},
        call=lambda src, tgt: decoding.sequence_log_prob(_model(), src, tgt, 1, 2)),
    "dldna.decoding.beam_search": Spec(
        {"src": Ids((1, 4), 10), "beam_width": Int(1, 3), "max_len": Int(1, 4)}, slow=True,
        call=lambda src, beam_width, max_len: decoding.beam_search(_model(), src, beam_width, max_len, 1, 2)),
    "dldna.decoding.strip": Spec({"tokens": Fixed(lambda: [[3, 4, 2], [5, 2]],
                                                        bad=("hola", [[2.5]], None, 3)),
                                  "eos_id": Int(0, 9)}),
    "dldna.decoding.BeamTree": Spec({"beam_width": Int(1, 4)}),
    # --- transformer ---------------------------------------------------------------
    "dldna.transformer.Encoder": Spec({"x": Floats((2, 4, 8))}, call=_no_grad(lambda x: _model().encoder(x))),
    "dldna.transformer.Decoder": Spec({"x": Floats((2, 3, 8)), "memory": Floats((2, 4, 8))},
                                      call=_no_grad(lambda x, memory: _model().decoder(x, memory))),
    "dldna.transformer.EncoderLayer": Spec(
        {"x": Floats((2, 4, 8))}, call=_no_grad(lambda x: _layer(transformer.EncoderLayer)(x))),
    "dldna.transformer.DecoderLayer": Spec(
        {"x": Floats((2, 3, 8)), "memory": Floats((2, 4, 8))},
        call=_no_grad(lambda x, memory: _layer(transformer.DecoderLayer)(x, memory))),
    "dldna.transformer.Transformer": Spec({"src": Ids((2, 4), 10), "tgt": Ids((2, 3), 10)},
                                          call=_no_grad(lambda src, tgt: _model()(src, tgt))),
    "dldna.transformer.count_parameters": Spec({"module": Fixed(_model, bad=NOT_A_MODULE)}),
    # --- embeddings ----------------------------------------------------------------
    "dldna.embeddings.pca_2d": Spec({"vectors": Floats((5, 3), extra_invalid=(torch.ones(4, 3),))}),
    "dldna.embeddings.projector_2d": Spec({"vectors": Floats((5, 3), extra_invalid=(torch.ones(4, 3),))},
                                          call=lambda vectors: embeddings.projector_2d(vectors)(vectors)),
    "dldna.embeddings.tokenize": Spec({"text": Text(examples=("El gato come.", "hola"))}),
    "dldna.embeddings.category_of": Spec({"word": Text(examples=("gato", "el"))}),
    "dldna.embeddings.generate_corpus": Spec({"n_sentences": Int(1, 20), "seed": SEED}),
    # --- vit -------------------------------------------------------------------------
    "dldna.vit.patchify": Spec({"images": Floats((2, 1, 8, 8)), "patch_size": Choice((1, 2, 4, 8))}),
    "dldna.vit.cls_attention": Spec({"weights": Floats((2, 2, 5, 5), nonneg=True)}),
    "dldna.vit.attention_rollout": Spec(
        {"maps": Floats((1, 2, 5, 5), nonneg=True, extra_invalid=(torch.zeros(1, 2, 5, 5),)),
         "head_fusion": Choice(("mean", "max", "min"))},
        call=lambda maps, head_fusion: vit.attention_rollout([maps], residual=False,
                                                             head_fusion=head_fusion)),
    "dldna.vit.position_similarity": Spec({"table": Floats((5, 4))}),
    "dldna.vit.patch_cost": Spec({"image_size": Choice((8,)), "patch_size": Choice((1, 2, 4, 8))}),
    # --- tasks -----------------------------------------------------------------------
    "dldna.tasks.addition.carries": Spec({"a": Int(0, 999), "b": Int(0, 999)}),
    "dldna.tasks.addition.AdditionTask": Spec(
        {"a": Int(0, 999, refuse_above=True), "b": Int(0, 999, refuse_above=True)},
        call=lambda a, b: addition.AdditionTask(3).make(a, b)),
    "dldna.tasks.copy.CopyTask": Spec({"length": Int(1, 20), "ids": Ids((5,), 23, lo=3)},
                                      call=lambda length, ids: copy.CopyTask(length).tgt_tokenizer.decode(
                                          ids)),
    "dldna.tasks.parsing.ParsingTask": Spec(
        {"max_ops": Int(1, 6, refuse_below=False), "min_ops": Int(0, 1), "extra_parens": PROBABILITY},
        call=lambda **kw: parsing.ParsingTask(**kw).sample(random.Random(0))),
    "dldna.tasks.parsing.parse": Spec({"text": Text(examples=("x=1+2", "y=(3*x)-z"))}),
    "dldna.tasks.parsing.to_prefix": Spec({"tree": Fixed(lambda: parsing.parse("x=1+2"),
                                                         bad=(None, 3, ("ADD", "1"), ["x"]))}),
    "dldna.tasks.parsing.to_infix": Spec({"tree": Fixed(lambda: parsing.parse("x=1+2"),
                                                        bad=(None, 3, ("ADD", "1")))}),
    "dldna.tasks.parsing.draw": Spec({"tree": Fixed(lambda: parsing.parse("x=1+2"), bad=(None, 3))}),
    "dldna.tasks.parsing.from_prefix": Spec({"tokens": Fixed(lambda: ["ASSIGN", "x", "1"],
                                                             bad=(None, 3, "ASSIGN x 1", [1, 2]))}),
    "dldna.tasks.parsing.random_tree": Spec({"rng": Fixed(lambda: random.Random(0), bad=(None, 3)),
                                             "n_ops": Int(0, 6), "leaf_var": PROBABILITY}),
    "dldna.tasks.base.strip_output": Spec({"ids": Fixed(lambda: [1, 4, 5, 2, 0], bad=("hola", [2.5], None))}),
    # --- viz ---------------------------------------------------------------------------
    "dldna.viz.heatmap.tick_labels": Spec({"labels": Fixed(lambda: ["a", "b", "c"], bad=("abc", ["a"], 3)),
                                           "n": Fixed(lambda: 3)}),
    "dldna.viz.heatmap.heatmap": Spec({"values": Floats((3, 4)),
                                       "row_labels": Fixed(lambda: ["a", "b", "c"], bad=("abc", 3))},
                                      slow=True),
    "dldna.viz.decoding.temperature_tradeoff": Spec(
        {"temperatures": Fixed(lambda: [0.5, 1.0, 2.0], bad=(None, ["x", 1, 2], [0.5, 1.0], [0, 1, 2])),
         "accuracy": Fixed(lambda: [0.5, 0.6, 0.7], bad=([0.5], None, "abc")),
         "diversity": Fixed(lambda: [1, 2, 3], bad=([1, 2], [1, float("nan"), 2]))}, slow=True),
    "dldna.viz.decoding.beam_tree": Spec({"tree": Fixed(_tree, bad=(None, decoding.BeamTree(2), "árbol")),
                                          "token_label": Fixed(lambda: [str(i) for i in range(10)],
                                                               bad=("abc", None, ["a"]))}, slow=True),
    "dldna.viz.decoding.beam_tree_layout": Spec({"tree": Fixed(_tree, bad=(None, decoding.BeamTree(2)))}),
    # --- explorers: bad input gives an explorer with a Spanish message --------------
    "dldna.widgets.attention.attention_explorer": Spec(
        {"sentence": Fixed(lambda: "el gato come pescado", bad=(None, "", 3)),
         "vectors": Fixed(lambda: torch.randn(4, 6, generator=torch.Generator().manual_seed(0)),
                          bad=("vectores", None)),
         "temperatures": Fixed(lambda: (0.5, 1.0), bad=(["x"], None, [0], "1"))},
        explorer=True, slow=True),
    "dldna.widgets.masking.mask_explorer": Spec(
        {"n": Int(2, 12), "pad": Int(0, 1), "lengths": Fixed(lambda: (4, 8), bad=(None, ["x"], "48"))},
        explorer=True, slow=True),
    "dldna.widgets.positional.positional_explorer": Spec(
        {"d_model": Choice((8, 16)), "bases": Fixed(lambda: (100.0, 10000.0), bad=(None, ["x"], [0.5])),
         "d_models": Fixed(lambda: (8,), bad=(None, ["x"], "8"))}, explorer=True, slow=True),
    "dldna.widgets.scaling.scaling_explorer": Spec(
        {"d_k": Choice((4, 16)), "d_ks": Fixed(lambda: (4, 16), bad=(None, ["x"], [0], "4"))},
        explorer=True, slow=True),
    # --- more layers and helpers ------------------------------------------------------
    "dldna.transformer.TokenEmbedding": Spec(
        {"vocab": Int(1, 20), "d_model": Int(1, 16), "ids": Ids((2, 3), 1)},
        call=_no_grad(lambda vocab, d_model, ids: transformer.TokenEmbedding(vocab, d_model)(ids))),
    "dldna.transformer.parameter_breakdown": Spec({"model": Fixed(_model, bad=NOT_A_MODULE)}),
    "dldna.positional.SinusoidalPositionalEncoding": Spec(
        {"d_model": Choice((2, 4, 8)), "base": Num(1, None, open_lo=True, typical=(1.5, 1e5))},
        call=_no_grad(lambda d_model, base: positional.SinusoidalPositionalEncoding(d_model, base)(
            torch.zeros(1, 5, d_model)))),
    "dldna.positional.ALiBi": Spec({"num_heads": Int(1, 16)}),
    "dldna.positional.RotaryEmbedding": Spec({"d_k": Choice((2, 4, 8)),
                                              "base": Num(1, None, open_lo=True, typical=(1.5, 1e5))}),
    "dldna.vit.window_mask": Spec({"height": Choice((4,)), "width": Choice((4,)),
                                   "window": Choice((1, 2, 4))}),
    "dldna.vit.PatchEmbedding": Spec(
        {"patch_size": Choice((1, 2, 4)), "images": Floats((2, 1, 8, 8))},
        call=_no_grad(lambda patch_size, images: vit.PatchEmbedding(patch_size, 1, 8)(images))),
    "dldna.vit.interpolate_positions": Spec({"table": Floats((5, 4)), "grid": Int(1, 4)}),
    "dldna.masking.sequence_mask": Spec({"lengths": Ids((3,), 6, lo=1), "max_len": Fixed(lambda: 5)}),
    "dldna.masking.from_additive": Spec({"additive": Fixed(
        lambda: masking.to_additive(masking.causal_mask(4)),
        bad=(None, "x", torch.ones(3, 3, dtype=torch.bool)))}),
    "dldna.tasks.base.pad_batch": Spec({"seqs": Fixed(lambda: [[3, 4], [5]],
                                                      bad=(None, [], "ab", [[1.5]], [["a"]]))}),
    # --- chapter 10: KV cache, grouped-query attention, online softmax, subwords -------
    "dldna.attention.repeat_kv": Spec({"x": Floats((2, 2, 3, 4), bool_ok=True, nan_ok=True),
                                       "num_heads": Choice((2, 4, 8))}),
    "dldna.kv_cache.cache_bytes": Spec({"n_layers": Int(1, 8), "n_kv_heads": Int(1, 8), "d_head": Int(1, 64),
                                        "length": Int(1, 512)}),
    "dldna.kv_cache.forward_cached": Spec(
        {"model": Fixed(_gpt, bad=NOT_A_MODULE), "ids": Ids((2, 5), 12, lo=1)}, call=_no_grad(
            lambda model, ids: kv_cache.forward_cached(model, ids)[0])),
    "dldna.kv_cache.greedy_generate": Spec(
        {"model": Fixed(_gpt, bad=NOT_A_MODULE), "prompt": Ids((1, 3), 12, lo=1), "steps": Int(1, 5),
         "use_cache": Bool()}, slow=True),
    "dldna.kv_cache.step_seconds": Spec(
        {"model": Fixed(_gpt, bad=NOT_A_MODULE), "ids": Ids((1, 4), 12, lo=1), "use_cache": Bool(),
         "repeats": Int(1, 2)}, slow=True),
    "dldna.kv_cache.compare_step_seconds": Spec(
        {"model": Fixed(_gpt, bad=NOT_A_MODULE), "ids": Ids((1, 4), 12, lo=1), "repeats": Int(1, 2)},
        slow=True),
    "dldna.online_softmax.online_attention": Spec(
        {"query": Floats((1, 3, 4)), "key": Floats((1, 6, 4)), "value": Floats((1, 6, 2)), "tile": Int(1, 6),
         "causal": Bool()}, call=lambda **kw: online_softmax.online_attention(**kw).output),
    "dldna.online_softmax.weight_bytes": Spec({"q_len": Int(1, 64), "k_len": Int(1, 64), "tile": Int(1, 8)}),
    "dldna.subwords.word_counts": Spec({"texts": Fixed(lambda: ["el gato come", "el perro"],
                                                      bad=(None, 3, [3]))}),
    "dldna.subwords.train_bpe": Spec({"counts": Fixed(lambda: {"gato": 3, "gata": 2}, bad=(None, {}, "gato")),
                                      "num_merges": Int(0, 6)}),
    "dldna.subwords.train_tokenizers_bpe": Spec(
        {"counts": Fixed(lambda: {"gato": 3, "gata": 2}, bad=(None, {}, "gato")), "num_merges": Int(0, 6)},
        slow=True),
    "dldna.subwords.encode_word": Spec({"word": Fixed(lambda: "gatos", bad=(None, 3, "")),
                                        "merges": Fixed(lambda: [("g", "a"), ("ga", "t")], bad=(None, 3))}),
    "dldna.subwords.encode": Spec({"text": Fixed(lambda: "el gato", bad=(None, 3)),
                                   "merges": Fixed(lambda: [("g", "a"), ("ga", "t")], bad=(None, 3))}),
    "dldna.subwords.vocabulary": Spec({"counts": Fixed(lambda: {"gato": 3}, bad=(None, {}, "gato")),
                                       "merges": Fixed(lambda: [("g", "a")], bad=(None, 3))}),
    "dldna.viz.online_softmax.online_softmax_steps": Spec({"n_keys": Int(2, 16), "d_v": Int(1, 4),
                                                           "tile": Int(1, 8)}),
    "dldna.viz.online_softmax.online_softmax_panel": Spec(
        {"steps": Fixed(lambda: viz_online.online_softmax_steps(), bad=(None, "pasos")),
         "step": Int(1, 3)}, call=lambda **kw: plt.close(viz_online.online_softmax_panel(**kw)) or True,
        slow=True),
    "dldna.widgets.online_softmax.online_softmax_explorer": Spec(
        {"tile": Choice((2, 3, 4)), "tiles": Fixed(lambda: (2, 4), bad=(None, ["x"], "4", [0]))},
        explorer=True, slow=True),
    # --- training: recipe, loops, optimisers, checkpoints ------------------------------
    "dldna.training.Recipe": Spec(
        {"steps": Int(2, 50), "batch_size": Int(1, 64), "lr": Num(0, None, open_lo=True, typical=(1e-5, 1.0)),
         "warmup": Int(1, 1), "schedule": Choice(training.SCHEDULES), "smoothing": PROBABILITY,
         "grad_clip": Fixed(lambda: 1.0, bad=(0, -1.0, "1", math.nan, math.inf, True)),
         "eval_every": Int(0, 10), "eval_size": Int(1, 300), "weight_decay": Num(0, None, typical=(0, 1))}),
    "dldna.training.fit": Spec(
        {"model": Fixed(_linear, bad=NOT_A_MODULE),
         "batches": Fixed(_xy, bad=(None, 3)),
         "loss_fn": Fixed(lambda: _mse, bad=(None, "mse", 3)),
         "recipe": Fixed(_recipe, bad=(None, "receta", {"steps": 2})),
         "seed": SEED, "progress": Fixed(lambda: False, bad=("no", 0, None)),
         "snapshots": Fixed(lambda: (1,), bad=(None, "1", [0], [1.5], [5], 3)),
         "evaluate": Fixed(lambda: None, bad=("exactitud", 3, lambda m: "x", lambda m: math.nan))},
        call=lambda **kw: training.fit(**kw, device="cpu"), slow=True),
    "dldna.training.train_steps": Spec(
        {"model": Fixed(lambda: _OWN, bad=NOT_A_MODULE), "batches": Fixed(_xy, bad=(None, 3)),
         "optimizer": Fixed(lambda: _OWN, bad=(None, "adam", 3)), "steps": Int(0, 3),
         "loss_fn": Fixed(lambda: _mse, bad=(None, "mse")),
         "scheduler": Fixed(lambda: None, bad=("noam", 3)),
         "grad_clip": Fixed(lambda: None, bad=(0, -1.0, "1", math.nan)),
         "on_step": Fixed(lambda: None, bad=("x", 3)), "read_every": Int(1, 5)},
        call=lambda model, optimizer, **kw: _train_steps(model, optimizer, **kw)),
    "dldna.training.layer_gradient_norms": Spec(
        {"layers": Fixed(_layers_with_grads, bad=(None, 3, "capa", [None], [torch.ones(2)]))}),
    "dldna.training.noam_scheduler": Spec(
        {"optimizer": Fixed(lambda: torch.optim.Adam(_linear().parameters(), lr=1.0), bad=(None, "adam", 3)),
         "d_model": Int(1, 512), "warmup": Int(1, 4000),
         "factor": Num(0, None, open_lo=True, typical=(0.01, 10.0))},
        call=lambda **kw: training.noam_scheduler(**kw).get_last_lr()),
    "dldna.training.noam_optimizer": Spec(
        {"params": Fixed(lambda: _linear().parameters(), bad=(None, 3, "pesos", [], [1, 2], torch.ones(2))),
         "d_model": Int(1, 512), "warmup": Int(1, 4000),
         "factor": Num(0, None, open_lo=True, typical=(0.01, 10.0))},
        call=lambda **kw: training.noam_optimizer(**kw)[1].get_last_lr()),
    "dldna.training.seq2seq_loss": Spec(
        {"model": Fixed(_model, bad=NOT_A_MODULE), "src": Ids((2, 4), 10),
         "tgt": Fixed(lambda: torch.tensor([[1, 4, 5, 2], [1, 6, 2, 0]]),
                      bad=(None, "hola", torch.tensor([[1], [1]]), torch.tensor([1, 4, 2]),
                           torch.tensor([[1, 4, 10], [1, 2, 0]]), torch.tensor([[1.0, 4.5, 2.0]]))),
         "pad_id": Int(0, 0), "smoothing": PROBABILITY},
        call=_no_grad(training.seq2seq_loss)),
    "dldna.training.save_checkpoint": Spec(
        {"model": Fixed(_model, bad=(None, "modelo", torch.nn.Linear(2, 2))),
         "path": Fixed(lambda: "punto.pt", bad=(None, 3, "", ["a.pt"])),
         "extra": Fixed(lambda: {"exactitud": 0.5}, bad=("x", 3, ["a"]))},
        call=lambda path, **kw: training.save_checkpoint(path=_in_tmp(path), **kw).exists()),
    "dldna.training.load_checkpoint": Spec(
        {"path": Fixed(lambda: _checkpoint_file(), bad=(None, 3, "", ["a.pt"])),
         "model": Fixed(lambda: None, bad=("modelo", 3, torch.nn.Linear(2, 2))),
         "device": Fixed(lambda: "cpu", bad=(3, "gpu"))},
        call=lambda **kw: training.load_checkpoint(**kw)[1]),
}

#: Result containers and exceptions: returned or raised by dldna, not typed by a reader.
RETURNED = {
    "dldna.corpus.Sentence", "dldna.decoding.BeamNode", "dldna.decoding.BeamSearchResult",
    "dldna.decoding.Hypothesis", "dldna.embeddings.UnknownWordError", "dldna.rnn.ReversalResult",
    "dldna.runtime.DeviceError", "dldna.tasks.addition.OrderRun", "dldna.tasks.base.BenchResult",
    "dldna.tasks.base.EvalResult", "dldna.tasks.base.Example", "dldna.tasks.parsing.ParseError",
    "dldna.tasks.text_to_text.TextToTextRun", "dldna.tasks.translation.AttentionRecord",
    "dldna.tasks.translation.GrammarError", "dldna.tasks.translation.TranslationRun",
    "dldna.training.CheckpointError", "dldna.training.FitResult", "dldna.training.History",
    "dldna.vit.DigitsSplit", "dldna.kv_cache.KVCache", "dldna.online_softmax.OnlineResult",
}

#: Public names without a spec yet (issue 29, to do). This list may only shrink.
PENDING = {
    "dldna.transformer.FeedForward", "dldna.widgets.online_softmax.OnlineSoftmaxExplorer",
    "dldna.attention.AdditiveScore", "dldna.attention.BilinearScore",
    "dldna.attention.CollaborativeAttention", "dldna.attention.DotScore",
    "dldna.attention.ScaledDotScore", "dldna.attention.entropy", "dldna.attention.is_convex_combination",
    "dldna.corpus.generate", "dldna.corpus.sentence", "dldna.corpus.split_held_out",
    "dldna.corpus.tokenizer", "dldna.corpus.with_word_at", "dldna.cpu.pin_cpu_kernels",
    "dldna.decoding.BeamObserver", "dldna.decoding.TreeRecorder", "dldna.decoding.model_step",
    "dldna.embeddings.SkipGramNegativeSampling", "dldna.embeddings.Vocabulary",
    "dldna.embeddings.Word2VecConfig", "dldna.embeddings.WordVectors", "dldna.embeddings.one_hot",
    "dldna.embeddings.skipgram_pairs", "dldna.embeddings.train_word2vec",
    "dldna.language_models.BigramModel", "dldna.language_models.LanguageModel",
    "dldna.language_models.SequenceClassifier", "dldna.language_models.accuracy",
    "dldna.language_models.benchmark", "dldna.language_models.causal_lm_loss",
    "dldna.language_models.classification_loss", "dldna.language_models.contextual_vectors",
    "dldna.language_models.encode_sentences", "dldna.language_models.mask_tokens",
    "dldna.language_models.masked_batches", "dldna.language_models.masked_lm_loss",
    "dldna.language_models.next_word_probs", "dldna.language_models.perplexity",
    "dldna.language_models.pretrain", "dldna.language_models.prompt_step",
    "dldna.language_models.sense_similarities", "dldna.language_models.sentence_batches",
    "dldna.language_models.span_corrupt", "dldna.language_models.span_restore",
    "dldna.language_models.uniform_perplexity", "dldna.masking.combine",
    "dldna.masking.padding_mask",
    "dldna.positional.LearnedPositionalEncoding", "dldna.positional.PositionProbe",
    "dldna.positional.ShawRelativePosition",
    "dldna.positional.T5RelativeBias",
    "dldna.positional.lag_attention", "dldna.positional.probe_accuracy",
    "dldna.positional.shaw_attention", "dldna.positional.t5_buckets", "dldna.rnn.GRUSeq2Seq",
    "dldna.rnn.reversal_batch", "dldna.rnn.train_reversal", "dldna.tasks.addition.benchmark",
    "dldna.tasks.addition.compare_orders", "dldna.tasks.addition.setup",
    "dldna.tasks.addition.units_first_wins", "dldna.tasks.base.Batch", "dldna.tasks.base.Task",
    "dldna.tasks.base.Tokenizer", "dldna.tasks.base.benchmark_task", "dldna.tasks.base.exact_match",
    "dldna.tasks.base.greedy_decoder", "dldna.tasks.base.make_batch",
    "dldna.tasks.base.train", "dldna.tasks.lookback.train_probe", "dldna.tasks.text_to_text.Echo",
    "dldna.tasks.text_to_text.TextToTextTask", "dldna.tasks.text_to_text.benchmark",
    "dldna.tasks.text_to_text.chapter_tasks", "dldna.tasks.text_to_text.setup",
    "dldna.tasks.text_to_text.train_text_to_text", "dldna.tasks.translation.Adjective",
    "dldna.tasks.translation.Noun", "dldna.tasks.translation.NounPhrase",
    "dldna.tasks.translation.Sentence", "dldna.tasks.translation.TranslationTask",
    "dldna.tasks.translation.Verb", "dldna.tasks.translation.alignment_accuracy",
    "dldna.tasks.translation.attention_record", "dldna.tasks.translation.benchmark",
    "dldna.tasks.translation.parse_spanish", "dldna.tasks.translation.setup",
    "dldna.tasks.translation.train_translation", "dldna.tasks.translation.translate",
    "dldna.transformer.DeepStack", "dldna.transformer.InputEmbedding",
    "dldna.transformer.PositionalEncoding",
    "dldna.transformer.TransformerConfig",
    "dldna.transformer.trace_shapes", "dldna.vit.MLP", "dldna.vit.TinyCNN",
    "dldna.vit.ViTConfig", "dldna.vit.VisionTransformer", "dldna.vit.accuracy", "dldna.vit.fit",
    "dldna.vit.load_digits_split", "dldna.vit.neighbour_agreement",
    "dldna.vit.unpatchify", "dldna.viz.attention.as_mask",
    "dldna.viz.attention.as_matrix", "dldna.viz.attention.attention_heatmap",
    "dldna.viz.attention.attention_panel", "dldna.viz.attention.attention_row_bars",
    "dldna.viz.attention.entropy_bars", "dldna.viz.attention.max_entropy",
    "dldna.viz.attention.panel_axes", "dldna.viz.attention.random_attention",
    "dldna.viz.attention.retemper", "dldna.viz.attention.row_entropy",
    "dldna.viz.attention.scaling_panel", "dldna.viz.attention.self_attention_weights",
    "dldna.viz.attention.tokens_from", "dldna.viz.decoding.alignment_heatmap",
    "dldna.viz.decoding.sampling_filters", "dldna.viz.diagrams.available", "dldna.viz.diagrams.diagram",
    "dldna.viz.embeddings.format_matrix", "dldna.viz.embeddings.plot_attention_graph",
    "dldna.viz.embeddings.plot_convex_hull", "dldna.viz.embeddings.plot_curve",
    "dldna.viz.embeddings.plot_projection", "dldna.viz.heatmap.masked_legend_handle",
    "dldna.viz.heatmap.outline_cells", "dldna.viz.masking.plot_attention_graphs",
    "dldna.viz.masking.plot_bipartite_graph", "dldna.viz.masking.plot_complete_graph",
    "dldna.viz.masking.plot_grid_graph", "dldna.viz.masking.plot_mask",
    "dldna.viz.masking.plot_mask_graph", "dldna.viz.masking.plot_masked_weights",
    "dldna.viz.masking.plot_masks", "dldna.viz.masking.plot_patterns",
    "dldna.viz.positional.PositionalData", "dldna.viz.positional.PositionalKind",
    "dldna.viz.positional.check_pairs", "dldna.viz.positional.cosine_similarity_matrix",
    "dldna.viz.positional.positional_data", "dldna.viz.positional.positional_heatmap",
    "dldna.viz.positional.positional_panel", "dldna.viz.positional.positional_similarity",
    "dldna.viz.positional.positional_waves", "dldna.viz.positional.register_kind",
    "dldna.viz.positional_schemes.plot_dot_by_distance",
    "dldna.viz.positional_schemes.plot_extrapolation", "dldna.viz.positional_schemes.plot_pair_circles",
    "dldna.viz.positional_schemes.plot_relative_schemes", "dldna.viz.style.color",
    "dldna.viz.style.colormap_lut", "dldna.viz.style.figure_or_new", "dldna.viz.style.figure_png",
    "dldna.viz.style.labels", "dldna.viz.style.mathtext_safe", "dldna.viz.style.matplotlib_cmap",
    "dldna.viz.style.new_figure", "dldna.viz.style.relative_luminance", "dldna.viz.style.text_color",
    "dldna.viz.style.theme", "dldna.viz.transformer.activations_plot",
    "dldna.viz.transformer.gradient_norms_plot", "dldna.viz.transformer.loss_plot",
    "dldna.viz.transformer.noam_curves", "dldna.viz.transformer.noam_plot",
    "dldna.viz.transformer.normalization_plot", "dldna.viz.vit.as_image",
    "dldna.viz.vit.plot_cls_attention", "dldna.viz.vit.plot_patch_size", "dldna.viz.vit.plot_patches",
    "dldna.viz.vit.plot_position_similarity", "dldna.viz.vit.plot_rollout", "dldna.viz.vit.plot_windows",
    "dldna.widgets.attention.AttentionExplorer", "dldna.widgets.attention.AttentionMaps",
    "dldna.widgets.attention.model_attention_explorer", "dldna.widgets.core.ErrorExplorer",
    "dldna.widgets.core.Explorer", "dldna.widgets.core.build_or_error",
    "dldna.widgets.core.canonical_json", "dldna.widgets.core.error_html", "dldna.widgets.core.front_end",
    "dldna.widgets.core.note_html", "dldna.widgets.core.options", "dldna.widgets.core.pack",
    "dldna.widgets.core.reader_message", "dldna.widgets.core.rounded",
    "dldna.widgets.core.standalone_page", "dldna.widgets.core.static_html", "dldna.widgets.core.unpack",
    "dldna.widgets.core.widget_view", "dldna.widgets.masking.MaskExplorer",
    "dldna.widgets.masking.build_mask", "dldna.widgets.masking.weights_for",
    "dldna.widgets.positional.PositionalExplorer", "dldna.widgets.positional.default_pairs",
    "dldna.widgets.scaling.ScalingExplorer", "dldna.widgets.vit.PatchSizeExplorer",
    "dldna.widgets.vit.patch_size_explorer", "dldna.widgets.vit.patch_table",
}


def _spanish_refusal(spec: Spec, call):
    """``call()`` is refused in Spanish: an exception, or an explorer that shows the message."""
    try:
        result = call()
    except (ValueError, TypeError) as err:
        assert is_spanish(str(err)), f"mensaje no español: {type(err).__name__}: {err}"
        return
    finally:
        plt.close("all")
    if spec.explorer and getattr(result, "error", None):
        from dldna.widgets import core

        assert result.error != core.UNEXPECTED, "el explorador muestra el mensaje genérico"
        assert is_spanish(result.error), f"mensaje no español: {result.error}"
        return
    raise AssertionError(f"no se rechazó: devolvió {type(result).__name__}")


def _call(name: str, spec: Spec, args: dict):
    fn = spec.call or resolve(name)
    return fn(**args)


def _settings(spec: Spec):
    current = settings()
    return settings(current, max_examples=max(1, current.max_examples // (4 if spec.slow else 1)))


NAMES = sorted(SPECS)


def test_every_public_name_is_registered():
    public = set(public_names())
    registered = set(SPECS) | RETURNED | PENDING
    missing = sorted(public - registered)
    assert not missing, f"funciones públicas sin propiedad (añádelas a SPECS en {__file__}): {missing}"
    gone = sorted(registered - public)
    assert not gone, f"nombres registrados que ya no son públicos: {gone}"
    both = sorted(set(SPECS) & PENDING)
    assert not both, f"ya tienen propiedad: sácalos de PENDING: {both}"


@pytest.mark.parametrize("name", sorted(RETURNED))
def test_returned_names_are_data_or_errors(name):
    obj = resolve(name)
    assert inspect.isclass(obj) and (dataclasses.is_dataclass(obj) or issubclass(obj, Exception)), name


@pytest.mark.parametrize("name", NAMES)
def test_valid_input_gives_a_result_without_nan(name):
    spec = SPECS[name]
    if not spec.run_valid:
        pytest.skip("una llamada válida entrena un modelo")

    @_settings(spec)
    @given(st.fixed_dictionaries({k: a.valid() for k, a in spec.args.items()}))
    def run(args):
        try:
            result = _call(name, spec, args)
        finally:
            plt.close("all")
        if spec.explorer:
            assert getattr(result, "error", None) is None, f"{args}: {result.error}"
        assert finite(result), f"{name}({args}) devolvió NaN"
        if spec.check is not None:
            assert spec.check(result)

    run()


@pytest.mark.parametrize("name", [n for n in NAMES if any(a.invalid() is not None
                                                          for a in SPECS[n].args.values())])
def test_invalid_input_is_refused_in_spanish(name):
    spec = SPECS[name]
    bad = {k: a.invalid() for k, a in spec.args.items() if a.invalid() is not None}

    @_settings(spec)
    @given(st.fixed_dictionaries({k: a.valid() for k, a in spec.args.items()}),
           st.sampled_from(sorted(bad)).flatmap(lambda k: st.tuples(st.just(k), bad[k])))
    def run(args, replacement):
        key, value = replacement
        args = {**args, key: value}
        _spanish_refusal(spec, lambda: _call(name, spec, args))

    run()


@pytest.mark.parametrize("name", [n for n in NAMES if any(a.edge() is not None
                                                          for a in SPECS[n].args.values())])
def test_huge_and_tiny_numbers_give_a_finite_result_or_a_spanish_refusal(name):
    spec = SPECS[name]
    edge = {k: a.edge() for k, a in spec.args.items() if a.edge() is not None}

    @_settings(spec)
    @given(st.fixed_dictionaries({k: a.valid() for k, a in spec.args.items()}),
           st.sampled_from(sorted(edge)).flatmap(lambda k: st.tuples(st.just(k), edge[k])))
    def run(args, replacement):
        key, value = replacement
        args = {**args, key: value}
        try:
            result = _call(name, spec, args)
        except (ValueError, TypeError) as err:
            assert is_spanish(str(err)), f"mensaje no español: {type(err).__name__}: {err}"
            return
        finally:
            plt.close("all")
        if spec.explorer and getattr(result, "error", None):
            assert is_spanish(result.error), result.error
            return
        assert finite(result), f"{name}({args}) devolvió NaN"

    run()


def test_the_list_of_public_names_is_derived_from_the_package():
    names = public_names()
    # A few names every chapter uses; and nothing private.
    assert {"dldna.masking.causal_mask", "dldna.decoding.greedy_decode",
            "dldna.transformer.Transformer"} <= set(names)
    assert not any(n.rpartition(".")[2].startswith("_") for n in names)
    assert "dldna.checks.broadcasts_to" not in names  # not in checks.__all__
