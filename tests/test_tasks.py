"""Tasks of chapter 7: tokenizers, generators, held-out sets, parsing, evaluation."""

from __future__ import annotations

import ast
import random

import pytest
import torch

from dldna.tasks import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    Example,
    Tokenizer,
    exact_match,
    make_batch,
    pad_batch,
    strip_output,
)
from dldna.tasks.addition import AdditionTask, carries
from dldna.tasks.copy import CopyTask
from dldna.tasks.parsing import (
    ParseError,
    ParsingTask,
    draw,
    from_prefix,
    parse,
    random_tree,
    to_infix,
    to_prefix,
)

TASKS = [CopyTask(), AdditionTask(), AdditionTask(reverse=True), ParsingTask()]


# -- tokenizer ----------------------------------------------------------------


def test_special_ids_are_fixed_and_distinct():
    assert (PAD_ID, BOS_ID, EOS_ID) == (0, 1, 2)
    tok = Tokenizer(["a", "b"])
    assert tok.itos[:3] == ["<pad>", "<bos>", "<eos>"]
    assert tok.encode("a b") == [3, 4]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_data_tokens_never_use_special_ids(task):
    for tok in (task.src_tokenizer, task.tgt_tokenizer):
        ids = [tok.token_to_id(t) for t in tok.data_tokens]
        assert min(ids) == 3 and len(set(ids)) == len(ids) == len(tok) - 3


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_round_trip_tokenize_decode(task):
    """encode → decode gives back exactly the tokens: guards against off-by-one ids."""
    rng = random.Random(0)
    for ex in task.examples(200, rng):
        src_ids, tgt_ids = task.encode(ex)
        assert task.src_tokenizer.decode(src_ids) == list(ex.source)
        assert task.tgt_tokenizer.decode([BOS_ID, *tgt_ids, EOS_ID, PAD_ID]) == list(ex.target)
        # Every id decodes to its own token, one to one.
        assert [task.tgt_tokenizer.id_to_token(i) for i in tgt_ids] == list(ex.target)


def test_decode_stops_at_eos_and_skips_pad_and_bos():
    tok = Tokenizer(list("abc"), separator="")
    assert tok.decode([BOS_ID, 3, 4, EOS_ID, 5, 5]) == ["a", "b"]
    assert tok.decode(torch.tensor([3, PAD_ID, 5])) == ["a", "c"]
    assert tok.decode([3, EOS_ID], keep_special=True) == ["a", "<eos>"]
    assert tok.decode_text([3, 4, 5]) == "abc"


def test_tokenizer_rejects_bad_vocabularies_and_unknown_tokens():
    with pytest.raises(ValueError, match="reservado"):
        Tokenizer(["a", "<eos>"])
    with pytest.raises(ValueError, match="dos veces"):
        Tokenizer(["a", "a"])
    with pytest.raises(ValueError, match="no está en el vocabulario"):
        Tokenizer(["a"]).encode("b")
    with pytest.raises(ValueError, match="no existe"):
        Tokenizer(["a"]).decode([7])
    assert Tokenizer(["a"], unk=True).encode("a b") == [4, 3]


# -- batches ----------------------------------------------------------------------


def test_make_batch_shifts_target_for_teacher_forcing():
    b = make_batch([([3, 4, 5], [6]), ([3], [6, 7])])
    assert b.src.tolist() == [[3, 4, 5], [3, 0, 0]]
    assert b.tgt.tolist() == [[BOS_ID, 6, EOS_ID, 0], [BOS_ID, 6, 7, EOS_ID]]
    # The decoder reads tgt_in (an EOS it reads only predicts padding, which the loss ignores).
    assert b.tgt_in.tolist() == [[BOS_ID, 6, EOS_ID], [BOS_ID, 6, 7]]
    assert b.tgt_out.tolist() == [[6, EOS_ID, 0], [6, 7, EOS_ID]]
    data = b.tgt_out[:, :-1] > EOS_ID  # tgt_in is tgt_out one step later, on data tokens
    assert torch.equal(b.tgt_in[:, 1:][data], b.tgt_out[:, :-1][data])
    assert b.n_tokens == 5 and len(b) == 2
    with pytest.raises(ValueError, match="no cabe"):
        pad_batch([[1, 2, 3]], length=2)


def test_strip_output_accepts_both_output_conventions():
    assert strip_output([BOS_ID, 5, 6, EOS_ID, 0]) == [5, 6]
    assert strip_output(torch.tensor([5, 6, EOS_ID, 9])) == [5, 6]


def test_strip_output_refuses_a_batch():
    # A (1, L) tensor used to be flattened silently: a batch's rows would run together.
    with pytest.raises(ValueError, match="una sola secuencia"):
        strip_output(torch.tensor([[1, 2]]))
    with pytest.raises(ValueError, match="una sola secuencia"):
        strip_output(torch.tensor(5))


# -- held-out data ------------------------------------------------------------------


@pytest.mark.parametrize("make", [CopyTask, AdditionTask, ParsingTask])
def test_training_batches_never_contain_held_out_sources(make):
    task = make()
    test = task.test_set(300, seed=1)
    keys = {ex.key for ex in test}
    assert len(keys) == 300  # distinct
    assert task.test_set(300, seed=1) == test  # reproducible
    rng = random.Random(0)
    for _ in range(20):
        b = task.batch(64, rng)
        for row in b.src:
            assert tuple(task.src_tokenizer.decode(row)) not in keys


def test_generators_are_deterministic_given_the_rng():
    for task in TASKS:
        a = task.examples(20, random.Random(3))
        b = task.examples(20, random.Random(3))
        assert a == b


# -- copy ----------------------------------------------------------------------------


def test_copy_task_setting_of_the_chapter():
    task = CopyTask()
    ex = task.sample(random.Random(0))
    assert len(ex.source) == 20 and ex.source == ex.target
    assert len(task.src_tokenizer) == 23 and task.max_target_len == 21
    var = CopyTask(length=8, min_length=2)
    assert {len(e.source) for e in var.examples(200, random.Random(0))} == set(range(2, 9))


# -- addition --------------------------------------------------------------------------


def test_addition_examples_are_correct_in_both_orders():
    for reverse in (False, True):
        task = AdditionTask(reverse=reverse)
        for ex in task.examples(300, random.Random(reverse)):
            a, b = task.operands(ex.source)
            assert task.value(ex.target) == a + b
            assert len(ex.source) == 7 and len(ex.target) == 4
    assert "".join(AdditionTask().make(999, 999).target) == "1998"
    assert "".join(AdditionTask(reverse=True).make(999, 999).target) == "8991"
    with pytest.raises(ValueError, match="entre 0 y 999"):
        AdditionTask().make(1000, 1)


def test_carries():
    assert carries(0, 0) == 0
    assert carries(5, 5) == 1
    assert carries(999, 1) == 3
    assert carries(45, 178) == 2


# -- parsing ------------------------------------------------------------------------------


_AST = {ast.Add: "ADD", ast.Sub: "SUB", ast.Mult: "MUL", ast.Div: "DIV"}


def _python_tree(text: str):
    """The tree Python's own parser gives, in the task's notation."""
    def conv(node):
        if isinstance(node, ast.BinOp):
            return (_AST[type(node.op)], conv(node.left), conv(node.right))
        if isinstance(node, ast.Name):
            return node.id
        return str(node.value)

    stmt = ast.parse(text).body[0]
    return ("ASSIGN", stmt.targets[0].id, conv(stmt.value))


def test_parser_agrees_with_python_on_precedence_associativity_and_parentheses():
    for text in ["x=1+2*3", "y=(1+2)*3", "z=8-3-1", "x=8-(3-1)", "y=8/4/2", "z=x*(y+(2))",
                 "x=((7))", "y=1-2*3+z/4"]:
        assert parse(text) == _python_tree(text), text
    task = ParsingTask(max_ops=6)
    for ex in task.examples(500, random.Random(0)):
        text = "".join(ex.source)
        assert parse(text) == _python_tree(text)
        assert list(ex.target) == to_prefix(_python_tree(text))


def test_prefix_round_trip_and_malformed_outputs():
    rng = random.Random(0)
    for _ in range(300):
        tree = ("ASSIGN", "x", random_tree(rng, rng.randint(0, 6)))
        assert from_prefix(to_prefix(tree)) == tree
        assert parse(to_infix(tree)) == tree  # minimal parentheses keep the shape
        assert parse(to_infix(tree, rng, extra_parens=0.5)) == tree
    assert from_prefix(["ASSIGN", "x", "ADD", "1"]) is None  # missing an operand
    assert from_prefix(["ASSIGN", "x", "1", "2"]) is None  # one token too many
    assert from_prefix([]) is None


def test_parser_errors_are_spanish_and_clear():
    for bad in ["x=", "x=1+", "=1", "x=(1+2", "x=1)", "5=1", "x=12"]:
        with pytest.raises(ParseError):
            parse(bad)
    with pytest.raises(ParseError, match="Se esperaba"):
        parse("x=(1+2")


def test_draw_shows_the_tree():
    text = draw(parse("x=1+2*y"))
    assert text.splitlines() == [
        "ASSIGN (=)", "├── x", "└── ADD (+)", "    ├── 1", "    └── MUL (*)",
        "        ├── 2", "        └── y",
    ]


def test_parsing_task_varies_length_and_target_matches_source():
    task = ParsingTask(max_ops=4)
    exs = task.examples(500, random.Random(0))
    assert {len(ex.target) for ex in exs} == {5, 7, 9, 11}
    assert max(len(ex.target) for ex in exs) + 1 <= task.max_target_len
    assert any("(" in ex.source for ex in exs)


# -- evaluation ------------------------------------------------------------------------------


def test_exact_match_counts_whole_sequences_only():
    task = CopyTask(length=4)
    exs = [Example(tuple("abcd"), tuple("abcd")), Example(tuple("aaaa"), tuple("aaaa"))]

    def perfect(src):  # copies, with BOS in front and EOS behind (greedy_decode style or not)
        return torch.cat([torch.full((src.shape[0], 1), BOS_ID), src,
                          torch.full((src.shape[0], 1), EOS_ID)], dim=1)

    def off_by_one(src):  # the classic bug: ids shifted by one
        return src + 1

    assert exact_match(task, perfect, exs).accuracy == 1.0
    wrong = exact_match(task, off_by_one, exs)
    assert wrong.accuracy == 0.0 and len(wrong.errors) == 2
    assert wrong.predictions[0] == list("bcde")
    assert str(exact_match(task, perfect, exs)) == "exactitud 100.0 % (2/2)"


# -- training on a task (dldna.training.fit) --------------------------------------------


def _tiny_model(task):
    from dldna.transformer import Transformer, TransformerConfig

    torch.manual_seed(0)
    n_src, n_tgt = len(task.src_tokenizer), len(task.tgt_tokenizer)
    return Transformer(TransformerConfig(src_vocab=n_src, tgt_vocab=n_tgt, d_model=16, n_heads=2,
                                         n_encoder_layers=1, n_decoder_layers=1, d_ff=32, dropout=0.0,
                                         max_len=32))


def test_warmup_linear_schedule():
    from dldna.training import warmup_linear_lambda

    rule = warmup_linear_lambda(warmup=4, total=10)
    assert [round(rule(s), 3) for s in range(10)] == [0.25, 0.5, 0.75, 1.0, 1.0, 0.833, 0.667, 0.5,
                                                     0.333, 0.167]
    with pytest.raises(ValueError, match="más corto"):
        warmup_linear_lambda(10, 10)


def test_recipe_validation():
    from dldna.training import Recipe

    with pytest.raises(ValueError, match="schedule"):
        Recipe(steps=10, batch_size=2, lr=1e-3, warmup=2, schedule="coseno")
    with pytest.raises(ValueError, match="más corto"):
        Recipe(steps=10, batch_size=2, lr=1e-3, warmup=10)
    with pytest.raises(ValueError, match="lr"):
        Recipe(steps=10, batch_size=2, lr=0, warmup=2)


def test_train_is_deterministic_logs_and_evaluates(capsys):
    from dldna.tasks import train
    from dldna.training import Recipe

    task = CopyTask(length=4, n_symbols=5)
    test = task.test_set(50)
    recipe = Recipe(steps=20, batch_size=8, lr=3e-3, warmup=5, eval_every=10, eval_size=30)
    runs = []
    for _ in range(2):
        result = train(_tiny_model(task), task, recipe, device="cpu", seed=0)
        runs.append(result)
    assert runs[0].history.loss == runs[1].history.loss
    assert all(isinstance(v, float) for v in runs[0].history.loss)
    assert runs[0].evals == runs[1].evals and [s for s, _ in runs[0].evals] == [10, 20]
    assert runs[0].history.steps == 20 and runs[0].device == "cpu" and runs[0].wall_s > 0
    lr = runs[0].history.lr
    assert lr[4] == pytest.approx(3e-3) and lr[-1] < lr[10] < lr[4]
    log = runs[0].log()
    assert log.splitlines()[0].split()[0] == "paso" and len(log.splitlines()) == 3
    out = capsys.readouterr().out
    assert "entrenando" in out and "pérdida=" in out  # the text progress bar, on stdout
    # the validation set (30 sources, drawn with seed + 1) is held out from training too
    validation = {ex.key for ex in task.examples(30, random.Random(1), unique=True)}
    assert task.held_out == {ex.key for ex in test} | validation
    other = train(_tiny_model(task), task, recipe, device="cpu", seed=1, progress=False)
    assert other.history.loss != runs[0].history.loss


def test_train_learns_and_noam_and_constant_schedules_peak_at_lr():
    from dldna.tasks import train
    from dldna.training import Recipe

    task = CopyTask(length=3, n_symbols=4)
    for schedule in ("noam", "constant"):
        recipe = Recipe(steps=12, batch_size=8, lr=2e-3, warmup=4, schedule=schedule)
        result = train(_tiny_model(task), task, recipe, device="cpu", progress=False)
        assert max(result.history.lr) == pytest.approx(2e-3)
        assert result.history.lr.index(max(result.history.lr)) == 3  # the peak at t = warmup
    recipe = Recipe(steps=60, batch_size=16, lr=1e-2, warmup=10)
    model = _tiny_model(task)
    result = train(model, task, recipe, device="cpu", progress=False)
    assert sum(result.history.loss[-10:]) / 10 < 0.5 * sum(result.history.loss[:10]) / 10
    assert not model.training


def test_train_rejects_what_is_not_a_task_or_a_recipe():
    from dldna.tasks import train
    from dldna.training import Recipe

    task = CopyTask(length=3, n_symbols=4)
    recipe = Recipe(steps=12, batch_size=8, lr=2e-3, warmup=4)
    with pytest.raises(TypeError, match="task debe ser una tarea"):
        train(_tiny_model(task), "copia", recipe)
    with pytest.raises(TypeError, match="recipe debe ser"):
        train(_tiny_model(task), task, {"steps": 12})
    with pytest.raises(ValueError, match="Dispositivo desconocido"):
        train(_tiny_model(task), task, recipe, device="gpu0")


# -- vectorised training batches -------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: CopyTask(),
    lambda: CopyTask(length=5, n_symbols=3, min_length=2),
    lambda: AdditionTask(reverse=True),
    lambda: AdditionTask(digits=2),
])
def test_tensor_batches_are_valid_examples_and_never_held_out(make):
    task = make()
    task.test_set(100)
    sampler = task.sampler(32, seed=0)
    for step in range(5):
        batch = sampler(step)
        for src, tgt in zip(batch.src, batch.tgt, strict=True):
            source = tuple(task.src_tokenizer.decode(src))
            assert source not in task.held_out
            target = (task.make(*task.operands(source)).target if isinstance(task, AdditionTask)
                      else source)
            assert tgt[0] == BOS_ID and tuple(task.tgt_tokenizer.decode(tgt)) == target
            assert (tgt == EOS_ID).sum() == 1
    again = make()
    again.test_set(100)
    assert torch.equal(again.sampler(32, seed=0)(0).src, task.sampler(32, seed=0)(0).src)
    assert not torch.equal(again.sampler(32, seed=1)(0).src, task.sampler(32, seed=0)(0).src)


def test_tensor_batches_redraw_held_out_rows():
    task = AdditionTask(digits=1)
    test = task.test_set(90)  # 90 of the 100 sums held out
    batch = task.sampler(64, seed=3)(0)
    pairs = {task.operands(tuple(task.src_tokenizer.decode(s))) for s in batch.src}
    assert pairs and not pairs & {task.operands(ex.source) for ex in test}


def test_subclasses_that_change_the_examples_get_the_generic_sampler():
    class Reverse(CopyTask):
        def sample(self, rng):
            ex = super().sample(rng)
            return Example(ex.source, ex.source[::-1])

    batch = Reverse(length=4).sampler(8, seed=0)(0)
    assert torch.equal(batch.tgt_out[:, :4], batch.src.flip(1))


# -- one configuration on every device ----------------------------------------------------


@pytest.mark.parametrize("module", ["copy", "addition", "parsing", "translation"])
def test_setup_does_not_depend_on_the_device(module, monkeypatch):
    import importlib
    import inspect

    from dldna import runtime

    setup = importlib.import_module(f"dldna.tasks.{module}").setup
    assert "device" not in inspect.signature(setup).parameters
    on_cpu = setup()
    # Even if the machine had a GPU, the chapter's configuration would be the same.
    monkeypatch.setattr(runtime, "get_device", lambda name=None: torch.device("cuda"))
    monkeypatch.setenv("DLDNA_DEVICE", "cuda")
    assert setup() == on_cpu
