"""dldna.runtime: device choice, seeding, Colab detection; no setting depends on the device."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest
import torch

from dldna import runtime


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(runtime, "_mps_available", lambda: False)


def test_auto_prefers_cuda_then_mps_then_cpu(monkeypatch, no_gpu):
    monkeypatch.delenv(runtime.ENV_DEVICE, raising=False)
    assert runtime.get_device().type == "cpu"
    monkeypatch.setattr(runtime, "_mps_available", lambda: True)
    assert runtime.get_device().type == "mps"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert runtime.get_device().type == "cuda"


def test_environment_override_forces_the_cpu_even_with_a_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv(runtime.ENV_DEVICE, "cpu")
    assert runtime.get_device() == torch.device("cpu")


def test_argument_wins_over_environment(monkeypatch):
    monkeypatch.setenv(runtime.ENV_DEVICE, "mps")
    assert runtime.get_device("cpu") == torch.device("cpu")


@pytest.mark.parametrize("name", ["tpu", "gpu", "cuda:x", "cpu:0", ""])
def test_unknown_device_names_get_a_spanish_message(monkeypatch, name):
    monkeypatch.setenv(runtime.ENV_DEVICE, name)
    with pytest.raises(runtime.DeviceError, match="Dispositivo desconocido"):
        runtime.get_device()


def test_asking_for_a_gpu_that_is_not_there_says_so(no_gpu):
    with pytest.raises(runtime.DeviceError, match="no tiene ninguna disponible"):
        runtime.get_device("cuda")
    with pytest.raises(runtime.DeviceError, match="MPS"):
        runtime.get_device("mps")


def test_asking_for_a_gpu_index_beyond_the_count(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert runtime.get_device("cuda:0") == torch.device("cuda", 0)
    with pytest.raises(runtime.DeviceError, match="solo hay 1"):
        runtime.get_device("cuda:3")


def test_no_setting_depends_on_the_device():
    # issue 13: a GPU makes a cell faster, it does not change the experiment
    assert not hasattr(runtime, "size_for_device")


def test_get_device_accepts_a_torch_device_and_refuses_other_types():
    assert runtime.get_device(torch.device("cpu")) == torch.device("cpu")
    with pytest.raises(runtime.DeviceError, match="texto"):
        runtime.get_device(0)


def test_seed_everything_repeats_python_numpy_and_torch():
    def draw():
        return random.random(), float(np.random.rand()), torch.rand(3).tolist()

    runtime.seed_everything(123)
    first = draw()
    runtime.seed_everything(123)
    assert draw() == first
    runtime.seed_everything(124)
    assert draw() != first


@pytest.mark.parametrize("bad", [-1, 1.5, "7", True, None, 2**64])
def test_bad_seeds_are_refused_in_spanish(bad):
    with pytest.raises(ValueError, match="semilla"):
        runtime.seed_everything(bad)


@pytest.mark.parametrize("seed", [np.int64(7), np.uint32(7), torch.tensor(7)])
def test_numpy_and_tensor_integer_seeds_are_accepted(seed):
    assert runtime.seed_everything(seed) == 7
    first = torch.rand(2)
    runtime.seed_everything(7)
    assert torch.equal(torch.rand(2), first)


def test_colab_detection(monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    assert not runtime.in_colab()
    monkeypatch.setitem(sys.modules, "google.colab", object())
    assert runtime.in_colab()
    assert "Google Colab" in runtime.describe(torch.device("cpu"))


def test_describe_names_the_device(no_gpu):
    text = runtime.describe(torch.device("cpu"))
    assert "cpu" in text and "PyTorch" in text
    assert runtime.describe("cpu") == text


def test_describe_promises_the_same_cells_on_every_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    gpu, cpu = runtime.describe(torch.device("cuda")), runtime.describe(torch.device("cpu"))
    for text in (gpu, cpu):
        assert "mismos experimentos" in text and "grande" not in text and "pequeñ" not in text
    assert gpu.endswith("(GPU: los mismos experimentos que en CPU)")
    assert cpu.endswith("(CPU: los mismos experimentos que con GPU)")
    # No speed claim: no output of the book was computed on a GPU, so none was measured.
    assert not any(word in text for text in (gpu, cpu) for word in ("deprisa", "despacio", "rápid", "lent"))


def test_cpu_describe_names_the_threads_only_when_they_differ_from_the_book():
    from dldna import cpu

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(cpu.BOOK_THREADS)
        assert "Hilos" not in cpu.describe()
        torch.set_num_threads(cpu.BOOK_THREADS + 1)
        text = cpu.describe()
        assert f"Hilos de cálculo: {cpu.BOOK_THREADS + 1}" in text
        assert f"torch.set_num_threads({cpu.BOOK_THREADS})" in text
    finally:
        torch.set_num_threads(before)


def test_cpu_describe_gives_advice_that_can_help(monkeypatch):
    """Importing dldna first helps only where the processor has AVX2 (an
    AVX-512 one); without AVX2 the describe says the digits may differ."""
    from dldna import cpu

    monkeypatch.setattr(cpu, "is_x86", lambda: True)
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX512")
    assert "importa dldna antes que torch" in cpu.describe()
    for capability in ("DEFAULT", "NO AVX"):
        monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda c=capability: c)
        text = cpu.describe()
        assert "importa dldna" not in text and "pueden diferir" in text and capability in text
