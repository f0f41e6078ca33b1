"""Where the agent computes: the device, the memory it has left, whether it multiplies bfloat16 natively, and Adam
fused for it."""

from __future__ import annotations

import platform

import numpy as np
import torch

from .failures import explained, warn


def check_torch_reads_numpy() -> None:
    """An ImportError, when td3_steps is imported, where torch cannot read numpy arrays: a torch built for numpy 1
    (2.2 and older) beside numpy 2, which would otherwise fail at the agent's first array ("Could not infer dtype of
    numpy.float32")."""
    try:
        torch.from_numpy(np.zeros(1, dtype=np.float32))
    except RuntimeError as error:
        raise ImportError(
            f"td3_steps: this torch ({torch.__version__}) cannot read numpy {np.__version__} arrays ({error}): it was"
            " built for numpy 1. Install numpy 1 beside it (pip install 'numpy<2'), or a newer torch."
        ) from error


def resolve_device(device: str | torch.device) -> torch.device:
    """The device to compute on: "auto" gives CUDA where a GPU is, else the CPU; a named one is checked to exist.

    A device is a name or a torch.device: torch reads a bare number as an accelerator's index, which would make
    device=5 mean cuda:5 on a machine with a GPU and an error without one.
    """
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    unknown = f"Unknown device {device!r}: use 'auto', 'cpu' or 'cuda' (or 'cuda:N')."
    if not isinstance(device, (str, torch.device)):
        raise ValueError(unknown)
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(unknown) from error
    if resolved.type not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r}: td3_steps computes on 'cpu' or 'cuda' (or 'cuda:N'); 'auto' picks one.")
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"device={device!r} was asked for, but no CUDA GPU is available: use device='cpu' or 'auto'."
            )
        count = torch.cuda.device_count()
        if resolved.index is not None and resolved.index >= count:
            raise ValueError(
                f"device={device!r} was asked for, but this machine has {count} CUDA GPU(s), cuda:0 to"
                f" cuda:{count - 1}."
            )
    return resolved


CPU = torch.device("cpu")  # where networks are made, before the agent moves them to its device


def memory_left(device: torch.device) -> int | None:
    """Bytes `device` can still give: on a GPU, the driver's free memory plus what torch's caching allocator holds
    unused (freed tensors it keeps for reuse, such as a deleted agent's); on a Linux CPU, MemAvailable plus
    SwapFree of /proc/meminfo; None where it is not known (other systems)."""
    if device.type == "cuda":
        unused = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return torch.cuda.mem_get_info(device)[0] + unused
    if device.type != "cpu":
        return None
    try:
        with open("/proc/meminfo") as meminfo:
            fields = dict(line.split(":", 1) for line in meminfo)
        return sum(int(fields[name].split()[0]) * 1024 for name in ("MemAvailable", "SwapFree"))
    except (OSError, KeyError, ValueError):
        return None


def check_memory(what: str, nbytes: int, device: torch.device, fix: str) -> None:
    """A ValueError, before anything is allocated, when `what` needs more than 90% of the bytes `device` has free
    (the rest is for activations, the environment and whatever else runs).

    Otherwise torch fails with "can't allocate memory" at the one allocation too many, or the system kills the
    process (a Jupyter kernel dies without a word) while the memory is being filled.
    """
    left = memory_left(device)
    if left is not None and nbytes > 0.9 * left:
        message = f"{what} needs {in_bytes(nbytes)} on {device}, more than 90% of the {in_bytes(left)} free: {fix}."
        raise explained(ValueError(message))


def check_agent_fits(networks, buffer_size: int, memory_bytes: int, device: torch.device) -> None:
    """check_memory for a whole agent, before its networks move to `device`: each parameter in 5 copies on a GPU
    (the online one moved there, its target, its gradient, Adam's 2 moments; 4 on the CPU, where the online
    one already is), and the replay memory's `memory_bytes`."""
    parameters = sum(p.numel() for network in networks for p in network.parameters())
    copies = 4 if device.type == "cpu" else 5
    check_memory(
        f"This agent ({parameters:,} network parameters, a replay memory of {buffer_size:,} transitions)",
        copies * 4 * parameters + memory_bytes,
        device,
        "lower TD3Config.net_arch or buffer_size",
    )


def in_bytes(nbytes: int) -> str:
    """A size as people read it: 3.2 GiB, 480.0 MiB."""
    if nbytes >= 2**1000:  # beyond a float (10**400, say): its order of magnitude says enough
        return f"about 1e{len(str(nbytes)) - 1} bytes"
    return f"{nbytes / 2**30:,.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:,.1f} MiB"


def has_fast_bfloat16(device: torch.device) -> bool:
    """Whether `device` multiplies bfloat16 matrices natively (else autocast emulates them, slower than fp32).

    x86 CPUs need AVX-512 BF16 or AMX; a CUDA GPU needs compute capability 8.0 (Ampere) or later.
    Other CPUs are given the benefit of the doubt.
    """
    if device.type == "cuda":
        return torch.cuda.get_device_capability(device) >= (8, 0)
    if device.type == "cpu" and platform.machine().lower() in ("x86_64", "amd64"):
        names = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")  # private: absent from some torch versions
        checks = [getattr(torch.cpu, name) for name in names if hasattr(torch.cpu, name)]
        return not checks or any(check() for check in checks)
    return True


def warn_if_bfloat16_is_emulated(device: torch.device) -> None:
    """TD3Config.mixed_precision on a device without native bfloat16 runs slower than float32: say so."""
    if not has_fast_bfloat16(device):
        warn(
            f"mixed_precision=True, but this {device.type.upper()} has no native bfloat16 matrix products"
            " (x86 CPUs need AVX-512 BF16 or AMX; GPUs need Ampere or later): they are emulated and run"
            " several times slower than float32. Leave mixed_precision off on this machine."
        )


def adam(parameters, learning_rate: float) -> torch.optim.Adam:
    """Adam, fused into one kernel per step where this torch and device support it (CPU from torch 2.4)."""
    parameters = list(parameters)
    try:
        return torch.optim.Adam(parameters, lr=learning_rate, fused=True)
    except (RuntimeError, ValueError):
        return torch.optim.Adam(parameters, lr=learning_rate)
