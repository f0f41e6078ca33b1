"""The checker of notebook 15 accepts a whole TD3 iteration and rejects misplaced steps 13 to 15."""

import torch

from td3_steps import (
    actor_update,
    bellman_target,
    clipped_double_q,
    critic_loss,
    critic_update,
    current_q_values,
    policy_update_due,
    polyak_update,
    smooth_target_action,
    target_action,
    target_q_values,
)
from td3_steps.exercises.step15 import check_td3_iteration


def steps_4_to_12(agent):
    c = agent.config
    batch = agent.memory.sample(c.batch_size, agent.update_rng)
    with torch.no_grad():
        next_action = target_action(agent.actor_target, batch.next_obs)
        next_action = smooth_target_action(
            next_action,
            agent.action_low,
            agent.action_high,
            c.target_policy_noise,
            c.target_noise_clip,
            agent.update_rng,
        )
        next_q = clipped_double_q(target_q_values(agent.critic_targets, batch.next_obs, next_action))
        y = bellman_target(batch.reward, batch.terminated, next_q, c.gamma)
    critic_update(critic_loss(current_q_values(agent.critics, batch.obs, batch.action), y), agent.critic_optimizer)
    agent.critic_updates += 1
    return batch


def correct(agent):
    batch = steps_4_to_12(agent)
    if policy_update_due(agent.critic_updates, agent.config.policy_delay):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def placeholder(agent):
    steps_4_to_12(agent)


def counts_env_steps(agent):
    batch = steps_4_to_12(agent)
    if agent.num_steps % agent.config.policy_delay == 0:
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def forgets_critic_targets(agent):
    batch = steps_4_to_12(agent)
    if policy_update_due(agent.critic_updates, agent.config.policy_delay):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)


def critic_targets_every_iteration(agent):
    batch = steps_4_to_12(agent)
    polyak_update(agent.critics, agent.critic_targets, agent.config.tau)
    if policy_update_due(agent.critic_updates, agent.config.policy_delay):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)


def target_before_actor(agent):
    batch = steps_4_to_12(agent)
    if policy_update_due(agent.critic_updates, agent.config.policy_delay):
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def fixed_tau(agent):
    batch = steps_4_to_12(agent)
    if policy_update_due(agent.critic_updates, agent.config.policy_delay):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, 0.005)
        polyak_update(agent.critics, agent.critic_targets, 0.005)


def test_accepts_correct(capsys):
    assert check_td3_iteration(correct)
    assert "Correct!" in capsys.readouterr().out


def test_rejects_wrong_ones_in_words(assert_rejected):
    assert_rejected(
        check_td3_iteration,
        {
            placeholder: "the actor should move at iteration 2",
            counts_env_steps: "never environment steps",
            forgets_critic_targets: "agent.critic_targets did not move",
            critic_targets_every_iteration: "which is not a delayed one",
            target_before_actor: "update the actor first",
            fixed_tau: "tau is 0.5 here",
        },
    )
