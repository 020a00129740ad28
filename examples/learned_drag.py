"""A learned drag force inside a simulation step, trained through the simulation.

A batch of projectiles (one sample each) is integrated by hawk kernels in a
capped device loop: every turn a model node gives the drag acceleration
from the velocity, a kernel takes an explicit Euler step and adds the
squared distance to a reference trajectory, and a reduction clears the
loop's guard once every projectile has landed.  The reference trajectories
come from a known drag law, ``-k |v| v``; the model is a small MLP in torch
(:func:`torch_drag`) or in JAX (:func:`jax_drag`), called as a node of the
graph (``eagle.frameworks.torch.node``, ``eagle.frameworks.jax.node``).

Training records the run (``record=True``) and asks
``eagle.diff.reverse`` for the gradient of the trajectory error, with the
model's vjp (``eagle.frameworks.torch.vjp``, ``eagle.frameworks.jax.vjp``)
in place of the model node's derivative: the gradient flows through every
turn of the loop and through the model, and the model's own parameter
gradients arrive where the framework keeps them (torch: ``.grad``; JAX:
``vjp.take()``).  An optimizer of the framework's kind (Adam) then steps.

Run: python examples/learned_drag.py [--framework torch|jax] [--steps 200]
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

import eagle
import eagle.diff
import hawk
from hawk import Mutable, Param, Scalar, UInt32

N, TURNS, DT, G, K = 48, 80, 0.04, 9.81, 0.1  # projectiles, the loop's cap, time step, gravity, drag
SPEED = 10.0  # the scale of the velocities, for the model's inputs and outputs

#: A launch: the projectiles' positions and velocities (x, y, vx, vy).
State = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@hawk.kernel
def euler(
    x: Scalar, y: Scalar, vx: Scalar, vy: Scalar, ax: Scalar, ay: Scalar, dt: Param, g: Param
) -> tuple[Scalar, Scalar, Scalar, Scalar]:
    """One explicit Euler step under gravity and the drag acceleration ``(ax, ay)``."""
    return x + dt * vx, y + dt * vy, vx + dt * ax, vy + dt * (ay - g)


@hawk.kernel
def nothing(x: Scalar) -> Scalar:
    """Zero per sample: where the error starts, every launch."""
    return 0.0 * x


@hawk.kernel
def track(err: Scalar, x: Scalar, y: Scalar, rx: Scalar, ry: Scalar) -> Scalar:
    """The squared distance to the reference position of this turn, added up."""
    return err + (x - rx) * (x - rx) + (y - ry) * (y - ry)


@hawk.kernel
def flying(y: Scalar, flag: Mutable[UInt32]) -> None:
    """The loop's guard: 1 while some projectile is above the ground."""
    flag = hawk.math.uint32(hawk.any(y > 0.0))


def flight(model: Any) -> Any:
    """The builder of one flight, its drag given by ``model`` (a node maker: ``(vx, vy, ax, ay)``
    -> node).  ``rx``, ``ry`` hold the reference positions, one row per turn."""

    @eagle.Graph.builder
    def fly(x: np.ndarray, y: np.ndarray, vx: np.ndarray, vy: np.ndarray, rx: np.ndarray, ry: np.ndarray,
            flag: np.ndarray, record: bool = False) -> eagle.Graph:
        g = eagle.Graph(record=record)
        ax, ay, err = np.zeros_like(vx), np.zeros_like(vy), nothing(x)
        for t in range(TURNS):  # a capped device loop: at most TURNS turns ...
            if not flag:  # ... leaving once every projectile has landed
                break
            g.add_node(model(vx, vy, ax, ay), name="model")
            x, y, vx, vy = euler(x, y, vx, vy, ax, ay, DT, G)
            err = track(err, x, y, rx[t], ry[t])
            flying(y, flag)
        g.result = err
        return g

    return fly


def launch_state(n: int = N, seed: int = 0) -> State:
    """Start positions and velocities: speeds of 6 to 16 m/s at 30 to 60 degrees."""
    rng = np.random.default_rng(seed)
    speed, angle = rng.uniform(6.0, 16.0, n), np.radians(rng.uniform(30.0, 60.0, n))
    return np.zeros(n), np.full(n, 0.5), speed * np.cos(angle), speed * np.sin(angle)


def reference(
    x: np.ndarray, y: np.ndarray, vx: np.ndarray, vy: np.ndarray, k: float = K
) -> tuple[np.ndarray, np.ndarray]:
    """The positions after each turn under the known drag law ``-k |v| v`` (NumPy, every turn)."""
    rx, ry = np.zeros((TURNS, x.size)), np.zeros((TURNS, x.size))
    x, y, vx, vy = x.copy(), y.copy(), vx.copy(), vy.copy()
    for t in range(TURNS):
        speed = np.sqrt(vx * vx + vy * vy)
        ax, ay = -k * speed * vx, -k * speed * vy
        x, y, vx, vy = x + DT * vx, y + DT * vy, vx + DT * ax, vy + DT * (ay - G)
        rx[t], ry[t] = x, y
    return rx, ry


# ------------------------------------------------------------------ torch


def torch_drag(seed: int = 0) -> Any:
    """The torch model: ``(vx, vy) -> (ax, ay)``, an MLP of the velocity in units of ``SPEED``."""
    import torch

    class Drag(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(seed)
            self.net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
            self.net.double()

        def forward(self, vx: Any, vy: Any) -> tuple[Any, Any]:
            a = self.net(torch.stack([vx, vy], dim=-1) / SPEED) * SPEED
            return a[:, 0], a[:, 1]

    return Drag()


class Training:
    """The flight graph over one launch state and its reference, with a model of the subclass's
    framework, and one step of training: run, reverse, step the optimizer."""

    vjp: Any  #: the model's vjp for eagle.diff.reverse, made by ``setup``

    def __init__(
        self,
        state: State,
        refs: tuple[np.ndarray, np.ndarray],
        seed: int = 0,
        lr: float = 0.02,
    ) -> None:
        self.setup(seed, lr)
        self.flag = np.ones(1, np.uint32)
        self.graph = flight(self.node)(*state, *refs, self.flag, record=True)

    def setup(self, seed: int, lr: float) -> None:
        """The model, its vjp and its optimizer."""
        raise NotImplementedError

    def node(self, vx: np.ndarray, vy: np.ndarray, ax: np.ndarray, ay: np.ndarray) -> Any:
        """The model node: reads the velocity, writes the drag acceleration."""
        raise NotImplementedError

    def loss(self) -> float:
        """Run one flight; its mean squared distance to the reference."""
        self.flag[0] = 1  # the loop clears its guard when every projectile has landed
        return float(np.sum(self.graph()) / (N * TURNS))

    def gradients(self) -> None:
        """The last run's gradient, the model's vjp in place of the model node's derivative."""
        seed = {"result": np.full(N, 1.0 / (N * TURNS))}
        eagle.diff.reverse(self.graph.record, seed, wrt=("vx", "vy"), vjps={"model": self.vjp})

    def step(self) -> float:
        loss = self.loss()
        self.gradients()
        self.descend()
        return loss

    def descend(self) -> None:
        raise NotImplementedError

    def weights(self) -> list[np.ndarray]:
        """The model's parameters as NumPy arrays over their memory (perturbed in place by checks)."""
        raise NotImplementedError

    def weight_grads(self) -> list[np.ndarray]:
        raise NotImplementedError


class TorchTraining(Training):
    """The torch MLP, its ``.grad`` filled by the vjp, and ``torch.optim.Adam``."""

    def setup(self, seed: int, lr: float) -> None:
        import torch

        import eagle.frameworks.torch as etorch

        torch.set_num_threads(1)  # a model this small runs fastest on one thread (torch's pool costs more)
        self.etorch, self.model = etorch, torch_drag(seed)
        self.vjp = etorch.vjp(self.model)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)

    def node(self, vx: np.ndarray, vy: np.ndarray, ax: np.ndarray, ay: np.ndarray) -> Any:
        return self.etorch.node(self.model, reads={"vx": vx, "vy": vy}, writes={"ax": ax, "ay": ay})

    def gradients(self) -> None:
        self.optimizer.zero_grad()  # the vjp accumulates into .grad, once per turn of the loop
        super().gradients()

    def descend(self) -> None:
        self.optimizer.step()

    def weights(self) -> list[np.ndarray]:
        return [p.detach().numpy() for p in self.model.parameters()]

    def weight_grads(self) -> list[np.ndarray]:
        return [p.grad.numpy().copy() for p in self.model.parameters()]


# ------------------------------------------------------------------ JAX


def jax_drag(seed: int = 0) -> tuple[Any, dict[str, np.ndarray]]:
    """The JAX model ``fn(params, vx, vy) -> (ax, ay)``, jitted, and its parameters (NumPy leaves,
    which the optimizer updates in place): the MLP of :func:`torch_drag`."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(seed)
    params = {
        "w1": rng.uniform(-1, 1, (2, 16)) / math.sqrt(2),
        "b1": rng.uniform(-1, 1, 16) / math.sqrt(2),
        "w2": rng.uniform(-1, 1, (16, 2)) / 4.0,
        "b2": rng.uniform(-1, 1, 2) / 4.0,
    }

    def drag(p: dict[str, Any], vx: Any, vy: Any) -> tuple[Any, Any]:
        h = jnp.tanh(jnp.stack([vx, vy], axis=-1) / SPEED @ p["w1"] + p["b1"])
        a = (h @ p["w2"] + p["b2"]) * SPEED
        return a[:, 0], a[:, 1]

    return jax.jit(drag), params


class Adam:
    """Adam on NumPy arrays, in place (what optax.adam computes), for the JAX model's parameters."""

    def __init__(
        self, params: dict[str, np.ndarray], lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
    ) -> None:
        self.params, self.lr, self.b1, self.b2, self.eps, self.t = params, lr, b1, b2, eps, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, grads: dict[str, Any]) -> None:
        self.t += 1
        for k, p in self.params.items():
            g = np.asarray(grads[k])
            self.m[k] = self.b1 * self.m[k] + (1 - self.b1) * g
            self.v[k] = self.b2 * self.v[k] + (1 - self.b2) * g * g
            m, v = self.m[k] / (1 - self.b1**self.t), self.v[k] / (1 - self.b2**self.t)
            p -= self.lr * m / (np.sqrt(v) + self.eps)


class JaxTraining(Training):
    """The JAX MLP (64-bit mode on: the planes are float64), its gradient from ``vjp.take()``, and
    Adam on its NumPy parameters in place."""

    def setup(self, seed: int, lr: float) -> None:
        import jax

        import eagle.frameworks.jax as ejax

        jax.config.update("jax_enable_x64", True)
        self.ejax, (self.fn, self.params) = ejax, jax_drag(seed)
        self.vjp = ejax.vjp(self.fn, self.params)
        self.optimizer = Adam(self.params, lr)
        self.grads: dict[str, Any] = {}

    def node(self, vx: np.ndarray, vy: np.ndarray, ax: np.ndarray, ay: np.ndarray) -> Any:
        return self.ejax.node(
            self.fn, reads={"vx": vx, "vy": vy}, writes={"ax": ax, "ay": ay}, params=self.params
        )

    def gradients(self) -> None:
        super().gradients()
        self.grads = self.vjp.take()

    def descend(self) -> None:
        self.optimizer.step(self.grads)

    def weights(self) -> list[np.ndarray]:
        return list(self.params.values())

    def weight_grads(self) -> list[np.ndarray]:
        return [np.asarray(self.grads[k]) for k in self.params]


TRAININGS = {"torch": TorchTraining, "jax": JaxTraining}


def central_difference(training: Training, picks: list[tuple[int, int]], h: float = 1e-6) -> np.ndarray:
    """d loss / d weight by central differences, for ``(parameter, flat index)`` picks."""
    weights, found = training.weights(), []
    for k, i in picks:
        w = weights[k].reshape(-1)
        was = w[i].copy()
        w[i] = was + h
        up = training.loss()
        w[i] = was - h
        down = training.loss()
        w[i] = was  # the weight as it was: (w + h - 2h) + h need not round back to w
        found.append((up - down) / (2 * h))
    return np.array(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=sorted(TRAININGS), default="torch")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    state = launch_state()
    training = TRAININGS[args.framework](state, reference(*state))
    training.loss()
    training.gradients()
    picks = [(0, 3), (1, 5), (2, 7)]
    grads = np.array([training.weight_grads()[k].reshape(-1)[i] for k, i in picks])
    print("gradient check:", np.max(np.abs(grads - central_difference(training, picks)) / np.abs(grads)))
    first = training.step()
    for step in range(1, args.steps):
        loss = training.step()
        if step % 25 == 0:
            print(f"step {step:4d}: loss {loss:.3e}")
    print(f"loss fell {first / training.loss():.0f}x")


if __name__ == "__main__":
    main()
