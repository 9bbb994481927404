"""Linear-algebra primitives: ``dot_general`` (JAX's general tensor contraction).

``dot_general(lhs, rhs, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)))``
contracts the paired ``*_contract`` dimensions and keeps the paired ``*_batch``
dimensions; the result's dimensions are the batch dimensions, then the free
dimensions of ``lhs``, then those of ``rhs``, each in their original order.  It is
bilinear: its JVP is ``dot(t_lhs, rhs) + dot(lhs, t_rhs)`` and it has a transpose
rule for each operand.  Every matrix product in ``zerax.numpy`` (dot, matmul,
tensordot, einsum, ...) lowers to it.  Its lowering (BLAS calls or loop nests) is
in ``backends/lowering/linalg.py``.
"""

from __future__ import annotations

import math

import numpy as np

from ... import errors
from ..base import dtypes
from ..core.ad_util import Zero, add_any, is_undefined
from ..core.api_util import as_input
from ..core.core import Primitive, ShapedArray, Tracer, bind, get_aval
from ._factory import vjp_from_transpose
from .elementwise import convert_element_type, mul
from .shape import transpose
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules, moveaxis
from ..interpreters.tape import vjp_rules
from ..base.dtypes import kind as dtype_kind

dot_general_p = Primitive("dot_general")


# --------------------------------------------------------------------------- helpers


def _ints(seq, what):
    try:
        return tuple(int(d) for d in seq)
    except TypeError:
        raise errors.ZeraxTypeError(
            f"dot_general: {what} must be a sequence of integers, got {seq!r}") from None


def _normalize_dimension_numbers(dimension_numbers, lhs_ndim, rhs_ndim):
    """``((lc, rc), (lb, rb))`` as tuples of non-negative ints (negatives wrap)."""
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise errors.ZeraxTypeError(
            "dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}") from None

    def wrap(dims, ndim, what):
        dims = _ints(dims, what)
        out = []
        for d in dims:
            if not -ndim <= d < ndim:
                raise errors.ShapeError(
                    f"dot_general: {what} dimension {d} is out of range for an operand of "
                    f"rank {ndim}")
            out.append(d % ndim)
        return tuple(out)

    return ((wrap(lc, lhs_ndim, "lhs contracting"), wrap(rc, rhs_ndim, "rhs contracting")),
            (wrap(lb, lhs_ndim, "lhs batch"), wrap(rb, rhs_ndim, "rhs batch")))


def free_dims(ndim, contract, batch):
    used = set(contract) | set(batch)
    return tuple(d for d in range(ndim) if d not in used)


def _as_operand(x):
    if isinstance(x, Tracer) or hasattr(x, "_value") or isinstance(x, np.ndarray):
        return x
    if isinstance(x, (bool, int, float, complex, np.generic, list, tuple)):
        return as_input(x, "dot_general operand")
    raise errors.ZeraxTypeError(
        f"dot_general: operands must be arrays, got {type(x).__name__}")


# --------------------------------------------------------------------------- the lax API


_checked: dict = {}   # (avals, dimension numbers) -> normalized params, already validated


def _check_call(la, ra, dimension_numbers, preferred_element_type):
    dn = _normalize_dimension_numbers(dimension_numbers, len(la.shape), len(ra.shape))
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type)
    # Check here too: the eager path runs the NumPy impl without the shape rule.
    _dot_general_abstract(la, ra, dimension_numbers=dn, preferred_element_type=pet)
    return dn, pet


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """JAX's ``lax.dot_general``: a general tensor contraction.

    ``dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``;
    the result's axes are the batch axes, then ``lhs``'s free axes, then ``rhs``'s.
    Both operands must have the same dtype (``zerax.numpy`` functions promote first);
    ``preferred_element_type`` computes (and returns) in another dtype.  ``precision``
    (JAX's choice of reduced-precision passes on accelerators) is accepted and ignored.

    >>> import numpy as np, zerax.lax as lax
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> lax.dot_general(a, a, (((1,), (1,)), ((), ()))).shape    # a @ a.T
    (2, 2)
    >>> lax.dot_general(np.ones((4, 2, 3)), np.ones((4, 3, 5)),
    ...                 (((2,), (1,)), ((0,), (0,)))).shape      # batched matmul
    (4, 2, 5)
    """
    lhs, rhs = _as_operand(lhs), _as_operand(rhs)
    la, ra = get_aval(lhs), get_aval(rhs)
    key = (la, ra, dimension_numbers, preferred_element_type)
    try:
        dn, pet = _checked[key]
    except KeyError:
        dn, pet = _check_call(la, ra, dimension_numbers, preferred_element_type)
        if len(_checked) < 4096:
            _checked[key] = (dn, pet)
    except TypeError:   # unhashable dimension numbers (lists)
        dn, pet = _check_call(la, ra, dimension_numbers, preferred_element_type)
    return bind(dot_general_p, lhs, rhs, dimension_numbers=dn, preferred_element_type=pet)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """JAX's ``lax.dot``: vector.vector, matrix.vector or matrix.matrix products
    (contracts the last axis of ``lhs`` with the first of ``rhs``).

    >>> import numpy as np, zerax.lax as lax
    >>> lax.dot(np.ones((2, 3)), np.ones(3))
    Array([3., 3.], dtype=float64)
    """
    lhs, rhs = _as_operand(lhs), _as_operand(rhs)
    if not (1 <= len(lhs.shape) <= 2 and 1 <= len(rhs.shape) <= 2):
        raise errors.ShapeError(
            f"lax.dot takes operands of rank 1 or 2, got shapes {tuple(lhs.shape)} and "
            f"{tuple(rhs.shape)}; use lax.dot_general for other ranks.")
    return dot_general(lhs, rhs, (((len(lhs.shape) - 1,), (0,)), ((), ())),
                       preferred_element_type=preferred_element_type)


# --------------------------------------------------------------------------- impl


def _dot_general_impl(lhs, rhs, *, dimension_numbers, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    if dtypes.is_bfloat16(lhs.dtype) and preferred_element_type in (None, lhs.dtype):
        # bfloat16 products are summed in float32 and rounded once (JAX's CPU backend;
        # NumPy has no bfloat16 BLAS)
        out = _dot_general_impl(lhs.astype(np.float32), rhs.astype(np.float32),
                                dimension_numbers=dimension_numbers,
                                preferred_element_type=None)
        return out.astype(lhs.dtype)
    if preferred_element_type is not None:
        lhs = lhs.astype(preferred_element_type, copy=False)
        rhs = rhs.astype(preferred_element_type, copy=False)
    # Fast paths that go straight to BLAS without any copy.
    if not lb and lhs.ndim == 2 and rhs.ndim == 2 and len(lc) == 1:
        if lc == (1,) and rc == (0,):
            return np.matmul(lhs, rhs)
        if lc == (1,) and rc == (1,):
            return np.matmul(lhs, rhs.T)
        if lc == (0,) and rc == (0,):
            return np.matmul(lhs.T, rhs)
        return np.matmul(lhs.T, rhs.T)
    if not lb and lhs.ndim == 1 and rhs.ndim <= 2 and lc == (0,) and rc == (0,):
        return np.matmul(lhs, rhs)                        # vector . vector / matrix
    if not lb and lhs.ndim == 2 and rhs.ndim == 1 and lc == (1,) and rc == (0,):
        return np.matmul(lhs, rhs)
    nb = len(lb)
    if (lhs.ndim == rhs.ndim == nb + 2 and lb == rb == tuple(range(nb))
            and lc == (nb + 1,) and rc == (nb,)):
        return np.matmul(lhs, rhs)                        # batched matmul, batch leading
    # General case: (batch, free, contract) @ (batch, contract, free) as one matmul.
    lf = free_dims(lhs.ndim, lc, lb)
    rf = free_dims(rhs.ndim, rc, rb)
    bshape = [lhs.shape[d] for d in lb]
    lfshape = [lhs.shape[d] for d in lf]
    rfshape = [rhs.shape[d] for d in rf]
    b, m, n = math.prod(bshape), math.prod(lfshape), math.prod(rfshape)
    k = math.prod([lhs.shape[d] for d in lc])
    a = np.transpose(lhs, lb + lf + lc).reshape(b, m, k)
    c = np.transpose(rhs, rb + rc + rf).reshape(b, k, n)
    out = np.matmul(a[0], c[0])[None] if b == 1 else np.matmul(a, c)
    return out.reshape(bshape + lfshape + rfshape)


# --------------------------------------------------------------------------- shape rule


def _dot_general_abstract(lhs, rhs, *, dimension_numbers, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    shapes = f"lhs shape {lhs.shape} and rhs shape {rhs.shape}"
    if len(lc) != len(rc):
        raise errors.ShapeError(
            f"dot_general: {len(lc)} lhs contracting dimensions {lc} but {len(rc)} rhs "
            f"contracting dimensions {rc} ({shapes}); they must pair up.")
    if len(lb) != len(rb):
        raise errors.ShapeError(
            f"dot_general: {len(lb)} lhs batch dimensions {lb} but {len(rb)} rhs batch "
            f"dimensions {rb} ({shapes}); they must pair up.")
    for name, c, b, nd in (("lhs", lc, lb, lhs.ndim), ("rhs", rc, rb, rhs.ndim)):
        dims = c + b
        if any(not 0 <= d < nd for d in dims):
            raise errors.ShapeError(
                f"dot_general: {name} dimension numbers {dims} out of range for rank {nd} "
                f"({shapes})")
        if len(set(dims)) != len(dims):
            raise errors.ShapeError(
                f"dot_general: {name} contracting {c} and batch {b} dimensions must be "
                f"distinct ({shapes})")
    for a, b in zip(lc, rc):
        if lhs.shape[a] != rhs.shape[b]:
            raise errors.ShapeError(
                f"dot_general: contracting dimension {a} of the lhs (size {lhs.shape[a]}) "
                f"and dimension {b} of the rhs (size {rhs.shape[b]}) differ; {shapes}, "
                f"contracting dimensions {lc} and {rc}.")
    for a, b in zip(lb, rb):
        if lhs.shape[a] != rhs.shape[b]:
            raise errors.ShapeError(
                f"dot_general: batch dimension {a} of the lhs (size {lhs.shape[a]}) and "
                f"dimension {b} of the rhs (size {rhs.shape[b]}) differ; {shapes}, batch "
                f"dimensions {lb} and {rb}.")
    if lhs.dtype != rhs.dtype:
        raise errors.ZeraxTypeError(
            f"dot_general: operands must have one dtype, got {lhs.dtype.name} and "
            f"{rhs.dtype.name} (zerax.numpy functions promote first; with zerax.lax convert "
            "with lax.convert_element_type).")
    shape = ([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in free_dims(lhs.ndim, lc, lb)]
             + [rhs.shape[d] for d in free_dims(rhs.ndim, rc, rb)])
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return ShapedArray(shape, dtype)


# --------------------------------------------------------------------------- JVP


def _dot_general_jvp(primals, tangents, *, dimension_numbers, preferred_element_type):
    lhs, rhs = primals
    t_lhs, t_rhs = tangents
    params = dict(dimension_numbers=dimension_numbers,
                  preferred_element_type=preferred_element_type)
    ans = bind(dot_general_p, lhs, rhs, **params)
    if dtype_kind(ans.dtype) not in "fc":
        return ans, Zero(ShapedArray(ans.shape, ans.dtype))
    out = None
    if type(t_lhs) is not Zero:
        out = bind(dot_general_p, t_lhs, rhs, **params)
    if type(t_rhs) is not Zero:
        term = bind(dot_general_p, lhs, t_rhs, **params)
        out = term if out is None else add_any(out, term)
    if out is None:
        return ans, Zero(ShapedArray(ans.shape, ans.dtype))
    return ans, out


# --------------------------------------------------------------------------- transpose


def _transpose_lhs(ct, x_aval, y, dimension_numbers, preferred_element_type, swap_ans):
    """The cotangent of the operand ``x`` (aval ``x_aval``) of ``dot_general(x, y)``
    (or of ``dot_general(y, x)`` when ``swap_ans``), given the output cotangent ``ct``.

    ``ct``'s axes are [batch, x free, y free] (or [batch, y free, x free] when
    swapped).  Contracting ``ct``'s y-free axes with ``y``'s free axes, batched over the
    batch axes, leaves [batch, x free, y's contracting axes in y's order]; those last
    are ``x``'s contracting axes sorted by their partner in ``y``.  A transpose puts
    the axes back into ``x``'s order."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_ndim = len(x_aval.shape)
    y_ndim = len(y.shape)
    x_kept = free_dims(x_ndim, x_contract, x_batch)
    y_kept = free_dims(y_ndim, y_contract, y_batch)
    nb = len(x_batch)
    ans_batch = tuple(range(nb))
    if swap_ans:
        ans_y = tuple(range(nb, nb + len(y_kept)))
    else:
        ans_y = tuple(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    dims = ((ans_y, y_kept), (ans_batch, y_batch))
    x_contract_sorted_by_y = [x_contract[i] for i in np.argsort(y_contract, kind="stable")]
    out_axes = tuple(int(i) for i in np.argsort(list(x_batch) + list(x_kept)
                                                + x_contract_sorted_by_y, kind="stable"))
    if np.dtype(ct.dtype) != np.dtype(y.dtype):   # preferred_element_type was used
        y = convert_element_type(y, ct.dtype)
    if not x_contract and not x_batch and (len(ct.shape) == 0 or y_ndim == 0):
        # scalar * array: no contraction to do
        x_bar = transpose(mul(ct, y), out_axes)
    elif not nb and list(x_contract_sorted_by_y) + list(x_kept) == \
            sorted(list(x_contract_sorted_by_y) + list(x_kept)) and \
            out_axes != tuple(range(len(out_axes))):
        # dot_general(y, ct) comes out in x's axis order already: no transpose to copy
        # (e.g. the cotangent of W in x @ W is x.T @ ct, not (ct.T @ x).T).
        x_bar = bind(dot_general_p, y, ct, dimension_numbers=((y_kept, ans_y), ((), ())),
                     preferred_element_type=None)
    else:
        x_bar = transpose(bind(dot_general_p, ct, y, dimension_numbers=dims,
                               preferred_element_type=None), out_axes)
    if np.dtype(x_bar.dtype) != x_aval.dtype:
        x_bar = convert_element_type(x_bar, x_aval.dtype)
    return x_bar


def _dot_general_transpose(ct, lhs, rhs, *, dimension_numbers, preferred_element_type):
    if is_undefined(lhs) and is_undefined(rhs):
        raise errors.ZeraxInternalError(
            "dot_general transposed in both operands: the program is not linear")
    (lc, rc), (lb, rb) = dimension_numbers
    if is_undefined(lhs):
        if type(ct) is Zero:
            return [Zero(lhs.aval), None]
        return [_transpose_lhs(ct, lhs.aval, rhs, dimension_numbers,
                               preferred_element_type, swap_ans=False), None]
    if type(ct) is Zero:
        return [None, Zero(rhs.aval)]
    swapped = ((rc, lc), (rb, lb))
    return [None, _transpose_lhs(ct, rhs.aval, lhs, swapped, preferred_element_type,
                                 swap_ans=True)]


dot_general_p.impl = _dot_general_impl
dot_general_p.abstract_eval = _dot_general_abstract
jvp_rules[dot_general_p] = _dot_general_jvp
transpose_rules[dot_general_p] = _dot_general_transpose
vjp_rules[dot_general_p] = vjp_from_transpose(dot_general_p)  # bilinear: one operand at a time

__all__ = ["dot_general_p", "dot_general", "dot"]


# --------------------------------------------------------------------------- batching


def _dot_general_batch(args, dims, *, dimension_numbers, preferred_element_type):
    """A mapped operand's batch dimension becomes a batch dimension of the product when
    both are mapped, and otherwise a free dimension: ``vmap(lambda x: x @ W)`` stays one
    matrix product, with ``W`` untouched."""
    lhs, rhs = args
    ld, rd = dims
    (lc, rc), (lb, rb) = dimension_numbers
    shift = lambda ds, d: tuple(x + (x >= d) for x in ds)  # noqa: E731
    if ld is not None and rd is not None:
        lhs, rhs = moveaxis(lhs, ld, 0), moveaxis(rhs, rd, 0)
        dn = ((shift(lc, 0), shift(rc, 0)), ((0,) + shift(lb, 0), (0,) + shift(rb, 0)))
        return dot_general(lhs, rhs, dn, preferred_element_type=preferred_element_type), 0
    if ld is not None:
        dn = ((shift(lc, ld), rc), (shift(lb, ld), rb))
        lhs_free = free_dims(lhs.ndim, dn[0][0], dn[1][0])
        return (dot_general(lhs, rhs, dn, preferred_element_type=preferred_element_type),
                len(lb) + lhs_free.index(ld))
    dn = ((lc, shift(rc, rd)), (lb, shift(rb, rd)))
    rhs_free = free_dims(rhs.ndim, dn[0][1], dn[1][1])
    lhs_free = free_dims(lhs.ndim, lc, lb)
    return (dot_general(lhs, rhs, dn, preferred_element_type=preferred_element_type),
            len(lb) + len(lhs_free) + rhs_free.index(rd))


batch_rules[dot_general_p] = _dot_general_batch


# --------------------------------------------------------------------------- cost
# (the backends' choice between loops and BLAS, and jit's thread count, read it; the
# lowering is in backends/lowering/linalg.py)


def product_work(eqn):
    """(batch size, multiply-adds) of a dot_general equation."""
    lhs, rhs = eqn.invars
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    ls, rs = lhs.aval.shape, rhs.aval.shape
    size = lambda dims, shape: int(math.prod(shape[d] for d in dims))  # noqa: E731
    lf, rf = free_dims(len(ls), lc, lb), free_dims(len(rs), rc, rb)
    b = size(lb, ls)
    return b, b * size(lf, ls) * size(lc, ls) * size(rf, rs)
