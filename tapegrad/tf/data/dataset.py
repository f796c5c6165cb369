"""``tf.data.Dataset``: lazy, re-iterable input pipelines over NumPy arrays.

A dataset is a recipe: every ``iter(ds)`` starts the pipeline again from its
sources.  Elements are nests (tuples and dicts) of tensors; inside the
pipeline they travel as NumPy arrays and become TensorFlow-style tensors at
the edges (when a user function is called and when the element is yielded),
so batching and shuffling cost no graph recording.

``shuffle`` is TensorFlow's ``ShuffleDataset`` (its ring buffer, drawn with the
Philox words of its seeds), so the orders equal TensorFlow's for the same seeds.

Where tapegrad.tf.data knowingly differs from TensorFlow:

- ``map(num_parallel_calls=...)`` and ``prefetch`` are accepted and run in
  the calling thread (results and their order are TensorFlow's
  deterministic ones).
- ``element_spec`` of ``map``/``filter``/``from_generator`` without a
  signature is read from the first element (TensorFlow traces the function);
  a leading dimension unknown in the input stays unknown.
- String tensors are not supported.
"""

from __future__ import annotations

import itertools
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import _philox
from .. import dtypes as _dt
from .. import random as _random
from .._nest import flatten, is_nested, pack_sequence_as
from .._tensor import VariableBase, constant_array, read, tft
from ..errors import InvalidArgumentError, OutOfRangeError
from ..sparse import SparseTensor, SparseTensorSpec
from .spec import TensorSpec

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2

Element = Any  # a nest (tuples, dicts) of np.ndarray


# ---------------------------------------------------------------------------- nests
def _is_structure(x: Any) -> bool:
    """Tuples and mappings are structure; a list is a tensor (as in ``tf.data``)."""
    return isinstance(x, (tuple, Mapping))


def _flat(x: Any) -> list[Any]:
    if not _is_structure(x):
        return [x]
    out: list[Any] = []
    for child in (x[k] for k in _keys(x)) if isinstance(x, Mapping) else x:
        out.extend(_flat(child))
    return out


def _keys(d: Mapping[Any, Any]) -> list[Any]:
    try:
        return sorted(d)
    except TypeError:
        return list(d)


def _pack(structure: Any, flat: list[Any]) -> Any:
    it = iter(flat)

    def build(s: Any) -> Any:
        if isinstance(s, Mapping):
            vals = {k: build(s[k]) for k in _keys(s)}
            if isinstance(s, OrderedDict):
                return OrderedDict((k, vals[k]) for k in s)
            return {k: vals[k] for k in s}
        if isinstance(s, tuple):
            items = [build(c) for c in s]
            return type(s)(*items) if hasattr(s, "_fields") else tuple(items)
        return next(it)

    return build(structure)


def _map_leaves(fn: Callable[[Any], Any], x: Any) -> Any:
    return _pack(x, [fn(v) for v in _flat(x)])


def _to_array(x: Any) -> Any:
    """A component's value as an ndarray, with TensorFlow's dtype inference (a
    ``SparseTensor`` stays one)."""
    if isinstance(x, SparseTensor):
        return x
    if isinstance(x, Tensor):
        return np.asarray((read(x) if isinstance(x, VariableBase) else x)._data)
    if isinstance(x, (str, bytes)) or (isinstance(x, np.ndarray) and x.dtype.kind in "USO"):
        raise hinted(TypeError(with_hint(
            f"tapegrad.tf.data does not support string components (got {x!r:.60})",
            "encode strings as integer ids before building the dataset")))
    return constant_array(x)


def _to_tensors(elem: Element) -> Any:
    return _map_leaves(lambda a: a if isinstance(a, (Dataset, SparseTensor)) else tft(a), elem)


def _from_user(value: Any) -> Element:
    """What a user function returned, as a nest of arrays (lists become tensors)."""
    if isinstance(value, list) and is_nested(value) and value and \
            all(isinstance(v, Tensor) for v in value):
        return tuple(_to_array(v) for v in value)
    return _map_leaves(_to_array, value)


def _spec_of(elem: Element, unknown_lead: bool = False) -> Any:
    def one(a: Any) -> Any:
        if isinstance(a, Dataset):
            return DatasetSpec(a.element_spec)
        shape: list[int | None] = list(a.shape)
        if unknown_lead and shape:
            shape[0] = None
        if isinstance(a, SparseTensor):
            return SparseTensorSpec(shape, a.dtype)
        return TensorSpec(shape, _dt.from_numpy(a.dtype))

    return _map_leaves(one, elem)


def _has_unknown_lead(spec: Any) -> bool:
    return any(s.shape.rank and s.shape[0] is None for s in _flat(spec))


class DatasetSpec:
    """The spec of a dataset-valued component (the elements of ``window``)."""

    def __init__(self, element_spec: Any) -> None:
        self.element_spec = element_spec

    def __repr__(self) -> str:
        shape = getattr(self.element_spec, "shape", None)
        return f"DatasetSpec({self.element_spec!r}, TensorShape([]))" if shape is not None \
            else f"DatasetSpec({self.element_spec!r}, TensorShape([]))"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DatasetSpec) and other.element_spec == self.element_spec

    def __hash__(self) -> int:
        return hash(repr(self))


# ---------------------------------------------------------------------------- iterator
class DatasetIterator:
    """What ``iter(dataset)`` returns: ``next(it)`` or ``it.get_next()`` give elements."""

    def __init__(self, dataset: Dataset) -> None:
        self._it = dataset._iterator()
        self.element_spec = dataset.element_spec

    def __iter__(self) -> DatasetIterator:
        return self

    def __next__(self) -> Any:
        return _to_tensors(next(self._it))

    def get_next(self) -> Any:
        """The next element; ``tf.errors.OutOfRangeError`` at the end (as TensorFlow)."""
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self) -> Any:
        try:
            return next(self)
        except StopIteration:
            return None


# ---------------------------------------------------------------------------- dataset
class Dataset:
    """A re-iterable pipeline of elements (TensorFlow's ``tf.data.Dataset``).

    Build one with a source (``from_tensor_slices``, ``from_tensors``,
    ``range``, ``from_generator``) and chain transformations; iterate it in a
    Python loop or pass it to ``model.fit``.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> ds = tf.data.Dataset.range(6).map(lambda x: x * 2).batch(4)
    >>> [b.numpy().tolist() for b in ds]
    [[0, 2, 4, 6], [8, 10]]
    >>> ds.element_spec
    TensorSpec(shape=(None,), dtype=tf.int64, name=None)
    """

    def __init__(self, source: Callable[[], Iterator[Element]], spec: Any, cardinality: int,
                 kind: str) -> None:
        self._source = source
        self._spec = spec
        self._card = int(cardinality)
        self._kind = kind
        # slices of arrays in some order: (structure, leaves, one pass's index order);
        # lets ``batch`` gather whole batches at once instead of stacking elements
        self._gather: tuple[Any, list[np.ndarray], Callable[[], Any]] | None = None
        # the datasets whose iterators this one's iterator creates when it is created,
        # and (shuffle) the seed generator its iterators draw from: see ``_iterator``
        self._parents: tuple[Dataset, ...] = ()
        self._seedgen: _SeedGenerator | None = None
        self._filled: Callable[[], bool] | None = None  # cache: no input iterator once full

    # -------------------------------------------------------------- internals
    def _arrays(self) -> Iterator[Element]:
        """A fresh iterator over the elements as nests of ndarrays."""
        return self._source()

    def _iterator(self) -> Iterator[Element]:
        """A fresh iterator as TensorFlow's ``MakeIterator`` makes one: the shuffles it
        holds draw their seeds now, not at the first element, so an iterator that is made
        and never read (Keras' epoch iterator makes one at each epoch's end) still moves
        ``reshuffle_each_iteration`` on."""
        table: dict[int, list[tuple[int, int]]] = {}
        self._draw_seeds(table)
        if not table:
            return self._arrays()
        _BOUND.append(table)  # a source that starts its shuffle at once takes them here
        try:
            return _Bound(self._arrays(), table)
        finally:
            _BOUND.pop()

    def _draw_seeds(self, table: dict[int, list[tuple[int, int]]]) -> None:
        gen = self._seedgen
        if gen is not None and gen._words is not None:
            table.setdefault(id(gen), []).append(gen._draw())
        if self._filled is None or not self._filled():
            for p in self._parents:
                p._draw_seeds(table)

    @property
    def element_spec(self) -> Any:
        """The nest of :class:`TensorSpec` describing one element."""
        if callable(self._spec):
            _PROBING[0] += 1   # a spec found by running the pipeline once draws no seeds
            try:
                self._spec = self._spec()
            finally:
                _PROBING[0] -= 1
        return self._spec

    def _derived(self, source: Callable[[], Iterator[Element]], spec: Any, card: int,
                 kind: str) -> Dataset:
        out = Dataset(source, spec, card, kind)
        out._parents = (self,)
        return out

    def __repr__(self) -> str:
        return f"<{self._kind} element_spec={self.element_spec!r}>"

    def __iter__(self) -> DatasetIterator:
        return DatasetIterator(self)

    def __len__(self) -> int:
        if self._card == INFINITE_CARDINALITY:
            raise hinted(TypeError(with_hint("The dataset is infinite.",
                                      "take(n) a finite part, or count steps yourself")))
        if self._card == UNKNOWN_CARDINALITY:
            raise hinted(TypeError(with_hint(
                "The dataset length is unknown.",
                "filter/from_generator hide the length; use "
                "dataset.apply(tf.data.experimental.assert_cardinality(n)) if you know it")))
        return self._card

    def __bool__(self) -> bool:
        return True

    def cardinality(self) -> Tensor:
        """The number of elements as an int64 tensor (-1 infinite, -2 unknown).

        >>> import tapegrad.tf as tf
        >>> int(tf.data.Dataset.range(10).batch(3).cardinality())
        4
        """
        return tft(np.asarray(self._card, dtype=np.int64))

    def as_numpy_iterator(self) -> Iterator[Any]:
        """The elements as NumPy values (0-d components become NumPy scalars).

        >>> import tapegrad.tf as tf
        >>> list(tf.data.Dataset.range(3).as_numpy_iterator())
        [np.int64(0), np.int64(1), np.int64(2)]
        """
        for elem in self._arrays():
            yield _map_leaves(lambda a: a[()] if a.ndim == 0 else a, elem)

    # -------------------------------------------------------------- sources
    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> Dataset:
        """One element per slice along the first axis of every component.

        >>> import tapegrad.tf as tf
        >>> ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [[1.0], [2.0], [3.0]]))
        >>> [(int(a), b.numpy().tolist()) for a, b in ds]
        [(1, [1.0]), (2, [2.0]), (3, [3.0])]
        """
        # a copy, as TensorFlow's: later changes to the caller's arrays do not leak in
        value = _map_leaves(lambda a: a if isinstance(a, SparseTensor) else np.array(a, copy=True),
                            _from_user(tensors))
        leaves = _flat(value)
        if any(isinstance(a, SparseTensor) for a in leaves):
            return _sparse_slices(value, leaves)
        for a in leaves:
            if a.ndim == 0:
                raise hinted(ValueError(with_hint(
                    "Unbatching a tensor is only supported for rank >= 1",
                    "from_tensor_slices slices the first axis: use from_tensors for a scalar")))
        n = leaves[0].shape[0]
        for a in leaves[1:]:
            if a.shape[0] != n:
                raise hinted(ValueError(with_hint(
                    f"Dimensions {n} and {a.shape[0]} are not compatible",
                    "every component must have the same number of rows")))

        def source() -> Iterator[Element]:
            for i in range(n):
                yield _pack(value, [a[i] for a in leaves])

        spec = _map_leaves(lambda a: TensorSpec(a.shape[1:], _dt.from_numpy(a.dtype)), value)
        ds = Dataset(source, spec, n, "_TensorSliceDataset")
        ds._gather = (value, leaves, lambda: range(n))
        return ds

    @staticmethod
    def from_tensors(tensors: Any, name: str | None = None) -> Dataset:
        """A dataset of exactly one element: ``tensors`` itself.

        >>> import tapegrad.tf as tf
        >>> [t.numpy().tolist() for t in tf.data.Dataset.from_tensors([1, 2])]
        [[1, 2]]
        """
        value = _from_user(tensors)
        return Dataset(lambda: iter([value]), _spec_of(value), 1, "_TensorDataset")

    @staticmethod
    def range(*args: Any, output_type: Any = None, name: str | None = None) -> Dataset:
        """``range(stop)``, ``range(start, stop[, step])`` as int64 scalars.

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.range(1, 8, 3)]
        [1, 4, 7]
        """
        if not 1 <= len(args) <= 3:
            raise hinted(ValueError(with_hint("Invalid arguments to range: " + repr(args),
                                       "range(stop) or range(start, stop[, step])")))
        start, stop, step = (0, int(args[0]), 1) if len(args) == 1 else \
            (int(args[0]), int(args[1]), int(args[2]) if len(args) == 3 else 1)
        if step == 0:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                "step must be a non-zero integer.", "use a positive or negative step")))
        npd = np.dtype(np.int64) if output_type is None else _dt.np_dtype(output_type)
        values = range(start, stop, step)

        def source() -> Iterator[Element]:
            for v in values:
                yield np.asarray(v, dtype=npd)

        return Dataset(source, TensorSpec((), _dt.from_numpy(npd)), len(values), "_RangeDataset")

    @staticmethod
    def counter(start: Any = 0, step: Any = 1, dtype: Any = None,
                name: str | None = None) -> Dataset:
        """``start, start + step, ...`` without end (TensorFlow's ``_ScanDataset``).

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.counter(3, 2).take(3)]
        [3, 5, 7]
        """
        npd = np.dtype(np.int64) if dtype is None else _dt.np_dtype(dtype)
        first = np.asarray(constant_array(start, _dt.from_numpy(npd)))
        inc = np.asarray(constant_array(step, _dt.from_numpy(npd)))

        def source() -> Iterator[Element]:
            v = first
            while True:
                yield v
                v = np.asarray(v + inc, dtype=npd)

        return Dataset(source, TensorSpec((), _dt.from_numpy(npd)), INFINITE_CARDINALITY,
                       "_ScanDataset")

    @staticmethod
    def from_generator(generator: Callable[[], Any], output_types: Any = None,
                       output_shapes: Any = None, args: Any = None,
                       output_signature: Any = None, name: str | None = None) -> Dataset:
        """Elements from calling ``generator(*args)`` afresh on every iteration.

        >>> import tapegrad.tf as tf
        >>> def gen():
        ...     for i in range(3):
        ...         yield i, [float(i)] * i
        >>> ds = tf.data.Dataset.from_generator(gen, output_signature=(
        ...     tf.TensorSpec(shape=(), dtype=tf.int32),
        ...     tf.TensorSpec(shape=(None,), dtype=tf.float32)))
        >>> [b.numpy().tolist() for _, b in ds]
        [[], [1.0], [2.0, 2.0]]
        """
        if not callable(generator):
            raise hinted(TypeError(with_hint("`generator` must be a Python callable.",
                                      "pass the generator function, not generator()")))
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise hinted(TypeError(with_hint(
                    "The `output_types` and `output_shapes` arguments are deprecated: use "
                    "`output_signature` only.", "give output_signature alone")))
            spec = output_signature
        elif output_types is not None:
            flat_t = _flat(output_types)
            flat_s = _flat_up_to(output_types, output_shapes)
            spec = _pack(output_types, [TensorSpec(None if s is None else s, t)
                                        for t, s in zip(flat_t, flat_s)])
        else:
            raise hinted(TypeError(with_hint(
                "The `output_signature` argument must be set.",
                "describe the elements: output_signature=tf.TensorSpec(shape, dtype)")))
        specs = _flat(spec)
        gargs = tuple(args or ())

        def source() -> Iterator[Element]:
            for item in generator(*gargs):
                flat = _flat(item) if _is_structure(spec) else [item]
                if len(flat) != len(specs):
                    raise hinted(InvalidArgumentError(None, None, with_hint(
                        "TypeError: `generator` yielded an element that did not match the "
                        f"expected structure. The expected structure was {spec!r}, but the "
                        f"yielded element was {item!r}.", "yield elements of one structure")))
                arrays = []
                for v, s in zip(flat, specs):
                    a = np.asarray(constant_array(v, s.dtype))
                    if not s.shape.is_compatible_with(a.shape):
                        raise hinted(InvalidArgumentError(None, None, with_hint(
                            f"`generator` yielded an element of shape {a.shape} where an "
                            f"element of shape {s.shape} was expected.",
                            "fix the generator or the output_signature")))
                    arrays.append(a)
                yield _pack(spec, arrays) if _is_structure(spec) else arrays[0]

        return Dataset(source, spec, UNKNOWN_CARDINALITY, "_FlatMapDataset")

    @staticmethod
    def zip(*datasets: Any, name: str | None = None) -> Dataset:
        """Elements of several datasets side by side (a tuple or dict of them).

        >>> import tapegrad.tf as tf
        >>> a = tf.data.Dataset.range(3); b = tf.data.Dataset.range(10, 12)
        >>> [(int(x), int(y)) for x, y in tf.data.Dataset.zip((a, b))]
        [(0, 10), (1, 11)]
        """
        structure = datasets[0] if len(datasets) == 1 else datasets
        if isinstance(structure, Dataset):
            structure = (structure,)
        parts = _flat(structure)
        for p in parts:
            if not isinstance(p, Dataset):
                raise hinted(TypeError(with_hint(
                    f"Invalid `datasets`. `datasets` is expected to be a (nested) structure "
                    f"of `tf.data.Dataset` objects. Received: {structure!r}",
                    "pass datasets, e.g. Dataset.zip((a, b))")))

        def source() -> Iterator[Element]:
            its = [p._arrays() for p in parts]
            while True:
                row = []
                for it in its:
                    try:
                        row.append(next(it))
                    except StopIteration:
                        return
                yield _pack(structure, row)

        cards = [p._card for p in parts]
        finite = [c for c in cards if c >= 0]
        if finite:
            card = min(finite) if UNKNOWN_CARDINALITY not in cards or min(finite) == 0 \
                else UNKNOWN_CARDINALITY
        else:
            card = UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in cards else INFINITE_CARDINALITY
        out = Dataset(source, lambda: _pack(structure, [p.element_spec for p in parts]),
                      card, "_ZipDataset")
        out._parents = tuple(parts)
        return out

    # -------------------------------------------------------------- transformations
    def _call(self, fn: Callable[..., Any], elem: Element) -> Any:
        t = _to_tensors(elem)
        if isinstance(t, tuple) and not hasattr(t, "_fields"):
            return fn(*t)
        return fn(t)

    def map(self, map_func: Callable[..., Any], num_parallel_calls: Any = None,
            deterministic: Any = None, name: str | None = None) -> Dataset:
        """Apply ``map_func`` to every element (a tuple element is unpacked into arguments).

        >>> import tapegrad.tf as tf
        >>> ds = tf.data.Dataset.range(3).map(lambda x: (x, x * x),
        ...                                   num_parallel_calls=tf.data.AUTOTUNE)
        >>> [(int(a), int(b)) for a, b in ds]
        [(0, 0), (1, 1), (2, 4)]
        """
        def source() -> Iterator[Element]:
            for elem in self._arrays():
                yield _from_user(self._call(map_func, elem))

        lead = self._card != 0 and _has_unknown_lead(self.element_spec)

        def spec() -> Any:
            for elem in self._arrays():
                return _spec_of(_from_user(self._call(map_func, elem)), lead)
            return self.element_spec

        kind = "_MapDataset" if num_parallel_calls is None else "_ParallelMapDataset"
        return self._derived(source, spec, self._card, kind)

    def filter(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        """Keep the elements for which ``predicate`` is true (a scalar bool tensor).

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.range(6).filter(lambda x: x % 2 == 0)]
        [0, 2, 4]
        """
        def source() -> Iterator[Element]:
            for elem in self._arrays():
                keep = _to_array(self._call(predicate, elem))
                if keep.dtype != np.bool_ or keep.ndim != 0:
                    raise hinted(ValueError(with_hint(
                        "Invalid `predicate`. `predicate` must return a `tf.bool` scalar "
                        f"tensor, but its return type was {_dt.from_numpy(keep.dtype)!r} with "
                        f"shape {keep.shape}.", "return a comparison such as x > 0")))
                if bool(keep):
                    yield elem

        card = self._card if self._card == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY
        return self._derived(source, lambda: self.element_spec, card, "_FilterDataset")

    def flat_map(self, map_func: Callable[..., Dataset], name: str | None = None) -> Dataset:
        """Map every element to a dataset and chain those datasets."""
        def source() -> Iterator[Element]:
            for elem in self._arrays():
                ds = self._call(map_func, elem)
                if not isinstance(ds, Dataset):
                    raise hinted(TypeError(with_hint(
                        "The `map_func` argument must return a `Dataset` object. Got "
                        f"{type(ds)!r}.", "return a tf.data.Dataset from map_func")))
                yield from ds._arrays()

        def spec() -> Any:
            for elem in self._arrays():
                return self._call(map_func, elem).element_spec
            return self.element_spec

        return self._derived(source, spec, UNKNOWN_CARDINALITY, "_FlatMapDataset")

    def interleave(self, map_func: Callable[..., Dataset], cycle_length: int | None = None,
                   block_length: int = 1, num_parallel_calls: Any = None,
                   deterministic: Any = None, name: str | None = None) -> Dataset:
        """Map elements to datasets and take ``block_length`` elements from each of
        ``cycle_length`` open ones in turn (TensorFlow's deterministic order).

        >>> import tapegrad.tf as tf
        >>> ds = tf.data.Dataset.range(1, 4).interleave(
        ...     lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2)
        >>> [int(v) for v in ds]
        [1, 2, 1, 2, 3, 3]
        """
        cycle = 2 if cycle_length in (None, AUTOTUNE) else int(cycle_length)
        block = int(block_length)

        def open_next(inputs: Iterator[Element]) -> Iterator[Element] | None:
            for elem in inputs:
                ds = self._call(map_func, elem)
                if not isinstance(ds, Dataset):
                    raise hinted(TypeError(with_hint(
                        "The `map_func` argument must return a `Dataset` object. Got "
                        f"{type(ds)!r}.", "return a tf.data.Dataset from map_func")))
                return ds._arrays()
            return None

        def source() -> Iterator[Element]:
            inputs = self._arrays()
            slots: list[Iterator[Element] | None] = [None] * cycle
            inputs_done = False
            i = 0
            while True:
                it = slots[i]
                if it is None and not inputs_done:
                    it = open_next(inputs)
                    if it is None:
                        inputs_done = True
                    slots[i] = it
                if it is not None:
                    for _ in range(block):
                        try:
                            yield next(it)
                        except StopIteration:  # found empty: the turn passes on
                            slots[i] = None
                            break
                if inputs_done and all(sl is None for sl in slots):
                    return
                i = (i + 1) % cycle

        def spec() -> Any:
            for elem in self._arrays():
                return self._call(map_func, elem).element_spec
            return self.element_spec

        return self._derived(source, spec, UNKNOWN_CARDINALITY, "_InterleaveDataset")

    def window(self, size: int, shift: int | None = None, stride: int = 1,
               drop_remainder: bool = False, name: str | None = None) -> Dataset:
        """Windows of ``size`` elements every ``shift`` elements; each window is a
        (nest of) dataset(s), usually flattened with ``flat_map(lambda w: w.batch(size))``.

        >>> import tapegrad.tf as tf
        >>> ds = tf.data.Dataset.range(5).window(3, shift=2)
        >>> [[int(x) for x in w] for w in ds]
        [[0, 1, 2], [2, 3, 4], [4]]
        """
        n, sh, st = int(size), int(size if shift is None else shift), int(stride)
        if n <= 0 or sh <= 0 or st <= 0:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                "Window size, shift and stride must be greater than zero.",
                f"got size={size}, shift={shift}, stride={stride}")))
        span = (n - 1) * st + 1

        def make_window(elems: list[Element]) -> Any:
            flats = [_flat(e) for e in elems]
            structure = elems[0]
            parts = []
            for j in range(len(flats[0])):
                column = [f[j] for f in flats]
                parts.append(Dataset(_replay(column),
                                     TensorSpec(column[0].shape,
                                                _dt.from_numpy(column[0].dtype)),
                                     len(column), "_VariantDataset"))
            return _pack(structure, parts) if _is_structure(structure) else parts[0]

        def source() -> Iterator[Element]:
            buf: list[Element] = []
            first = 0  # input index of buf[0]
            start = 0
            it = self._arrays()
            done = False
            while True:
                need = start + span - first
                while not done and len(buf) < need:
                    try:
                        buf.append(next(it))
                    except StopIteration:
                        done = True
                chosen = buf[start - first::st][:n] if start - first < len(buf) else []
                if not chosen or (drop_remainder and len(chosen) < n):
                    return
                yield make_window(chosen)
                start += sh
                if start - first > 0:
                    drop = min(start - first, len(buf))
                    del buf[:drop]
                    first += drop

        def spec() -> Any:
            return _map_leaves(lambda sp: DatasetSpec(sp), self.element_spec)

        c = self._card
        if c < 0:
            card = c
        elif drop_remainder:
            card = max(0, (c - span) // sh + 1) if c >= span else 0
        else:
            card = -(-c // sh)
        return self._derived(source, spec, card, "_WindowDataset")

    def scan(self, initial_state: Any, scan_func: Callable[[Any, Any], Any],
             name: str | None = None) -> Dataset:
        """Carry a state along: ``state, out = scan_func(state, element)``; yields ``out``.

        >>> import tapegrad.tf as tf
        >>> ds = tf.data.Dataset.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s + x))
        >>> [int(v) for v in ds]
        [0, 1, 3, 6, 10]
        """
        init = _from_user(initial_state)

        def step(state: Element, elem: Element) -> tuple[Element, Element]:
            t = _to_tensors(elem)
            args = t if isinstance(t, tuple) and not hasattr(t, "_fields") else (t,)
            new_state, out = scan_func(_to_tensors(state), *args)
            return _from_user(new_state), _from_user(out)

        def source() -> Iterator[Element]:
            state = init
            for elem in self._arrays():
                state, out = step(state, elem)
                yield out

        def spec() -> Any:
            for elem in self._arrays():
                return _spec_of(step(init, elem)[1])
            return self.element_spec

        return self._derived(source, spec, self._card, "_ScanDataset")

    def unique(self, name: str | None = None) -> Dataset:
        """The elements without repeats, in first-seen order (scalar integer elements).

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.from_tensor_slices([1, 3, 1, 2, 3]).unique()]
        [1, 3, 2]
        """
        spec = self.element_spec
        if not isinstance(spec, TensorSpec) or spec.shape.rank != 0 or \
                spec.dtype.name not in ("int32", "int64"):
            raise hinted(TypeError(with_hint(
                "Dataset.unique() only supports scalar int32 and int64 elements (tapegrad "
                f"has no string tensors); got {spec!r}", "map the elements to integer ids")))

        def source() -> Iterator[Element]:
            seen: set[Any] = set()
            for elem in self._arrays():
                key = elem.item()
                if key not in seen:
                    seen.add(key)
                    yield elem

        card = self._card if self._card == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY
        return self._derived(source, lambda: self.element_spec, card, "_UniqueDataset")

    @staticmethod
    def choose_from_datasets(datasets: Any, choice_dataset: Dataset,
                             stop_on_empty_dataset: bool = True) -> Dataset:
        """The next element of ``datasets[i]`` for each index ``i`` of ``choice_dataset``.

        >>> import tapegrad.tf as tf
        >>> a, b = tf.data.Dataset.range(10, 13), tf.data.Dataset.range(20, 23)
        >>> pick = tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1, 0], tf.int64))
        >>> [int(x) for x in tf.data.Dataset.choose_from_datasets([a, b], pick)]
        [10, 20, 21, 11]
        """
        parts = list(datasets)
        if not parts:
            raise hinted(ValueError(with_hint("Invalid `datasets`. `datasets` should not be empty.",
                                       "pass at least one dataset")))
        cspec = choice_dataset.element_spec
        if not isinstance(cspec, TensorSpec) or cspec.dtype.name != "int64" or \
                cspec.shape.rank != 0:
            raise hinted(TypeError(with_hint(
                "Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar "
                f"`tf.int64` tensors. Received: {cspec!r}", "cast the choices to tf.int64")))

        def source() -> Iterator[Element]:
            its: list[Iterator[Element] | None] = [p._arrays() for p in parts]
            for choice in choice_dataset._arrays():
                i = int(choice)
                if not 0 <= i < len(its):
                    raise hinted(InvalidArgumentError(None, None, with_hint(
                        f"Selector index out of range: {i} >= {len(its)}",
                        "every choice must index one of the datasets")))
                it = its[i]
                if it is None:
                    continue
                try:
                    yield next(it)
                except StopIteration:
                    if stop_on_empty_dataset:
                        return
                    its[i] = None
                    if all(x is None for x in its):
                        return

        out = Dataset(source, lambda: parts[0].element_spec, UNKNOWN_CARDINALITY,
                      "_DirectedInterleaveDataset")
        out._parents = (*parts, choice_dataset)
        return out

    def take_while(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        """Elements up to (not including) the first for which ``predicate`` is false.

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.range(10).take_while(lambda x: x < 3)]
        [0, 1, 2]
        """
        def source() -> Iterator[Element]:
            for elem in self._arrays():
                if not bool(_to_array(self._call(predicate, elem))):
                    return
                yield elem

        return self._derived(source, lambda: self.element_spec, UNKNOWN_CARDINALITY,
                             "_TakeWhileDataset")

    def shard(self, num_shards: int, index: int, name: str | None = None) -> Dataset:
        """Every ``num_shards``-th element, starting at ``index``.

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.range(10).shard(3, 1)]
        [1, 4, 7]
        """
        k, j = int(num_shards), int(index)
        if k <= 0 or not 0 <= j < k:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                f"Index must be between 0 and {k - 1} (currently index = {j}).",
                "0 <= index < num_shards")))

        def source() -> Iterator[Element]:
            for i, elem in enumerate(self._arrays()):
                if i % k == j:
                    yield elem

        card = self._card if self._card < 0 else max(0, (self._card - j + k - 1) // k)
        return self._derived(source, lambda: self.element_spec, card, "_ShardDataset")

    def batch(self, batch_size: int, drop_remainder: bool = False, num_parallel_calls: Any = None,
              deterministic: Any = None, name: str | None = None) -> Dataset:
        """Stack ``batch_size`` consecutive elements into one (the last may be smaller).

        >>> import tapegrad.tf as tf
        >>> [b.shape for b in tf.data.Dataset.range(5).batch(2, drop_remainder=True)]
        [TensorShape([2]), TensorShape([2])]
        """
        n = int(batch_size)
        if n <= 0:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                "Batch size must be greater than zero.", f"got batch_size={batch_size}")))

        gather = self._gather

        def source() -> Iterator[Element]:
            if gather is not None:
                yield from _gathered_batches(gather, n, drop_remainder)
                return
            buf: list[Element] = []
            for elem in self._arrays():
                buf.append(elem)
                if len(buf) == n:
                    yield _stack(buf)
                    buf = []
            if buf and not drop_remainder:
                yield _stack(buf)

        def spec() -> Any:
            return _map_leaves(lambda s: type(s)(
                [n if drop_remainder else None] + list(s.shape.as_list()), s.dtype),
                self.element_spec)

        return self._derived(source, spec, _batched_card(self._card, n, drop_remainder),
                             "_BatchDataset" if num_parallel_calls is None
                             else "_ParallelBatchDataset")

    def padded_batch(self, batch_size: int, padded_shapes: Any = None,
                     padding_values: Any = None, drop_remainder: bool = False,
                     name: str | None = None) -> Dataset:
        """Batch elements of different shapes, padding each component to a common shape.

        >>> import tapegrad.tf as tf
        >>> ds = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x))
        >>> next(iter(ds.padded_batch(3))).numpy().tolist()
        [[1, 0, 0], [2, 2, 0], [3, 3, 3]]
        """
        n = int(batch_size)
        if n <= 0:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                "Batch size must be greater than zero.", f"got batch_size={batch_size}")))

        def leaves_of(x: Any, count: int) -> list[Any]:
            if x is None or not _is_structure(self.element_spec):
                return [x] * count
            return _flat_up_to(self.element_spec, x)

        def source() -> Iterator[Element]:
            buf: list[Element] = []

            def emit() -> Element:
                flats = [_flat(e) for e in buf]
                k = len(flats[0])
                shapes = leaves_of(padded_shapes, k)
                pads = leaves_of(padding_values, k)
                out = []
                for j in range(k):
                    parts = [f[j] for f in flats]
                    rank = parts[0].ndim
                    target = [max(p.shape[d] for p in parts) for d in range(rank)]
                    if shapes[j] is not None:
                        want = list(getattr(shapes[j], "as_list", lambda s=shapes[j]: s)())
                        for d, w in enumerate(want):
                            if w is not None and int(w) >= 0:
                                if int(w) < target[d]:
                                    raise hinted(InvalidArgumentError(None, None, with_hint(
                                        f"Attempted to pad to a smaller size than the input "
                                        f"element. Dimension {d}: padded {w}, element "
                                        f"{target[d]}", "raise padded_shapes")))
                                target[d] = int(w)
                    fill = 0 if pads[j] is None else _to_array(pads[j])
                    batch = np.full([len(parts)] + target, fill, dtype=parts[0].dtype)
                    for i, p in enumerate(parts):
                        batch[(i,) + tuple(slice(0, s) for s in p.shape)] = p
                    out.append(batch)
                return _pack(buf[0], out)

            for elem in self._arrays():
                buf.append(elem)
                if len(buf) == n:
                    yield emit()
                    buf = []
            if buf and not drop_remainder:
                yield emit()

        def spec() -> Any:
            flat = _flat(self.element_spec)
            shapes = leaves_of(padded_shapes, len(flat))
            out = []
            for s, want in zip(flat, shapes):
                dims: list[int | None] = [None] * (s.shape.rank or 0)
                if want is not None:
                    w = list(want.as_list() if hasattr(want, "as_list") else want)
                    dims = [None if d is None or int(d) < 0 else int(d) for d in w]
                out.append(TensorSpec([n if drop_remainder else None] + dims, s.dtype))
            return _pack(self.element_spec, out)

        return self._derived(source, spec, _batched_card(self._card, n, drop_remainder),
                             "_PaddedBatchDataset")

    def unbatch(self, name: str | None = None) -> Dataset:
        """Split every element along its first axis (the inverse of ``batch``).

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.range(5).batch(2).unbatch()]
        [0, 1, 2, 3, 4]
        """
        def source() -> Iterator[Element]:
            for elem in self._arrays():
                leaves = _flat(elem)
                for i in range(leaves[0].shape[0]):
                    yield _pack(elem, [a[i] for a in leaves])

        def spec() -> Any:
            return _map_leaves(lambda s: TensorSpec(s.shape.as_list()[1:], s.dtype),
                               self.element_spec)

        lead = [s.shape[0] for s in _flat(self.element_spec) if s.shape.rank]
        if self._card >= 0 and lead and lead[0] is not None:
            card = self._card * int(lead[0])
        elif self._card == INFINITE_CARDINALITY:
            card = INFINITE_CARDINALITY
        else:
            card = UNKNOWN_CARDINALITY
        return self._derived(source, spec, card, "_UnbatchDataset")

    def shuffle(self, buffer_size: int, seed: int | None = None,
                reshuffle_each_iteration: bool | None = None, name: str | None = None) -> Dataset:
        """Shuffle with a buffer of ``buffer_size`` elements (TensorFlow's algorithm).

        The buffer is filled from the input; each output is a uniformly drawn
        buffer element, replaced by the next input.  A buffer at least as large
        as the dataset gives a uniform permutation.  With a global or op seed
        the orders are reproducible; ``reshuffle_each_iteration`` (default
        True) gives a different order on each pass.

        >>> import tapegrad.tf as tf
        >>> tf.random.set_seed(0)
        >>> ds = tf.data.Dataset.range(5).shuffle(5, seed=1)
        >>> sorted(int(x) for x in ds)
        [0, 1, 2, 3, 4]
        """
        size = int(buffer_size)
        if size == AUTOTUNE or size <= 0:
            raise hinted(InvalidArgumentError(None, None, with_hint(
                "buffer_size must be greater than zero.", f"got buffer_size={buffer_size}")))
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        seeds = _SeedGenerator(*_dataset_seeds(seed), reshuffle)

        def source() -> Iterator[Element]:
            return _shuffled(self._arrays(), size, *seeds.generate())

        out = self._derived(source, lambda: self.element_spec, self._card, "_ShuffleDataset")
        out._seedgen = seeds
        if self._gather is not None:
            structure, leaves, order = self._gather
            out._gather = (structure, leaves,
                           lambda: _shuffled_order(order(), size, *seeds.generate()))
        return out

    def repeat(self, count: int | None = None, name: str | None = None) -> Dataset:
        """Iterate the dataset ``count`` times (``None`` or -1: forever).

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.range(2).repeat(3)]
        [0, 1, 0, 1, 0, 1]
        """
        c = -1 if count is None else int(count)

        def source() -> Iterator[Element]:
            done = 0
            while c < 0 or done < c:
                empty = True
                for elem in self._arrays():
                    empty = False
                    yield elem
                done += 1
                if empty:
                    return

        if c < 0:
            card = INFINITE_CARDINALITY if self._card != 0 else 0
            if self._card == UNKNOWN_CARDINALITY:
                card = UNKNOWN_CARDINALITY
        elif self._card < 0:
            card = self._card if c > 0 else 0
        else:
            card = self._card * c
        return self._derived(source, lambda: self.element_spec, card, "_RepeatDataset")

    def take(self, count: int, name: str | None = None) -> Dataset:
        """The first ``count`` elements (-1: all).

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.range(10).take(3)]
        [0, 1, 2]
        """
        c = int(count)

        def source() -> Iterator[Element]:
            if c == 0:
                return
            for i, elem in enumerate(self._arrays()):
                yield elem
                if 0 <= c <= i + 1:
                    return

        if c < 0:
            card = self._card
        elif self._card == INFINITE_CARDINALITY:
            card = c
        elif self._card == UNKNOWN_CARDINALITY:
            card = UNKNOWN_CARDINALITY
        else:
            card = min(c, self._card)
        return self._derived(source, lambda: self.element_spec, card, "_TakeDataset")

    def skip(self, count: int, name: str | None = None) -> Dataset:
        """All but the first ``count`` elements (-1: skip everything).

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.range(5).skip(3)]
        [3, 4]
        """
        c = int(count)

        def source() -> Iterator[Element]:
            if c < 0:
                for _ in self._arrays():
                    pass
                return
            for i, elem in enumerate(self._arrays()):
                if i >= c:
                    yield elem

        if self._card < 0:
            card = self._card
        elif c < 0:
            card = 0
        else:
            card = max(self._card - c, 0)
        return self._derived(source, lambda: self.element_spec, card, "_SkipDataset")

    def concatenate(self, dataset: Dataset, name: str | None = None) -> Dataset:
        """This dataset's elements followed by ``dataset``'s (same structure and dtypes).

        >>> import tapegrad.tf as tf
        >>> [int(x) for x in tf.data.Dataset.range(2).concatenate(tf.data.Dataset.range(5, 7))]
        [0, 1, 5, 6]
        """
        a, b = self.element_spec, dataset.element_spec
        fa, fb = _flat(a), _flat(b)
        if len(fa) != len(fb) or any(x.dtype != y.dtype for x, y in zip(fa, fb)):
            raise hinted(TypeError(with_hint(
                f"Incompatible dataset elements:\n  {a!r} vs.   {b!r}",
                "both datasets need the same structure and dtypes (tf.cast one side)")))

        def source() -> Iterator[Element]:
            yield from self._arrays()
            yield from dataset._arrays()

        def spec() -> Any:
            return _pack(a, [TensorSpec(_common(x.shape, y.shape), x.dtype)
                             for x, y in zip(fa, fb)])

        c1, c2 = self._card, dataset._card
        if INFINITE_CARDINALITY in (c1, c2):
            card = INFINITE_CARDINALITY
        elif UNKNOWN_CARDINALITY in (c1, c2):
            card = UNKNOWN_CARDINALITY
        else:
            card = c1 + c2
        return self._derived(source, spec, card, "_ConcatenateDataset")

    def enumerate(self, start: int = 0, name: str | None = None) -> Dataset:
        """Pairs ``(index, element)`` with an int64 index counting from ``start``.

        >>> import tapegrad.tf as tf
        >>> [(int(i), int(x)) for i, x in tf.data.Dataset.range(10, 12).enumerate()]
        [(0, 10), (1, 11)]
        """
        def source() -> Iterator[Element]:
            for i, elem in enumerate(self._arrays(), int(start)):
                yield (np.asarray(i, dtype=np.int64), elem)

        return self._derived(source, lambda: (TensorSpec((), _dt.int64), self.element_spec),
                             self._card, "_ZipDataset")

    def cache(self, filename: str = "", name: str | None = None) -> Dataset:
        """Keep the elements of the first complete pass in memory and replay them.

        ``filename`` is accepted; the cache is always in memory.
        """
        store: list[list[Element]] = []

        def source() -> Iterator[Element]:
            if store:
                yield from store[0]
                return
            seen: list[Element] = []
            for elem in self._arrays():
                seen.append(elem)
                yield elem
            store.append(seen)

        out = self._derived(source, lambda: self.element_spec, self._card, "CacheDataset")
        out._filled = lambda: bool(store)
        return out

    def prefetch(self, buffer_size: int, name: str | None = None) -> Dataset:
        """Accepted for compatibility: elements are produced when asked for."""
        out = self._derived(self._arrays, lambda: self.element_spec, self._card,
                            "_PrefetchDataset")
        out._gather = self._gather
        return out

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        """``transformation_func(self)``."""
        return transformation_func(self)

    def reduce(self, initial_state: Any, reduce_func: Callable[[Any, Any], Any]) -> Any:
        """Fold the elements: ``state = reduce_func(state, element)``.

        >>> import tapegrad.tf as tf
        >>> int(tf.data.Dataset.range(5).reduce(tf.constant(0, tf.int64), lambda s, x: s + x))
        10
        """
        state = _from_user(initial_state)
        for elem in self._arrays():
            state = _from_user(reduce_func(_to_tensors(state), _to_tensors(elem)))
        return _to_tensors(state)

    def options(self) -> dict[str, Any]:
        return {}

    def with_options(self, options: Any, name: str | None = None) -> Dataset:
        return self


# ---------------------------------------------------------------------------- helpers
def _sparse_row(sp: SparseTensor, i: int) -> SparseTensor:
    """Row ``i`` of a sparse tensor (its first axis dropped)."""
    ind = sp.indices._data
    keep = ind[:, 0] == i
    return SparseTensor(ind[keep, 1:], tft(np.asarray(sp.values._data)[keep]),
                        sp.dense_shape._data[1:])


def _sparse_stack(parts: list[SparseTensor]) -> SparseTensor:
    """Sparse tensors batched as ``tf.data`` batches them: a new leading axis, the
    dense shape the largest of each axis."""
    ranks = {p.indices._data.shape[1] for p in parts}
    if len(ranks) != 1:
        raise hinted(InvalidArgumentError(None, None, with_hint(
            "Cannot batch sparse tensors of different ranks.",
            "every element's SparseTensor must have the same rank")))
    ind = np.concatenate([np.concatenate([np.full((p.indices._data.shape[0], 1), i, np.int64),
                                          p.indices._data], axis=1)
                          for i, p in enumerate(parts)])
    vals = np.concatenate([np.asarray(p.values._data) for p in parts])
    shape = np.max(np.stack([p.dense_shape._data for p in parts]), axis=0)
    return SparseTensor(ind, tft(vals), np.concatenate([[len(parts)], shape]))


def _sparse_slices(value: Element, leaves: list[Any]) -> Dataset:
    """``from_tensor_slices`` when a component is a ``SparseTensor``."""
    ns = [int(a.dense_shape._data[0]) if isinstance(a, SparseTensor) else a.shape[0]
          for a in leaves]
    if any(n != ns[0] for n in ns):
        raise hinted(ValueError(with_hint(f"Dimensions {ns[0]} and "
                                          f"{next(n for n in ns if n != ns[0])} are not compatible",
                                          "every component must have the same number of rows")))
    n = ns[0]

    def source() -> Iterator[Element]:
        for i in range(n):
            yield _pack(value, [_sparse_row(a, i) if isinstance(a, SparseTensor) else a[i]
                                for a in leaves])

    spec = _map_leaves(lambda a: SparseTensorSpec(list(a.shape)[1:], a.dtype)
                       if isinstance(a, SparseTensor)
                       else TensorSpec(a.shape[1:], _dt.from_numpy(a.dtype)), value)
    return Dataset(source, spec, n, "_TensorSliceDataset")


def _stack(elems: list[Element]) -> Element:
    flats = [_flat(e) for e in elems]
    out: list[Any] = []
    for j in range(len(flats[0])):
        parts = [f[j] for f in flats]
        if isinstance(parts[0], SparseTensor):
            out.append(_sparse_stack(parts))
            continue
        shape = parts[0].shape
        for i, p in enumerate(parts):
            if p.shape != shape:
                raise hinted(InvalidArgumentError(None, None, with_hint(
                    f"Cannot batch tensors with different shapes in component {j}. First "
                    f"element had shape {_shape_text(shape)} and element {i} had "
                    f"shape {_shape_text(p.shape)}.",
                    "use padded_batch for elements of different shapes")))
        out.append(np.stack(parts))
    return _pack(elems[0], out)


def _replay(items: list[Element]) -> Callable[[], Iterator[Element]]:
    """A source that yields ``items`` on every pass."""
    def source() -> Iterator[Element]:
        return iter(items)

    return source


_PROBING = [0]
# the seed tables of the iterators being read, innermost last (``Dataset._iterator``)
_BOUND: list[dict[int, list[tuple[int, int]]]] = []


class _Bound:
    """An iterator whose shuffles took their seeds when it was made: while it reads,
    ``_SeedGenerator.generate`` hands them out instead of drawing anew."""

    __slots__ = ("_it", "_table")

    def __init__(self, it: Iterator[Element], table: dict[int, list[tuple[int, int]]]) -> None:
        self._it = it
        self._table = table

    def __iter__(self) -> _Bound:
        return self

    def __next__(self) -> Element:
        _BOUND.append(self._table)
        try:
            return next(self._it)
        finally:
            _BOUND.pop()


def _dataset_seeds(seed: Any) -> tuple[int, int]:
    """``tf.data``'s ``random_seed.get_seed``, then ``RandomSeeds``: both 0 -> fresh entropy."""
    s1, s2 = _random.get_seed(seed)
    a = 0 if s1 is None else int(s1)
    b = 0 if s2 is None else int(s2)
    if s2 is not None and a == 0 and b == 0:
        b = 2**31 - 1
    if (a | b) == 0:
        a, b = (int.from_bytes(os.urandom(8), "little") >> 1 for _ in range(2))
    return a, b


class _Words:
    """``SingleSampleAdapter<PhiloxRandom>``: a Philox stream's 32-bit words, one at a time."""

    def __init__(self, seed: int, seed2: int) -> None:
        self._gen = _philox.Philox.from_seeds(seed, seed2)
        self._block: list[int] = []
        self._n = 0

    def __call__(self) -> int:
        if not self._block:   # 64 blocks at a time, vectorised
            self._block = self._gen.skip(self._n).blocks(64).reshape(-1).tolist()
            self._block.reverse()
            self._n += 64
        return int(self._block.pop())


class _SeedGenerator:
    """tf.data's ``RandomSeedGenerator`` (reshuffling: two fresh words per iterator) or
    ``FixedSeedGenerator`` (the same seeds every time)."""

    def __init__(self, seed: int, seed2: int, reshuffle: bool) -> None:
        self._seeds = (seed, seed2)
        self._words = _Words(seed, seed2) if reshuffle else None

    def generate(self) -> tuple[int, int]:
        if self._words is None:
            return self._seeds
        if _BOUND and not _PROBING[0]:  # drawn when the iterator being read was made
            drawn = _BOUND[-1].get(id(self))
            if drawn:
                return drawn.pop(0)
        return self._draw()

    def _draw(self) -> tuple[int, int]:
        src = self._words
        assert src is not None
        words = src
        if _PROBING[0]:   # finding an element_spec: TensorFlow makes no iterator for it
            words = _Words.__new__(_Words)
            words.__dict__.update(src.__dict__, _block=list(src._block))
        return words(), words()


def _shuffled(items: Iterator[Any], size: int, seed: int, seed2: int) -> Iterator[Any]:
    """TensorFlow's ``ShuffleDataset`` iterator: a ring buffer of ``size`` elements; each output
    is ``buffer[start + word % filled]`` (words of ``Philox(seed, seed2)``), whose slot takes the
    oldest element; the buffer is topped up from the input before each draw."""
    words = _Words(seed, seed2)
    buf: list[Any] = [None] * size
    start = end = 0
    it = iter(items)
    live = True
    while True:
        while live and end - start < size:
            try:
                buf[end % size] = next(it)
            except StopIteration:
                live = False
                break
            end += 1
        if end == start:
            return
        idx = (start + words() % (end - start)) % size
        out = buf[idx]
        buf[idx] = buf[start % size]
        buf[start % size] = None
        start += 1
        yield out


def _shuffled_order(order: Any, size: int, seed: int, seed2: int) -> Any:
    """:func:`_shuffled` of a finite order of element indices, all at once (an int array).

    The ring buffer's draws need no element values: output ``t`` takes slot
    ``(t + word_t % filled_t) % size`` with ``filled_t = min(size, n - t)``, so the slots
    are computed in one vectorised step and only the swaps run in a Python loop (an epoch
    of 60,000 indices in a few milliseconds)."""
    if not isinstance(order, (range, list, np.ndarray)):
        return _shuffled(iter(order), size, seed, seed2)
    items = np.asarray(order, dtype=np.intp)
    n = len(items)
    if n == 0:
        return items
    words = _philox.Philox.from_seeds(seed, seed2).words(n).astype(np.int64)
    t = np.arange(n, dtype=np.int64)
    slots = ((t + words % np.minimum(size, n - t)) % size).tolist()
    if size >= n:  # the whole input fits: a Fisher-Yates pass (output t = slot t after)
        buf = items.tolist()
        for i, j in enumerate(slots):
            buf[i], buf[j] = buf[j], buf[i]
        return np.array(buf, dtype=np.intp)
    buf = items[:size].tolist()
    rest = items[size:].tolist()
    out: list[int] = [0] * n
    for i, j in enumerate(slots):
        out[i] = buf[j]
        s0 = i % size
        buf[j] = buf[s0]
        if i < len(rest):  # the next input element tops the buffer up into the freed slot
            buf[s0] = rest[i]
    return np.array(out, dtype=np.intp)


def _gathered_batches(gather: tuple[Any, list[np.ndarray], Callable[[], Any]], n: int,
                      drop: bool) -> Iterator[Element]:
    """Batches of slices taken with one indexing per component (the elements' order)."""
    structure, leaves, order_fn = gather
    order = order_fn()
    if type(structure) is tuple and not any(_is_structure(c) for c in structure):
        def pack(parts: list[np.ndarray]) -> Any:   # (x, y): no nest to rebuild
            return tuple(parts)
    else:
        def pack(parts: list[np.ndarray]) -> Any:
            return _pack(structure, parts)
    if isinstance(order, range):
        total = len(order)
        for lo in range(0, total, n):
            hi = min(lo + n, total)
            if hi - lo < n and drop:
                return
            sel = slice(order.start + lo * order.step, order.start + hi * order.step,
                        order.step)
            yield pack([a[sel] for a in leaves])
        return
    if isinstance(order, np.ndarray):  # a shuffled pass: one index array, sliced
        total = len(order)
        for lo in range(0, total, n):
            idx = order[lo:lo + n]
            if len(idx) < n and drop:
                return
            yield pack([a[idx] for a in leaves])
        return
    it = iter(order)
    while True:
        idx = np.fromiter(itertools.islice(it, n), dtype=np.intp)
        if len(idx) == 0 or (len(idx) < n and drop):
            return
        yield pack([a[idx] for a in leaves])
        if len(idx) < n:
            return


def _flat_up_to(structure: Any, value: Any) -> list[Any]:
    """The parts of ``value`` at the leaves of ``structure`` (shapes are tuples too)."""
    if value is None:
        return [None] * len(_flat(structure))
    if isinstance(structure, Mapping):
        return [x for k in _keys(structure) for x in _flat_up_to(structure[k], value[k])]
    if isinstance(structure, tuple):
        return [x for s, v in zip(structure, value) for x in _flat_up_to(s, v)]
    return [value]


def _shape_text(shape: tuple[int, ...]) -> str:
    return "[" + ",".join(str(s) for s in shape) + "]"


def _batched_card(card: int, n: int, drop: bool) -> int:
    if card < 0:
        return card
    return card // n if drop else -(-card // n)


def _common(a: Any, b: Any) -> Any:
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return None
    return [x if x == y else None for x, y in zip(a.as_list(), b.as_list())]


def assert_cardinality(expected_cardinality: int) -> Callable[[Dataset], Dataset]:
    """``tf.data.experimental.assert_cardinality``: declare a dataset's length."""
    n = int(expected_cardinality)

    def apply(ds: Dataset) -> Dataset:
        def source() -> Iterator[Element]:
            count = 0
            for elem in ds._arrays():
                count += 1
                if count > n:
                    raise hinted(InvalidArgumentError(None, None, with_hint(
                        f"Input dataset was expected to contain {n} elements but contained at "
                        f"least {count} elements.", "fix the expected cardinality")))
                yield elem
            if count < n:
                raise hinted(InvalidArgumentError(None, None, with_hint(
                    f"Input dataset was expected to contain {n} elements but contained only "
                    f"{count} elements.", "fix the expected cardinality")))

        out = Dataset(source, lambda: ds.element_spec, n, "_AssertCardinalityDataset")
        out._parents = (ds,)
        return out

    return apply


def make_csv_dataset(file_pattern: Any, batch_size: int, column_names: Any = None,
                     column_defaults: Any = None, label_name: str | None = None,
                     select_columns: Any = None, field_delim: str = ",",
                     use_quote_delim: bool = True, na_value: str = "", header: bool = True,
                     num_epochs: int | None = None, shuffle: bool = True,
                     shuffle_buffer_size: int = 10000, shuffle_seed: int | None = None,
                     prefetch_buffer_size: Any = None, num_parallel_reads: Any = None,
                     sloppy: bool = False, num_rows_for_inference: int = 100,
                     compression_type: Any = None, ignore_errors: bool = False,
                     encoding: str = "utf-8") -> Dataset:
    """``tf.data.experimental.make_csv_dataset``: batches of ``(OrderedDict of columns,
    label)`` read from CSV files (numeric columns: int32 or float32, as inferred)."""
    import csv
    import glob

    files = sorted(glob.glob(file_pattern)) if isinstance(file_pattern, str) else \
        [str(f) for f in file_pattern]
    if not files:
        raise hinted(ValueError(with_hint(f"No files match `file_pattern` {file_pattern}.",
                                   "check the path")))
    rows: list[list[str]] = []
    names: list[str] | None = None if column_names is None else list(column_names)
    for path in files:
        with open(path, newline="", encoding=encoding) as fh:
            reader = csv.reader(fh, delimiter=field_delim,
                                quoting=csv.QUOTE_MINIMAL if use_quote_delim else
                                csv.QUOTE_NONE)
            lines = list(reader)
        if header and lines:
            if names is None:
                names = lines[0]
            lines = lines[1:]
        rows.extend(r for r in lines if r)
    if names is None:
        raise hinted(ValueError(with_hint("Expected `column_names` or `header=True`",
                                   "name the columns")))
    columns: OrderedDict[str, np.ndarray] = OrderedDict()
    for c, name in enumerate(names):
        raw = [r[c] if c < len(r) else na_value for r in rows]
        try:
            ints = [int(v) for v in raw]
            columns[name] = np.asarray(ints, dtype=np.int32)
        except ValueError:
            try:
                columns[name] = np.asarray([float(v) for v in raw], dtype=np.float32)
            except ValueError:
                raise hinted(TypeError(with_hint(
                    f"Column '{name}' is not numeric", "tapegrad.tf.data reads numeric "
                    "CSV columns only (select_columns= the numeric ones)"))) from None
    if select_columns is not None:
        keep = [names[c] if isinstance(c, int) else c for c in select_columns]
        columns = OrderedDict((k, v) for k, v in columns.items() if k in keep)
    if label_name is not None:
        if label_name not in columns:
            raise hinted(ValueError(with_hint(
                f"`label_name` provided must be one of the columns: {list(columns)}. "
                f"Received: {label_name}", "name the label column")))
        labels = columns.pop(label_name)
        ds = Dataset.from_tensor_slices((columns, labels))
    else:
        ds = Dataset.from_tensor_slices(columns)
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    ds = ds.repeat(num_epochs).batch(batch_size)
    out = Dataset(ds._arrays, lambda: ds.element_spec, UNKNOWN_CARDINALITY, "_PrefetchDataset")
    out._parents = (ds,)
    return out


def cardinality(dataset: Dataset) -> Tensor:
    """``tf.data.experimental.cardinality(ds)``."""
    return dataset.cardinality()


_ = (flatten, pack_sequence_as)  # tf.nest's dict order is the one used here
