"""Layer 9, api: the user-facing transforms and libraries built on everything below
(jit, jacobians, custom derivatives, random, activations, scipy.special)."""
