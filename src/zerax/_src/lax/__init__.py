"""Layer 7, lax: JAX's ``lax`` API on the primitives of ``ops`` (conveniences,
windowed operations, structured control flow).  Imports ops and the layers below."""
