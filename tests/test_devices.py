"""td3_steps.devices: the device asked for, the warning where bfloat16 would be emulated, and the memory check."""

import io
import platform
import warnings

import pytest
import torch

import td3_steps.devices
from td3_steps import TD3, devices
from td3_steps.devices import adam, has_fast_bfloat16, memory_left, resolve_device


def test_devices_by_name():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="Unknown device 'tpu'"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU is available"):
            resolve_device("cuda")
    for other in ("meta", "mps", "xpu", torch.device("meta")):  # torch's names: meta computed nothing, xpu asserted
        with pytest.raises(ValueError, match=r"td3_steps computes on 'cpu' or 'cuda' \(or 'cuda:N'\)"):
            resolve_device(other)


def test_sizes_beyond_a_float_are_still_written():
    assert devices.in_bytes(3 * 2**30) == "3.0 GiB"
    assert devices.in_bytes(10**400) == "about 1e400 bytes"  # was an OverflowError inside the message


def test_a_gpu_that_is_not_there_is_named(monkeypatch):
    """On a machine with one GPU: cuda:1 does not exist, and a bare number is no device name (torch would read 5
    as cuda:5 where a GPU is, and fail where none is)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("cuda:0") == torch.device("cuda", 0) and resolve_device("cuda") == torch.device("cuda")
    with pytest.raises(ValueError, match=r"this machine has 1 CUDA GPU\(s\), cuda:0 to cuda:0"):
        resolve_device("cuda:1")
    for number in (0, 5):
        with pytest.raises(ValueError, match=f"Unknown device {number}: use 'auto', 'cpu' or 'cuda'"):
            resolve_device(number)


def test_adam_steps_like_torchs():
    """Several steps on different inputs: Adam's first step is lr * sign(g) whatever its betas and eps."""
    a, b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    ours, theirs = adam(a.parameters(), 1e-2), torch.optim.Adam(b.parameters(), lr=1e-2)
    inputs = torch.randn(5, 4, 3, generator=torch.Generator().manual_seed(0))
    for x in inputs:
        for model, optimizer in ((a, ours), (b, theirs)):
            optimizer.zero_grad()
            (model(x) ** 2).sum().backward()
            optimizer.step()
    assert torch.allclose(a.weight, b.weight, atol=1e-7) and torch.allclose(a.bias, b.bias, atol=1e-7)


def test_mixed_precision_warns_where_bfloat16_is_emulated(monkeypatch, small_config, tmp_path):
    monkeypatch.setattr(td3_steps.devices, "has_fast_bfloat16", lambda device: False)
    with pytest.warns(UserWarning, match="no native bfloat16.*Leave mixed_precision off") as caught:
        model = TD3("Pendulum-v1", small_config.replace(mixed_precision=True), device="cpu")
    assert caught[0].filename == __file__  # points at the line that built the agent
    model.save(tmp_path / "ckpt")
    with pytest.warns(UserWarning, match="no native bfloat16") as caught:
        TD3.load(tmp_path / "ckpt", device="cpu")
    assert caught[0].filename == __file__  # and at the line that loaded it, not inside the package
    monkeypatch.setattr(td3_steps.devices, "has_fast_bfloat16", lambda device: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TD3("Pendulum-v1", small_config.replace(mixed_precision=True), device="cpu")
        TD3("Pendulum-v1", small_config, device="cpu")


def test_check_memory_refuses_more_than_ninety_percent_of_the_free_memory(monkeypatch):
    cpu = torch.device("cpu")
    left = devices.memory_left(cpu)
    assert left is None or left > 0  # /proc/meminfo where there is one
    monkeypatch.setattr(devices, "memory_left", lambda device: 10 * 2**30)
    devices.check_memory("A table", 9 * 2**30, cpu, "make it smaller")  # 90% of the free memory fits
    with pytest.raises(ValueError, match=r"^A table needs 9\.5 GiB on cpu, more than 90% of the 10\.0 GiB free: make"):
        devices.check_memory("A table", 19 * 2**29, cpu, "make it smaller")
    monkeypatch.setattr(devices, "memory_left", lambda device: None)  # a system that does not say: no check
    devices.check_memory("A table", 2**80, cpu, "make it smaller")
    assert devices.in_bytes(3 * 2**29) == "1.5 GiB" and devices.in_bytes(480 * 2**20) == "480.0 MiB"


def test_an_agent_is_counted_as_four_copies_of_its_parameters_on_the_cpu_five_on_a_gpu_and_its_memory(monkeypatch):
    layer = torch.nn.Linear(9, 10)  # 100 parameters
    asked = []
    monkeypatch.setattr(devices, "check_memory", lambda what, nbytes, device, fix: asked.append((what, nbytes, fix)))
    devices.check_agent_fits((layer, layer), 5_000, 1_000, torch.device("cpu"))
    devices.check_agent_fits((layer,), 5_000, 1_000, torch.device("cuda"))  # only its type is read
    fix = "lower TD3Config.net_arch or buffer_size"
    assert asked == [
        ("This agent (200 network parameters, a replay memory of 5,000 transitions)", 4 * 4 * 200 + 1_000, fix),
        ("This agent (100 network parameters, a replay memory of 5,000 transitions)", 5 * 4 * 100 + 1_000, fix),
    ]


def test_a_torch_that_cannot_read_numpy_is_named_when_the_package_is_imported(monkeypatch):
    """torch 2.2 (built for numpy 1) beside numpy 2 imported td3_steps, then failed at the agent's first array with
    "Could not infer dtype of numpy.float32"."""
    devices.check_torch_reads_numpy()  # this torch reads them

    def no_numpy(array):
        raise RuntimeError("Numpy is not available")

    monkeypatch.setattr(devices.torch, "from_numpy", no_numpy)
    with pytest.raises(ImportError, match=r"cannot read numpy .* arrays \(Numpy is not available\): it was built for"
                       r" numpy 1\. Install numpy 1 beside it \(pip install 'numpy<2'\), or a newer torch\."):  # fmt: skip
        devices.check_torch_reads_numpy()


def test_auto_picks_cuda_where_a_gpu_is(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == torch.device("cpu")


def test_memory_left_on_a_gpu_counts_what_the_caching_allocator_holds_unused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (1000, 8000))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device: 300)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device: 100)
    assert memory_left(torch.device("cuda", 0)) == 1200


def test_memory_left_on_the_cpu_is_available_memory_plus_free_swap(monkeypatch):
    meminfo = "MemTotal: 16000 kB\nMemFree: 100 kB\nMemAvailable: 3000 kB\nSwapTotal: 9000 kB\nSwapFree: 2000 kB\n"
    monkeypatch.setattr(td3_steps.devices, "open", lambda path: io.StringIO(meminfo), raising=False)
    assert memory_left(torch.device("cpu")) == 5000 * 1024


def test_bfloat16_is_native_from_compute_capability_8_0(monkeypatch):
    for capability, native in (((7, 5), False), ((8, 0), True), ((9, 0), True)):
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device, c=capability: c)
        assert has_fast_bfloat16(torch.device("cuda", 0)) is native


def test_an_x86_cpu_torch_cannot_ask_is_given_the_benefit_of_the_doubt(monkeypatch):
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        monkeypatch.delattr(torch.cpu, name, raising=False)
    assert has_fast_bfloat16(torch.device("cpu")) is True


@pytest.mark.parametrize("error", [RuntimeError, ValueError])
def test_adam_falls_back_to_the_unfused_one_where_fused_is_refused(monkeypatch, error):
    made = []
    real = torch.optim.Adam

    def fake(parameters, lr, fused=None):
        if fused:
            raise error("fused=True requires all the params to be floating point Tensors of supported devices")
        made.append(lr)
        return real(parameters, lr=lr)

    monkeypatch.setattr(torch.optim, "Adam", fake)
    optimizer = adam([torch.nn.Parameter(torch.zeros(2))], 1e-3)
    assert made == [1e-3] and optimizer.defaults["lr"] == 1e-3
