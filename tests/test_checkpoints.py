"""Checkpoints: saved only on request, loaded with weights_only=True on the current device,
clear Spanish errors for corrupt or mismatched files."""

from __future__ import annotations

import random

import pytest
import torch

from dldna import training
from dldna.tasks import train
from dldna.tasks.copy import CopyTask
from dldna.transformer import Transformer, TransformerConfig


def small_model(**changes) -> Transformer:
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab=23, tgt_vocab=23, d_model=16, n_heads=2, n_encoder_layers=1,
                               n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=32)
    return Transformer(config.replace(**changes))


def batch():
    return CopyTask(length=6).batch(4, random.Random(0))


def test_round_trip_gives_the_same_model_and_extra(tmp_path):
    model = small_model().eval()
    path = training.save_checkpoint(model, tmp_path / "sub" / "m.pt", extra={"tarea": "copia", "acc": 1.0})
    assert path.is_file()
    loaded, extra = training.load_checkpoint(path, device="cpu")
    assert extra == {"tarea": "copia", "acc": 1.0}
    assert loaded.config == model.config and not loaded.training
    b = batch()
    with torch.no_grad():
        assert torch.equal(loaded(b.src, b.tgt_in), model(b.src, b.tgt_in))
    # Into an existing model of the same configuration.
    other = small_model()
    with torch.no_grad():
        for p in other.parameters():
            p.add_(1.0)
    training.load_checkpoint(path, other, device="cpu")
    with torch.no_grad():
        assert torch.equal(other(b.src, b.tgt_in), model(b.src, b.tgt_in))


def test_load_uses_weights_only_and_the_current_device(tmp_path, monkeypatch):
    path = training.save_checkpoint(small_model(), tmp_path / "m.pt")
    calls = []
    real_load = torch.load

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    monkeypatch.setenv("DLDNA_DEVICE", "cpu")
    model, _ = training.load_checkpoint(path)
    assert calls and calls[0]["weights_only"] is True
    assert torch.device(calls[0]["map_location"]) == torch.device("cpu")
    assert next(model.parameters()).device.type == "cpu"


def test_saved_tensors_are_on_the_cpu(tmp_path):
    """A model trained on a GPU must load on a machine without one."""
    path = training.save_checkpoint(small_model(), tmp_path / "m.pt")
    payload = torch.load(path, weights_only=True)
    assert all(t.device.type == "cpu" for t in payload["state_dict"].values())
    assert payload["config"]["d_model"] == 16


@pytest.mark.parametrize("content", [b"", b"esto no es un modelo", None], ids=["vacio", "texto", "cortado"])
def test_corrupt_checkpoint_gives_a_clear_spanish_error(tmp_path, content):
    good = training.save_checkpoint(small_model(), tmp_path / "bueno.pt")
    bad = tmp_path / "malo.pt"
    bad.write_bytes(good.read_bytes()[:700] if content is None else content)
    with pytest.raises(training.CheckpointError, match="dañado o incompleto"):
        training.load_checkpoint(bad, device="cpu")


def test_a_torch_file_that_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "otro.pt"
    torch.save({"pesos": torch.zeros(3)}, path)
    with pytest.raises(training.CheckpointError, match="no es un punto de control de este libro"):
        training.load_checkpoint(path, device="cpu")


def test_mismatched_model_names_the_differences(tmp_path):
    path = training.save_checkpoint(small_model(), tmp_path / "m.pt")
    with pytest.raises(training.CheckpointError, match=r"d_model: guardado 16, modelo 32"):
        training.load_checkpoint(path, small_model(d_model=32), device="cpu")


def test_weights_that_do_not_fit(tmp_path):
    path = training.save_checkpoint(small_model(), tmp_path / "m.pt")
    payload = torch.load(path, weights_only=True)
    key = next(iter(payload["state_dict"]))
    payload["state_dict"][key] = torch.zeros(1)
    torch.save(payload, path)
    with pytest.raises(training.CheckpointError, match="no encajan"):
        training.load_checkpoint(path, device="cpu")


def test_missing_file_and_wrong_model_type(tmp_path):
    with pytest.raises(FileNotFoundError, match="No existe"):
        training.load_checkpoint(tmp_path / "nada.pt", device="cpu")
    with pytest.raises(TypeError, match="Transformer"):
        training.save_checkpoint(torch.nn.Linear(2, 2), tmp_path / "x.pt")


def test_training_saves_nothing_unless_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    task = CopyTask(length=4)
    recipe = training.Recipe(steps=3, batch_size=4, lr=1e-3, warmup=1)
    train(small_model(), task, recipe, device="cpu", progress=False)
    assert list(tmp_path.iterdir()) == []


def test_numpy_values_in_extra_are_saved_as_plain_python(tmp_path):
    import numpy as np

    extra = {"exactitud": np.float32(0.75), "pasos": np.int64(400), "curva": np.array([0.5, 1.0]),
             "lista": [np.float64(0.25)]}
    path = training.save_checkpoint(small_model(), tmp_path / "m.pt", extra=extra)
    _, loaded = training.load_checkpoint(path, device="cpu")
    assert loaded == {"exactitud": 0.75, "pasos": 400, "curva": [0.5, 1.0], "lista": [0.25]}
    assert type(loaded["pasos"]) is int and type(loaded["exactitud"]) is float


def test_load_checkpoint_checks_the_device(tmp_path):
    path = training.save_checkpoint(small_model(), tmp_path / "m.pt")
    with pytest.raises(ValueError, match="Dispositivo desconocido"):
        training.load_checkpoint(path, device="gpu")
