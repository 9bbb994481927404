"""Layer 3, ir: the typed program representation (Var, Literal, Eqn, Jaxpr), tracing a
Python function into it, and the passes (IR -> IR).  Imports core and base."""
