"""TD3 on a CUDA GPU: the agent's tensors stay on the device, an update never waits on the host, one seed gives
one run, and checkpoints and actor files move between the GPU and the CPU. Skipped where no GPU is (CI's machine);
run on one with `pytest -p no:nbval -o addopts="" tests/test_cuda.py`."""

import numpy as np
import pytest
import torch

from td3_steps import TD3, Critics, Policy, ReplayMemory
from td3_steps.cli import main
from td3_steps.devices import memory_left

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_training_keeps_every_tensor_on_the_gpu(small_config):
    model = TD3("Pendulum-v1", small_config, seed=0, device="cuda").learn(300)
    tensors = [
        *model.actor.state_dict().values(), *model.critics.state_dict().values(),
        *model.actor_target.state_dict().values(), *model.critic_targets.state_dict().values(),
        model.memory.obs, model.memory.action, model._stats.sums,
    ]  # fmt: skip
    assert all(t.device.type == "cuda" for t in tensors)
    action, _ = model.predict(np.zeros(3))
    assert isinstance(action, np.ndarray) and action.shape == (1,) and np.all(np.abs(action) <= 2.0)
    mean, std = model.evaluate(2)
    assert np.isfinite(mean) and np.isfinite(std)


def test_an_update_never_waits_on_the_host(small_config):
    """torch's sync debug mode raises at any operation that makes the host wait for the GPU (a .item(), a
    tensor's truth value, a copy to the CPU): the update statistics are read once per episode, not per update."""
    model = TD3("Pendulum-v1", small_config, seed=0, device="cuda").learn(150)
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(20):  # 10 delayed actor updates among them
            model.train_step()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert model.critic_updates == 50 + 20


def test_one_seed_gives_the_same_run_on_the_gpu(small_config, params, same):
    a = TD3("Pendulum-v1", small_config, seed=4, device="cuda").learn(400)
    b = TD3("Pendulum-v1", small_config, seed=4, device="cuda").learn(400)
    for name in ("actor", "critics", "actor_target", "critic_targets"):
        assert same(params(getattr(a, name)), params(getattr(b, name))), name


def test_resume_on_the_gpu_is_bit_identical(tmp_path, small_config, params, same):
    straight = TD3("Pendulum-v1", small_config, seed=1, device="cuda").learn(450)
    first = TD3("Pendulum-v1", small_config, seed=1, device="cuda").learn(230)  # mid-episode
    first.save(tmp_path / "ckpt", include_memory=True)
    resumed = TD3.load(tmp_path / "ckpt", device="cuda").learn(220)
    for name in ("actor", "critics", "actor_target", "critic_targets"):
        assert same(params(getattr(straight, name)), params(getattr(resumed, name))), name


def test_checkpoints_and_actor_files_move_between_gpu_and_cpu(tmp_path, small_config, params, same):
    """Trained on a GPU, evaluated or trained on on a laptop, and the other way round. The generators' states
    differ between the devices, so the loaded agent's are seeded afresh (checkpoint._restore_generators)."""
    on_gpu = TD3("Pendulum-v1", small_config, seed=2, device="cuda").learn(250)
    on_gpu.save(tmp_path / "gpu", include_memory=True)
    on_gpu.save_policy(tmp_path / "gpu_policy.pt")
    on_cpu = TD3.load(tmp_path / "gpu", device="cpu")
    assert on_cpu.device.type == "cpu" and on_cpu.memory.obs.device.type == "cpu"
    assert same([p.cpu() for p in params(on_gpu.critics)], params(on_cpu.critics))
    on_cpu.learn(100)
    policy = Policy.load(tmp_path / "gpu_policy.pt", device="cpu")
    assert np.allclose(policy.predict(np.zeros(3))[0], on_gpu.predict(np.zeros(3))[0], atol=1e-5)

    on_cpu.save(tmp_path / "cpu")
    back = TD3.load(tmp_path / "cpu", device="cuda").learn(100)
    assert back.num_steps == 450 and next(back.actor.parameters()).device.type == "cuda"


def test_a_gpu_index_that_is_not_there_is_named():
    with pytest.raises(ValueError, match="this machine has .* CUDA GPU"):
        TD3("Pendulum-v1", device=f"cuda:{torch.cuda.device_count()}")


def test_memory_left_counts_the_blocks_torch_keeps_for_reuse():
    """A freed tensor's block stays with torch's caching allocator: the driver counts it as used, but the next
    allocation takes it, so an agent made after another was deleted (in a notebook, say) is not refused for it."""
    cuda = torch.device("cuda")
    block = torch.empty(2**28, device=cuda)  # 1 GiB
    del block
    try:
        assert torch.cuda.memory_reserved(cuda) - torch.cuda.memory_allocated(cuda) >= 2**30
        assert memory_left(cuda) >= torch.cuda.mem_get_info(cuda)[0] + 2**30
    finally:
        torch.cuda.empty_cache()


def test_an_agent_or_memory_too_large_for_the_gpu_is_refused_before_anything_is_allocated(small_config):
    """A replay memory as large as the GPU's free memory, which the host's memory could hold: the refusal names the
    GPU, and nothing is left allocated on it."""
    cuda = torch.device("cuda")
    capacity = memory_left(cuda) // ReplayMemory.bytes_needed(1, (3,), 1, torch.float32)
    allocated = torch.cuda.memory_allocated(cuda)
    fits = "more than 90% of the .* free"
    with pytest.raises(ValueError, match=f"needs .* on cuda, {fits}: lower TD3Config.net_arch or buffer_size"):
        TD3("Pendulum-v1", small_config.replace(buffer_size=capacity), device="cuda")
    with pytest.raises(ValueError, match=f"A replay memory of {capacity:,} transitions needs .* on cuda, {fits}"):
        ReplayMemory(capacity, 3, 1, device="cuda")
    assert torch.cuda.memory_allocated(cuda) == allocated


def test_a_cpu_tensor_or_generator_beside_the_gpu_is_named():
    """torch said "Expected all tensors to be on the same device, but got tensors is on cpu, different from other
    tensors on cuda:0 (when checking argument in method wrapper_CUDA_cat)"; the steps' own checks of this are
    tested on the CPU with meta tensors."""
    critics = Critics(3, 1, net_arch=(16, 16)).to("cuda")
    with pytest.raises(ValueError, match=r"A critic: everything must be on its weights. device, cuda:0; got obs on"):
        critics(torch.zeros(8, 3), torch.zeros(8, 1, device="cuda"))
    memory = ReplayMemory(10, 3, 1, device="cuda")
    memory.add(np.zeros(3), np.zeros(1), 0.0, np.zeros(3), False)
    with pytest.raises(ValueError, match=r"generator draws on cpu and the memory is on cuda: use torch.Generator"):
        memory.sample(2, generator=torch.Generator())


def test_mixed_precision_on_the_gpu_keeps_weights_and_values_float32(small_config):
    model = TD3("Pendulum-v1", small_config.replace(mixed_precision=True), seed=0, device="cuda").learn(300)
    assert all(p.dtype == torch.float32 for p in model.critics.parameters())
    batch = model.memory.sample(8)
    assert all(q.dtype == torch.float32 for q in model.critics(batch.obs, batch.action))


def test_the_command_line_trains_on_the_gpu_and_resumes_and_evaluates_on_the_cpu(tmp_path, capsys):
    run = tmp_path / "run"
    args = ["--preset", "pendulum", "--steps", "1200", "--eval-freq", "600", "--device", "cuda", "--out", str(run)]
    main(["train", *args])
    main(["train", "--resume", str(run), "--steps", "1800", "--device", "cpu"])
    main(["evaluate", str(run), "--episodes", "2", "--device", "cpu"])
    captured = capsys.readouterr()
    assert "Resuming" in captured.err and "at step 1200 of 1800" in captured.err
    assert "Final evaluation after 1800 steps" in captured.out and "over 2 deterministic episodes" in captured.out
