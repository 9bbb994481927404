"""`zerax.io`: checkpoints as safetensors files, never pickle.

:func:`save` writes any pytree (arrays, modules, optimiser states, Python scalars, typed
random keys) to one safetensors file: one tensor per array leaf, named by its path
(``layers.0.weight``), and the tree's structure, dtypes, shapes and zerax's version as
JSON in the file's ``__metadata__``.  The file is written atomically.  :func:`load` reads
it back, treating the file as untrusted (every header number is checked against the file's
size; nothing is evaluated).  :class:`CheckpointManager` keeps numbered checkpoints of a
training run in a directory.  Files are readable by the ``safetensors`` library (and files
it writes are readable here, as a flat dict or into a ``like`` tree).
"""

from ._files import load, load_metadata, save
from .checkpoint import CheckpointManager

__all__ = ["save", "load", "load_metadata", "CheckpointManager"]
