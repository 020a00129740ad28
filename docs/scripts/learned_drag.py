"""
Learn a drag force inside a simulation
======================================

A batch of projectiles flies under gravity and air drag.  The drag law is
unknown; what is known is where the projectiles went.  This page puts a
small neural network in the simulation step as the drag force, integrates
the batch with hawk kernels in a capped device loop, and trains the network
through the whole flight with ``eagle.diff.reverse``: first in torch, then
the same network in JAX.  The code is ``examples/learned_drag.py``; the
nodes are described in :doc:`/frameworks`.
"""

# %%
# The step
# --------
#
# Each projectile is a sample.  One turn of the loop asks the model for the
# drag acceleration from the velocity, takes an Euler step, adds the squared
# distance to the reference position of that turn, and clears the loop's
# guard once every projectile has landed:
#
# .. literalinclude:: /../examples/learned_drag.py
#    :pyobject: euler
#
# .. literalinclude:: /../examples/learned_drag.py
#    :pyobject: flight
#
# ``model`` makes the node: ``eagle.frameworks.torch.node(mlp, reads={"vx":
# vx, "vy": vy}, writes={"ax": ax, "ay": ay})``.  eagle orders it after the
# kernel that wrote the velocity and before the one that reads the
# acceleration, from the arrays alone.  The reference comes from the known
# law, ``-k |v| v``, in NumPy.

import sys
from pathlib import Path

import numpy as np

# the example is a script of the repository's examples/ folder; the docs build runs this page in
# docs/scripts, where sphinx-gallery defines no __file__
HERE = Path(globals().get("__file__", "learned_drag.py")).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "examples"))
import learned_drag as drag

state = drag.launch_state()
refs = drag.reference(*state)
print(f"{drag.N} projectiles, at most {drag.TURNS} turns of {drag.DT} s")

# %%
# A torch model
# -------------
#
# .. literalinclude:: /../examples/learned_drag.py
#    :pyobject: torch_drag
#
# The training records the flight (``record=True``) and reverses it with the
# model's vjp in place of the model node's derivative:
#
# .. literalinclude:: /../examples/learned_drag.py
#    :pyobject: Training.gradients
#
# ``eagle.frameworks.torch.vjp(model)`` runs torch's backward through the
# model at every turn the reverse pass reaches, so the gradients of its
# weights accumulate in their ``.grad``, and ``torch.optim.Adam`` steps as
# usual.  Before training, check the gradient of a few weights against
# central differences of the whole flight:

training = drag.TorchTraining(state, refs)
first = training.loss()
training.gradients()
picks = [(0, 3), (1, 5), (2, 7), (3, 1)]
found = np.array([training.weight_grads()[k].reshape(-1)[i] for k, i in picks])
central = drag.central_difference(training, picks)
print("largest relative difference:", np.max(np.abs(found - central) / np.abs(central)))
print("the loop left after every projectile landed:", training.flag[0] == 0)

# %%
# Then train:

for step in range(40):
    loss = training.step()
    if step % 10 == 0:
        print(f"step {step:2d}: mean squared distance {loss:.4f} m^2")
print(f"the error fell {first / training.loss():.0f}-fold")

# %%
# The same network in JAX
# -----------------------
#
# A JAX model is a function of its parameters and the read planes.  Its
# parameters here are NumPy arrays that the optimizer updates in place, so
# the node sees the new values at the next launch with nothing to rebind:
#
# .. literalinclude:: /../examples/learned_drag.py
#    :pyobject: jax_drag
#
# ``eagle.frameworks.jax.vjp(fn, params)`` pulls the cotangents back with
# ``jax.vjp`` (jitted, since ``fn`` is), and ``take()`` hands back the
# parameters' gradient summed over the turns, a pytree shaped like
# ``params``:
#
# .. literalinclude:: /../examples/learned_drag.py
#    :pyobject: JaxTraining.gradients

training = drag.JaxTraining(state, refs)
first = training.loss()
training.gradients()
found = np.array([training.weight_grads()[k].reshape(-1)[i] for k, i in picks])
central = drag.central_difference(training, picks)
print("largest relative difference:", np.max(np.abs(found - central) / np.abs(central)))
for step in range(60):
    loss = training.step()
    if step % 15 == 0:
        print(f"step {step:2d}: mean squared distance {loss:.4f} m^2")
print(f"the error fell {first / training.loss():.0f}-fold")
