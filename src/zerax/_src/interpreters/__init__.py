"""Layer 4, interpreters: the transforms as traces and IR rewrites (JVP, transposition,
batching, the eager tape, Taylor mode), each with its own rule table, and ``jvp_jaxpr``,
``transpose_jaxpr``, ``batch_jaxpr``, ``jet_jaxpr`` written once.  Imports ir, core and base.

Importing the package loads every transform: the eager tape installs itself into
``ad`` (which picks it for reverse mode when no transform is live).
"""

from . import ad, batching, tape, jet  # noqa: F401
