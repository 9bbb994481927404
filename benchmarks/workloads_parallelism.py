"""Rows of issue 31 (automatic model parallelism): a tensor-parallel wide MLP on 2
processes against 1 (its step time, and the memory of its parameters and optimiser
state in one process), and the planner's time on a 12-block transformer.

The rows are self-timed (``registry.Seconds``): each contender's setup runs one job of
``parallel_probe.py`` (``mpiexec -n 2``, or one plain process for the baseline; one
thread per process), which times ``ROUNDS`` steps, each started together on every
process and ended by the last one; the timed callable hands those samples out in turn.
Every process shares the machine with whatever else runs on it.
"""

from __future__ import annotations

from registry import Case, Seconds, Target, workload
from workloads_distributed import _probe as _mpi_probe, _samples as _samples_of

ISSUE = "issue 31"
ROUNDS = 9
HIDDEN = 4096
BLOCKS = 12


def _probe(n_processes: int, *args) -> dict:
    """parallel_probe.py on ``n_processes`` (0: one plain process): its JSON."""
    return _mpi_probe(n_processes, *args, script="parallel_probe.py")


def _samples(times, extras=None):
    """The samples handed out in turn (as Seconds), with ``extras`` when given."""
    call = _samples_of(times)
    return (call, extras) if extras is not None else call


TENSOR_PARALLEL = workload(
    "mlp_tensor_parallel", "Tensor-parallel wide MLP step, 2 processes vs 1",
    cases=[Case("main", f"512-{HIDDEN}-512, batch 64, Adam", compare=False)],
    description=f"A training step (value_and_grad, Adam) of a 512-{HIDDEN}-512 GELU MLP "
                "in float64. zerax on 2 processes (`mpiexec -n 2`) with the Megatron "
                "plan: the parameters placed with `device_put(x, NamedSharding(...))` "
                "(first weight split by columns, second by rows; the Adam state made "
                "from them is split the same way) and the jitted step partitioned as "
                "they are split (one all-reduce per step in the forward pass); against "
                "the same jitted step on 1 process. One thread per process. The extras "
                "give the bytes of parameters and optimiser state one process holds.",
    targets=[Target("zerax_1proc", 1 / 1.5, "speed-up >= 1.5x (<= 0.667x the time)", ISSUE),
             Target("zerax_1proc", 0.55, "parameters + optimiser state per process "
                    "<= 0.55x one process's", ISSUE, metric="memory_bytes")],
    rounds=ROUNDS,
    labels={"zerax": "zerax, 2 processes", "zerax_1proc": "zerax, 1 process"},
    miss_note="Two processes of one thread each need two idle cores: on a machine "
              "whose other processes already take them, the two halves take turns with "
              "them and wait for each other at the all-reduce, so the speed-up measures "
              "the machine's load more than the step.",
)


@TENSOR_PARALLEL.contender("zerax", label="zerax, 2 processes")
def _(case):
    got = _probe(2, "tp", HIDDEN, ROUNDS + 1)
    return _samples(got["zerax"][1:], {"memory_bytes": got["memory_bytes"]})


@TENSOR_PARALLEL.contender("zerax_1proc", label="zerax, 1 process")
def _(case):
    got = _probe(0, "tp", HIDDEN, ROUNDS + 1)
    return _samples(got["zerax"][1:], {"memory_bytes": got["memory_bytes"]})


PLANNER = workload(
    "planner_transformer", f"The planner on a {BLOCKS}-block transformer",
    cases=[Case("main", f"{BLOCKS} blocks, width 64, 2 processes", compare=False)],
    description=f"`jit(step, in_shardings='auto', mesh=mesh, memory_limit=...)` of the "
                f"training step of a {BLOCKS}-block transformer (width 64, 4 heads, "
                "float64), on 2 processes, with the rates measured on the mesh: the "
                "search's time (`Plan.seconds`: propagation and costing of every plan "
                "tried; tracing and the rates' measurement are not in it). The plan it "
                "chooses is the Megatron plan.",
    targets=[Target("limit", 1.0, "<= 2 s", ISSUE)],
    rounds=3,
)


@PLANNER.contender("zerax")
def _(case):
    return _samples(_probe(2, "plan", BLOCKS, 3)["zerax"])


@PLANNER.contender("limit", label="issue 31's limit")
def _(case):
    return lambda: Seconds(2.0)
