"""Linear-algebra primitives: ``dot_general`` (JAX's general tensor contraction).

``dot_general(lhs, rhs, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)))``
contracts the paired ``*_contract`` dimensions and keeps the paired ``*_batch``
dimensions; the result's dimensions are the batch dimensions, then the free
dimensions of ``lhs``, then those of ``rhs``, each in their original order.  It is
bilinear: its JVP is ``dot(t_lhs, rhs) + dot(lhs, t_rhs)`` and it has a transpose
rule for each operand.  Every matrix product in ``zerax.numpy`` (dot, matmul,
tensordot, einsum, ...) lowers to it.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from ... import errors
from ..core.ad_util import Zero, add_any, is_undefined
from ..core.core import Primitive, ShapedArray, Tracer, bind, get_aval
from ._factory import vjp_from_transpose
from ..interpreters.ad import jvp_rules, transpose_rules
from ..interpreters.batching import batch_rules
from ..interpreters.tape import vjp_rules

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


def _free_dims(ndim, contract, batch):
    used = set(contract) | set(batch)
    return tuple(d for d in range(ndim) if d not in used)


def _as_operand(x):
    if isinstance(x, Tracer) or hasattr(x, "_value") or isinstance(x, np.ndarray):
        return x
    if isinstance(x, (bool, int, float, complex, np.generic, list, tuple)):
        from ..core.api_util import as_input
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
    lf = _free_dims(lhs.ndim, lc, lb)
    rf = _free_dims(rhs.ndim, rc, rb)
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
    shape = ([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in _free_dims(lhs.ndim, lc, lb)]
             + [rhs.shape[d] for d in _free_dims(rhs.ndim, rc, rb)])
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return ShapedArray(shape, dtype)


# --------------------------------------------------------------------------- JVP


def _dot_general_jvp(primals, tangents, *, dimension_numbers, preferred_element_type):
    lhs, rhs = primals
    t_lhs, t_rhs = tangents
    params = dict(dimension_numbers=dimension_numbers,
                  preferred_element_type=preferred_element_type)
    ans = bind(dot_general_p, lhs, rhs, **params)
    if ans.dtype.kind not in "fc":
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
    from .elementwise import convert_element_type
    from .shape import transpose
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_ndim = len(x_aval.shape)
    y_ndim = len(y.shape)
    x_kept = _free_dims(x_ndim, x_contract, x_batch)
    y_kept = _free_dims(y_ndim, y_contract, y_batch)
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
        from .elementwise import mul     # scalar * array: no contraction to do
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
    from ..interpreters.batching import moveaxis
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
        lhs_free = _free_dims(lhs.ndim, dn[0][0], dn[1][0])
        return (dot_general(lhs, rhs, dn, preferred_element_type=preferred_element_type),
                len(lb) + lhs_free.index(ld))
    dn = ((lc, shift(rc, rd)), (lb, shift(rb, rd)))
    rhs_free = _free_dims(rhs.ndim, dn[0][1], dn[1][1])
    lhs_free = _free_dims(lhs.ndim, lc, lb)
    return (dot_general(lhs, rhs, dn, preferred_element_type=preferred_element_type),
            len(lb) + len(lhs_free) + rhs_free.index(rd))


batch_rules[dot_general_p] = _dot_general_batch


# --------------------------------------------------------------------------- Numba lowering


# Top-level floating-point products with at least this many multiply-adds are BLAS
# calls from Python, between the njit kernels (backends/numba/codegen.py).
BLAS_MIN_WORK = 64 ** 3

# Products inside kernels (loop bodies, mostly) with fewer multiply-adds than this are
# loop nests (see `_ProductLoops`); larger floating-point ones call BLAS.  The loop nest
# runs at about single-threaded BLAS speed on mid-size matrices, without a BLAS call's
# fixed cost and its thread pool, which dominate when a scan body makes hundreds of
# small products.  (Top-level products keep BLAS_MIN_WORK: in a kernel they would only
# add to Numba's compile time.)
KERNEL_BLAS_MIN_WORK = 128 ** 3

# Register blocking of the loop nest: one pass of the innermost loop updates _MU output
# rows with _KU contraction steps, so each output element is loaded and stored once per
# _KU multiply-adds and each operand row is read once for _MU output rows.  (2, 4)
# measured best on AVX2 for 32x128 @ 128x128 float64: ~12 GMAC/s, plain i-k-j ~3.5.
_MU, _KU = 2, 4
_BLOCK_MIN_WORK = 16 ** 3

# float64 products are tiles of _TILE_ROWS x _TILE_VECTORS vectors of _TILE_WIDTH held in
# vector registers over the whole contraction: 12 accumulators, 3 loads and 4 broadcasts
# per step fit AVX2's 16 registers; 22 GMAC/s on 96x128 @ 128x120 here, against ~11
# for the blocked loops above (which remain for other dtypes).
_TILE_ROWS, _TILE_VECTORS, _TILE_WIDTH = 4, 3, 4

# Top-level products with at least this many multiply-adds run their outer loop in
# parallel (prange); smaller ones are not worth waking the thread pool.
_PARALLEL_WORK = 1 << 20


def product_work(eqn):
    """(batch size, multiply-adds) of a dot_general equation."""
    lhs, rhs = eqn.invars
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    ls, rs = lhs.aval.shape, rhs.aval.shape
    size = lambda dims, shape: int(math.prod(shape[d] for d in dims))  # noqa: E731
    lf, rf = _free_dims(len(ls), lc, lb), _free_dims(len(rs), rc, rb)
    b = size(lb, ls)
    return b, b * size(lf, ls) * size(lc, ls) * size(rf, rs)


def _dot_general_lower_numba(ctx, eqn):
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    _, work = product_work(eqn)
    ctx.emit(f"# dot_general: {lhs.aval.str_short()} x {rhs.aval.str_short()} -> "
             f"{out.aval.str_short()}, {eqn.params['dimension_numbers']}")
    if np.dtype(out.aval.dtype).kind in "fc" and work >= KERNEL_BLAS_MIN_WORK:
        _lower_blas(ctx, eqn)
        return
    loops = _ProductLoops(ctx, eqn, work)
    acc = getattr(ctx, "accumulate", None)   # (c, v): the program's next use is v = c + out
    if acc is not None and loops.can_start_from():
        c, v = acc
        loops.start_from(ctx.name(c), v)
        ctx.accumulated = True
    loops.emit()


def _lower_blas(ctx, eqn):
    """Both operands as (batch, free, contract) / (batch, contract, free) C arrays, then
    one BLAS product (np.dot writing into the output) per batch element."""
    from ..backends.numba.codegen import dtype_name
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    ls, rs = lhs.aval.shape, rhs.aval.shape
    lf, rf = _free_dims(len(ls), lc, lb), _free_dims(len(rs), rc, rb)
    size = lambda dims, shape: int(math.prod(shape[d] for d in dims))  # noqa: E731
    B, M, K, N = size(lb, ls), size(lf, ls), size(lc, ls), size(rf, rs)
    dt = dtype_name(out.aval.dtype)
    names = []
    for atom, perm, shape3 in ((lhs, tuple(lb) + lf + tuple(lc), (B, M, K)),
                               (rhs, tuple(rb) + tuple(rc) + rf, (B, K, N))):
        src = ctx.name(atom)
        if perm != tuple(range(len(perm))):
            src = f"np.transpose({src}, {perm!r})"
        # ascontiguousarray copies only what is not contiguous already, and astype
        # (which always copies in Numba) is used only when the dtype differs.
        src = f"np.ascontiguousarray({src}).reshape({shape3!r})"
        if np.dtype(atom.aval.dtype) != np.dtype(out.aval.dtype):
            src += f".astype({dt})"
        names.append(ctx.fresh("l" if not names else "r"))
        ctx.emit(f"{names[-1]} = {src}")
    acc, b = ctx.fresh("p"), ctx.fresh("b")
    ctx.emit(f"{acc} = np.empty(({B}, {M}, {N}), {dt})")
    with ctx.serial_loop(b, B):
        ctx.emit(f"np.dot({names[0]}[{b}], {names[1]}[{b}], {acc}[{b}])")
    name = ctx.out(out)
    ctx.emit(f"{name} = {acc}.reshape({tuple(out.aval.shape)!r})")


class _Operand:
    """An array in the generated code and the loop variable that indexes each axis."""

    def __init__(self, ctx, atom, axis_vars):
        self.axes = list(axis_vars)
        self.dtype = np.dtype(atom.aval.dtype)
        self.ref = ctx.ref(atom)
        self.text = ctx.scalar(atom) if not self.axes else ctx.name(atom)
        if self.axes and not self.text.isidentifier():   # e.g. a scan's xs[i]: once
            name = ctx.fresh("o")
            ctx.emit(f"{name} = {self.text}")
            self.text = name

    def at(self, subst=None):
        """Element text, with some loop variables replaced (``subst``: var -> text)."""
        if not self.axes:
            return self.text
        subst = subst or {}
        return f"{self.text}[{', '.join(subst.get(v, v) for v in self.axes)}]"


class _ProductLoops:
    """A dot_general as a loop nest over the operands in place (no transposed copies).

    Every batch, contracting and free axis gets a loop variable, so each operand is
    indexed through its own axes whatever the dimension numbers (the transposed
    layouts that the transpose rule produces included).  The innermost loop runs along
    the output's last axis, a free axis of one operand (the *streamed* one, ``S``):
    ``out[..., n] += t * S[..., n]`` with ``t`` a scalar of the other operand (``T``),
    which LLVM vectorises when ``n`` is also ``S``'s last (contiguous) axis.  When it
    is not, ``S`` is first copied into a (batch, contracting, free) buffer - once per
    kernel call when ``S`` is a kernel argument or a constant.  Unless tiny, the loops
    are register-blocked (`_MU`, `_KU`) in the order of the unblocked i-k-j loops, so
    each output element still sums its terms in order.  Products without a free axis
    to stream along are dot products (``s += l * r`` over the contracting axes)."""

    def __init__(self, ctx, eqn, work):
        from ..backends.numba.codegen import dtype_name
        self.ctx, self.eqn = ctx, eqn
        lhs, rhs = eqn.invars
        self.outvar = eqn.outvars[0]
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        ls, rs = lhs.aval.shape, rhs.aval.shape
        lf, rf = _free_dims(len(ls), lc, lb), _free_dims(len(rs), rc, rb)
        self.bv = [ctx.fresh("b") for _ in lb]
        self.kv = [ctx.fresh("k") for _ in lc]
        self.mv = [ctx.fresh("m") for _ in lf]
        self.nv = [ctx.fresh("n") for _ in rf]
        self.extent = {}
        for vs, dims in ((self.bv, lb), (self.kv, lc), (self.mv, lf)):
            self.extent.update((v, ls[d]) for v, d in zip(vs, dims))
        self.extent.update((v, rs[d]) for v, d in zip(self.nv, rf))

        def axis_vars(ndim, batch, contract, free, fv):
            role = {d: v for d, v in zip(batch, self.bv)}
            role.update(zip(contract, self.kv))
            role.update(zip(free, fv))
            return [role[d] for d in range(ndim)]

        self.lhs = _Operand(ctx, lhs, axis_vars(len(ls), lb, lc, lf, self.mv))
        self.rhs = _Operand(ctx, rhs, axis_vars(len(rs), rb, rc, rf, self.nv))
        self.dtype = np.dtype(self.outvar.aval.dtype)
        self.dt = dtype_name(self.dtype)
        self.work = work
        # Blocking only pays for products of some size; tiny ones stay one small loop
        # nest (Numba's compile time grows with the code).
        self.mu, self.ku = (_MU, _KU) if work >= _BLOCK_MIN_WORK else (1, 1)
        self._parallel = False
        self.init = None               # an array the sums start from (`start_from`)
        self.target = self.outvar      # the variable the result is bound to

    def _plan(self):
        """(S, T, sfree, tfree, pack, dots): the streamed operand and how the nest runs."""
        if self.nv:
            S, T, sfree, tfree = self.rhs, self.lhs, self.nv, self.mv
        elif self.mv:
            S, T, sfree, tfree = self.lhs, self.rhs, self.mv, []
        else:
            return None, None, None, None, False, True
        # Stream along the output's last axis unless it is too short, or unless S would
        # need a copy (as long as the product itself) and that copy is not hoisted.
        pack = S.axes[-1] != sfree[-1]
        dots = self.extent[sfree[-1]] < 4 or \
            (pack and math.prod(self.extent[v] for v in tfree) < 2
             and not self._invariant(S))
        return S, T, sfree, tfree, pack, dots

    def can_start_from(self) -> bool:
        """Whether the nest can compute ``c + product`` (`start_from`): it streams, with
        one contracting axis whose first pass starts the sums."""
        *_, dots = self._plan()
        return not dots and len(self.kv) == 1 and self.extent[self.kv[0]] > 0

    def start_from(self, init_text, var):
        """Compute ``var = init + product`` instead of the product: the first pass starts
        each sum from ``init``'s element (an array of the output's shape and dtype)
        instead of zero, so the product is never stored alone."""
        self.init, self.target = init_text, var

    # -- small pieces of text
    def _val(self, op, subst=None):
        """An operand's element, converted to the output dtype when it differs."""
        text = op.at(subst)
        return text if op.dtype == self.dtype else f"{self.dt}({text})"

    def _madd(self, acc, t, s):
        if self.dtype == np.bool_:
            return f"({acc} | ({t} & {s}))"
        return f"({acc} + {t} * {s})"

    def _mul(self, t, s):
        return f"({t} & {s})" if self.dtype == np.bool_ else f"{t} * {s}"

    def _loop(self, var, n, start=0):
        """``for var in range(start, n):`` - prange for the first loop of a large
        top-level product when its iterations write disjoint parts of the output."""
        ctx = self.ctx
        rng = "range"
        if self._parallel and n - start > 1:
            rng, ctx.uses_prange = "prange", True
        self._parallel = False
        ctx.emit(f"for {var} in {rng}({f'{start}, ' if start else ''}{n}):")
        ctx.level += 1

    def _close(self, count):
        self.ctx.level -= count

    # -- the nest
    def emit(self):
        ctx = self.ctx
        out_axes = self.bv + self.mv + self.nv
        S, T, sfree, tfree, pack, dots = self._plan()
        if dots:
            assert self.init is None
            self._emit_dots(out_axes)
            return
        if pack:
            S = self._pack(S, sfree)
        self.out = self._alloc_out()
        self.out_axes = out_axes
        if self._tiled(S, T, sfree, tfree):
            self._emit_tiles(S, T, sfree[0], tfree)
            ctx.bind_name(self.target, self.out)
            return
        # only a batch or row loop may run in parallel (not the zeroing or k loops)
        self._parallel = bool(self.bv or tfree) and ctx.level == 1 and \
            self.work >= _PARALLEL_WORK
        opened = 0
        for v in self.bv + tfree[:-1]:
            self._loop(v, self.extent[v])
            opened += 1
        if tfree:   # rows of the output in blocks
            m = tfree[-1]
            self._blocked(m, self.extent[m], self.mu,
                          lambda rows, first: self._rows(S, T, sfree, rows, m))
        else:
            self._rows(S, T, sfree, [None], None)
        self._close(opened)
        ctx.bind_name(self.target, self.out)

    # -- float64 products: register tiles (backends/numba/microkernel.py)
    def _tiled(self, S, T, sfree, tfree) -> bool:
        """Whether the nest is made of `product_tile` calls: float64 operands, one
        contracting and one streamed axis, at least one vector of output columns."""
        f64 = np.dtype(np.float64)
        return (self.dtype == f64 and T.dtype == f64 and S.dtype == f64
                and len(self.kv) == 1 and len(sfree) == 1 and bool(tfree)
                and self.extent[sfree[0]] >= _TILE_WIDTH and self.work >= _BLOCK_MIN_WORK)

    def _emit_tiles(self, S, T, n, tfree):
        """Column panels of _TILE_VECTORS vectors (a last narrower panel, then single
        columns), and in each the rows in blocks of _TILE_ROWS: a panel of S stays in
        the L1 cache while every block of rows uses it."""
        from ..backends.numba.microkernel import product_tile
        ctx = self.ctx
        (k,), m = self.kv, tfree[-1]
        M, K, N = self.extent[m], self.extent[k], self.extent[n]
        init = self.init
        if init is not None and not init.isidentifier():
            init = ctx.fresh("c")
            ctx.emit(f"{init} = {self.init}")
        opened = 0
        for v in self.bv + tfree[:-1]:
            self._loop(v, self.extent[v])
            opened += 1

        def index(axes, subst):
            items = [subst.get(v, v) for v in axes]
            return f"({', '.join(items)}{',' if len(items) == 1 else ''})"

        def call(rows, vectors):
            key = (rows, vectors, init is not None, (self.out_axes.index(m),
                   self.out_axes.index(n)), (S.axes.index(k), S.axes.index(n)),
                   (T.axes.index(m), T.axes.index(k)))
            name = ctx.helper("_tile_" + "_".join(
                str(x) for x in key).replace(" ", "").replace(",", "").replace("(", "")
                .replace(")", ""), product_tile(*key))
            args = [self.out, index(self.out_axes, {}), S.text, index(S.axes, {k: "0"}),
                    T.text, index(T.axes, {k: "0"}), str(K)]
            if init is not None:
                args += [init, index(self.out_axes, {})]
            ctx.emit(f"{name}({', '.join(args)})")

        def panel(vectors):
            """The rows of one panel of ``vectors`` vectors starting at column n."""
            self._blocked(m, M, _TILE_ROWS,
                          lambda rows, first: call(len(rows), vectors))

        width = _TILE_WIDTH * _TILE_VECTORS
        if N >= width:
            q = ctx.fresh("q")
            self._loop(q, N // width)
            ctx.emit(f"{n} = {width} * {q}")
            panel(_TILE_VECTORS)
            self._close(1)
        rest = (N % width) // _TILE_WIDTH
        if rest:
            ctx.emit(f"{n} = {N // width * width}")
            panel(rest)
        start = N - N % _TILE_WIDTH
        if start < N:   # the last columns, one by one
            self._loop(n, N, start)
            self._loop(m, M)
            s = ctx.fresh("s")
            ctx.emit(f"{s} = " + (f"{init}[{', '.join(self.out_axes)}]" if init is not None
                                  else "0.0"))
            self._loop(k, K)
            ctx.emit(f"{s} += {T.at()} * {S.at()}")
            self._close(1)
            ctx.emit(f"{self._out_at({})} = {s}")
            self._close(2)
        self._close(opened)

    def _blocked(self, var, n, size, body, peel=False):
        """``var`` over range(n): in blocks of ``size`` (``body(texts of the block's
        values, first)``), then one by one for the remainder.  With ``peel``, the first
        block (or value) is written out before the loops, with ``first`` true."""
        ctx = self.ctx
        main = n - n % size if size > 1 else 0
        start = 0
        if peel and n:
            ctx.emit(f"{var} = 0")
            width = size if main else 1
            body([var] + [f"{var} + {i}" for i in range(1, width)], True)
            start = width
        if main > start:
            q = ctx.fresh("q")
            self._loop(q, main // size, start // size)
            ctx.emit(f"{var} = {size} * {q}")
            body([var] + [f"{var} + {i}" for i in range(1, size)], False)
            self._close(1)
        if max(main, start) < n:
            self._loop(var, n, max(main, start))
            body([var], False)
            self._close(1)

    def _rows(self, S, T, sfree, rows, mvar):
        """The output rows ``rows`` (texts for the loop variable ``mvar``)."""
        ctx = self.ctx
        subs = [{mvar: r} if mvar is not None else {} for r in rows]
        if not self.kv:
            self._step(S, T, sfree, subs, None, [None], True)
            return
        k = self.kv[-1]
        if len(self.kv) == 1 and self.extent[k]:
            # the first contraction step starts the sums (no pass zeroing the rows)
            self._blocked(k, self.extent[k], self.ku,
                          lambda ks, first: self._step(S, T, sfree, subs, k, ks, first),
                          peel=True)
            return
        opened = 0   # zero the rows, then accumulate over all contracting axes
        for v in sfree:
            self._loop(v, self.extent[v])
            opened += 1
        for s in subs:
            ctx.emit(f"{self._out_at(s)} = {self.dt}(0)")
        self._close(opened)
        opened = 0
        for v in self.kv[:-1]:
            self._loop(v, self.extent[v])
            opened += 1
        self._blocked(k, self.extent[k], self.ku,
                      lambda ks, first: self._step(S, T, sfree, subs, k, ks, False))
        self._close(opened)

    def _step(self, S, T, sfree, subs, kvar, ks, first):
        """One pass: scalars of T for every (row, k), then the streamed loop adding
        their products to the output rows (``first``: starting them from zero)."""
        ctx = self.ctx
        ksubs = [{kvar: k} if kvar is not None else {} for k in ks]
        scal = []
        for s in subs:
            row = []
            for ksub in ksubs:
                t = ctx.fresh("t")
                ctx.emit(f"{t} = {self._val(T, {**s, **ksub})}")
                row.append(t)
            scal.append(row)
        opened = 0
        for v in sfree:
            self._loop(v, self.extent[v])
            opened += 1
        srow = []
        for ksub in ksubs:
            x = ctx.fresh("x")
            ctx.emit(f"{x} = {self._val(S, ksub)}")
            srow.append(x)
        for s, row in zip(subs, scal):
            target = self._out_at(s)
            if kvar is None:   # no contraction: one product per output element
                ctx.emit(f"{target} = {self._mul(row[0], srow[0])}")
                continue
            # 0 + t * x, not t * x: the same sum (and sign of zero) as zeroing first
            expr = target if not first else f"{self.dt}(0)" if self.init is None else \
                f"{self.init}[{', '.join(s.get(v, v) for v in self.out_axes)}]"
            for t, x in zip(row, srow):
                expr = self._madd(expr, t, x)
            ctx.emit(f"{target} = {expr}")
        self._close(opened)

    def _out_at(self, subst):
        if not self.out_axes:
            return f"{self.out}[()]"
        return f"{self.out}[{', '.join(subst.get(v, v) for v in self.out_axes)}]"

    def _alloc_out(self):
        from ..backends.numba.loops import output_buffer
        return output_buffer(self.ctx, self.target)   # allocated once in loop bodies

    def _invariant(self, op):
        """Whether ``op`` is a kernel argument or a constant: it does not change during
        a kernel call, so what is computed from it alone can be hoisted."""
        from ..backends.numba.loops import is_invariant
        kind, text = op.ref
        return kind == "array" and is_invariant(self.ctx, text)

    def _pack(self, S, sfree):
        """A C-contiguous copy of ``S`` with axes (batch, contracting, free), in the
        output dtype.  The copy of an invariant operand is made once, before the
        kernel's first line, and shared by the products that need it; in a loop body,
        another operand is copied into a buffer allocated once."""
        from ..backends.numba.loops import prelude
        ctx = self.ctx
        order = [v for v in self.bv + self.kv + sfree if v in S.axes]
        shape = tuple(self.extent[v] for v in order)
        hoist = self._invariant(S)
        key = ("pack", S.ref[1], tuple(S.axes.index(v) for v in order), self.dt)
        name = ctx.hoisted.get(key) if hoist else None
        if name is None:
            name = ctx.fresh("s")
            with prelude(ctx) if hoist or ctx.level > 1 else contextlib.nullcontext():
                ctx.emit(f"{name} = np.empty({shape!r}, {self.dt})")
            with prelude(ctx) if hoist else contextlib.nullcontext(), \
                    ctx.nest(shape, parallel=False) as idx:
                subst = dict(zip(order, idx))
                ctx.emit(f"{name}[{', '.join(idx)}] = {self._val(S, subst)}")
            if hoist:
                ctx.hoisted[key] = name
        packed = _Operand.__new__(_Operand)
        packed.axes, packed.dtype, packed.ref, packed.text = \
            order, self.dtype, ("array", name), name
        return packed

    def _emit_dots(self, out_axes):
        """``out[i] = sum over k of l[i, k] * r[i, k]``, a scalar accumulator per
        output element (0-d outputs stay scalars)."""
        ctx = self.ctx
        scalar_out = not out_axes
        if not scalar_out:
            self.out, self.out_axes = self._alloc_out(), out_axes
        self._parallel = not scalar_out and ctx.level == 1 and self.work >= _PARALLEL_WORK
        opened = 0
        for v in out_axes:
            self._loop(v, self.extent[v])
            opened += 1
        s = ctx.fresh("s")
        ctx.emit(f"{s} = {self.dt}(0)")
        for v in self.kv:
            self._loop(v, self.extent[v])
        # converted back: integer products of narrow types come out as int64
        ctx.emit(f"{s} = {self.dt}({self._madd(s, self._val(self.lhs), self._val(self.rhs))})")
        self._close(len(self.kv))
        if scalar_out:
            ctx.bind_scalar(self.outvar, s)
            return
        ctx.emit(f"{self._out_at({})} = {s}")
        self._close(opened)
        ctx.bind_name(self.outvar, self.out)


def _dot_general_on_host(eqn) -> bool:
    """Large top-level floating-point products call BLAS from Python (np.matmul), between
    the kernels (codegen.py): the same library Numba's np.dot would call, without
    Numba's long compile of np.dot.  Small or batched-small ones are loops in kernels."""
    if np.dtype(eqn.outvars[0].aval.dtype).kind not in "fc":
        return False
    batch, work = product_work(eqn)
    return work >= BLAS_MIN_WORK and work // max(batch, 1) >= 16 ** 3


dot_general_p.lower_numba = _dot_general_lower_numba
dot_general_p.on_host = _dot_general_on_host
