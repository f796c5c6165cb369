"""``ConcreteFunction.graph``: a traced program seen as TensorFlow's ``FuncGraph``.

The program's kept instructions become TensorFlow-named nodes: each tensor input a
``Placeholder``, each literal operand a ``Const`` (``mul/y``), each op its TensorFlow
type (``Mul``, ``AddV2``, ``Sum`` with its ``Const`` axis), each Variable read a
``ReadVariableOp`` of a captured resource placeholder, each output an ``Identity``.
Names are made unique as TensorFlow does (``add``, ``add_1``).  It describes the
program; it is not run (the program is).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as _dt

# core op name -> (TensorFlow op type, node name)
_OPS: dict[str, tuple[str, str]] = {
    "add": ("AddV2", "add"), "subtract": ("Sub", "sub"), "multiply": ("Mul", "mul"),
    "divide": ("RealDiv", "truediv"), "negative": ("Neg", "Neg"), "matmul": ("MatMul", "MatMul"),
    "sum": ("Sum", "Sum"), "mean": ("Mean", "Mean"), "max": ("Max", "Max"),
    "min": ("Min", "Min"), "prod": ("Prod", "Prod"), "sin": ("Sin", "Sin"),
    "cos": ("Cos", "Cos"), "exp": ("Exp", "Exp"), "log": ("Log", "Log"),
    "tanh": ("Tanh", "Tanh"), "sigmoid": ("Sigmoid", "Sigmoid"), "relu": ("Relu", "Relu"),
    "sqrt": ("Sqrt", "Sqrt"), "rsqrt": ("Rsqrt", "Rsqrt"), "square": ("Square", "Square"),
    "abs": ("Abs", "Abs"), "maximum": ("Maximum", "Maximum"),
    "minimum": ("Minimum", "Minimum"), "power_tf": ("Pow", "pow"), "cast": ("Cast", "Cast"),
    "reshape": ("Reshape", "Reshape"), "identity": ("Identity", "Identity"),
    "where": ("SelectV2", "SelectV2"), "greater": ("Greater", "Greater"),
    "less": ("Less", "Less"), "equal": ("Equal", "Equal"), "not_equal": ("NotEqual", "NotEqual"),
    "greater_equal": ("GreaterEqual", "GreaterEqual"), "less_equal": ("LessEqual", "LessEqual"),
    "concatenate": ("ConcatV2", "concat"), "take": ("GatherV2", "GatherV2"),
    "softmax": ("Softmax", "Softmax"), "getitem": ("StridedSlice", "strided_slice"),
    "transpose": ("Transpose", "transpose"), "floor_divide": ("FloorDiv", "floordiv"),
    "logical_and": ("LogicalAnd", "LogicalAnd"), "logical_or": ("LogicalOr", "LogicalOr"),
    "logical_not": ("LogicalNot", "LogicalNot"), "sign": ("Sign", "Sign"),
}
_BINARY = frozenset(("add", "subtract", "multiply", "divide", "maximum", "minimum", "power_tf",
                     "floor_divide", "greater", "less", "equal", "not_equal", "greater_equal",
                     "less_equal"))
_REDUCE = frozenset(("sum", "mean", "max", "min", "prod"))


class _Resource:
    """The dtype of a Variable's handle (``tf.resource``)."""

    name = "resource"


_RESOURCE = _Resource()


def _dims(shape: tuple[int | None, ...] | None) -> str:
    if shape is None:
        return "<unknown>"
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


class GraphTensor:
    """One output of a graph node (``x:0``), as TensorFlow's symbolic tensor prints."""

    def __init__(self, op: Operation, index: int, shape: tuple[int | None, ...] | None,
                 dtype: Any) -> None:
        self.op = op
        self.value_index = index
        self._shape = shape
        self.dtype = dtype

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    @property
    def shape(self) -> Any:
        from ._tensor import TensorShape

        return TensorShape(self._shape)

    @property
    def graph(self) -> FuncGraph:
        return self.op.graph

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={_dims(self._shape)} dtype={self.dtype.name}>"

    def __str__(self) -> str:
        dims = "" if self._shape is None else f"shape={_dims(self._shape)}, "
        return f'Tensor("{self.name}", {dims}dtype={self.dtype.name})'


class Operation:
    """A node of a :class:`FuncGraph`: ``name``, ``type``, ``inputs``, ``outputs``."""

    def __init__(self, graph: FuncGraph, name: str, type_: str, inputs: list[GraphTensor],
                 dtype: Any = None) -> None:
        self.graph = graph
        self.name = name
        self.type = type_
        self.inputs = inputs
        self.outputs: list[GraphTensor] = []
        self._dtype = dtype

    @property
    def node_def(self) -> NodeDef:
        return NodeDef(self.name, self.type, [t.name[:-2] if t.name.endswith(":0") else t.name
                                              for t in self.inputs], self._dtype)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self.name}' type={self.type}>"

    def __str__(self) -> str:
        return str(self.node_def)


class NodeDef:
    """A node of a :class:`GraphDef`: ``name``, ``op``, ``input``."""

    def __init__(self, name: str, op: str, inputs: list[str], dtype: Any) -> None:
        self.name = name
        self.op = op
        self.input = inputs
        self._dtype = dtype

    def __str__(self) -> str:
        lines = [f'name: "{self.name}"', f'op: "{self.op}"']
        lines += [f'input: "{i}"' for i in self.input]
        if self._dtype is not None:
            key = "dtype" if self.op in ("Placeholder", "Const") else "T"
            lines += ["attr {", f'  key: "{key}"', "  value {",
                      f"    type: DT_{_type_name(self._dtype)}", "  }", "}"]
        return "\n".join(lines) + "\n"


class GraphDef:
    """``FuncGraph.as_graph_def()``: the nodes (``node``) in program order."""

    def __init__(self, nodes: list[NodeDef]) -> None:
        self.node = nodes

    def __str__(self) -> str:
        return "".join("node {\n" + "".join("  " + ln + "\n" for ln in str(n).splitlines())
                       + "}\n" for n in self.node)


def _type_name(dtype: Any) -> str:
    name = dtype.name
    return {"float32": "FLOAT", "float64": "DOUBLE", "float16": "HALF"}.get(name, name.upper())


class FuncGraph:
    """The graph of one concrete function (TensorFlow's ``FuncGraph``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._ops: list[Operation] = []
        self._counts: dict[str, int] = {}
        self.inputs: list[GraphTensor] = []
        self.outputs: list[GraphTensor] = []

    def _unique(self, base: str) -> str:
        k = self._counts.get(base, 0)
        self._counts[base] = k + 1
        return base if k == 0 else f"{base}_{k}"

    def _add(self, base: str, type_: str, inputs: list[GraphTensor], shape: Any, dtype: Any
             ) -> GraphTensor:
        op = Operation(self, self._unique(base), type_, inputs, dtype)
        t = GraphTensor(op, 0, shape, dtype)
        op.outputs.append(t)
        self._ops.append(op)
        return t

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        for op in self._ops:
            if op.name == name:
                return op
        raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")

    def as_graph_def(self) -> GraphDef:
        return GraphDef([op.node_def for op in self._ops])

    def __repr__(self) -> str:
        return f"FuncGraph(name={self.name}, id={id(self)})"


def build(name: str, prog: Any, in_shapes: list[Any]) -> FuncGraph:
    """The :class:`FuncGraph` of ``prog`` (``in_shapes``: the signature's input shapes)."""
    g = FuncGraph(name)
    env: dict[int, GraphTensor] = {}
    syms: dict[int, Any] = prog.__dict__.get("tf_sym_shapes", {})

    def dt(arr: Any) -> Any:
        return _dt.from_numpy(np.asarray(arr).dtype)

    for k, (s, nm) in enumerate(zip(prog.inputs, prog.input_names)):
        shape = in_shapes[k] if k < len(in_shapes) else None
        t = g._add(nm or "args", "Placeholder", [], shape, _dt.from_numpy(prog.in_dtypes[k]))
        env[s] = t
        g.inputs.append(t)
    resources: dict[int, GraphTensor] = {}

    def ref(r: Any, node: str, pos: int, op_name: str) -> GraphTensor:
        if r.__class__ is int and r in env:
            return env[r]
        if r.__class__ is int:  # a captured constant
            v = prog.const_vals.get(r)
            t = g._add("Const", "Const", [], tuple(np.shape(v)), dt(v))
            env[r] = t
            return t
        v = np.asarray(r.value)
        base = f"{node}/{'xy'[pos]}" if op_name in _BINARY and pos < 2 else f"{node}/Const"
        return g._add(base, "Const", [], tuple(v.shape), dt(v))

    for ins in prog.instrs:
        k = ins.kind
        if k == "op":
            type_, base = _OPS.get(ins.op.name, (ins.op.name.title().replace("_", ""),
                                                 ins.op.name))
            node = base if base not in g._counts else f"{base}_{g._counts[base]}"
            ins_t = [ref(a, node, i, ins.op.name) for i, a in enumerate(ins.args)]
            if ins.op.name in _REDUCE:
                ins_t.append(g._add("Const", "Const", [], (len(ins.attrs.get("axis") or ())
                                                           if isinstance(ins.attrs.get("axis"),
                                                                         tuple) else None),
                                    _dt.int32))
            elif ins.op.name == "reshape":
                ins_t.append(g._add(f"{node}/shape", "Const", [], None, _dt.int32))
            sym = syms.get(id(ins))  # the static shape (None for an open dimension)
            env[ins.out] = g._add(base, type_, ins_t, ins.shape if sym is None else sym[1],
                                  dt(np.zeros((), ins.dtype)))
        elif k == "read":
            obj = ins.obj
            res = resources.get(id(obj))
            if res is None:
                res = g._add("readvariableop_resource", "Placeholder", [], (), _RESOURCE)
                resources[id(obj)] = res
                g.inputs.append(res)
            env[ins.out] = g._add("ReadVariableOp", "ReadVariableOp", [res], ins.shape,
                                  dt(np.zeros((), ins.dtype)))
        elif k == "write_var":
            res = resources.get(id(ins.obj))
            if res is None:
                res = g._add("assignvariableop_resource", "Placeholder", [], (), _RESOURCE)
                resources[id(ins.obj)] = res
                g.inputs.append(res)
            a = ins.args[0]
            g._add("AssignVariableOp", "AssignVariableOp",
                   [res] + ([env[a]] if a.__class__ is int and a in env else []), None, None)
        elif k == "effect":
            g._add("PrintV2" if "print" in ins.name else ins.name, "PrintV2" if "print" in
                   ins.name else ins.name, [env[a] for a in ins.args if a.__class__ is int
                                            and a in env], None, None)
        elif k == "while":
            g._add("while", "StatelessWhile", [env[a] for a in ins.args if a.__class__ is int
                                               and a in env], None, None)
    for r in prog.outputs:
        if r.__class__ is int:
            src = env.get(r) or ref(r, "Identity", 2, "")
            shape, dtype = src._shape, src.dtype
        else:
            src = ref(r, "Identity", 2, "")
            shape, dtype = src._shape, src.dtype
        g.outputs.append(g._add("Identity", "Identity", [src], shape, dtype))
    return g
