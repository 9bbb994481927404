"""The primitives, grouped by kind; each module declares its primitives with all rules.

Importing this package registers every primitive."""

from . import elementwise, shape, reduce, indexing, linalg, sort, misc  # noqa: F401
