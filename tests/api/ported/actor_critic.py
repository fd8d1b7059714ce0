"""pytorch/examples' reinforcement_learning/actor_critic.py, written again for a port test.

Same structure and ops as the original (a shared hidden layer with an action head and a
value head, `Categorical` action sampling, discounted returns normalised with float32's
eps, `smooth_l1_loss` for the critic, one Adam step per episode), with the imports changed
to tracegrad.  gym is not a dependency: `CartPole` below is the classic cart-pole
dynamics (Barto, Sutton & Anderson 1983) in NumPy, seeded.

`fixed_actions=True` still draws ``m.sample()`` but then replaces the action with an
inverse-CDF draw from a NumPy generator, so torch and tracegrad (whose random streams
differ) follow the same trajectory and their losses can be compared step by step.
"""
import math
from collections import namedtuple

import numpy as np

import tracegrad as torch
import tracegrad.nn as nn
import tracegrad.nn.functional as F
import tracegrad.optim as optim
from tracegrad.distributions import Categorical

SavedAction = namedtuple("SavedAction", ["log_prob", "value"])


class CartPole:
    """Cart-pole balancing: state (x, x_dot, theta, theta_dot), actions push left/right."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, 4)
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, th, th_dot = self.state
        force = 10.0 if action == 1 else -10.0
        cos, sin = math.cos(th), math.sin(th)
        temp = (force + 0.05 * th_dot ** 2 * sin) / 1.1
        th_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos ** 2 / 1.1))
        x_acc = temp - 0.05 * th_acc * cos / 1.1
        self.state = np.array([x + 0.02 * x_dot, x_dot + 0.02 * x_acc,
                               th + 0.02 * th_dot, th_dot + 0.02 * th_acc])
        done = abs(self.state[0]) > 2.4 or abs(self.state[2]) > 12 * 2 * math.pi / 360
        return self.state.astype(np.float32), 1.0, done, False, {}


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.action_head = nn.Linear(128, 2)
        self.value_head = nn.Linear(128, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


def select_action(model, state, rng=None):
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)
    m = Categorical(probs)
    action = m.sample()
    if rng is not None:     # same trajectory in torch and tracegrad (see the module doc)
        u = float(rng.random())
        action = (probs.detach().cumsum(-1) < u).sum().clamp(max=probs.shape[-1] - 1)
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
    return action.item()


def finish_episode(model, optimizer, gamma=0.99):
    eps = np.finfo(np.float32).eps.item()
    R = 0
    saved_actions = model.saved_actions
    policy_losses = []
    value_losses = []
    returns = []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


def train(episodes=4, fixed_actions=True, max_steps=60, init=None):
    """Losses of the first `episodes` episodes (one optimizer step each)."""
    torch.manual_seed(543)
    env = CartPole(543)
    model = Policy()
    if init is not None:
        init(model)
    optimizer = optim.Adam(model.parameters(), lr=3e-2)
    rng = np.random.default_rng(7) if fixed_actions else None
    losses, running_reward = [], 10
    for i_episode in range(episodes):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, max_steps):
            action = select_action(model, state, rng)
            state, reward, done, _, _ = env.step(action)
            model.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        losses.append(finish_episode(model, optimizer))
    return losses
