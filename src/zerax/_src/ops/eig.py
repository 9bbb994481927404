"""The eigendecomposition of general (non-symmetric) square matrices: ``eig_p``, JAX's
``lax.linalg.eig``.

``eig(a)`` gives ``[w, vl, vr]`` (without the eigenvectors not asked for): the
eigenvalues ``w`` (..., n) and the left and right eigenvectors (columns of vl and vr),
always complex (complex64 for float32 or complex64 input, complex128 otherwise), in
LAPACK's order and normalisation (each eigenvector of unit 2-norm, its largest
component real), ``a @ vr == vr * w`` and ``vl^H @ a == w[:, None] * vl^H``.

The NumPy implementation is LAPACK's ``geev`` through ``numpy.linalg.eig``; NumPy has no
left eigenvectors, so they are the rows of ``vr^-1`` (conjugated and normalised as
LAPACK's), which is what they are for a diagonalisable matrix.  Where LAPACK fails (a
nan or inf in the input) the matrix's outputs are NaNs, as JAX gives.

Derivatives are JAX's: with ``D_j = vl_j^H vr_j`` (so that ``vr^-1 = D^-1 vl^H``),
``P = vr^-1 dA vr`` and ``dw = diag(P)``; the eigenvectors' tangents are nondegenerate
perturbation theory, ``dv = v (F o P) + v diag(c)`` with ``F_ij = 1 / (w_j - w_i)`` and
``c`` the scalars that keep LAPACK's normalisation (JAX's ``_eig_vec_jvp``).  As in JAX
they are defined only when the eigenvalues are distinct, and differentiating the
eigenvectors is opt-in (``enable_eigvec_derivs=True``) because that condition cannot be
checked where the program is traced; the eigenvalues are always differentiable.  The
rules use ``dot_general`` and elementwise operations only, so derivatives of any order,
``vmap`` and ``jit`` compose.  Batching moves the batch axis to the front.  Under
``jit`` the decomposition runs on the host between the compiled kernels (as ``eigh``
does; ``backends/lowering/``).
"""

from __future__ import annotations

import numpy as np

from ... import errors
from ..core.ad_util import Zero
from ..core.core import Primitive, ShapedArray, bind
from ..interpreters.ad import jvp_rules
from ..interpreters.batching import batch_rules, bdim_at_front
from . import elementwise as ew
from .decompositions import _as_operand, _diag, _mm, _mT, _nan_fallback, _pairwise_inverse
from .reduce import argmax, reduce_sum
from .shape import broadcast_in_dim, iota

__all__ = ["eig", "eig_p"]

eig_p = Primitive("eig", multiple_results=True)

_DTYPES = {np.dtype(np.float32): np.dtype(np.complex64),
           np.dtype(np.float64): np.dtype(np.complex128),
           np.dtype(np.complex64): np.dtype(np.complex64),
           np.dtype(np.complex128): np.dtype(np.complex128)}


def _check(aval, name="eig"):
    shape = tuple(aval.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise errors.ShapeError(
            f"{name}: needs square matrices in the last two axes, got an array of shape "
            f"{shape}; eig is defined for (..., n, n) arrays only.")
    dtype = np.dtype(aval.dtype)
    if dtype not in _DTYPES:
        raise errors.ZeraxTypeError(
            f"{name}: needs a float32, float64, complex64 or complex128 array, got "
            f"{dtype.name} (zerax.numpy.linalg.eig converts integers to float64; with "
            "zerax.lax, convert first).")
    return shape, _DTYPES[dtype]


def eig(x, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation=None, use_magma=None):
    """JAX's ``lax.linalg.eig``: ``[w, vl, vr]``, the eigenvalues and the left and right
    eigenvectors (as columns) of general square matrices, complex; the eigenvectors
    not asked for are left out.  Eigenvector derivatives are computed only with
    ``enable_eigvec_derivs=True`` (valid where the eigenvalues are distinct);
    ``implementation``/``use_magma`` are accepted (zerax has LAPACK's only).

    >>> import numpy as np, zerax.lax as lax
    >>> w, vr = lax.linalg.eig(np.array([[2.0, 0.0], [1.0, 3.0]]),
    ...                        compute_left_eigenvectors=False)
    >>> w
    Array([3.+0.j, 2.+0.j], dtype=complex128)
    """
    del implementation, use_magma
    x = _as_operand(x, "eig")
    _check(x)
    return list(bind(eig_p, x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                     compute_right_eigenvectors=bool(compute_right_eigenvectors),
                     enable_eigvec_derivs=bool(enable_eigvec_derivs)))


# --------------------------------------------------------------------------- NumPy


def _unit_largest_real(v):
    """LAPACK's normalisation of eigenvector columns: unit 2-norm, the component of
    largest magnitude real."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    k = np.argmax(np.abs(v), axis=-2)[..., None, :]
    big = np.take_along_axis(v, k, axis=-2)
    return v * (np.conj(big) / np.abs(big))


def _eig_one(m, left, right):
    """``(w, [vl], [vr])`` of one matrix (raises LinAlgError where LAPACK fails)."""
    if not (left or right):
        return (np.linalg.eigvals(m),)
    w, vr = np.linalg.eig(m)
    outs = [w]
    if left:
        try:
            inv = np.linalg.inv(vr)
        except np.linalg.LinAlgError:
            if vr.ndim > 2:
                raise  # _eig_impl goes matrix by matrix
            inv = np.full_like(vr, np.nan)  # defective: no basis of left eigenvectors
        outs.append(_unit_largest_real(np.conj(inv).swapaxes(-1, -2)))
    if right:
        outs.append(vr)
    return tuple(outs)


def _eig_impl(a, *, compute_left_eigenvectors, compute_right_eigenvectors,
              enable_eigvec_derivs):
    del enable_eigvec_derivs
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    n, cdt = a.shape[-1], _DTYPES[np.dtype(a.dtype)]
    shapes = [(n,)] + [(n, n)] * (int(left) + int(right))
    if a.size == 0:
        return [np.zeros(a.shape[:-2] + s, cdt) for s in shapes]
    try:
        outs = _eig_one(a, left, right)
    except np.linalg.LinAlgError:  # per matrix, NaNs where LAPACK fails (as JAX)
        outs = _nan_fallback(lambda m: _eig_one(m, left, right), a,
                             [(s, cdt) for s in shapes])
    return [np.asarray(o).astype(cdt, copy=False) for o in outs]


def _eig_abstract(a, *, compute_left_eigenvectors, compute_right_eigenvectors,
                  enable_eigvec_derivs):
    shape, cdt = _check(a)
    n_vec = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    return [ShapedArray(shape[:-1], cdt)] + [ShapedArray(shape, cdt)] * n_vec


eig_p.impl = _eig_impl
eig_p.abstract_eval = _eig_abstract


# --------------------------------------------------------------------------- derivatives


def _complex(re, im):
    return ew.complex_(re, im)


def _vec_jvp(w, v, p):
    """JAX's ``_eig_vec_jvp``: the tangent of eigenvectors ``v`` (LAPACK-normalised) of
    eigenvalues ``w``, given ``P = v^-1 dA v``."""
    u = _mm(v, ew.mul(_pairwise_inverse(w), p))
    nd = len(v.shape)
    # c_j = -Re(v_j^H u_j) - i Im(u_kj) / v_kj, k the largest component of v_j: the
    # multiple of v_j that keeps |v_j| = 1 and v_kj real
    k = argmax(bind(ew.abs_p, v), nd - 2, np.int32)
    rows = iota(np.int32, tuple(v.shape), nd - 2)
    at_k = ew.eq(rows, broadcast_in_dim(k, tuple(v.shape),
                                        tuple(range(nd - 2)) + (nd - 1,)))
    mask = ew.convert_element_type(at_k, v.dtype)
    re = ew.neg(ew.real(reduce_sum(ew.mul(ew.conj(v), u), (nd - 2,))))
    im = ew.neg(ew.div(ew.imag(reduce_sum(ew.mul(mask, u), (nd - 2,))),
                       ew.real(reduce_sum(ew.mul(mask, v), (nd - 2,)))))
    c = _complex(re, im)
    return ew.add(u, ew.mul(v, broadcast_in_dim(c, tuple(v.shape),
                                                  tuple(range(nd - 2)) + (nd - 1,))))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs):
    (a,), (da,) = primals, tangents
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    if (left or right) and not enable_eigvec_derivs:
        raise errors.NotSupportedError(
            "derivatives of non-symmetric eigenvectors are valid only where the "
            "eigenvalues are distinct, which cannot be checked where the program is "
            "traced: pass enable_eigvec_derivs=True to zerax.lax.linalg.eig to opt in, "
            "or differentiate only the eigenvalues (zerax.numpy.linalg.eigvals), as in "
            f"JAX (at {errors.user_frame()})")
    params = {"compute_left_eigenvectors": left, "compute_right_eigenvectors": right,
              "enable_eigvec_derivs": enable_eigvec_derivs}
    if type(da) is Zero:
        outs = bind(eig_p, a, **params)
        return outs, [Zero(ShapedArray(tuple(o.shape), np.dtype(o.dtype))) for o in outs]
    w, vl, vr = bind(eig_p, a, compute_left_eigenvectors=True,
                     compute_right_eigenvectors=True, enable_eigvec_derivs=True)
    outs = [w] + ([vl] if left else []) + ([vr] if right else [])
    nd = len(a.shape)
    da = ew.convert_element_type(da, w.dtype)
    d = reduce_sum(ew.mul(ew.conj(vl), vr), (nd - 2,))        # vr^-1 = D^-1 vl^H
    rows_of = tuple(range(nd - 1))                              # d_i down row i

    def scale_rows(x, s):
        return ew.div(x, broadcast_in_dim(s, tuple(x.shape), rows_of))

    p = scale_rows(_mm(_mT(ew.conj(vl)), _mm(da, vr)), d)      # vr^-1 dA vr
    t_outs = [_diag(p)]
    if left:  # vl is the right eigenvectors of A^H, vl^-1 = conj(D)^-1 vr^H
        p_l = scale_rows(_mm(_mT(ew.conj(vr)), _mm(_mT(ew.conj(da)), vl)), ew.conj(d))
        t_outs.append(_vec_jvp(ew.conj(w), vl, p_l))
    if right:
        t_outs.append(_vec_jvp(w, vr, p))
    return outs, t_outs


jvp_rules[eig_p] = _eig_jvp
eig_p.unsupported["transpose"] = "eig is not linear"


def _eig_batch(args, dims, **params):
    (a,), (dim,) = args, dims
    outs = bind(eig_p, bdim_at_front(a, dim, a.shape[dim]), **params)
    return outs, [0] * len(outs)


batch_rules[eig_p] = _eig_batch
