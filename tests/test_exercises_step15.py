"""The checker of notebook 15 accepts a whole TD3 iteration and names each misplaced step 13 to 15."""

import copy

import torch

from td3_steps import (
    actor_loss,
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


def steps_4_to_12(agent, noise_from_update_rng=True):
    """Steps 4 to 12 as TD3.train_step takes them (noise_from_update_rng=False: the smoothing noise drawn from
    torch's own generator instead)."""
    c, generator = agent.config, agent.update_rng if noise_from_update_rng else None
    batch = agent.memory.sample(c.batch_size, agent.update_rng)
    with torch.no_grad():
        next_action = target_action(agent.actor_target, batch.next_obs)
        low, high = agent.action_low, agent.action_high
        next_action = smooth_target_action(
            next_action, low, high, c.target_policy_noise, c.target_noise_clip, generator
        )
        next_q = clipped_double_q(target_q_values(agent.critic_targets, batch.next_obs, next_action))
        y = bellman_target(batch.reward, batch.terminated, next_q, c.gamma)
    critic_update(critic_loss(current_q_values(agent.critics, batch.obs, batch.action), y), agent.critic_optimizer)
    agent.critic_updates += 1
    return batch


def delayed(agent):
    return policy_update_due(agent.critic_updates, agent.config.policy_delay)


def correct(agent, noise_from_update_rng=True):
    batch = steps_4_to_12(agent, noise_from_update_rng)
    if delayed(agent):
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
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)


def critic_targets_every_iteration(agent):
    batch = steps_4_to_12(agent)
    polyak_update(agent.critics, agent.critic_targets, agent.config.tau)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)


def target_before_actor(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def fixed_tau(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, 0.005)
        polyak_update(agent.critics, agent.critic_targets, 0.005)


def one_minus_tau(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, 1 - agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, 1 - agent.config.tau)


def hard_copies(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        agent.actor_target.load_state_dict(agent.actor.state_dict())
        agent.critic_targets.load_state_dict(agent.critics.state_dict())


def fresh_deep_copies(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        agent.actor_target = copy.deepcopy(agent.actor)
        agent.critic_targets = copy.deepcopy(agent.critics)


def aliased_targets(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        agent.actor_target = agent.actor
        agent.critic_targets = agent.critics


def wrong_optimizer(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.critic_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def wrong_optimizer_by_hand(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        agent.critics.requires_grad_(False)
        loss = actor_loss(agent.actor, agent.critics, batch.obs)
        agent.critic_optimizer.zero_grad()
        loss.backward()
        agent.critic_optimizer.step()
        agent.critics.requires_grad_(True)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def swapped_arguments(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critic_targets, agent.critics, agent.config.tau)


def actor_every_iteration(agent):
    batch = steps_4_to_12(agent)
    actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
    if delayed(agent):
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def wrong_pair(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.critics, agent.actor_target, agent.config.tau)


def both_swapped(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor_target, agent.actor, agent.config.tau)
        polyak_update(agent.critic_targets, agent.critics, agent.config.tau)


def crossed_pairs(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        online, targets = agent.critics.members, agent.critic_targets.members
        polyak_update(online[0], targets[1], agent.config.tau)
        polyak_update(online[1], targets[0], agent.config.tau)


def common_error_by_hand(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        with torch.no_grad():
            for target in agent.critic_targets.parameters():
                target.copy_(1 - agent.config.tau * target)


def asks_before_counting(agent):
    due = delayed(agent)  # asked before steps 4 to 12 count this iteration's critic update
    batch = steps_4_to_12(agent)
    if due:
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def counts_twice(agent):
    correct(agent)
    agent.critic_updates += 1


def actor_on_next_obs(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.next_obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def actor_climbs_the_minimum(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        agent.critics.requires_grad_(False)
        q1, q2 = current_q_values(agent.critics, batch.obs, agent.actor(batch.obs))
        loss = -torch.min(q1, q2).mean()
        agent.actor_optimizer.zero_grad()
        loss.backward()
        agent.actor_optimizer.step()
        agent.critics.requires_grad_(True)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def actor_on_a_new_batch(agent):
    steps_4_to_12(agent)
    if delayed(agent):
        batch = agent.memory.sample(agent.config.batch_size, agent.update_rng)
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def actor_on_an_sgd_of_its_own(agent):
    if not isinstance(agent.actor_optimizer, torch.optim.SGD):  # from the first iteration on, its state the SGD's
        agent.actor_optimizer = torch.optim.SGD(agent.actor.parameters(), lr=1e-2, momentum=0.9)
    correct(agent)


def test_accepts_correct(capsys):
    assert check_td3_iteration(correct)
    assert "Correct!" in capsys.readouterr().out


def test_names_each_misplaced_step(assert_rejected):
    assert_rejected(
        check_td3_iteration,
        {
            placeholder: "the actor should move at iteration 2",
            counts_env_steps: "never environment steps",
            forgets_critic_targets: "agent.critic_targets did not move",
            critic_targets_every_iteration: "which is not a delayed one",
            target_before_actor: "update the actor first",
            fixed_tau: "tau is 0.4 here",
            one_minus_tau: "tau and 1 - tau are swapped",
            both_swapped: "agent.actor moved toward agent.actor_target and agent.critics moved toward agent.critic_t",
            crossed_pairs: "each critic target moved toward the OTHER critic",
            common_error_by_hand: "agent.critic_targets: this is the common error 1 - tau * theta'",
            hard_copies: "hard copy",
            fresh_deep_copies: "hard copy",
            aliased_targets: "shares its tensors",
            wrong_optimizer: "TD3's actor_optimizer",  # actor_update refuses it
            wrong_optimizer_by_hand: "taken by agent.actor_optimizer",
            swapped_arguments: "moves its SECOND argument",
            actor_every_iteration: "call actor_update only where policy_update_due(agent.critic_updates, agent.config",
            wrong_pair: "raised ValueError",
            counts_twice: "add 1 once per iteration",
            asks_before_counting: "(before agent.critic_updates += 1 it still holds 0, one update behind)",
            actor_on_next_obs: "the actor's step at iteration 2 used batch.next_obs",
            actor_climbs_the_minimum: "the actor's step at iteration 4 took the minimum of the two critics",  # at 2, critic 1 is the lower everywhere
            actor_on_a_new_batch: "the actor's step at iteration 2 differs from actor_update(agent.actor",  # no slip known
            # the slips' probe loaded its SGD state into TD3's Adam, and the checker itself raised KeyError: 'betas'
            actor_on_an_sgd_of_its_own: "the actor's step at iteration 2 differs from actor_update(agent.actor",
        },
    )


def test_a_swapped_call_is_the_one_thing_said(capsys):
    """The target it left unmoved is not reported too, as if its call were missing."""
    assert not check_td3_iteration(swapped_arguments)
    out = capsys.readouterr().out
    assert "moves its SECOND argument" in out and "did not move" not in out, out


def critics_left_frozen(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        agent.critics.requires_grad_(False)  # for the actor's step, and never unfrozen
        loss = actor_loss(agent.actor, agent.critics, batch.obs)
        agent.actor_optimizer.zero_grad()
        loss.backward()
        agent.actor_optimizer.step()
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def test_critics_left_frozen_are_blamed_on_the_actor_step(capsys):
    """The next iteration's given critic_update raised "computed under torch.no_grad()", naming none of this."""
    assert not check_td3_iteration(critics_left_frozen)
    out = capsys.readouterr().out
    assert "after iteration 2 the critics' parameters still have requires_grad False" in out, out
    assert "critic_update" not in out, out


def critic_1_target_only(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics.members[0], agent.critic_targets.members[0], agent.config.tau)


def actor_target_twice(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def test_a_right_tau_is_not_blamed_for_other_slips(capsys):
    """Both had tau right: the reply was "(tau is 0.4 here: read it from agent.config)"."""
    for slip, words in (
        (critic_1_target_only, "agent.critic_targets.members[1], critic 2's target, did not move"),
        (actor_target_twice, "agent.actor_target took two Polyak steps toward agent.actor"),
    ):
        assert not check_td3_iteration(slip)
        out = capsys.readouterr().out
        assert words in out and "tau is" not in out, out


def delay_written_in(agent):
    batch = steps_4_to_12(agent)
    if agent.critic_updates % 2 == 0:  # the paper's d = 2, not agent.config.policy_delay
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def test_a_delay_written_in_is_refused(capsys):
    """It passed: the checker ran with policy_delay 2 only."""
    assert not check_td3_iteration(delay_written_in)
    out = capsys.readouterr().out
    assert "with agent.config.policy_delay = 3 it moves only after critic updates 3, 6" in out, out
    assert "is a 2 written in? Read the delay from agent.config.policy_delay" in out, out


def unfreezes_the_critic_targets(agent):
    correct(agent)
    agent.critic_targets.requires_grad_(True)


def test_unfrozen_targets_are_refused(capsys):
    """It passed: steps 5 and 7 refuse an unfrozen target, step 15 never looked."""
    assert not check_td3_iteration(unfreezes_the_critic_targets)
    out = capsys.readouterr().out
    assert "after iteration 1 the parameters of agent.critic_targets require grad" in out, out
    assert "actor_target" not in out, out


def both_targets_every_iteration(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
    polyak_update(agent.actor, agent.actor_target, agent.config.tau)
    polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def test_both_targets_outside_the_delay_are_both_named(capsys):
    """Only the critic targets were named: the actor target, a fresh copy of the actor, did not show its step."""
    assert not check_td3_iteration(both_targets_every_iteration)
    out = capsys.readouterr().out
    for name in ("actor_target", "critic_targets"):
        assert f"agent.{name} moved in iteration 1, which is not a delayed one" in out, out


def counts_its_own_calls():
    """A counter of its own calls in place of agent.critic_updates: right in the first run of a check, when it
    counts as the agent does."""
    calls = 0

    def answer(agent):
        nonlocal calls
        batch = steps_4_to_12(agent)
        calls += 1
        if policy_update_due(calls, agent.config.policy_delay):
            actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
            polyak_update(agent.actor, agent.actor_target, agent.config.tau)
            polyak_update(agent.critics, agent.critic_targets, agent.config.tau)

    return answer


def test_a_counter_of_its_own_calls_is_named_on_every_run(capsys):
    answer = counts_its_own_calls()
    for _ in range(3):  # the check cell run again and again: one run in three passed when a check made 8 calls
        assert not check_td3_iteration(answer)
        out = capsys.readouterr().out
        assert "as a counter of your function's own calls (a global?) would have it" in out, out
        assert "written in" not in out


def test_a_draw_from_the_global_generator_is_told_where_step_15_draws(capsys):
    """The toolkit's "this step draws nothing at random" was wrong here: step 15 draws, from agent.update_rng."""
    assert not check_td3_iteration(lambda agent: correct(agent, noise_from_update_rng=False))
    out = capsys.readouterr().out
    assert "changed torch's global random state" in out and "drawn from agent.update_rng" in out, out
    assert "draws nothing" not in out


def soft_update(online, target, tau):
    """Notebook 14's solution: the Polyak step by hand, which rounds otherwise than polyak_update's lerp."""
    with torch.no_grad():
        for p, p_target in zip(online.parameters(), target.parameters()):
            p_target.mul_(1 - tau).add_(tau * p)


def polyak_by_hand(agent):
    batch = steps_4_to_12(agent)
    if delayed(agent):
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        soft_update(agent.actor, agent.actor_target, agent.config.tau)
        soft_update(agent.critics, agent.critic_targets, agent.config.tau)


def test_a_polyak_step_written_by_hand_is_accepted(capsys):
    """It left the student's actor a rounding away from TD3.train_step's, and the checker, which read whether the
    actor was due from the reference's actor against the student's, said at iteration 5 that the actor should have
    moved ("the actor's loss was backpropagated but the actor did not move")."""
    assert check_td3_iteration(polyak_by_hand)
    assert "Correct!" in capsys.readouterr().out


def actor_once(agent):
    batch = steps_4_to_12(agent)
    if agent.critic_updates == agent.config.policy_delay:  # the first delayed iteration only
        actor_update(agent.actor, agent.critics, batch.obs, agent.actor_optimizer)
        polyak_update(agent.actor, agent.actor_target, agent.config.tau)
        polyak_update(agent.critics, agent.critic_targets, agent.config.tau)


def test_a_gradient_left_from_an_earlier_actor_step_is_no_backward(capsys):
    """At iteration 4 the actor's weights still held iteration 2's gradient, and the reply blamed the optimizer
    ("the actor's loss was backpropagated but the actor did not move: its step is taken by agent.actor_optimizer")."""
    assert not check_td3_iteration(actor_once)
    out = capsys.readouterr().out
    assert "the actor should move at iteration 4" in out and "actor_optimizer" not in out, out
