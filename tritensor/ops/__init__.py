"""The op layer: the table (table.py), dispatch, and the op modules that declare its entries.

Importing ``tritensor.ops`` imports every op module, so the whole table is registered. The
modules form layers, each importing only lower ones at module level (tests/test_ops_layering.py
checks that there is no import cycle):

    leaves     table, _shapes, _checks, _scalars, _overlap, _layout, _return_types (import no op module)
    dispatch   the one road every op takes
    copy       clone, casts, transfers, copy_/fill_
    generators the random generators and the in-place fills
    creation   factories (tensor, zeros, arange, rand ...)
    views      shape/stride ops over the same storage
    surface    the public variants' factories (declare, unary ...)
    elementwise, pointwise
    joining    cat, stack, flip ...
    reduce, scan, softmax    (as kernels/ has reduce.py, scan.py, softmax.py)
    pointwise_math   the rest of torch's pointwise library (trigonometry, lerp, gcd, shifts ...)
    indexing, random (the sampling ops), linalg, nn, pdist, sorting
    padding    F.pad, constant_pad_nd (composites of indexing and copies)
    conv       the convolutions (on padding for padding='same')
    pool       max / average / adaptive pooling, max_unpool, lp_pool
    normalization  batch / group / instance / local response norm
    factorizations, solvers    (torch.linalg's factorizations and the solvers built on them;
               _linalg is what they share)
    spectral, norms, matrix_functions    (eigh, svd and what is built on them; the vector and
               matrix norms and cond; matrix_exp, matrix_power, multi_dot, cross, vecdot, vander)
    special    lgamma, digamma, erfc, i0, igamma ... and torch.special's functions
    random_dists  the samplers and gradients of tt.distributions (_standard_gamma, poisson, binomial ...)
    view_copies  the view ops' copies (*_copy) and in-place forms (t_ ...), T/mT/H/mH
    shape_ops    shape and construction composites (tile, kron, block_diag, meshgrid ...)
    einsum       contractions through the matmul kernels (einsum, tensordot, inner, chain_matmul)
    rnn          the fused recurrent cell steps (LSTM, GRU, tanh/relu RNN) and their backward
    embedding_bag  bags of embedding rows reduced (sum, mean, max) by one kernel
    aten         tt.ops.aten: ATen operators with no public function (aten.slice.Tensor)
    factories    empty_strided, empty_permuted, logspace, scalar_tensor
    windows      hann_window ... kaiser_window and torch.signal.windows' functions (tt.signal.windows)
    reductions_extra   nansum, aminmax, logcumsumexp, cummax/cummin, std_mean, isclose, renorm ...
    numerical  composites: dist, trace, cov, corrcoef, diff, gradient, trapezoid ...
    scatter    index_add/copy/fill/reduce, masked_scatter, put, take_along_dim, *_scatter ...
    resample   pixel/channel shuffle, im2col/col2im (F.unfold/fold), upsampling (composites)
    activations  torch.nn's activations (elu, selu, softplus, glu, prelu, rrelu ...)
    sparse       sparse COO tensors: construction, coalesce, conversions, arithmetic, sparse @ dense
                 (_sparse, a leaf: where dense ops meet sparse operands)
    sparse_csr   sparse CSR tensors: construction, conversions, CSR @ dense, sparse.sampled_addmm
    losses     the composite losses (kl_div, margins, triplet, poisson/gaussian nll ...) and distances
    masked     torch.masked's masked reductions and normalizations (tt.masked; composites)
    rms_norm   F.rms_norm (fused kernels, on nn's row helpers)
    attention  scaled dot-product attention (the flash kernels, the math formulation)
    declarations  the public variants of the modules that do not declare their own
"""
from . import dispatch, copy, generators, creation, views  # noqa: F401  (registers the entries)
from . import elementwise, pointwise, joining, reduce, scan, softmax  # noqa: F401
from . import pointwise_math  # noqa: F401
from . import indexing, random, linalg, nn, pdist, sorting  # noqa: F401
from . import padding, conv, pool  # noqa: F401
from . import normalization  # noqa: F401
from . import factorizations, solvers  # noqa: F401
from . import spectral, norms, matrix_functions  # noqa: F401
from . import special  # noqa: F401
from . import random_dists  # noqa: F401
from . import rnn, embedding_bag  # noqa: F401
from . import view_copies, shape_ops, einsum, aten, factories, windows  # noqa: F401
from . import reductions_extra, numerical, scatter  # noqa: F401
from . import resample  # noqa: F401
from . import activations  # noqa: F401
from . import sparse  # noqa: F401
from . import sparse_csr  # noqa: F401
from . import losses  # noqa: F401
from . import masked  # noqa: F401
from . import rms_norm  # noqa: F401
from . import attention  # noqa: F401
from .table import TABLE  # noqa: F401
