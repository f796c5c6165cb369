"""Build (and execute) the side-by-side notebooks.

Every notebook in this folder is generated from the cells defined here, so
that the notebooks share one setup cell and one way of comparing with
the real frameworks.  Run from anywhere::

    python notebooks/build.py              # write every notebook and execute it
    python notebooks/build.py 03 05        # only the notebooks whose names start so
    python notebooks/build.py --no-execute # write the cells only (no outputs)

Executing needs ``nbclient``, ``nbformat`` and ``ipykernel`` (the ``dev``
extra) and ``matplotlib``; Graphviz's ``dot`` program is used for the graph
drawings when it is installed, and the real TensorFlow / PyTorch for the
comparison cells when they are installed (the ``compare`` extra).  The
notebooks are committed with their outputs, so they read well on a code host.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

Cell = Any


def md(text: str) -> Cell:
    return new_markdown_cell(textwrap.dedent(text).strip("\n"))


def code(text: str) -> Cell:
    return new_code_cell(textwrap.dedent(text).strip("\n"))


# --------------------------------------------------------------------------- shared cells
SETUP = code(r'''
    # Setup shared by the notebooks: inline plots, graph drawing, and the helper that
    # runs the same code with tapegrad and with the real framework.
    %matplotlib inline
    import importlib
    import os
    import pathlib
    import shutil
    import sys

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # keep TensorFlow's C++ logging quiet
    try:
        import tapegrad
    except ImportError:  # a checkout without `pip install -e .`: use the repository's copy
        sys.path.insert(0, str(pathlib.Path.cwd().resolve().parent))
        import tapegrad

    import matplotlib.pyplot as plt
    import numpy as np
    from IPython.display import Image, display

    from tapegrad.debug import draw, format_graph

    np.set_printoptions(precision=6, suppress=True)
    plt.rcParams.update({"figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3})
    HAVE_DOT = shutil.which("dot") is not None


    def show_graph(graph):
        """Show a `tapegrad.debug.Graph`: a PNG through Graphviz, or its DOT text without it."""
        if HAVE_DOT:
            display(Image(graph.render("png")))
        else:
            print("(Graphviz's `dot` is not installed, so here is the DOT text to paste into any "
                  "Graphviz viewer; `apt-get install graphviz` draws it here.)")
            print(graph.source)


    def real_framework(name):
        """The real `tensorflow` or `torch` module, or None (and a note) when it is not installed."""
        try:
            # TensorFlow's C++ start-up lines go to the process's stderr: keep them out
            saved = os.dup(2)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            try:
                return importlib.import_module(name)
            finally:
                os.dup2(saved, 2)
                os.close(devnull)
                os.close(saved)
        except ImportError:
            print(f"The real {name} is not installed here, so its column is left empty "
                  "(install tapegrad's `compare` extra to fill it).")
            return None


    def _fmt(v):
        if v is None or isinstance(v, str):
            return str(v)
        try:
            a = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            return str(v)
        def num(x):
            t = f"{x:.7g}"
            return t + ".0" if isinstance(x, float) and t.lstrip("-").isdigit() else t
        if a.ndim == 0:
            return num(a.item())
        return np.array2string(a, separator=", ", formatter={"float_kind": lambda x: num(float(x))})


    def _same(a, b, rtol, atol):
        try:
            a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        except (TypeError, ValueError):
            return _fmt(a) == _fmt(b)
        return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


    def _table(left, right, names, rtol=1e-5, atol=1e-6):
        same = {k: None if right is None else
                ("yes" if (left[k] is None) == (right[k] is None)
                 and (left[k] is None or _same(left[k], right[k], rtol, atol)) else "NO")
                for k in left}
        rows, notes = [], []
        for k in left:
            a, b = _fmt(left[k]), "-" if right is None else _fmt(right[k])
            if len(a) > 40 or len(b) > 40:   # long texts (error messages) go below the table
                notes.append(f"{k} ({'same' if same[k] == 'yes' else 'different' if same[k] else ''}):"
                             f"\n  {names[0]}: {a}\n  {names[1]}: {b}")
            else:
                rows.append((k, a, b, same[k] or ""))
        w0 = max([len(r[0]) for r in rows] + [1])
        w1 = max([len(names[0])] + [len(r[1]) for r in rows])
        w2 = max([len(names[1])] + [len(r[2]) for r in rows])
        if rows:
            print(f"{'':{w0}}  {names[0]:{w1}}  {names[1]:{w2}}  same")
        for k, a, b, m in rows:
            print(f"{k:{w0}}  {a:{w1}}  {b:{w2}}  {m}")
        for note in notes:
            print(note)
        return right is None or all(m == "yes" for m in same.values())


    def side_by_side(left, right, names=("tapegrad", "real"), rtol=1e-5, atol=1e-6):
        """Print two dicts of results (label -> number/array/text) as columns, marking matches."""
        _table(left, right, names, rtol, atol)


    def compare(style_fn, real_name, **tol):
        """Run `style_fn(module)` with tapegrad's front-end and with the real framework."""
        ours = style_fn(importlib.import_module(
            {"tensorflow": "tapegrad.tf", "torch": "tapegrad.torch"}[real_name]))
        real = real_framework(real_name)
        theirs = style_fn(real) if real is not None else None
        label = {"tensorflow": "real TensorFlow", "torch": "real PyTorch"}[real_name]
        ok = _table(ours, theirs, ("tapegrad", label), **tol)
        print("->", "not installed: tapegrad's numbers above stand alone" if real is None
              else ("the same numbers" if ok else "DIFFERENT numbers"))
        return ours, theirs
''')

REAL_MD = md('''
    ## The real frameworks

    The functions below hold the same code as the cells above, written once and run twice:
    with tapegrad's front-end and with the real framework, when it is installed.  The two
    columns must agree.
''')


# --------------------------------------------------------------------------- 01 recording
NB01 = [
    md(r'''
    # 1. Recording: an explicit tape scope vs `requires_grad`

    Both TensorFlow and PyTorch do reverse-mode automatic differentiation: while the forward
    computation runs they remember each operation, and to get gradients they walk those
    operations backwards applying the chain rule.  They differ in *what decides that an
    operation is remembered*:

    * **TensorFlow**: operations are recorded only **inside** a `with tf.GradientTape()` block,
      and only those on tensors the tape *watches* (trainable `tf.Variable`s are watched
      automatically, constants after `tape.watch(x)`).
    * **PyTorch**: there is no scope: every operation on a tensor with `requires_grad=True` is
      recorded, wherever it runs (unless grad mode is off, see notebook 6).

    tapegrad implements both styles over one engine, so the code below is the real
    frameworks' code with only the import line changed.  The example is the seed's:
    $y = w^2 + b$ at $w = 2$, $b = 1$, so $\partial y/\partial w = 2w = 4$ and
    $\partial y/\partial b = 1$.
    '''),
    SETUP,
    md('''
    ## TensorFlow style: record inside `with tf.GradientTape()`
    '''),
    code('''
    import tapegrad.tf as tf

    # Define trainable variables
    w_tf = tf.Variable(2.0, name="weight")
    b_tf = tf.Variable(1.0, name="bias")

    with tf.GradientTape() as tape:
        # Operations involving w_tf and b_tf are recorded.
        y_tf = w_tf * w_tf + b_tf  # y = w^2 + b

    gradients_tf = tape.gradient(y_tf, {"w": w_tf, "b": b_tf})

    print(f"TensorFlow y: {y_tf.numpy()}")
    print(f"TensorFlow d(y)/d(w): {gradients_tf['w'].numpy()}")
    print(f"TensorFlow d(y)/d(b): {gradients_tf['b'].numpy()}")
    '''),
    md('''
    What the tape recorded, listed and drawn.  Leaves watched by the tape are yellow, ops are
    blue boxes, and the path the gradient took back to each source is red.
    '''),
    code('''
    print(format_graph(y_tf, names={"w": w_tf, "b": b_tf}))
    show_graph(draw(y_tf, grads=gradients_tf, sources={"w": w_tf, "b": b_tf}))
    '''),
    md('''
    The scope is what matters.  An operation done *before* the tape opened is not on it, and
    neither is an operation on a constant the tape does not watch: their gradients are `None`.
    (`persistent=True` only lets us ask the tape three questions; see notebook 4.)
    '''),
    code('''
    u = w_tf * 3.0            # computed before any tape: not recorded
    x = tf.constant(3.0)      # a constant: not watched automatically

    with tf.GradientTape(persistent=True) as tape2:
        v = u + b_tf + x * x

    print("d(v)/d(w):", tape2.gradient(v, w_tf))            # None: u was made before the tape
    print("d(v)/d(b):", tape2.gradient(v, b_tf).numpy())    # 1.0: b was read inside the block
    print("d(v)/d(x):", tape2.gradient(v, x))               # None: x was never watched
    scope_graph = draw(v, tape=tape2, sources={"w": w_tf, "b": b_tf, "x": x},
                       grads=tape2.gradient(v, {"w": w_tf, "b": b_tf, "x": x}))
    del tape2

    with tf.GradientTape() as tape3:
        tape3.watch(x)        # now it is watched
        v3 = x * x
    print("after tape.watch(x), d(x*x)/d(x):", tape3.gradient(v3, x).numpy())
    '''),
    code('''
    # The same graph with the tape's view: the input made outside it and the unwatched constant
    # are cut off from the gradient (dashed, with a note saying why).
    show_graph(scope_graph)
    '''),
    md('''
    ## PyTorch style: `requires_grad=True`, no scope
    '''),
    code('''
    import tapegrad.torch as torch

    # Define tensors that require gradient tracking
    w_pt = torch.tensor(2.0, requires_grad=True)
    b_pt = torch.tensor(1.0, requires_grad=True)

    # Every operation on w_pt and b_pt is recorded: there is no block to open.
    y_pt = w_pt * w_pt + b_pt  # y = w^2 + b
    print("y_pt.grad_fn:          ", y_pt.grad_fn)
    print("y_pt.grad_fn's inputs: ", y_pt.grad_fn.next_functions)

    y_pt.backward()

    print(f"PyTorch y: {y_pt.item()}")
    print(f"PyTorch d(y)/d(w): {w_pt.grad.item()}")
    print(f"PyTorch d(y)/d(b): {b_pt.grad.item()}")
    '''),
    md('''
    The graph PyTorch built: the same two ops, reached from `y_pt.grad_fn`.  Leaves that require
    grad are green; `AccumulateGrad` is the node that adds into their `.grad`.
    '''),
    code('''
    print(format_graph(y_pt, names={"w": w_pt, "b": b_pt}))
    show_graph(draw(y_pt, sources={"w": w_pt, "b": b_pt}))
    '''),
    md('''
    The flag is what matters: a tensor without `requires_grad` leaves nothing behind, and
    switching it on starts the recording at the next operation.
    '''),
    code('''
    c = torch.tensor(3.0)                     # requires_grad is False by default
    print("c * c:", (c * c).grad_fn, (c * c).requires_grad)
    c.requires_grad_()
    print("c * c after requires_grad_():", (c * c).grad_fn)
    '''),
    md('''
    ## The numbers
    '''),
    code('''
    side_by_side(
        {"y": y_tf.numpy(), "dy/dw": gradients_tf["w"].numpy(), "dy/db": gradients_tf["b"].numpy()},
        {"y": y_pt.item(), "dy/dw": w_pt.grad.item(), "dy/db": b_pt.grad.item()},
        names=("TF style", "PyTorch style"),
    )
    '''),
    REAL_MD,
    code('''
    def tf_style(tf):
        w = tf.Variable(2.0, name="weight")
        b = tf.Variable(1.0, name="bias")
        with tf.GradientTape(persistent=True) as tape:
            y = w * w + b
            u = w * 3.0 + tf.constant(0.5)
        g = tape.gradient(y, {"w": w, "b": b})
        return {"y": y.numpy(), "dy/dw": g["w"].numpy(), "dy/db": g["b"].numpy(),
                "du/db (b unused)": tape.gradient(u, b)}

    def torch_style(torch):
        w = torch.tensor(2.0, requires_grad=True)
        b = torch.tensor(1.0, requires_grad=True)
        y = w * w + b
        c = torch.tensor(3.0)
        y.backward()
        return {"y": y.item(), "dy/dw": w.grad.item(), "dy/db": b.grad.item(),
                "grad_fn of y": type(y.grad_fn).__name__, "grad_fn of c*c": (c * c).grad_fn}

    compare(tf_style, "tensorflow")
    print()
    compare(torch_style, "torch");
    '''),
    md('''
    ## The difference

    Both styles record the same two operations and get the same gradients; what differs is the
    switch.  In TensorFlow the switch is a *place and a time*: the `with tf.GradientTape()`
    block records only while it is open and only operations on tensors it watches, so anything
    computed before the block, or on a constant it was not told to `watch`, is invisible to it
    and its gradient comes back `None`.  In PyTorch the switch is a *property of the data*:
    `requires_grad=True` on a tensor makes every later operation on it (and on everything
    computed from it) record a `grad_fn`, wherever that code runs, and the graph hangs off the
    result tensor itself (`y.grad_fn.next_functions`) instead of a separate tape object.  In
    tapegrad both end up as the same graph of nodes, which is why the drawings are the same
    apart from the leaf colours.
    '''),
]


# --------------------------------------------------------------------------- 02 starting
NB02 = [
    md(r'''
    # 2. Starting the computation: `tape.gradient` returns, `.backward()` accumulates

    Once the forward pass is recorded, the backward pass has to be started.

    * **TensorFlow**: `tape.gradient(target, sources)` is a function.  It *returns* the
      gradients, in the same structure as `sources` (one tensor, a list, a dict, any nest),
      and stores nothing anywhere.
    * **PyTorch**: `loss.backward()` returns `None`.  It *adds* each gradient into the `.grad`
      attribute of every leaf tensor that requires grad.  (`torch.autograd.grad` is the
      function-style counterpart that returns the gradients instead.)

    The example: $L = \sum_i (w_i x_i + b)^2$ with $x = (1, 2, 3)$, $w = (0.5, -1, 2)$,
    $b = 0.1$, so $\partial L/\partial w_i = 2(w_i x_i + b)\,x_i = (1.2, -7.6, 36.6)$ and
    $\partial L/\partial b = 2\sum_i (w_i x_i + b) = 9.6$.
    '''),
    SETUP,
    md('''
    ## TensorFlow style: `tape.gradient` returns the gradients
    '''),
    code('''
    import tapegrad.tf as tf

    x = tf.constant([1.0, 2.0, 3.0])
    w = tf.Variable([0.5, -1.0, 2.0], name="w")
    b = tf.Variable(0.1, name="b")

    # persistent=True only so that we can ask this tape several questions (see notebook 4)
    with tf.GradientTape(persistent=True) as tape:
        r = w * x + b
        loss = tf.reduce_sum(tf.square(r))

    grads = tape.gradient(loss, [w, b])       # a list in, a list out
    print("loss:", loss.numpy())
    print("tape.gradient(loss, [w, b]) ->", type(grads).__name__, "of", len(grads))
    print("  dL/dw:", grads[0].numpy())
    print("  dL/db:", grads[1].numpy())

    nested = tape.gradient(loss, {"layer": {"kernel": w, "bias": b}})   # any nest of sources
    print("a nest in, the same nest out:",
          {k: {n: np.round(g.numpy().astype(float), 4).tolist() for n, g in v.items()} for k, v in nested.items()})

    # A non-scalar target is summed first: d(sum r)/dw = x
    print("tape.gradient(r, w):", tape.gradient(r, w).numpy())
    # output_gradients weights each element of the target (a vector-Jacobian product)
    print("with output_gradients=[1, 0, -1]:",
          tape.gradient(r, w, output_gradients=tf.constant([1.0, 0.0, -1.0])).numpy())
    tf_numbers = {"loss": loss.numpy(), "dL/dw": grads[0].numpy(), "dL/db": grads[1].numpy()}
    del tape
    '''),
    md('''
    ## PyTorch style: `.backward()` fills `.grad`
    '''),
    code('''
    import warnings

    import tapegrad.torch as torch

    x = torch.tensor([1.0, 2.0, 3.0])
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = torch.tensor(0.1, requires_grad=True)

    r = w * x + b
    loss = (r ** 2).sum()
    result = loss.backward()

    print("loss:", loss.item())
    print("loss.backward() returned", result)
    print("w.grad:", w.grad)
    print("b.grad:", b.grad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        print("r.grad:", r.grad, "(r is not a leaf)")
    for wmsg in caught:
        print("  warning:", str(wmsg.message).split(". ")[0] + ".")
    '''),
    md('''
    A non-scalar output needs the vector to multiply by (the `gradient=` argument, TensorFlow's
    `output_gradients`); TensorFlow sums instead.  And `torch.autograd.grad` returns gradients
    like `tape.gradient`, without touching `.grad`.
    '''),
    code('''
    w.grad = None
    b.grad = None
    r = w * x + b
    try:
        r.backward()
    except RuntimeError as e:
        print("r.backward() -> RuntimeError:", str(e).splitlines()[0])

    r.backward(gradient=torch.tensor([1.0, 0.0, -1.0]))
    print("r.backward(gradient=[1, 0, -1]) -> w.grad:", w.grad)

    w.grad = None
    loss = ((w * x + b) ** 2).sum()
    gw, gb = torch.autograd.grad(loss, [w, b])
    print("torch.autograd.grad(loss, [w, b]) ->", gw, gb)
    print("and w.grad is still", w.grad)
    pt_numbers = {"loss": loss.item(), "dL/dw": gw.numpy(), "dL/db": gb.numpy()}
    '''),
    md('''
    ## The numbers
    '''),
    code('''
    side_by_side(tf_numbers, pt_numbers, names=("TF style", "PyTorch style"))
    '''),
    REAL_MD,
    code('''
    def tf_style(tf):
        x = tf.constant([1.0, 2.0, 3.0])
        w = tf.Variable([0.5, -1.0, 2.0], name="w")
        b = tf.Variable(0.1, name="b")
        with tf.GradientTape(persistent=True) as tape:
            r = w * x + b
            loss = tf.reduce_sum(tf.square(r))
        gw, gb = tape.gradient(loss, [w, b])
        return {"loss": loss.numpy(), "dL/dw": gw.numpy(), "dL/db": gb.numpy(),
                "d(sum r)/dw": tape.gradient(r, w).numpy(),
                "output_gradients": tape.gradient(r, w, output_gradients=tf.constant([1.0, 0.0, -1.0])).numpy()}

    def torch_style(torch):
        x = torch.tensor([1.0, 2.0, 3.0])
        w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        b = torch.tensor(0.1, requires_grad=True)
        loss = ((w * x + b) ** 2).sum()
        returned = loss.backward()
        out = {"loss": loss.item(), "backward() returns": returned,
               "w.grad": w.grad.numpy(), "b.grad": b.grad.numpy()}
        w.grad = None
        (w * x + b).backward(gradient=torch.tensor([1.0, 0.0, -1.0]))
        out["gradient=[1, 0, -1]"] = w.grad.numpy()
        try:
            (w * x + b).backward()
        except RuntimeError as e:
            out["non-scalar error"] = str(e).splitlines()[0]
        return out

    compare(tf_style, "tensorflow")
    print()
    compare(torch_style, "torch");
    '''),
    md('''
    ## The difference

    The same reverse pass runs in both; what differs is where its result goes.
    `tape.gradient(target, sources)` is a pure function: it hands back fresh gradients shaped
    like `sources` and leaves every variable untouched, so you pass them on yourself (to
    `optimizer.apply_gradients`).  `loss.backward()` is a command: it returns nothing and
    *adds* the gradients into `.grad` of the leaves that require grad (only leaves: an
    intermediate like `r` keeps `.grad = None` unless you call `r.retain_grad()`), where the
    optimizer later finds them.  Non-scalar targets show the same split: TensorFlow quietly
    sums the target, PyTorch refuses unless you say which vector to multiply by.  When you want
    TensorFlow's behaviour in PyTorch, `torch.autograd.grad` returns the gradients and leaves
    `.grad` alone; the consequence of "adds into `.grad`" is the subject of notebook 3.
    '''),
]


# --------------------------------------------------------------------------- 03 accumulation
NB03 = [
    md(r'''
    # 3. Accumulation: what happens without `zero_grad`

    `loss.backward()` *adds* into `.grad`; it never overwrites it.  So in a PyTorch training
    loop the gradients must be cleared before each backward pass (`optimizer.zero_grad()` or
    `w.grad.zero_()`), or every step uses the sum of all the gradients so far.  A TensorFlow
    tape has nothing to clear: each `tape.gradient` call computes fresh gradients.

    First the seed's example, then the same thing over many steps, with plots of `.grad`.
    '''),
    SETUP,
    md('''
    ## PyTorch style: the seed's example
    '''),
    code('''
    import tapegrad.torch as torch

    # Example of gradient accumulation and zeroing
    w = torch.tensor(2.0, requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=0.1) # An optimizer needs parameters

    # First pass
    y1 = w * w
    y1.backward()
    print(f"After first backward(): w.grad = {w.grad}") # w.grad = 4.0

    # If we don't zero gradients:
    # optimizer.zero_grad() # <--- FORGOT THIS STEP!
    y2 = w * 3
    y2.backward() # This will add to the existing gradient
    # New gradient for y2 is 3.0. Accumulated: 4.0 + 3.0 = 7.0
    print(f"After second backward() (no zero_grad): w.grad = {w.grad}")

    # Correct way: zero gradients before next computation
    optimizer.zero_grad() # or w.grad.zero_()
    y3 = w * 4
    y3.backward()
    print(f"After third backward() (with zero_grad): w.grad = {w.grad}") # w.grad = 4.0
    '''),
    md('''
    ## TensorFlow style: every `tape.gradient` is fresh
    '''),
    code('''
    import tapegrad.tf as tf

    w_tf = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y1 = w_tf * w_tf
    print("first gradient: ", tape.gradient(y1, w_tf).numpy())    # 4.0

    with tf.GradientTape() as tape:
        y2 = w_tf * 3.0
    print("second gradient:", tape.gradient(y2, w_tf).numpy())    # 3.0: nothing carried over
    '''),
    md(r'''
    ## Over several steps

    A one-parameter model $\hat y = w x$ fitted to $y = 2x + \text{noise}$ by mean squared
    error, starting from $w = 4$.  Left: ten backward passes on the same batch **without
    updating $w$**, so each pass computes the same gradient $g$; `.grad` after $k$ passes is
    $k\,g$ without `zero_grad`, and stays $g$ with it (and with the tape).  Right: the same
    loop **with an SGD update** each step: with `zero_grad` (or a tape) $w$ walks to the
    least-squares value; without it, each update uses the sum of every gradient so far, which
    acts like momentum that never decays, and $w$ swings around the optimum instead of
    settling.
    '''),
    code('''
    rng = np.random.default_rng(0)
    x_np = np.linspace(-1.0, 1.0, 32).astype(np.float32)
    y_np = (2.0 * x_np + 0.1 * rng.standard_normal(32)).astype(np.float32)
    steps, lr, w0 = 15, 0.5, 4.0

    def torch_loop(zero_grad, update):
        w = torch.tensor(w0, requires_grad=True)
        opt = torch.optim.SGD([w], lr=lr)
        x, y = torch.tensor(x_np), torch.tensor(y_np)
        grads, ws = [], []
        for _ in range(steps):
            if zero_grad:
                opt.zero_grad()
            loss = ((w * x - y) ** 2).mean()
            loss.backward()
            grads.append(w.grad.item())
            if update:
                opt.step()
            ws.append(w.item())
        return np.array(grads), np.array(ws)

    def tf_loop(update):
        w = tf.Variable(w0)
        x, y = tf.constant(x_np), tf.constant(y_np)
        grads, ws = [], []
        for _ in range(steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(w * x - y))
            g = tape.gradient(loss, w)
            grads.append(float(g.numpy()))
            if update:
                w.assign_sub(lr * g)
            ws.append(float(w.numpy()))
        return np.array(grads), np.array(ws)

    runs = {
        (label, update): fn(update)
        for update in (False, True)
        for label, fn in [
            ("PyTorch, no zero_grad", lambda u: torch_loop(False, u)),
            ("PyTorch, zero_grad each step", lambda u: torch_loop(True, u)),
            ("TF, tape.gradient each step", tf_loop),
        ]
    }
    for (label, update), (g, ws) in runs.items():
        print(f"{'update' if update else 'no update':9}  {label:29} .grad: {np.round(g[:5], 4)} ...")
    '''),
    code('''
    w_star = float(np.dot(x_np, y_np) / np.dot(x_np, x_np))   # the least-squares w
    k = np.arange(1, steps + 1)
    styles = {"PyTorch, no zero_grad": dict(color="#d62728", marker="o"),
              "PyTorch, zero_grad each step": dict(color="#1f77b4", marker="s"),
              "TF, tape.gradient each step": dict(color="#2ca02c", marker="x", markersize=9,
                                                  markeredgewidth=2, linestyle="--")}

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(14, 4.2))
    for label, st in styles.items():
        ax1.plot(k, runs[(label, False)][0], label=label, **st)
        ax2.plot(k, runs[(label, True)][0], label=label, **st)
        ax3.plot(k, runs[(label, True)][1], label=label, **st)
    g1 = runs[("TF, tape.gradient each step", False)][0][0]
    ax1.plot(k, k * g1, color="black", linewidth=0.8, linestyle=":", label="k * g (g: one pass's gradient)")
    ax1.set(title="No update: .grad after k backward passes", xlabel="backward passes k",
            ylabel="w.grad (TF: the returned gradient)")
    ax2.set(title="With SGD updates: the gradient used", xlabel="step", ylabel="gradient used by the step")
    ax3.axhline(w_star, color="black", linewidth=0.8, linestyle=":", label=f"least squares w = {w_star:.3f}")
    ax3.set(title="With SGD updates: the weight", xlabel="step", ylabel="w after the step")
    handles, labels = ax1.get_legend_handles_labels()
    h3, l3 = ax3.get_legend_handles_labels()
    fig.legend(handles + h3[-1:], labels + l3[-1:], loc="lower center", ncol=5, frameon=False, fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    plt.show()
    '''),
    md(r'''
    ## Accumulation on purpose: several mini-batches, one update

    Accumulating is also a feature: to train with a batch that does not fit in memory, run
    backward on each piece (scaled by 1/pieces) and step once.  In PyTorch `.grad` does the
    summing; with a tape you sum the returned gradients yourself.  Both equal the full-batch
    gradient.
    '''),
    code('''
    pieces = 4
    chunks = np.split(np.arange(32), pieces)

    # PyTorch style: .grad sums the pieces
    w = torch.tensor(0.5, requires_grad=True)
    for idx in chunks:
        x, y = torch.tensor(x_np[idx]), torch.tensor(y_np[idx])
        (((w * x - y) ** 2).mean() / pieces).backward()
    accumulated_pt = w.grad.item()

    # TF style: sum what tape.gradient returns
    w_tf = tf.Variable(0.5)
    accumulated_tf = tf.zeros_like(w_tf)
    for idx in chunks:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(w_tf * tf.constant(x_np[idx]) - tf.constant(y_np[idx]))) / pieces
        accumulated_tf = accumulated_tf + tape.gradient(loss, w_tf)

    with tf.GradientTape() as tape:
        full = tf.reduce_mean(tf.square(w_tf * tf.constant(x_np) - tf.constant(y_np)))
    full_batch = tape.gradient(full, w_tf).numpy()

    side_by_side({"accumulated over 4 pieces": accumulated_tf.numpy(), "full batch": full_batch},
                 {"accumulated over 4 pieces": accumulated_pt, "full batch": full_batch},
                 names=("TF style (summed by hand)", "PyTorch style (.grad)"))
    '''),
    REAL_MD,
    code('''
    def torch_style(torch):
        w = torch.tensor(2.0, requires_grad=True)
        optimizer = torch.optim.SGD([w], lr=0.1)
        (w * w).backward()
        first = w.grad.item()
        (w * 3).backward()
        second = w.grad.item()
        optimizer.zero_grad()
        (w * 4).backward()
        third = w.grad.item()
        w2 = torch.tensor(w0, requires_grad=True)
        x, y = torch.tensor(x_np), torch.tensor(y_np)
        grads = []
        for _ in range(5):
            ((w2 * x - y) ** 2).mean().backward()
            grads.append(w2.grad.item())
        return {"after 1st backward": first, "after 2nd (no zero_grad)": second,
                "after zero_grad + 3rd": third, ".grad over 5 passes": grads}

    def tf_style(tf):
        w = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            y1 = w * w
        first = tape.gradient(y1, w).numpy()
        with tf.GradientTape() as tape:
            y2 = w * 3.0
        second = tape.gradient(y2, w).numpy()
        return {"first gradient": first, "second gradient": second}

    compare(torch_style, "torch")
    print()
    compare(tf_style, "tensorflow");
    '''),
    md('''
    ## The difference

    A tape's `gradient` is a fresh answer every time: nothing is stored between calls, so there
    is nothing to reset and nothing to forget.  PyTorch's `.backward()` *adds* into `.grad`
    because the gradient lives on the parameter, and addition is the only operation that is
    right for a parameter used several times (or for several losses, or several mini-batches).
    The price is that the training loop has to clear `.grad` itself: forget
    `optimizer.zero_grad()` and the left plot happens (`.grad` grows by one gradient per pass,
    $k\\,g$ after $k$ passes), and in a real loop every update uses the running sum of all past
    gradients (the middle and right plots), which overshoots the optimum and oscillates instead
    of converging.  The same accumulation is what makes gradient accumulation over mini-batches a
    one-liner in PyTorch, where the TF style sums the returned gradients by hand.
    '''),
]


# --------------------------------------------------------------------------- 04 persistence
NB04 = [
    md(r'''
    # 4. Persistence: persistent tapes vs `retain_graph`

    To compute gradients the backward pass needs values saved during the forward pass (for
    $y = x^2$ it needs $x$).  By default both frameworks free those saved values as soon as the
    gradient has been computed once, so a second request fails:

    * **TensorFlow**: a tape is consumed by one `tape.gradient` call; create it with
      `tf.GradientTape(persistent=True)` to ask it several times, and `del tape` to release it.
    * **PyTorch**: `loss.backward()` frees the graph's saved values; pass
      `retain_graph=True` to keep them for another backward.

    Below: the errors each gives when misused, the fix, and the memory each keeps (measured
    with `tracemalloc`, which sees NumPy's arrays).  The example is $y = x^2$, $z = y^2 = x^4$
    at $x = 3$: $dz/dx = 4x^3 = 108$, $dy/dx = 2x = 6$.
    '''),
    SETUP,
    md('''
    ## TensorFlow style
    '''),
    code('''
    import tapegrad.tf as tf

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    print("dz/dx:", tape.gradient(z, x).numpy())
    try:
        tape.gradient(y, x)          # a second question to a non-persistent tape
    except RuntimeError as e:
        tf_error = f"{type(e).__name__}: {e}"
        print(tf_error)
    '''),
    code('''
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    print("dz/dx:", tape.gradient(z, x).numpy())   # 108.0
    print("dy/dx:", tape.gradient(y, x).numpy())   # 6.0
    print("dz/dx again:", tape.gradient(z, x).numpy())
    del tape                                       # drop the reference to the tape
    '''),
    md('''
    ## PyTorch style
    '''),
    code('''
    import tapegrad.torch as torch

    x = torch.tensor(3.0, requires_grad=True)
    y = x * x
    z = y * y
    z.backward()
    print("x.grad after z.backward():", x.grad.item())
    try:
        z.backward()                 # the saved values of z's graph were freed
    except RuntimeError as e:
        torch_error = f"{type(e).__name__}: {e}"
        print(torch_error)
    '''),
    code('''
    x = torch.tensor(3.0, requires_grad=True)
    y = x * x
    z = y * y
    z.backward(retain_graph=True)
    print("after z.backward(retain_graph=True):      ", x.grad.item())   # 108
    z.backward(retain_graph=True)                                     # allowed: the graph was kept
    print("after a second z.backward(...):           ", x.grad.item(), " (108 + 108: .grad accumulates)")
    x.grad = None
    y.backward()                                     # y's part of the graph was kept too; now freed
    print("after x.grad = None and y.backward(), dy/dx:", x.grad.item())
    '''),
    md(r'''
    ## The memory each holds

    The same computation on a vector of one million `float32`s (4 MB per array):
    $s = \sum \sin(x)\,e^{x}\,x$, whose backward pass needs several saved arrays.  Each variant
    runs the forward pass and one gradient and then keeps what a user would still hold (the
    tape, the output, the gradient); the number is what `tracemalloc` still counts as allocated
    at that point, minus what existed before (`x` itself is made before the measurement).
    '''),
    code('''
    import gc
    import tracemalloc

    N = 1_000_000
    data = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    x_tf = tf.constant(data)
    x_pt = torch.tensor(data, requires_grad=True)

    def measure(run):
        """(MB still allocated after run(), peak MB during it), beyond what existed before."""
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        held = run()          # what the user still holds afterwards
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del held
        return (current - before) / 2**20, (peak - before) / 2**20

    def tf_run(persistent, delete_tape=False):
        def run():
            with tf.GradientTape(persistent=persistent) as tape:
                tape.watch(x_tf)
                s = tf.reduce_sum(tf.sin(x_tf) * tf.exp(x_tf) * x_tf)
            g = tape.gradient(s, x_tf)
            if delete_tape:
                del tape
                return s, g
            return tape, s, g
        return run

    def torch_run(retain_graph, delete_output=False):
        def run():
            x_pt.grad = None
            s = (torch.sin(x_pt) * torch.exp(x_pt) * x_pt).sum()
            s.backward(retain_graph=retain_graph)
            if delete_output:
                del s
                return (x_pt.grad,)
            return s, x_pt.grad
        return run

    variants = {
        "TF: tape (default)": tf_run(False),
        "TF: persistent tape": tf_run(True),
        "TF: persistent, then del tape": tf_run(True, delete_tape=True),
        "PyTorch: retain_graph=False": torch_run(False),
        "PyTorch: retain_graph=True": torch_run(True),
        "PyTorch: retain_graph=True, then del s": torch_run(True, delete_output=True),
    }
    memory = {name: measure(run) for name, run in variants.items()}
    print(f"{'':40} {'held after (MB)':>16} {'peak (MB)':>10}")
    for name, (held, peak) in memory.items():
        print(f"{name:40} {held:16.1f} {peak:10.1f}")
    '''),
    code('''
    names = list(memory)
    held = [memory[n][0] for n in names]
    peak = [memory[n][1] for n in names]
    colors = ["#ff7f0e" if n.startswith("TF") else "#1f77b4" for n in names]
    pos = np.arange(len(names))

    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig, ax = plt.subplots(figsize=(10, 4.6))
    ax.bar(pos - 0.2, held, width=0.4, color=colors, edgecolor="black")
    ax.bar(pos + 0.2, peak, width=0.4, color=colors, edgecolor="black", hatch="//", alpha=0.45)
    for p, h in zip(pos, held):
        ax.text(p - 0.2, h + 0.4, f"{h:.1f}", ha="center", fontsize=8)
    ax.axhline(2**22 / 2**20, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xticks(pos, [n.replace(": ", ":\\n") for n in names], fontsize=8)
    ax.set_ylabel("MB (tracemalloc)")
    ax.set_title("Memory kept after one gradient of sum(sin(x) * exp(x) * x), x: 1M float32")
    ax.legend(handles=[Patch(facecolor="#ff7f0e", edgecolor="black", label="TF style"),
                       Patch(facecolor="#1f77b4", edgecolor="black", label="PyTorch style"),
                       Patch(facecolor="white", edgecolor="black", label="held after the gradient"),
                       Patch(facecolor="white", edgecolor="black", hatch="//",
                             label="peak during forward + gradient"),
                       Line2D([], [], color="grey", linewidth=0.8, linestyle=":",
                              label="one array of 1M float32 (3.8 MB)")], fontsize=8)
    fig.tight_layout()
    plt.show()
    '''),
    code('''
    one_array = data.nbytes / 2**20
    for name, (held_mb, _) in memory.items():
        extra = held_mb - memory["TF: tape (default)"][0]
        print(f"{name:40} keeps {extra:5.1f} MB beyond the gradient = {extra / one_array:.0f} saved arrays")
    '''),
    REAL_MD,
    code('''
    def tf_style(tf):
        x = tf.constant(3.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            z = y * y
        first = tape.gradient(z, x).numpy()
        try:
            tape.gradient(y, x)
            error = "no error"
        except RuntimeError as e:
            error = f"{type(e).__name__}: {str(e).splitlines()[0]}"
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            z = y * y
        return {"dz/dx": first, "second call": error,
                "persistent dz/dx, dy/dx": [tape.gradient(z, x).numpy(), tape.gradient(y, x).numpy()]}

    def torch_style(torch):
        x = torch.tensor(3.0, requires_grad=True)
        z = (x * x) * (x * x)
        z.backward()
        try:
            z.backward()
            error = "no error"
        except RuntimeError as e:
            error = f"{type(e).__name__}: {str(e).split('.')[0]}"
        first = x.grad.item()
        x.grad = None
        z = (x * x) * (x * x)
        z.backward(retain_graph=True)
        z.backward()
        return {"x.grad": first, "second backward": error, "retained, twice": x.grad.item()}

    compare(tf_style, "tensorflow")
    print()
    compare(torch_style, "torch");
    '''),
    md('''
    ## The difference

    Both frameworks make the same trade: the values a backward pass needs are kept only until
    the first backward pass has used them, so that a training step does not hold its whole
    forward pass in memory a moment longer than needed.  They differ in *who* you ask to keep
    them.  In TensorFlow it is the tape, decided up front: `persistent=True` keeps every
    recorded op's saved values for as many `gradient` calls as you like, until you `del` the
    tape (a second call on a default tape raises `RuntimeError: A non-persistent GradientTape
    can only be used to compute one set of gradients`).  In PyTorch it is each backward call:
    `retain_graph=True` keeps the graph for one more pass, the next plain `backward()` frees it,
    and the graph itself lives as long as the output tensor does (forgetting it gives
    `RuntimeError: Trying to backward through the graph a second time`).  The measurement shows
    the cost: the default tape and `retain_graph=False` keep nothing but the result and the
    gradient, while the persistent tape and `retain_graph=True` keep several 4 MB saved arrays
    each, until the tape or the output is dropped.
    '''),
]


# --------------------------------------------------------------------------- 05 higher order
NB05 = [
    md(r"""
    # 5. Higher-order gradients: nested tapes vs `create_graph=True`

    A gradient is itself computed by operations, so it can be differentiated again, as long as
    those operations are recorded too.

    * **TensorFlow**: nest the tapes.  The outer tape is recording while the inner tape's
      `gradient` runs, so it records the backward computation, and its own `gradient` gives the
      next derivative.
    * **PyTorch**: ask the backward pass to build a graph of itself with `create_graph=True`
      (in `torch.autograd.grad` or `.backward`), then differentiate the result again.

    First the seed's $x^3$ at $x = 2$ ($3x^2 = 12$, $6x = 12$, $6$), then the first three
    derivatives of $f(x) = x^2 \sin x$ over $[-4, 4]$, plotted against the closed forms
    $$f' = 2x\sin x + x^2\cos x,\quad f'' = 2\sin x + 4x\cos x - x^2\sin x,\quad
    f''' = 6\cos x - 6x\sin x - x^2\cos x.$$
    """),
    SETUP,
    md("""
    ## TensorFlow style: nested tapes
    """),
    code("""
    import tapegrad.tf as tf

    x_tf = tf.Variable(2.0)
    with tf.GradientTape() as tape2:
        with tf.GradientTape() as tape1:
            y_tf = x_tf * x_tf * x_tf # x^3
        dy_dx_tf = tape1.gradient(y_tf, x_tf) # dy/dx = 3x^2 = 12
    d2y_dx2_tf = tape2.gradient(dy_dx_tf, x_tf) # d2y/dx2 = 6x = 12
    print(f"TensorFlow dy/dx: {dy_dx_tf.numpy()}, d2y/dx2: {d2y_dx2_tf.numpy()}")

    # One more tape, one more derivative
    with tf.GradientTape() as tape3:
        with tf.GradientTape() as tape2:
            with tf.GradientTape() as tape1:
                y_tf = x_tf * x_tf * x_tf
            d1 = tape1.gradient(y_tf, x_tf)
        d2 = tape2.gradient(d1, x_tf)
    d3 = tape3.gradient(d2, x_tf)
    print(f"TensorFlow d3y/dx3: {d3.numpy()}")
    """),
    md("""
    ## PyTorch style: `create_graph=True`
    """),
    code("""
    import tapegrad.torch as torch

    x_pt = torch.tensor(2.0, requires_grad=True)
    y_pt = x_pt * x_pt * x_pt # x^3

    # First derivative
    dy_dx_pt = torch.autograd.grad(y_pt, x_pt, create_graph=True)[0] # dy/dx = 3x^2 = 12
    # Second derivative
    d2y_dx2_pt = torch.autograd.grad(dy_dx_pt, x_pt, create_graph=True)[0] # d2y/dx2 = 6x = 12
    print(f"PyTorch dy/dx: {dy_dx_pt.item()}, d2y/dx2: {d2y_dx2_pt.item()}")
    print(f"PyTorch d3y/dx3: {torch.autograd.grad(d2y_dx2_pt, x_pt)[0].item()}")

    # .backward(create_graph=True) does the same through .grad, which then has a grad_fn
    import warnings

    x_b = torch.tensor(2.0, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (x_b ** 3).backward(create_graph=True)
    for wmsg in caught:   # PyTorch warns about the reference cycle .grad <-> its graph
        print("warning:", str(wmsg.message).split(". ")[0] + ".")
    print("x.grad after backward(create_graph=True):", x_b.grad)
    first = x_b.grad
    x_b.grad = None
    first.backward()
    print("and its own gradient:", x_b.grad.item())
    """),
    md(r"""
    ## Three derivatives of $x^2 \sin x$ on a grid

    `x` is a vector of 161 points; since $f$ acts elementwise, the gradient of $\sum_i f(x_i)$
    is the vector of $f'(x_i)$, and so on.  Float64 throughout.  ($x^2$ is written `x * x`:
    with `x ** 2`, real TensorFlow's third derivative is NaN at $x = 0$, because its `pow`
    gradient multiplies $0 \cdot x^{-1}$ there.)
    """),
    code("""
    grid = np.linspace(-4.0, 4.0, 161)

    # TensorFlow style: three nested tapes
    x = tf.constant(grid, dtype=tf.float64)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                f = x * x * tf.sin(x)
            d1 = t1.gradient(f, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    tf_derivs = [f.numpy(), d1.numpy(), d2.numpy(), d3.numpy()]

    # PyTorch style: create_graph=True, twice
    x = torch.tensor(grid, dtype=torch.float64, requires_grad=True)
    f = x * x * torch.sin(x)
    (d1,) = torch.autograd.grad(f.sum(), x, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), x, create_graph=True)
    (d3,) = torch.autograd.grad(d2.sum(), x)
    pt_derivs = [t.detach().numpy() for t in (f, d1, d2, d3)]

    s, c = np.sin(grid), np.cos(grid)
    closed = [grid**2 * s,
              2 * grid * s + grid**2 * c,
              2 * s + 4 * grid * c - grid**2 * s,
              6 * c - 6 * grid * s - grid**2 * c]
    for k in range(4):
        print(f"order {k}: max |TF - closed form| = {np.abs(tf_derivs[k] - closed[k]).max():.2e}, "
              f"max |PyTorch - closed form| = {np.abs(pt_derivs[k] - closed[k]).max():.2e}")
    """),
    code("""
    titles = ["f(x) = x² sin x", "f'(x) = 2x sin x + x² cos x",
              "f''(x) = 2 sin x + 4x cos x − x² sin x", "f'''(x) = 6 cos x − 6x sin x − x² cos x"]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    for k, ax in enumerate(axes.flat):
        ax.plot(grid, closed[k], color="black", linewidth=1.5, label="closed form")
        ax.plot(grid[::8], tf_derivs[k][::8], "o", markersize=6, markerfacecolor="none",
                color="#ff7f0e", label="TF style (nested tapes)")
        ax.plot(grid[::8], pt_derivs[k][::8], "x", markersize=6, color="#1f77b4",
                label="PyTorch style (create_graph=True)")
        ax.set_title(titles[k], fontsize=10)
    for ax in axes[1]:
        ax.set_xlabel("x")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False)
    fig.suptitle("Derivatives computed by tapegrad (markers, every 8th grid point) vs the closed form")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    plt.show()
    """),
    REAL_MD,
    code("""
    points = [-2.0, 0.5, 3.0]

    def tf_style(tf):
        x = tf.constant(points, dtype=tf.float64)
        with tf.GradientTape() as t3:
            t3.watch(x)
            with tf.GradientTape() as t2:
                t2.watch(x)
                with tf.GradientTape() as t1:
                    t1.watch(x)
                    f = x * x * tf.sin(x)
                d1 = t1.gradient(f, x)
            d2 = t2.gradient(d1, x)
        d3 = t3.gradient(d2, x)
        return {"f": f.numpy(), "f'": d1.numpy(), "f''": d2.numpy(), "f'''": d3.numpy()}

    def torch_style(torch):
        x = torch.tensor(points, dtype=torch.float64, requires_grad=True)
        f = x * x * torch.sin(x)
        (d1,) = torch.autograd.grad(f.sum(), x, create_graph=True)
        (d2,) = torch.autograd.grad(d1.sum(), x, create_graph=True)
        (d3,) = torch.autograd.grad(d2.sum(), x)
        return {"f": f.detach().numpy(), "f'": d1.detach().numpy(),
                "f''": d2.detach().numpy(), "f'''": d3.numpy()}

    compare(tf_style, "tensorflow", rtol=1e-10, atol=1e-12)
    print()
    compare(torch_style, "torch", rtol=1e-10, atol=1e-12);
    """),
    md("""
    ## The difference

    Both get higher derivatives the same way underneath: the backward pass is made of ordinary
    differentiable operations, and if those operations are recorded, the gradient has a graph
    of its own that can be differentiated again (in tapegrad every op's derivative is written
    in tapegrad ops, so this works to any order).  The difference is how you ask for the
    recording.  TensorFlow needs no flag: a tape records whatever runs inside its block on
    tensors it watches, and an inner tape's `gradient` call is just more computation inside the
    outer block, so one more level of nesting gives one more derivative (and each level has to
    `watch` a constant source).  PyTorch's backward pass normally runs without recording;
    `create_graph=True` switches recording on for that pass so the returned gradient (or
    `.grad`) has a `grad_fn`, and the last call can leave it off.  The curves above sit on the
    closed forms to rounding error in both styles.
    """),
]


# --------------------------------------------------------------------------- 06 stopping
NB06 = [
    md(r'''
    # 6. Stopping gradients: `stop_gradient`, unwatched variables, `no_grad`, `detach`

    Sometimes a value must be used in the forward pass but treated as a constant by the
    backward pass (a target network, a moving statistic, the update of the weights itself).

    * **TensorFlow**: wrap the value in `tf.stop_gradient(...)`, or do not let the tape watch
      it (a constant, a `tf.Variable(..., trainable=False)`, or
      `GradientTape(watch_accessed_variables=False)`), or pause the tape with
      `tape.stop_recording()`.
    * **PyTorch**: `tensor.detach()` (a tensor sharing the data, outside the graph), tensors with
      `requires_grad=False`, or `with torch.no_grad():` which records nothing at all.

    The running example is $f(x) = x \cdot x$ at $x = 3$: the full gradient is $2x = 6$;
    treating the second factor as a constant gives $x = 3$.
    '''),
    SETUP,
    md('''
    ## TensorFlow style
    '''),
    code('''
    import tapegrad.tf as tf

    x = tf.Variable(3.0, name="x")
    frozen = tf.Variable(5.0, trainable=False, name="frozen")
    c = tf.constant(2.0)

    with tf.GradientTape(persistent=True) as tape:
        full = x * x                           # d/dx = 2x = 6
        stopped = x * tf.stop_gradient(x)      # the second factor is a constant: d/dx = x = 3
        with_frozen = x * frozen               # frozen is not trainable, so never watched
        with_const = x * c                     # neither is a constant
        with tape.stop_recording():
            paused = x * x                     # computed while the tape is paused

    print("d(x*x)/dx:               ", tape.gradient(full, x).numpy())
    print("d(x*stop_gradient(x))/dx:", tape.gradient(stopped, x).numpy())
    print("d(x*frozen)/d[x, frozen]:", [g if g is None else g.numpy().item() for g in tape.gradient(with_frozen, [x, frozen])])
    print("d(x*c)/dc:               ", tape.gradient(with_const, c))
    print("d(paused)/dx:            ", tape.gradient(paused, x))
    print("unconnected_gradients='zero':", tape.gradient(paused, x, unconnected_gradients="zero").numpy())
    print("watched:", [v.name for v in tape.watched_variables()])
    tf_numbers = {"full": tape.gradient(full, x).numpy(),
                  "second factor stopped": tape.gradient(stopped, x).numpy(),
                  "frozen / constant": tape.gradient(with_frozen, frozen),
                  "computed with recording off": tape.gradient(paused, x)}
    stop_graph = draw(stopped, sources={"x": x}, grads={"x": tape.gradient(stopped, x)})
    del tape

    # With watch_accessed_variables=False only what you watch is recorded
    y = tf.Variable(4.0, name="y")
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        prod = x * y
    gx, gy = tape.gradient(prod, [x, y])
    print("watch_accessed_variables=False, watch(x): d(xy)/dx =", gx.numpy(), " d(xy)/dy =", gy)
    '''),
    md('''
    The graph of `x * tf.stop_gradient(x)`.  As in TensorFlow, `stop_gradient` is recorded as
    an op of its own (`StopGradient`), but its backward passes nothing on: the gradient reaches
    `x` only through the multiplication's direct input, which is why it is $x = 3$ and not
    $2x = 6$.
    '''),
    code('''
    show_graph(stop_graph)
    '''),
    md('''
    ## PyTorch style
    '''),
    code('''
    import tapegrad.torch as torch

    # The seed's example: which results track history
    x = torch.randn(2, 2, requires_grad=True)
    y = x * 2
    print(f"y.requires_grad: {y.requires_grad}") # True

    # Using torch.no_grad()
    with torch.no_grad():
        z = x * 2
    print(f"z.requires_grad: {z.requires_grad}") # False, z doesn't track history

    # Using .detach()
    w = x * 2
    w_detached = w.detach() # Creates a new tensor, shares data, but no grad history
    print(f"w.requires_grad: {w.requires_grad}")             # True
    print(f"w_detached.requires_grad: {w_detached.requires_grad}") # False
    '''),
    code('''
    x = torch.tensor(3.0, requires_grad=True)
    frozen = torch.tensor(5.0)                  # requires_grad=False: a constant

    (x * x).backward()
    full_grad = x.grad.item()
    print("d(x*x)/dx:          ", full_grad)
    x.grad = None
    stopped = x * x.detach()
    stopped.backward()
    stopped_grad = x.grad.item()
    print("d(x*x.detach())/dx: ", stopped_grad)
    x.grad = None
    (x * frozen).backward()
    print("d(x*frozen)/dx:     ", x.grad.item(), "  frozen.grad:", frozen.grad)

    with torch.no_grad():
        paused = x * x
    print("made under no_grad: ", paused.requires_grad, paused.grad_fn)
    pt_numbers = {"full": full_grad, "second factor stopped": stopped_grad,
                  "frozen / constant": frozen.grad, "computed with recording off": paused.grad_fn}
    try:
        paused.backward()
    except RuntimeError as e:
        print("paused.backward() -> RuntimeError:", str(e).splitlines()[0])

    # detach() shares the data: an in-place change shows through (so update weights under no_grad)
    d = x.detach()
    with torch.no_grad():
        x -= 0.5
    print("x after the update:", x.item(), " its detached view:", d.item())
    '''),
    md('''
    The graph of `x * x.detach()`: the same picture as TensorFlow's `stop_gradient`.
    '''),
    code('''
    show_graph(draw(stopped, sources={"x": x}))
    '''),
    md('''
    ## The numbers
    '''),
    code('''
    side_by_side(tf_numbers, pt_numbers, names=("TF style", "PyTorch style"))
    '''),
    REAL_MD,
    code('''
    def tf_style(tf):
        x = tf.Variable(3.0, name="x")
        frozen = tf.Variable(5.0, trainable=False)
        c = tf.constant(2.0)
        with tf.GradientTape(persistent=True) as tape:
            full = x * x
            stopped = x * tf.stop_gradient(x)
            with_frozen = x * frozen
            with_const = x * c
            with tape.stop_recording():
                paused = x * x
        return {"d(x*x)/dx": tape.gradient(full, x).numpy(),
                "d(x*stop_gradient(x))/dx": tape.gradient(stopped, x).numpy(),
                "d(x*frozen)/dfrozen": tape.gradient(with_frozen, frozen),
                "d(x*c)/dc": tape.gradient(with_const, c),
                "d(paused)/dx": tape.gradient(paused, x),
                "watched": [v.name for v in tape.watched_variables()]}

    def torch_style(torch):
        x = torch.tensor(3.0, requires_grad=True)
        (x * x).backward()
        full = x.grad.item()
        x.grad = None
        (x * x.detach()).backward()
        stopped = x.grad.item()
        frozen = torch.tensor(5.0)
        (x * frozen).backward()
        with torch.no_grad():
            paused = x * x
        return {"d(x*x)/dx": full, "d(x*x.detach())/dx": stopped, "frozen.grad": frozen.grad,
                "no_grad result requires_grad": str(paused.requires_grad),
                "detach requires_grad": str(x.detach().requires_grad)}

    compare(tf_style, "tensorflow")
    print()
    compare(torch_style, "torch");
    '''),
    md('''
    ## The difference

    | to treat a value as a constant | TensorFlow | PyTorch |
    |---|---|---|
    | one value inside an expression | `tf.stop_gradient(v)` | `v.detach()` |
    | a tensor that never needs a gradient | a constant / `trainable=False`, not watched | `requires_grad=False` (the default) |
    | a whole block of code | outside the tape, or `tape.stop_recording()` | `with torch.no_grad():` |
    | only chosen inputs | `GradientTape(watch_accessed_variables=False)` + `watch` | `requires_grad` on those only |

    The two sets of tools line up one to one and give the same numbers, but they are attached
    to different things, as in notebook 1.  TensorFlow's are about the *tape*: what it watches
    and when it records, so a variable can be a constant to one tape and a source to another,
    and asking for an unwatched source returns `None` (or zeros with
    `unconnected_gradients='zero'`) rather than an error.  PyTorch's are about the *tensor* and
    the *grad mode*: `detach()` makes a tensor that shares the data but has no history,
    `no_grad()` stops all recording in its block (which is why the seed's manual weight update
    runs under it), and calling `backward()` on a result without history is an error
    (`element 0 of tensors does not require grad`).
    '''),
]


# --------------------------------------------------------------------------- 07 training loop
NB07 = [
    md(r'''
    # 7. A full training loop in both styles

    The same model and data, trained from identical initial weights, once in TensorFlow style
    and once in PyTorch style:

    1. the seed's loop: a linear model $\hat y = xW + b$ with squared error, updated by hand
       (`w.assign(w - w_grad * learning_rate)` vs `w -= w.grad * learning_rate` under
       `torch.no_grad()` followed by `w.grad.zero_()`);
    2. the same loop with optimizers, on a small two-layer network: Keras's
       `optimizer.apply_gradients(zip(grads, model.trainable_weights))` vs PyTorch's
       `optimizer.step()` / `optimizer.zero_grad()`, both with SGD with momentum and with Adam.

    Both losses are drawn on one plot, and the final parameters are compared.
    '''),
    SETUP,
    md('''
    ## Data and initial weights

    64 samples with 3 features and a slightly non-linear target.  The initial weights are drawn
    once with NumPy and loaded into both models (Keras stores a `Dense` kernel as
    `(inputs, outputs)`, PyTorch's `Linear.weight` as `(outputs, inputs)`, hence the
    transposes).
    '''),
    code('''
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 3)).astype(np.float32)
    Y = (X @ np.array([[1.5], [-2.0], [0.5]]) + 0.3 + 0.5 * np.sin(3 * X[:, :1])
         + 0.05 * rng.normal(size=(64, 1))).astype(np.float32)

    def init(shape, scale):
        return (scale * rng.normal(size=shape)).astype(np.float32)

    linear_init = [init((3, 1), 0.5), np.zeros(1, np.float32)]
    mlp_init = [init((3, 16), 0.6), init((16,), 0.1), init((16, 1), 0.3), np.zeros(1, np.float32)]
    print("data:", X.shape, Y.shape, " linear model params:", [a.shape for a in linear_init],
          " MLP params:", [a.shape for a in mlp_init])
    '''),
    md('''
    ## 1. The seed's loop, updated by hand

    The loops are written as functions of the framework module (`tf` or `torch`) so that the
    very same code runs below with the real frameworks.
    '''),
    code('''
    def fit_linear_tf(tf, epochs=40, learning_rate=0.1):
        x, y = tf.constant(X), tf.constant(Y)
        tf_model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        tf_model.build((None, 3))
        tf_model.set_weights(linear_init)

        def squared_error(pred, target):
            return tf.reduce_mean(tf.square(pred - target))

        losses = []
        [w, b] = tf_model.trainable_variables
        for epoch in range(epochs):
            with tf.GradientTape() as tape:
                # forward passing and loss calculations
                # within explicit tape scope
                predictions = tf_model(x)
                loss = squared_error(predictions, y)

            # compute gradients (grad)
            w_grad, b_grad = tape.gradient(loss, tf_model.trainable_variables)

            # update training variables
            w.assign(w - w_grad * learning_rate)
            b.assign(b - b_grad * learning_rate)
            losses.append(float(loss.numpy()))
        return np.array(losses), [v.numpy() for v in tf_model.trainable_variables]
    '''),
    code('''
    def fit_linear_torch(torch, epochs=40, learning_rate=0.1):
        inputs, labels = torch.tensor(X), torch.tensor(Y)
        torch_model = torch.nn.Linear(3, 1)
        with torch.no_grad():
            torch_model.weight.copy_(torch.tensor(linear_init[0].T))
            torch_model.bias.copy_(torch.tensor(linear_init[1]))

        def squared_error(pred, target):
            return ((pred - target) ** 2).mean()

        losses = []
        [w, b] = torch_model.parameters()
        for epoch in range(epochs):
            # forward pass and loss calculation
            # implicit tape-based AD
            y_pred = torch_model(inputs)
            loss = squared_error(y_pred, labels)

            # compute gradients (grad)
            loss.backward()

            # update training variables / parameters
            with torch.no_grad():
                w -= w.grad * learning_rate
                b -= b.grad * learning_rate
                w.grad.zero_()
                b.grad.zero_()
            losses.append(loss.item())
        # in Keras's layout, for comparison
        return np.array(losses), [w.detach().numpy().T, b.detach().numpy()]
    '''),
    code('''
    import tapegrad.tf as tf
    import tapegrad.torch as torch

    lin_tf = fit_linear_tf(tf)
    lin_pt = fit_linear_torch(torch)
    print("final loss  TF style:", lin_tf[0][-1], "  PyTorch style:", lin_pt[0][-1])
    side_by_side({"W": lin_tf[1][0].ravel(), "b": lin_tf[1][1]},
                 {"W": lin_pt[1][0].ravel(), "b": lin_pt[1][1]},
                 names=("TF style", "PyTorch style"))
    '''),
    md('''
    ## 2. With optimizers: `apply_gradients` vs `step` / `zero_grad`

    A 3 → 16 → 1 network with a tanh hidden layer, trained full-batch for 150 steps.

    * **SGD with momentum 0.9** is the same update in both frameworks (Keras keeps
      $v \\leftarrow 0.9v - \\eta g,\\ w \\leftarrow w + v$; PyTorch
      $b \\leftarrow 0.9b + g,\\ w \\leftarrow w - \\eta b$; with $v = -\\eta b$ these are the same
      steps), so the two runs must end with equal parameters.
    * **Adam** is *not* quite the same formula in the two frameworks, and tapegrad keeps each
      framework's own: the default `epsilon` differs (Keras 1e-7, PyTorch 1e-8; set to 1e-8 in
      Keras here), and Keras adds epsilon to $\\sqrt{v_t}$ *before* the bias correction, so its
      effective epsilon is $\\epsilon/\\sqrt{1-\\beta_2^t}$ (about $30\\epsilon$ at the first step),
      PyTorch after it.  The two Adam runs follow the same curve, but their parameters end
      visibly apart (about 1e-3 here), as they do with the real frameworks (see the comparison
      at the end).
    '''),
    code('''
    def fit_mlp_tf(tf, optimizer_name, steps=150):
        x, y = tf.constant(X), tf.constant(Y)
        model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="tanh"),
                                     tf.keras.layers.Dense(1)])
        model.build((None, 3))
        model.set_weights(mlp_init)
        if optimizer_name == "sgd":
            optimizer = tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9)
        else:
            optimizer = tf.keras.optimizers.Adam(learning_rate=0.02, epsilon=1e-8)
        loss_fn = tf.keras.losses.MeanSquaredError()
        losses = []
        for step in range(steps):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
            losses.append(float(loss.numpy()))
        return np.array(losses), [v.numpy() for v in model.trainable_weights]


    def fit_mlp_torch(torch, optimizer_name, steps=150):
        inputs, labels = torch.tensor(X), torch.tensor(Y)
        model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
        with torch.no_grad():
            for layer, (kernel, bias) in zip([model[0], model[2]], [mlp_init[:2], mlp_init[2:]]):
                layer.weight.copy_(torch.tensor(kernel.T))
                layer.bias.copy_(torch.tensor(bias))
        if optimizer_name == "sgd":
            optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        else:
            optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
        loss_fn = torch.nn.MSELoss()
        losses = []
        for step in range(steps):
            loss = loss_fn(model(inputs), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(loss.item())
        params = [p.detach().numpy() for p in model.parameters()]
        return np.array(losses), [params[0].T, params[1], params[2].T, params[3]]


    mlp = {(style, opt): fit(module, opt)
           for opt in ("sgd", "adam")
           for style, fit, module in [("TF", fit_mlp_tf, tf), ("PyTorch", fit_mlp_torch, torch)]}
    for opt in ("sgd", "adam"):
        print(f"{opt}: final loss TF style {mlp[('TF', opt)][0][-1]:.6f}, "
              f"PyTorch style {mlp[('PyTorch', opt)][0][-1]:.6f}")
        for pname, a, b in zip(["kernel 1", "bias 1", "kernel 2", "bias 2"],
                               mlp[("TF", opt)][1], mlp[("PyTorch", opt)][1]):
            print(f"  {pname:8} {str(a.shape):8} TF style {np.round(a.ravel()[:3], 5)} ...  "
                  f"PyTorch style {np.round(b.ravel()[:3], 5)} ...  max |difference| {np.abs(a - b).max():.1e}")
        print()
    '''),
    md('''
    ## The loss curves, both styles on one plot
    '''),
    code('''
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.5))
    ax1.plot(lin_tf[0], color="#ff7f0e", linewidth=4, alpha=0.45, label="TF style: tape.gradient + assign")
    ax1.plot(lin_pt[0], color="#1f77b4", linewidth=1.3, linestyle="--", marker=".",
             label="PyTorch style: backward + no_grad update")
    ax1.set(title="1. Linear model, manual updates (lr 0.1)", xlabel="epoch", ylabel="mean squared error",
            yscale="log")
    colors = {"sgd": ("#ff7f0e", "#1f77b4"), "adam": ("#2ca02c", "#54278f")}
    names = {"sgd": "SGD(momentum=0.9)", "adam": "Adam"}
    for opt in ("sgd", "adam"):
        c_tf, c_pt = colors[opt]
        ax2.plot(mlp[("TF", opt)][0], color=c_tf, linewidth=4, alpha=0.45,
                 label=f"TF style: {names[opt]}, apply_gradients")
        ax2.plot(mlp[("PyTorch", opt)][0], color=c_pt, linewidth=1.3, linestyle="--",
                 label=f"PyTorch style: {names[opt]}, step/zero_grad")
    ax2.set(title="2. 3-16-1 tanh network, optimizers", xlabel="step", ylabel="mean squared error",
            yscale="log")
    for ax in (ax1, ax2):
        ax.legend(fontsize=8)
    fig.suptitle("Loss per step: the TF-style curve (wide, pale) and the PyTorch-style curve (dashed) coincide")
    fig.tight_layout()
    plt.show()
    '''),
    REAL_MD,
    code('''
    # 50 network steps here (same code, fewer steps): eager Keras takes ~0.1 s per step
    def tf_style(tf):
        lin = fit_linear_tf(tf)
        sgd = fit_mlp_tf(tf, "sgd", steps=50)
        adam = fit_mlp_tf(tf, "adam", steps=50)
        return {"linear: final loss": lin[0][-1], "linear: W": lin[1][0].ravel(),
                "linear: b": lin[1][1], "MLP SGD: final loss": sgd[0][-1],
                "MLP SGD: bias 2": sgd[1][3], "MLP Adam: final loss": adam[0][-1],
                "MLP Adam: bias 2": adam[1][3]}

    def torch_style(torch):
        lin = fit_linear_torch(torch)
        sgd = fit_mlp_torch(torch, "sgd", steps=50)
        adam = fit_mlp_torch(torch, "adam", steps=50)
        return {"linear: final loss": lin[0][-1], "linear: W": lin[1][0].ravel(),
                "linear: b": lin[1][1], "MLP SGD: final loss": sgd[0][-1],
                "MLP SGD: bias 2": sgd[1][3], "MLP Adam: final loss": adam[0][-1],
                "MLP Adam: bias 2": adam[1][3]}

    compare(tf_style, "tensorflow", rtol=1e-4, atol=1e-5)
    print()
    compare(torch_style, "torch", rtol=1e-4, atol=1e-5);
    '''),
    md('''
    ## The difference

    The two loops do the same four things in the same order (forward, loss, gradients, update)
    and, from the same initial weights, follow the same trajectory: the curves lie on top of
    each other, and where the two frameworks' update rules are the same formula (plain SGD by
    hand, SGD with momentum) the final parameters agree to float32 rounding (Adam's two
    formulas differ slightly, and so do its final parameters, in tapegrad exactly as in the real
    frameworks).  What differs is where the
    state lives.  In TensorFlow the gradients are values: the tape scope marks the forward
    pass, `tape.gradient` returns a list, and the update is an explicit `assign` or
    `optimizer.apply_gradients(zip(grads, variables))`; nothing has to be cleared, and updating
    a variable is never recorded.  In PyTorch the gradients are state on the parameters:
    recording is implicit (parameters require grad), `loss.backward()` fills `.grad`, the
    update must run under `torch.no_grad()` so that it is not itself recorded, and `.grad` must
    be cleared each step (`w.grad.zero_()` or `optimizer.zero_grad()`) because it accumulates
    (notebook 3).  `optimizer.step()` reads `.grad`; `apply_gradients` is handed the gradients.
    '''),
]

# --------------------------------------------------------------------------- 08 transforms
NB08 = [
    md(r"""
    # 8. Function transforms: Jacobians, Hessians, per-sample gradients and forward mode

    Beyond "the gradient of a loss", both frameworks compute whole Jacobians, Hessians,
    per-example gradients and Jacobian-vector products, but they spell it differently.

    * **PyTorch** has *function transforms* (`torch.func`, from functorch): `jacrev(f)`,
      `jacfwd(f)`, `hessian(f)`, `vmap(f)` and `grad(f)` take a function and return a new
      function, and they nest: `vmap(grad(loss))` is per-sample gradients,
      `jacfwd(jacrev(f))` a Hessian.  Forward mode is also available as dual tensors
      (`torch.autograd.forward_ad`).
    * **TensorFlow** keeps the tape: `tape.jacobian` and `tape.batch_jacobian` (vectorized
      with `pfor`), `tf.vectorized_map` to vectorize a function with a tape inside it, and
      `tf.autodiff.ForwardAccumulator` for forward mode; a tape inside an accumulator gives a
      Hessian-vector product (forward over reverse).

    In tapegrad both sets are the same core transforms: reverse mode, forward mode and
    batching are interpreters of one op dispatch path, and every op carries its VJP, JVP and
    batching rule.  Below each computation is written in both styles; the plot at the end
    compares the three ways of building a Jacobian.
    """),
    SETUP,
    md("""
    ## A Jacobian, three ways

    $f(x) = \\tanh(A x)$ for a $4\\times 3$ matrix $A$ has the Jacobian
    $\\mathrm{diag}(1 - \\tanh^2(Ax))\\,A$.  Reverse mode builds it one row (one VJP) per output,
    forward mode one column (one JVP) per input; vectorizing the rows or columns with
    `vmap`/`pfor` makes each a single pass over a batch.
    """),
    code("""
    import tapegrad.tf as tf
    import tapegrad.torch as torch

    A_np = np.array([[0.5, -1.0, 0.3], [0.2, 0.8, -0.6], [1.1, 0.0, 0.4], [-0.3, 0.7, 0.9]])
    x_np = np.array([0.4, -0.2, 0.7])
    closed_form = (1 - np.tanh(A_np @ x_np) ** 2)[:, None] * A_np

    # PyTorch style: function transforms
    A, x = torch.tensor(A_np), torch.tensor(x_np)
    f = lambda v: torch.tanh(A @ v)
    J_rev = torch.func.jacrev(f)(x)
    J_fwd = torch.func.jacfwd(f)(x)

    # TensorFlow style: the tape's jacobian (pfor) and a ForwardAccumulator per column
    At, xt = tf.constant(A_np), tf.constant(x_np)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.tanh(tf.linalg.matvec(At, xt))
    J_tape = tape.jacobian(y, xt)

    def column(t):
        with tf.autodiff.ForwardAccumulator(xt, t) as acc:
            y = tf.tanh(tf.linalg.matvec(At, xt))
        return acc.jvp(y)

    J_acc = tf.transpose(tf.vectorized_map(column, tf.eye(3, dtype=tf.float64)))
    for name, J in [("torch.func.jacrev", J_rev), ("torch.func.jacfwd", J_fwd),
                    ("tape.jacobian", J_tape), ("ForwardAccumulator + vectorized_map", J_acc)]:
        print(f"{name:38} max |J - closed form| = {np.abs(J.numpy() - closed_form).max():.1e}")
    print(J_rev)
    """),
    md("""
    ## A Hessian: transforms nested vs tapes nested

    $g(x) = \\sum_i x_i^3 \\cdot \\sum_i x_i$.  PyTorch nests transforms (`hessian` is
    `jacfwd(jacrev(g))`, forward over reverse); TensorFlow nests tapes (the outer tape's
    `jacobian` of the inner tape's gradient, reverse over reverse).
    """),
    code("""
    g_torch = lambda v: (v ** 3).sum() * v.sum()
    H_torch = torch.func.hessian(g_torch)(x)

    with tf.GradientTape() as outer:
        outer.watch(xt)
        with tf.GradientTape() as inner:
            inner.watch(xt)
            g = tf.reduce_sum(xt ** 3) * tf.reduce_sum(xt)
        grad = inner.gradient(g, xt)
    H_tf = outer.jacobian(grad, xt)
    print(H_torch)
    print(H_tf)
    print("the same:", np.allclose(H_torch.numpy(), H_tf.numpy()))
    """),
    md("""
    ## Per-sample gradients

    The gradient of each example's loss separately (for differential privacy, influence
    estimates, gradient-noise studies).  A Python loop runs one backward pass per example;
    `vmap(grad(loss))` and `vectorized_map` with a tape inside run one batched pass.
    """),
    code("""
    rng = np.random.default_rng(0)
    X_np = rng.standard_normal((32, 3))
    Y_np = rng.standard_normal(32)
    w_np = np.array([0.5, -0.3, 0.8])

    # PyTorch style: vmap over examples of the gradient of one example's loss
    def loss_one(w, xi, yi):
        return (torch.tanh(xi @ w) - yi) ** 2

    per_torch = torch.func.vmap(torch.func.grad(loss_one), in_dims=(None, 0, 0))(
        torch.tensor(w_np), torch.tensor(X_np), torch.tensor(Y_np))

    # TensorFlow style: vectorized_map of a function with a tape inside
    wt = tf.Variable(w_np)

    def grad_one(example):
        xi, yi = example
        with tf.GradientTape() as tape:
            loss = (tf.tanh(tf.reduce_sum(xi * wt)) - yi) ** 2
        return tape.gradient(loss, wt)

    per_tf = tf.vectorized_map(grad_one, (tf.constant(X_np), tf.constant(Y_np)))

    # the loop, for reference
    loop = []
    for xi, yi in zip(X_np, Y_np):
        w = torch.tensor(w_np, requires_grad=True)
        loss_one(w, torch.tensor(xi), torch.tensor(yi)).backward()
        loop.append(w.grad.numpy())
    print("shape:", tuple(per_torch.shape), "| vmap vs loop:",
          np.abs(per_torch.numpy() - np.array(loop)).max(),
          "| vectorized_map vs loop:", np.abs(per_tf.numpy() - np.array(loop)).max())
    """),
    md("""
    ## Forward mode: a Jacobian-vector product in one pass

    $J v$ without forming $J$: dual tensors in PyTorch, a `ForwardAccumulator` in
    TensorFlow.  One forward pass carries the tangent along.
    """),
    code("""
    import tapegrad.torch.autograd.forward_ad as fwAD

    v_np = np.array([1.0, 0.0, -1.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, torch.tensor(v_np))
        jv_torch = fwAD.unpack_dual(torch.tanh(A @ dual)).tangent
    _, jv_func = torch.func.jvp(f, (x,), (torch.tensor(v_np),))

    with tf.autodiff.ForwardAccumulator(xt, tf.constant(v_np)) as acc:
        y = tf.tanh(tf.linalg.matvec(At, xt))
    jv_tf = acc.jvp(y)
    print("forward_ad        ", jv_torch.numpy())
    print("torch.func.jvp    ", jv_func.numpy())
    print("ForwardAccumulator", jv_tf.numpy())
    print("J @ v             ", closed_form @ v_np)
    """),
    md("""
    ## How long a Jacobian takes: jacrev, jacfwd and a row loop

    For $f(x) = \\tanh(Ax)$ with a square $A$, time the $n \\times n$ Jacobian by vectorized
    reverse mode, vectorized forward mode and a Python loop of one VJP per row, as $n$ grows
    (the core transforms, PyTorch style).  The loop's time grows with the number of rows
    times the per-op overhead; the vectorized transforms run a fixed number of batched ops.
    """),
    code("""
    import time

    def best_time(fn, repeats=5):
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        return best

    sizes = [4, 16, 64, 128, 256]
    times = {"jacrev (vmap of VJPs)": [], "jacfwd (vmap of JVPs)": [], "row loop of VJPs": []}
    for n in sizes:
        An = torch.tensor(rng.standard_normal((n, n)) / np.sqrt(n))
        xn = torch.tensor(rng.standard_normal(n))
        fn_ = lambda v: torch.tanh(An @ v)

        def loop():
            out, vjp_fn = torch.func.vjp(fn_, xn)
            eye = torch.eye(n, dtype=torch.float64)
            return torch.stack([vjp_fn(eye[i])[0] for i in range(n)])

        times["jacrev (vmap of VJPs)"].append(best_time(lambda: torch.func.jacrev(fn_)(xn)))
        times["jacfwd (vmap of JVPs)"].append(best_time(lambda: torch.func.jacfwd(fn_)(xn)))
        times["row loop of VJPs"].append(best_time(loop))

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (label, ts), style in zip(times.items(), ["o-", "s-", "^--"]):
        ax.plot(sizes, np.array(ts) * 1e3, style, label=label)
    ax.set(xscale="log", yscale="log", xlabel="n (the Jacobian is n x n)", ylabel="time (ms)",
           title="The n x n Jacobian of tanh(A x)")
    ax.legend()
    fig.tight_layout()
    plt.show()
    print({k: f"{v[-1] * 1e3:.1f} ms at n = {sizes[-1]}" for k, v in times.items()})
    """),
    REAL_MD,
    code("""
    def torch_style(torch):
        import importlib
        fwad = importlib.import_module(torch.__name__ + ".autograd.forward_ad")
        A, x = torch.tensor(A_np), torch.tensor(x_np)
        f = lambda v: torch.tanh(A @ v)
        per = torch.func.vmap(torch.func.grad(lambda w, xi, yi: (torch.tanh(xi @ w) - yi) ** 2),
                              in_dims=(None, 0, 0))(torch.tensor(w_np), torch.tensor(X_np),
                                                    torch.tensor(Y_np))
        with fwad.dual_level():
            jv = fwad.unpack_dual(f(fwad.make_dual(x, torch.tensor(v_np)))).tangent
        return {"jacrev": torch.func.jacrev(f)(x).numpy(), "jacfwd": torch.func.jacfwd(f)(x).numpy(),
                "hessian": torch.func.hessian(lambda v: (v ** 3).sum() * v.sum())(x).numpy(),
                "per-sample grads [:2]": per.numpy()[:2], "forward_ad J v": jv.numpy()}

    def tf_style(tf):
        At, xt = tf.constant(A_np), tf.constant(x_np)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(xt)
            y = tf.tanh(tf.linalg.matvec(At, xt))
        wt = tf.Variable(w_np)

        def grad_one(example):
            xi, yi = example
            with tf.GradientTape() as t:
                loss = (tf.tanh(tf.reduce_sum(xi * wt)) - yi) ** 2
            return t.gradient(loss, wt)

        with tf.autodiff.ForwardAccumulator(xt, tf.constant(v_np)) as acc:
            y2 = tf.tanh(tf.linalg.matvec(At, xt))
        return {"jacobian (pfor)": tape.jacobian(y, xt).numpy(),
                "jacobian (loop)": tape.jacobian(y, xt, experimental_use_pfor=False).numpy(),
                "per-sample grads [:2]": tf.vectorized_map(
                    grad_one, (tf.constant(X_np), tf.constant(Y_np))).numpy()[:2],
                "ForwardAccumulator J v": acc.jvp(y2).numpy()}

    compare(tf_style, "tensorflow")
    print()
    compare(torch_style, "torch");
    """),
    md("""
    ## The difference

    PyTorch's function transforms and TensorFlow's tape tools compute the same things: the
    numbers above agree with each other and with the closed forms.  The styles differ in what
    you hand over.  `torch.func` takes a *function* and returns a function, so transforms
    compose like functions (`vmap(grad(f))`, `jacfwd(jacrev(f))`) and the computation is run
    by the transform; forward-mode dual tensors are the one place PyTorch marks tensors
    instead.  TensorFlow keeps the tape as the unit: you run the computation yourself under a
    `GradientTape` or a `ForwardAccumulator` and ask it afterwards, and vectorization is either
    built into `tape.jacobian` (`experimental_use_pfor=True`) or applied to a function with
    `tf.vectorized_map`.  Vectorized Jacobians and per-sample gradients cost a few batched
    passes instead of one pass per row or per example, which is what the plot shows.
    """),
]


NB13 = [
    md(r"""
    # 13. Data-parallel training: `DistributedDataParallel` vs `tf.distribute`

    When one process is not enough, both frameworks copy the model onto several processes
    (*ranks*, *replicas*), give each a slice of every batch, and average the gradients over
    them before each update, so that N ranks on batches of B/N take exactly the step one
    process takes on the whole batch of B.

    * **PyTorch**: `torch.distributed.init_process_group`, the model wrapped in
      `torch.nn.parallel.DistributedDataParallel` (it broadcasts rank 0's weights at
      construction and all-reduces the gradients during `backward`, bucket by bucket), and
      a `DistributedSampler` that gives each rank its share of the data; started by
      `torchrun --nproc-per-node N train.py`.
    * **TensorFlow**: a `tf.distribute.MultiWorkerMirroredStrategy`: variables created
      under `strategy.scope()` are mirrored, `experimental_distribute_dataset` splits each
      global batch, `strategy.run(step)` runs the step as this replica and
      `apply_gradients` sums the gradients over replicas (the loss is scaled by
      `tf.nn.compute_average_loss(..., global_batch_size=...)`).

    tapegrad runs both on MPI: `python -m tapegrad.launch -n N train.py` starts the ranks
    with `mpiexec` and sets torchrun's variables (`RANK`, `WORLD_SIZE`, ...).  Below, one
    model is trained on 1, 2 and 4 ranks in both styles at the same global batch: the loss
    curves must coincide, and the step time shows what the all-reduce costs.
    """),
    SETUP,
    md("""
    ## One training script, two styles

    Ranks are separate processes, so the training script goes to a file, written as for
    the real frameworks (only the import line differs).  Rank 0 prints the loss (averaged
    over the ranks) and the step times as one JSON line.
    """),
    code(r'''
    import json
    import subprocess
    import tempfile

    import tapegrad.comm
    import tapegrad.launch

    SCRIPT = """
    import json, os, sys, time
    import numpy as np

    style, real = sys.argv[1], "--real" in sys.argv
    world = int(os.environ.get("WORLD_SIZE", "1"))
    GLOBAL, EPOCHS = 64, 3
    rng = np.random.default_rng(0)
    X = rng.standard_normal((512, 8)).astype("float32")
    Y = np.argmax(X @ rng.standard_normal((8, 3)), axis=1).astype("int64")
    losses, times = [], []

    if style == "torch":
        if real:
            import torch
        else:
            import tapegrad.torch as torch
        dist, nn = torch.distributed, torch.nn
        from_data = torch.utils.data
        if world > 1:
            dist.init_process_group("gloo")          # env:// : RANK, WORLD_SIZE, MASTER_*
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 3))
        if world > 1:
            model = nn.parallel.DistributedDataParallel(model)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        ds = from_data.TensorDataset(torch.tensor(X), torch.tensor(Y))
        sampler = from_data.DistributedSampler(ds, shuffle=False) if world > 1 else None
        loader = from_data.DataLoader(ds, batch_size=GLOBAL // world, sampler=sampler)
        for epoch in range(EPOCHS):
            for x, y in loader:
                t0 = time.perf_counter()
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(x), y)
                loss.backward()                      # DDP all-reduces the gradients here
                opt.step()
                times.append(time.perf_counter() - t0)
                mean = loss.detach().clone()
                if world > 1:
                    dist.all_reduce(mean)
                    mean /= world
                losses.append(mean.item())
        rank = dist.get_rank() if world > 1 else 0
    else:
        import tapegrad.tf as tf
        keras = tf.keras
        strategy = (tf.distribute.MultiWorkerMirroredStrategy() if world > 1
                    else tf.distribute.MirroredStrategy())
        keras.utils.set_random_seed(0)
        with strategy.scope():                       # mirrored variables
            model = keras.Sequential([keras.Input(shape=(8,)),
                                      keras.layers.Dense(32, activation="tanh"),
                                      keras.layers.Dense(3)])
            opt = keras.optimizers.Adam(0.01)
        lossf = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
        ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(GLOBAL)
        dist_ds = strategy.experimental_distribute_dataset(ds)

        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(lossf(y, model(x, training=True)),
                                                  global_batch_size=GLOBAL)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))  # summed over replicas
            return loss

        for epoch in range(EPOCHS):
            for x, y in dist_ds:
                t0 = time.perf_counter()
                per_replica = strategy.run(step, args=(x, y))
                times.append(time.perf_counter() - t0)
                losses.append(float(strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica,
                                                    axis=None)))
        import tapegrad.comm
        rank = tapegrad.comm.world().rank if world > 1 else 0
    if rank == 0:
        print("RESULT", json.dumps({"losses": losses, "times": times}), flush=True)
    """

    work = pathlib.Path(tempfile.mkdtemp())
    (work / "train.py").write_text(SCRIPT)
    env = dict(os.environ, OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3",
               PYTHONPATH=os.pathsep.join([str(pathlib.Path(tapegrad.__file__).parent.parent),
                                           os.environ.get("PYTHONPATH", "")]))
    HAVE_MPI = tapegrad.comm.available() and tapegrad.launch.find_mpiexec() is not None


    def train(style, ranks, real=False):
        """Run train.py on `ranks` ranks (through tapegrad.launch); rank 0's results."""
        args = [str(work / "train.py"), style] + (["--real"] if real else [])
        cmd = ([sys.executable, "-m", "tapegrad.launch", "-n", str(ranks)] + args
               if HAVE_MPI else [sys.executable] + args)
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
        if out.returncode != 0:
            raise RuntimeError(out.stderr[-2000:])
        line = out.stdout[out.stdout.index("RESULT ") + 7:].splitlines()[0]
        return json.loads(line)


    RANKS = [1, 2, 4] if HAVE_MPI else [1]
    if not HAVE_MPI:
        print("mpi4py or mpiexec is not installed here: only the one-process runs "
              "(pip install 'tapegrad[distributed]' for 2 and 4 ranks)")
    runs = {(style, n): train(style, n) for style in ("torch", "tf") for n in RANKS}
    print(f"{'style':7} {'ranks':>5} {'final loss':>11} {'max |loss - 1 rank|':>20} "
          f"{'median step':>12}")
    for (style, n), r in runs.items():
        gap = np.max(np.abs(np.array(r["losses"]) - np.array(runs[style, 1]["losses"])))
        print(f"{style:7} {n:5d} {r['losses'][-1]:11.6f} {gap:20.2e} "
              f"{1000 * np.median(r['times'][1:]):9.2f} ms")
    '''),
    md("""
    ## The loss curves on one plot, and the step time against the number of ranks

    At a fixed global batch of 64, each of N ranks computes on 64/N examples, then all
    ranks exchange the gradients.  The curves lie on top of each other (the same
    updates, to float rounding); the step time is each rank's share of the work plus the
    all-reduce.  This model is tiny (8-32-3: 387 parameters), so its step is a fraction of a
    millisecond and the all-reduce's latency dominates as soon as there are two ranks; and
    this machine has two CPU cores shared with other jobs, so 4 ranks oversubscribe it.
    Data parallelism pays off when the computation per rank is large against one
    all-reduce of the gradients (benchmark W11 measures that for W1's MLP).
    """),
    code(r'''
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    for (style, n), r in runs.items():
        ax1.plot(r["losses"], label=f"{style}, {n} rank{'s' if n > 1 else ''}",
                 linestyle="-" if style == "torch" else "--", linewidth=2.5 - 0.5 * RANKS.index(n))
    ax1.set_xlabel("step")
    ax1.set_ylabel("training loss (mean over the global batch)")
    ax1.set_title("same global batch, 1 / 2 / 4 ranks")
    ax1.legend(fontsize=8)
    for style, marker in (("torch", "o"), ("tf", "s")):
        ax2.plot(RANKS, [1000 * np.median(runs[style, n]["times"][1:]) for n in RANKS],
                 marker=marker, label=f"tapegrad.{style}")
    ax2.set_xlabel("ranks")
    ax2.set_xticks(RANKS)
    ax2.set_ylabel("median step time (ms)")
    ax2.set_title("step time (global batch 64)")
    ax2.legend()
    plt.tight_layout()
    plt.show()
    '''),
    md("""
    ## The real PyTorch beside it

    The PyTorch-style script runs unchanged on the real PyTorch (`--real` switches the import
    line), started by the same launcher: its ranks find each other through the `RANK`,
    `WORLD_SIZE`, `MASTER_ADDR` and `MASTER_PORT` that `tapegrad.launch` sets, over its own
    gloo backend.  (The real TensorFlow's multi-worker strategy needs a `TF_CONFIG` with a
    gRPC port per worker, so it is left out here.)
    """),
    code(r'''
    real_torch = real_framework("torch")
    if real_torch is not None:
        for n in RANKS[:2]:
            ours, theirs = runs["torch", n]["losses"], train("torch", n, real=True)["losses"]
            gap = np.max(np.abs(np.array(ours) - np.array(theirs)))
            print(f"real PyTorch, {n} rank(s): final loss {theirs[-1]:.6f} "
                  f"(tapegrad.torch {ours[-1]:.6f}); max difference over the curve {gap:.1e}"
                  f"  {'same' if gap < 1e-4 else 'DIFFERENT numbers'}")
    '''),
    md("""
    ## What differs

    PyTorch makes the gradient averaging part of the *model* (`DistributedDataParallel`
    hooks into `backward`) and the data split part of the *loader* (`DistributedSampler`);
    the loss stays the per-rank mean.  TensorFlow makes it part of the *strategy*: the
    dataset is split by `experimental_distribute_dataset`, the step runs through
    `strategy.run`, and because `apply_gradients` *sums* over replicas, the loss must be
    divided by the global batch size (`compute_average_loss`), not averaged per replica.
    Either way, N ranks take the one-process step on the concatenated batch, which is what
    `tests/distributed` checks on 2 and 4 ranks for SGD and Adam in both styles.
    """),
]


# --------------------------------------------------------------------------- 11 tf.function / torch.compile
NB11 = [
    md(r"""
    # 11. `tf.function` and `torch.compile`: trace once, replay a program

    Both frameworks can turn a Python step into a compiled program, with different promises.

    * **TensorFlow's `tf.function`** has *trace semantics*: the Python body runs only while
      tracing (once per input signature); afterwards the recorded graph runs.  Python side
      effects (`print`, appending to a list) happen at trace time only; `tf.print`,
      `Variable.assign` and optimizer updates are part of the graph and happen on every call.
    * **PyTorch's `torch.compile`** promises that nothing changes: the compiled function
      returns what the eager one would.  It traces on the first call, *guards* the trace
      (shapes, dtypes, Python values it used, ...) and recompiles when a guard fails; code it
      cannot trace (reading a value with `.item()`, a data-dependent `if`) is a *graph
      break* and runs eagerly.

    tapegrad records both with one tracing interpreter: the function runs once on real
    values while every op, Variable read/write, `.grad` update and the backward pass inside
    are written down as a program, which later calls replay as plain NumPy kernels.
    """),
    SETUP,
    md("""
    ## What runs once and what runs every call

    A Python `print` runs while tracing (and shows the symbolic tensor); `tf.print` runs on
    every call.  A new shape, a new dtype or a new *Python value* is a new signature: a new
    trace.
    """),
    code("""
    import tapegrad.tf as tf
    import tapegrad.torch as torch

    @tf.function
    def f(x, scale=2.0):
        print("tracing f with", x)                 # Python: only while tracing
        tf.print("running f with", x)              # part of the program: every call
        return x * scale + 1.0

    import sys
    sys.stderr = sys.stdout                        # show tf.print's output in the cell
    for args in [(tf.constant(1.0),), (tf.constant(2.0),), (tf.constant([1.0, 2.0]),),
                 (tf.constant(3.0), 3.0), (tf.constant(3.0), 3.0)]:
        print("->", f(*args).numpy())
    sys.stderr = sys.__stderr__
    print("traces:", f.experimental_get_tracing_count())
    """),
    md("""
    `torch.compile` has no "trace time" that a user sees: the first call runs (and is traced),
    later calls with the same guards replay.  Its Python body also runs only once, but
    everything it does to tensors happens on every call, as in eager code.
    """),
    code("""
    calls = []

    def g(x, k):
        calls.append(k)                            # Python: runs when (re)tracing
        return (x.sin() * k).sum()

    cg = torch.compile(g)
    for x, k in [(torch.ones(3), 2), (torch.zeros(3), 2), (torch.ones(4), 2), (torch.ones(4), 5)]:
        print(f"cg(x of shape {tuple(x.shape)}, k={k}) =", round(cg(x, k).item(), 6),
              " eager:", round(g(x, k).item(), 6))
    print("Python body ran for the compiled function", len(calls) - 4, "times")
    print(torch._dynamo.explain(cg))
    """),
    md("""
    ## A training step as one program

    The whole step (forward, the backward pass inside the tape or `backward()`, and the
    optimizer update) is one recorded program; `tapegrad.debug.format_program` lists it:
    which ops the backward added, what was folded into constants and what was dropped.
    """),
    code("""
    from tapegrad import debug

    rng = np.random.default_rng(0)
    X_np = rng.standard_normal((64, 8)).astype(np.float32)
    Y_np = rng.integers(0, 3, 64)

    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    opt = tf.keras.optimizers.SGD(0.1)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    Xt, Yt = tf.constant(X_np), tf.constant(Y_np)
    losses = [float(train_step(Xt, Yt)) for _ in range(5)]
    print("losses:", np.round(losses, 5), " traces:", train_step.experimental_get_tracing_count())
    print(debug.format_program(train_step))
    """),
    code("""
    show_graph(debug.draw_program(train_step))
    """),
    md("""
    ## What breaks a graph

    In TensorFlow a traced tensor has no value: `bool(x)` and `x.numpy()` raise.  In PyTorch
    reading a value is a graph break: the function runs eagerly (so the result is still
    right) and `fullgraph=True` turns the break into an error.
    """),
    code("""
    @tf.function(autograph=False)
    def branchy(x):
        return x if x > 0 else -x

    try:
        branchy(tf.constant(1.0))
    except Exception as e:
        print(type(e).__name__ + ":", str(e).split(". ")[0] + ".")

    def torch_branchy(x):
        return x * 2 if x.sum() > 0 else -x

    cb = torch.compile(torch_branchy)
    print(cb(torch.ones(2)), cb(-torch.ones(2)))
    print(torch._dynamo.explain(cb))
    try:
        torch.compile(torch_branchy, fullgraph=True)(torch.ones(2))
    except Exception as e:
        print(type(e).__name__ + ":", str(e).splitlines()[0])
    """),
    md("""
    ## Speed: eager vs compiled against hand-written NumPy

    One SGD step of an MLP (784-256-256-10, batch 128, float32) and a chain of 2,000 scalar
    ops with its gradient, in both styles, eager and compiled, as a ratio to a hand-written
    NumPy step measured in the same loop (the medians of paired runs, in CPU time with one
    BLAS thread).  The compiled step
    replays the program: the same NumPy kernels as the eager step, without the Python body,
    the graph recording or the engine's walk.
    """),
    code("""
    import time
    sys.path.insert(0, str(pathlib.Path.cwd().resolve().parent))  # the repository's benchmarks/
    from benchmarks.compiled import tf_compiled_setups, torch_compiled_setups
    from benchmarks.impls import IMPLS
    from benchmarks.workloads import WORKLOADS

    builds = {i.name: i.build for i in IMPLS}
    variants = {
        "tapegrad.tf eager": builds["tapegrad.tf (tape)"](tf),
        "tapegrad.tf @tf.function": tf_compiled_setups(tf),
        "tapegrad.torch eager": builds["tapegrad.torch (backward)"](torch),
        "tapegrad.torch torch.compile": torch_compiled_setups(torch),
    }

    try:  # one BLAS thread: CPU time is then the work done (steady on a shared machine)
        from threadpoolctl import threadpool_limits
        _limits = threadpool_limits(1)
    except ImportError:
        pass

    def ratios(key, sizes, rounds=9):
        w = WORKLOADS[key]
        data = w.make_data(sizes, 0)
        hand = w.reference(data)
        out = {}
        for name, setups in variants.items():
            if key not in setups:
                continue
            run = setups[key](data)
            run(); hand()
            rs = []
            for _ in range(rounds):  # CPU time of this process: steadier on a shared machine
                t0 = time.process_time(); hand(); th = time.process_time() - t0
                t0 = time.process_time(); run(); tr = time.process_time() - t0
                rs.append(tr / max(th, 1e-9))
            out[name] = float(np.median(rs))
        return out

    w1 = ratios("W1", WORKLOADS["W1"].sizes)
    w2 = ratios("W2", WORKLOADS["W2"].sizes)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, (title, r) in zip(axes, [("W1: MLP SGD step", w1), ("W2: 2,000 scalar ops + gradient", w2)]):
        names = list(r)
        ax.barh(names, [r[n] for n in names],
                color=["#9ecae1" if "eager" in n else "#3182bd" for n in names])
        ax.axvline(1.0, color="k", lw=1)
        ax.set(xscale="log", xlabel="time / hand NumPy (log scale)", title=title)
        for i, n in enumerate(names):
            ax.text(r[n], i, f" {r[n]:.2f}x", va="center")
    fig.tight_layout()
    plt.show()
    print({k: round(v, 2) for k, v in w1.items()}, {k: round(v, 2) for k, v in w2.items()})
    """),
    REAL_MD,
    code("""
    def tf_style(tf):
        calls = []

        @tf.function
        def h(x, k=2.0):
            calls.append(1)
            return tf.reduce_sum(x * k)

        vals = [h(tf.constant([1.0, 2.0])), h(tf.constant([3.0, 4.0])), h(tf.constant(1.0)),
                h(tf.constant(1.0), 3.0)]
        v = tf.Variable(1.0)

        @tf.function
        def inc():
            v.assign_add(1.0)
            return v.read_value()

        incs = [float(inc()) for _ in range(3)]
        return {"values": np.array([float(x) for x in vals]), "tracing count": h.experimental_get_tracing_count(),
                "Python body ran": len(calls), "assign_add every call": np.array(incs)}

    def torch_style(torch):
        torch.manual_seed(0)
        lin = torch.nn.Linear(3, 2)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]])

        def step(x):
            opt.zero_grad()
            loss = (lin(x) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        cstep = torch.compile(step) if torch.__name__ == "tapegrad.torch" else step
        ls = [cstep(x).item() for _ in range(4)]
        return {"losses (compiled here, eager in real PyTorch)": np.array(ls),
                "weight after 4 steps": lin.weight.detach().numpy()}

    ours, theirs = compare(tf_style, "tensorflow")
    print()
    compare(torch_style, "torch");
    """),
    md("""
    ## The difference

    `tf.function` changes what your Python code *means*: the body is a program generator, run
    once per signature, and only graph operations (`tf.print`, assignments, optimizer steps)
    repeat; using a traced tensor as a Python value is an error.  `torch.compile` keeps eager
    meaning: whatever it cannot record falls back to eager execution, and the numbers are the
    eager numbers.  Both then replay a recorded program, which in tapegrad is the same
    straight-line NumPy code for both styles, so a compiled step costs about what the NumPy
    kernels cost.
    """),
]


# --------------------------------------------------------------------------- 09 conv nets
NB09 = [
    md(r'''
    # 9. A small convolutional network in both styles

    One CNN — convolution, batch normalization, ReLU, max pooling, a dense layer — trained on a
    synthetic image task, once in PyTorch style (`torch.nn.Conv2d`, `BatchNorm2d`, `MaxPool2d`,
    `Linear`, `optimizer.step()`) and once in Keras style (`Conv2D`, `BatchNormalization`,
    `MaxPooling2D`, `Dense`, `apply_gradients`), from the same initial weights.  The two
    frameworks store the same network differently — channels first against channels last,
    `(out, in, kh, kw)` kernels against `(kh, kw, in, out)`, another flattening order, another
    batch-norm momentum convention — and the notebook shows where those differences matter
    (weight layout, evaluation mode) and where they do not (the training trajectory).

    The plots: both loss curves on one axis, the learned filters of both models as images, and
    the recorded graph of one training step.
    '''),
    SETUP,
    md('''
    ## The task: bars and diagonals

    12 x 12 grey images with one of three shapes — a horizontal bar, a vertical bar or a
    diagonal, at a random place — under Gaussian noise.  A 3 x 3 filter that detects
    edges of one orientation is exactly what separates them.
    '''),
    code('''
    rng = np.random.default_rng(0)

    def make_images(n):
        """n images (n, 12, 12) and labels: 0 horizontal bar, 1 vertical bar, 2 diagonal."""
        y = rng.integers(0, 3, n)
        x = 0.3 * rng.standard_normal((n, 12, 12))
        for k in range(n):
            p = rng.integers(2, 10)
            if y[k] == 0:
                x[k, p, 1:11] += 1.0
            elif y[k] == 1:
                x[k, 1:11, p] += 1.0
            else:
                s = rng.integers(-2, 3)
                for i in range(12):
                    if 0 <= i + s < 12:
                        x[k, i, i + s] += 1.0
        return x.astype(np.float32), y.astype(np.int64)

    X, Y = make_images(512)
    X_test, Y_test = make_images(256)

    fig, axes = plt.subplots(1, 6, figsize=(9, 1.8))
    for ax, k in zip(axes, range(6)):
        ax.imshow(X[k], cmap="gray")
        ax.set(title=["horizontal", "vertical", "diagonal"][Y[k]], xticks=[], yticks=[])
    plt.show()
    '''),
    md('''
    ## Initial weights, drawn once

    Four 3 x 3 filters, then a dense layer from the 4 x 5 x 5 pooled features to 3 classes.
    The arrays are in PyTorch's layouts; the Keras model gets them transposed: its conv kernel
    is `(kh, kw, in, out)`, and its `Flatten` reads the pooled features in `(h, w, c)` order
    where PyTorch's reads `(c, h, w)`, so the dense kernel's rows are permuted to match.
    '''),
    code('''
    C = 4                                    # filters
    init = {"conv_w": (rng.standard_normal((C, 1, 3, 3)) / 3).astype(np.float32),
            "conv_b": np.zeros(C, np.float32),
            "dense_w": (rng.standard_normal((3, C * 5 * 5)) / np.sqrt(C * 25)).astype(np.float32),
            "dense_b": np.zeros(3, np.float32)}
    EPOCHS, BATCH, LR = 15, 64, 0.1
    {k: v.shape for k, v in init.items()}
    '''),
    md('''
    ## The two training loops

    Written as functions of the framework module so that the same code runs below with the
    real PyTorch and TensorFlow.  Both use plain SGD on mini-batches of 64 in a fixed order,
    so the two runs see the same batches.  Batch norm normalizes with the batch's statistics
    while training in both frameworks; Keras's default `epsilon` is 1e-3 and PyTorch's 1e-5,
    so the Keras layer is given PyTorch's.
    '''),
    code('''
    def train_torch(torch, epochs=EPOCHS):
        nn = torch.nn
        model = nn.Sequential(nn.Conv2d(1, C, 3), nn.BatchNorm2d(C), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(C * 5 * 5, 3))
        with torch.no_grad():
            model[0].weight.copy_(torch.tensor(init["conv_w"]))
            model[0].bias.copy_(torch.tensor(init["conv_b"]))
            model[5].weight.copy_(torch.tensor(init["dense_w"]))
            model[5].bias.copy_(torch.tensor(init["dense_b"]))
        optimizer = torch.optim.SGD(model.parameters(), lr=LR)
        x, y = torch.tensor(X[:, None]), torch.tensor(Y)      # (N, 1, 12, 12): channels first
        losses = []
        model.train()
        for epoch in range(epochs):
            for s in range(0, len(X), BATCH):
                optimizer.zero_grad()
                loss = nn.functional.cross_entropy(model(x[s:s + BATCH]), y[s:s + BATCH])
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        model.eval()                                           # batch norm: running statistics
        with torch.no_grad():
            accuracy = (model(torch.tensor(X_test[:, None])).argmax(1).numpy() == Y_test).mean()
        return {"losses": np.array(losses), "filters": model[0].weight.detach().numpy(),
                "test accuracy": accuracy, "model": model}


    def train_tf(tf, epochs=EPOCHS):
        L = tf.keras.layers
        model = tf.keras.Sequential([tf.keras.Input(shape=(12, 12, 1)), L.Conv2D(C, 3),
                                     L.BatchNormalization(epsilon=1e-5), L.ReLU(),
                                     L.MaxPooling2D(), L.Flatten(), L.Dense(3)])
        dense = init["dense_w"].reshape(3, C, 5, 5).transpose(2, 3, 1, 0).reshape(-1, 3)
        gamma, beta, mean, var = model.layers[1].get_weights()
        model.set_weights([init["conv_w"].transpose(2, 3, 1, 0), init["conv_b"],
                           gamma, beta, mean, var, dense, init["dense_b"]])
        optimizer = tf.keras.optimizers.SGD(learning_rate=LR)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        x, y = tf.constant(X[..., None]), tf.constant(Y)       # (N, 12, 12, 1): channels last
        losses = []
        for epoch in range(epochs):
            for s in range(0, len(X), BATCH):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y[s:s + BATCH], model(x[s:s + BATCH], training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                losses.append(float(loss.numpy()))
        logits = model(tf.constant(X_test[..., None]), training=False)
        accuracy = (logits.numpy().argmax(1) == Y_test).mean()
        return {"losses": np.array(losses),
                "filters": model.layers[0].get_weights()[0].transpose(3, 2, 0, 1),
                "test accuracy": accuracy, "model": model}
    '''),
    code('''
    import tapegrad.tf as tf
    import tapegrad.torch as torch

    run_pt = train_torch(torch)
    run_tf = train_tf(tf)
    print(f"steps: {len(run_pt['losses'])}; final loss  PyTorch style {run_pt['losses'][-1]:.6f}"
          f"   TF style {run_tf['losses'][-1]:.6f}")
    print("largest loss difference over the run:", np.abs(run_pt["losses"] - run_tf["losses"]).max())
    print("largest filter difference:", np.abs(run_pt["filters"] - run_tf["filters"]).max())
    print(f"test accuracy  PyTorch style {run_pt['test accuracy']:.4f}   "
          f"TF style {run_tf['test accuracy']:.4f}")
    '''),
    md('''
    The training trajectories agree to float32 rounding.  The test accuracies need not: in
    evaluation mode batch norm uses its *running* statistics, and the two frameworks keep them
    with opposite momentum conventions — PyTorch `momentum=0.1` weights the *new* batch
    (`running = 0.9 running + 0.1 batch`, with the unbiased variance), Keras `momentum=0.99`
    weights the *old* value (`moving = 0.99 moving + 0.01 batch`).  After 120 steps PyTorch's
    estimate follows the recent batches, while Keras's still carries much of its initial
    value (zeros for the mean, ones for the variance), so the two models classify the test
    images with different normalizations:
    '''),
    code('''
    bn_pt = run_pt["model"][1]
    bn_tf = run_tf["model"].layers[1]
    print("PyTorch style running_mean:", bn_pt.running_mean.numpy())
    print("Keras   style moving_mean: ", bn_tf.moving_mean.numpy())
    print("PyTorch style running_var: ", bn_pt.running_var.numpy())
    print("Keras   style moving_var:  ", bn_tf.moving_variance.numpy())
    '''),
    md('''
    ## The loss curves, both styles on one plot
    '''),
    code('''
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(run_tf["losses"], color="#ff7f0e", linewidth=4, alpha=0.45,
            label="TF style: Conv2D / BatchNormalization, apply_gradients")
    ax.plot(run_pt["losses"], color="#1f77b4", linewidth=1.2, linestyle="--",
            label="PyTorch style: Conv2d / BatchNorm2d, step")
    ax.set(xlabel="step (mini-batch of 64)", ylabel="cross-entropy", yscale="log",
           title="The same CNN from the same weights: the curves coincide")
    ax.legend()
    fig.tight_layout()
    plt.show()
    '''),
    md('''
    ## The learned filters

    The four 3 x 3 kernels before training and after it, in each style (the Keras kernels
    transposed back to PyTorch's layout).  Training moves each kernel away from its random
    start, and the two styles move them to the same place.
    '''),
    code('''
    rows = [("initial", init["conv_w"]), ("PyTorch style", run_pt["filters"]),
            ("TF style", run_tf["filters"])]
    fig, axes = plt.subplots(len(rows), C, figsize=(1.6 * C, 1.7 * len(rows)))
    lim = max(np.abs(w).max() for _, w in rows)
    for r, (name, w) in enumerate(rows):
        for c in range(C):
            ax = axes[r, c]
            ax.imshow(w[c, 0], cmap="RdBu_r", vmin=-lim, vmax=lim)
            ax.set(xticks=[], yticks=[])
            if c == 0:
                ax.set_ylabel(name, fontsize=9)
    fig.suptitle("conv filters (red positive, blue negative)")
    fig.tight_layout()
    plt.show()
    '''),
    md('''
    ## The graph of one step

    One PyTorch-style forward pass on a batch of 8, drawn from the loss back to the parameters.
    Convolution, pooling and training-mode batch norm are one node each, with PyTorch's names
    (`ConvolutionBackward0`, `NativeBatchNormBackward0`, `MaxPool2DWithIndicesBackward0`); a
    `GradientTape` records the same ops for the Keras model.
    '''),
    code('''
    model = run_pt["model"]
    model.train()
    loss = torch.nn.functional.cross_entropy(model(torch.tensor(X[:8, None])), torch.tensor(Y[:8]))
    names = dict(model.named_parameters())
    show_graph(draw(loss, sources=names))

    with tf.GradientTape() as tape:
        logits = run_tf["model"](tf.constant(X[:8, ..., None]), training=True)
        loss_tf = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            tf.constant(Y[:8]), logits))
    print(format_graph(loss_tf, tape=tape))
    '''),
    REAL_MD,
    code('''
    # 3 epochs (24 steps) of the same code on each framework
    def torch_style(torch):
        r = train_torch(torch, epochs=3)
        return {"loss, step 1": r["losses"][0], "loss, step 24": r["losses"][-1],
                "filter 0 after 24 steps": r["filters"][0, 0].ravel(),
                "BN running_var": r["model"][1].running_var.numpy()}

    def tf_style(tf):
        r = train_tf(tf, epochs=3)
        return {"loss, step 1": r["losses"][0], "loss, step 24": r["losses"][-1],
                "filter 0 after 24 steps": r["filters"][0, 0].ravel(),
                "BN moving_variance": r["model"].layers[1].moving_variance.numpy()}

    compare(torch_style, "torch", rtol=1e-4, atol=1e-5)
    print()
    compare(tf_style, "tensorflow", rtol=1e-4, atol=1e-5);
    '''),
    md('''
    ## The difference

    The two styles build the same network from different parts and layouts.  PyTorch works
    channels first (`N, C, H, W`) with `(out, in, kh, kw)` kernels and `(out, in)` dense
    weights; Keras channels last (`N, H, W, C`) with `(kh, kw, in, out)` kernels and
    `(in, out)` dense kernels, so a `Flatten` after the convolutions orders the features
    differently and moving weights between the two means transposing and permuting.  Training
    mode is a flag on the module in PyTorch (`model.train()` / `model.eval()`) and an argument
    of each call in Keras (`model(x, training=True)`).  Batch norm keeps its running statistics
    with opposite momentum conventions (0.1 on the new value against 0.99 on the old one) and
    other default epsilons.  Given the same weights and batches, the training steps are the
    same computation and the loss curves lie on each other; what differs is what the layers
    remember for evaluation.
    '''),
]


# --------------------------------------------------------------------------- 10 pipelines
NB10 = [
    md(r'''
    # 10. Training pipelines: `DataLoader` and a loop against `tf.data` and `model.fit`

    Real training code does more than compute gradients: it batches and shuffles the data,
    follows a learning-rate schedule, and records loss and accuracy per epoch.  The two
    frameworks package this differently:

    * **PyTorch**: a `Dataset` and a `DataLoader` hand out shuffled mini-batches; the loop is
      yours — forward, loss, `backward`, `optimizer.step()`, `scheduler.step()` — and so is the
      bookkeeping of the metrics.
    * **TensorFlow / Keras**: a `tf.data.Dataset` pipeline (`shuffle`, `batch`), a model
      `compile`d with an optimizer whose learning rate is a schedule object, a loss and
      metrics, and `model.fit`, which runs the loop and returns a `History`.

    The same classifier, from the same initial weights, is trained both ways; the plots show
    the two learning-rate schedules on one chart and the loss and accuracy curves from the
    manual loop and from `History` on one plot.
    '''),
    SETUP,
    md('''
    ## Data and initial weights

    960 points in 10 dimensions from three Gaussian clusters, and a 10-32-3 ReLU network
    whose initial weights are drawn once with NumPy (in Keras's `(in, out)` layout; PyTorch's
    `Linear` gets them transposed).
    '''),
    code('''
    rng = np.random.default_rng(0)
    N, D, K = 960, 10, 3
    centers = 1.2 * rng.standard_normal((K, D))
    Y = rng.integers(0, K, N)
    X = (centers[Y] + rng.standard_normal((N, D))).astype(np.float32)
    Y = Y.astype(np.int64)
    init = [(rng.standard_normal((D, 32)) * np.sqrt(2 / D)).astype(np.float32),
            np.zeros(32, np.float32),
            (rng.standard_normal((32, K)) * np.sqrt(1 / 32)).astype(np.float32),
            np.zeros(K, np.float32)]
    EPOCHS, BATCH, LR = 12, 32, 0.05
    STEPS = EPOCHS * (N // BATCH)      # 30 batches per epoch, 360 steps
    print(X.shape, Y.shape, np.bincount(Y), "steps:", STEPS)
    '''),
    md('''
    ## PyTorch style: `DataLoader` and a hand-written loop

    SGD with momentum 0.9 and a cosine learning-rate schedule stepped once per batch
    (`CosineAnnealingLR(T_max=STEPS)`).  Under `torch.manual_seed(0)` the loader's shuffled
    order is PyTorch's own (tapegrad draws it with PyTorch's generator).
    '''),
    code('''
    def train_torch(torch, shuffle=True, cosine=True):
        from importlib import import_module
        data = import_module(torch.__name__ + ".utils.data")   # torch.utils.data

        torch.manual_seed(0)
        dataset = data.TensorDataset(torch.tensor(X), torch.tensor(Y))
        loader = data.DataLoader(dataset, batch_size=BATCH, shuffle=shuffle)
        model = torch.nn.Sequential(torch.nn.Linear(D, 32), torch.nn.ReLU(), torch.nn.Linear(32, K))
        with torch.no_grad():
            for layer, (w, b) in zip([model[0], model[2]], [init[:2], init[2:]]):
                layer.weight.copy_(torch.tensor(w.T))
                layer.bias.copy_(torch.tensor(b))
        optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=STEPS if cosine else 10**9)
        history = {"loss": [], "accuracy": []}
        lrs = []
        for epoch in range(EPOCHS):
            total, correct, seen = 0.0, 0, 0
            for xb, yb in loader:
                optimizer.zero_grad()
                logits = model(xb)
                loss = torch.nn.functional.cross_entropy(logits, yb)
                loss.backward()
                lrs.append(scheduler.get_last_lr()[0])   # the rate this step uses
                optimizer.step()
                scheduler.step()
                total += loss.item() * len(yb)
                seen += len(yb)
                correct += (logits.argmax(1) == yb).sum().item()
            history["loss"].append(total / seen)
            history["accuracy"].append(correct / seen)
        return history, np.array(lrs)
    '''),
    md('''
    ## TensorFlow style: `tf.data` and `model.fit`

    The same optimizer with `keras.optimizers.schedules.CosineDecay(LR, decay_steps=STEPS)`,
    which Keras evaluates at the optimizer's step counter, and `metrics=["accuracy"]`.
    `fit` reports, per epoch, the mean of the batch losses and the accuracy over the epoch's
    examples, which is what the PyTorch loop above computes by hand.  (`shuffle=False` in
    `fit`: the dataset shuffles itself, once per epoch.)
    '''),
    code('''
    def train_keras(tf, shuffle=True, cosine=True):
        keras = tf.keras
        dataset = tf.data.Dataset.from_tensor_slices((X, Y))
        if shuffle:
            dataset = dataset.shuffle(N, seed=0)
        dataset = dataset.batch(BATCH)
        model = keras.Sequential([keras.Input(shape=(D,)),
                                  keras.layers.Dense(32, activation="relu"),
                                  keras.layers.Dense(K)])
        model.set_weights(init)
        schedule = keras.optimizers.schedules.CosineDecay(LR, decay_steps=STEPS if cosine else 10**9)
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=schedule, momentum=0.9),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        history = model.fit(dataset, epochs=EPOCHS, shuffle=False, verbose=0)
        lrs = np.array([float(schedule(step)) for step in range(STEPS)])
        return history.history, lrs
    '''),
    code('''
    import tapegrad.tf as tf
    import tapegrad.torch as torch

    hist_pt, lr_pt = train_torch(torch)
    hist_tf, lr_tf = train_keras(tf)
    print("History keys:", sorted(hist_tf))
    for name, h in [("PyTorch loop", hist_pt), ("Keras fit   ", hist_tf)]:
        print(f"{name}  loss per epoch: {np.round(h['loss'][:4], 4)} ... {h['loss'][-1]:.4f}"
              f"   final accuracy {h['accuracy'][-1]:.4f}")
    print("largest difference between the two schedules:", np.abs(lr_pt - lr_tf).max())
    '''),
    md('''
    The schedules are the same function of the step, and the curves below follow each other
    closely; they are not identical, for two reasons.  The pipelines shuffle differently
    (PyTorch's generator for the loader, `tf.data`'s seed for the dataset), so the batches
    differ.  And SGD with momentum is two formulas: Keras keeps a velocity
    $v \\leftarrow 0.9 v - \\eta_t g$ that holds each past step's learning rate, PyTorch a buffer
    $b \\leftarrow 0.9 b + g$ multiplied by the current rate, $w \\leftarrow w - \\eta_t b$; the two
    are the same steps only while the rate is constant.  Without shuffling, the runs differ
    only by that; without shuffling and with a constant rate ($T_{max}$ and `decay_steps` far
    beyond the run) they agree to float32 rounding:
    '''),
    code('''
    for cosine in (True, False):
        same_pt, _ = train_torch(torch, shuffle=False, cosine=cosine)
        same_tf, _ = train_keras(tf, shuffle=False, cosine=cosine)
        print(f"no shuffling, {'cosine' if cosine else 'constant'} rate: largest difference per "
              f"epoch in loss {np.abs(np.array(same_pt['loss']) - same_tf['loss']).max():.1e}, "
              f"in accuracy {np.abs(np.array(same_pt['accuracy']) - same_tf['accuracy']).max():.1e}")
    '''),
    md('''
    ## The learning-rate schedules of both, on one chart

    With a few more of each framework's schedules, all for the same 360 steps: step decay
    (`StepLR` / `PiecewiseConstantDecay`), exponential decay (`ExponentialLR` stepped per
    batch / `ExponentialDecay`) and the cosine used above.  Each pair is computed by the
    framework's own scheduler object.
    '''),
    code('''
    def torch_schedule(make, steps=STEPS):
        p = torch.nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD([p], lr=LR)
        sched = make(opt)
        out = []
        for _ in range(steps):
            out.append(sched.get_last_lr()[0])
            opt.step()
            sched.step()
        return np.array(out)

    S = torch.optim.lr_scheduler
    KS = tf.keras.optimizers.schedules
    pairs = {
        "cosine": (torch_schedule(lambda o: S.CosineAnnealingLR(o, T_max=STEPS)),
                   KS.CosineDecay(LR, decay_steps=STEPS)),
        "step (x0.5 every 90)": (torch_schedule(lambda o: S.StepLR(o, step_size=90, gamma=0.5)),
                                 KS.PiecewiseConstantDecay([89, 179, 269],
                                                           [LR, LR / 2, LR / 4, LR / 8])),
        "exponential (x0.99)": (torch_schedule(lambda o: S.ExponentialLR(o, gamma=0.99)),
                                KS.ExponentialDecay(LR, decay_steps=1, decay_rate=0.99)),
    }
    fig, ax = plt.subplots(figsize=(8, 4))
    colors = ["#1f77b4", "#2ca02c", "#d62728"]
    for (name, (pt, keras_sched)), c in zip(pairs.items(), colors):
        ks = np.array([float(keras_sched(s)) for s in range(STEPS)])
        ax.plot(ks, color=c, linewidth=5, alpha=0.3, label=f"Keras {type(keras_sched).__name__}")
        ax.plot(pt, color=c, linewidth=1.2, linestyle="--", label=f"PyTorch, {name}")
        print(f"{name:22} largest difference {np.abs(pt - ks).max():.2e}")
    ax.set(xlabel="step", ylabel="learning rate", title="Learning-rate schedules: Keras (wide) and PyTorch (dashed)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()
    '''),
    md('''
    ## Loss and accuracy: the manual loop and `History`, on one plot
    '''),
    code('''
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    epochs = np.arange(1, EPOCHS + 1)
    for ax, key in [(ax1, "loss"), (ax2, "accuracy")]:
        ax.plot(epochs, hist_tf[key], "o-", color="#ff7f0e", linewidth=4, alpha=0.45,
                label="Keras: model.fit -> History.history")
        ax.plot(epochs, hist_pt[key], "s--", color="#1f77b4", linewidth=1.2, markersize=4,
                label="PyTorch: DataLoader loop, by hand")
        ax.set(xlabel="epoch", ylabel=key, title=f"training {key} per epoch")
        ax.legend(fontsize=8)
    ax1.set_yscale("log")
    fig.tight_layout()
    plt.show()
    '''),
    REAL_MD,
    code('''
    # PyTorch: the loader's shuffled order is PyTorch's, so even the shuffled run matches.
    # Keras: tapegrad's tf.data shuffle is reproducible but not TensorFlow's order, so the
    # comparison runs the unshuffled pipeline.
    def torch_style(torch):
        h, lrs = train_torch(torch)
        return {"loss, epoch 1": h["loss"][0], "loss, epoch 12": h["loss"][-1],
                "accuracy, epoch 12": h["accuracy"][-1], "lr at steps 0, 100, 359": lrs[[0, 100, 359]]}

    def tf_style(tf):
        h, lrs = train_keras(tf, shuffle=False)
        return {"loss, epoch 1": h["loss"][0], "loss, epoch 12": h["loss"][-1],
                "accuracy, epoch 12": h["accuracy"][-1], "lr at steps 0, 100, 359": lrs[[0, 100, 359]]}

    compare(torch_style, "torch", rtol=1e-5, atol=1e-6)
    print()
    compare(tf_style, "tensorflow", rtol=1e-5, atol=1e-6);
    '''),
    md('''
    ## The difference

    Both styles run the same four steps per batch, but they divide the work differently.  In
    PyTorch the data pipeline (`Dataset`, `DataLoader`) and the optimizer are objects, and the
    loop that connects them is user code: you call `scheduler.step()` when you want the rate
    to change (per batch here, per epoch in many examples) and you keep the metrics yourself.
    In Keras the pipeline is a `tf.data.Dataset` transformed by chained methods, the schedule
    is a function of the optimizer's step counter that is attached to the optimizer, and
    `fit` owns the loop: it counts the steps, averages the loss, updates the metrics and hands
    back a `History`.  Shuffling is the one place the two styles do not draw alike: the same
    seed gives a different order in each framework, so shuffled runs agree only statistically.
    '''),
]


# --------------------------------------------------------------------------- 12 saving
NB12 = [
    md(r'''
    # 12. Saving and loading: the frameworks' own files, and what `weights_only` protects

    tapegrad writes and reads the real frameworks' formats: `torch.save` / `torch.load` use
    PyTorch's zip checkpoint (`data.pkl` plus one file per storage), Keras's
    `model.save("m.keras")` / `save_weights("m.weights.h5")` use Keras 3's zip and HDF5 layouts.
    So weights move between the two styles, and to and from the real PyTorch and Keras.

    The second half is about safety.  A PyTorch checkpoint is a pickle, and a pickle can name
    any function to call while it is loaded.  `torch.load(..., weights_only=True)` — the
    default since PyTorch 2.6, and in tapegrad — reads only tensors, containers and plain
    values, and refuses everything else; a harmless example shows the difference.
    (`tf.saved_model` is not covered here: it stores traced `tf.function`s.)
    '''),
    SETUP,
    code('''
    import pickle
    import tempfile
    import zipfile

    import tapegrad.tf as tf
    import tapegrad.torch as torch

    work = pathlib.Path(tempfile.mkdtemp(prefix="tapegrad-nb12-"))   # every file goes here
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    print("files in", work)
    '''),
    md('''
    ## Save in PyTorch style

    A small network with PyTorch's default initialisation (after `torch.manual_seed(0)` these
    are PyTorch's numbers), saved as a state dict.  The file is PyTorch's zip archive.
    '''),
    code('''
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    y_net = net(torch.tensor(x)).detach().numpy()
    torch.save(net.state_dict(), work / "net.pt")
    for name in zipfile.ZipFile(work / "net.pt").namelist():
        print(" ", name)
    '''),
    md('''
    ## Load it in the other style

    `torch.load` gives back the state dict (an `OrderedDict` of tensors); a Keras model takes
    the same arrays with `set_weights`, transposed, because a Keras `Dense` kernel is
    `(in, out)` and a PyTorch `Linear` weight `(out, in)`.  Then the Keras model is saved in
    Keras's own formats and read back.
    '''),
    code('''
    state = torch.load(work / "net.pt")          # weights_only=True: the default
    print({k: tuple(v.shape) for k, v in state.items()})

    keras_net = tf.keras.Sequential([tf.keras.Input(shape=(4,)),
                                     tf.keras.layers.Dense(8, activation="tanh"),
                                     tf.keras.layers.Dense(2)])
    keras_net.set_weights([state["0.weight"].numpy().T, state["0.bias"].numpy(),
                           state["2.weight"].numpy().T, state["2.bias"].numpy()])
    y_keras = keras_net(tf.constant(x)).numpy()

    keras_net.save(work / "net.keras")
    keras_net.save_weights(work / "net.weights.h5")
    print("net.keras holds", zipfile.ZipFile(work / "net.keras").namelist())
    reloaded = tf.keras.models.load_model(work / "net.keras")
    y_reloaded = reloaded(tf.constant(x)).numpy()

    fresh = tf.keras.Sequential([tf.keras.Input(shape=(4,)),
                                 tf.keras.layers.Dense(8, activation="tanh"),
                                 tf.keras.layers.Dense(2)])
    fresh.load_weights(work / "net.weights.h5")
    y_h5 = fresh(tf.constant(x)).numpy()

    routes = {"PyTorch style -> Keras style (set_weights)": y_keras,
              "-> .keras -> load_model": y_reloaded,
              "-> .weights.h5 -> load_weights": y_h5}
    for name, y in routes.items():
        print(f"{name:45} max |output - PyTorch-style output| = {np.abs(y - y_net).max():.1e}")
    '''),
    md('''
    ## And in the real frameworks

    The very files written above, read by the real PyTorch and Keras when they are installed;
    and a checkpoint written by the real PyTorch, read by tapegrad.
    '''),
    code('''
    real_torch = real_framework("torch")
    if real_torch is not None:
        rstate = real_torch.load(work / "net.pt")
        rnet = real_torch.nn.Sequential(real_torch.nn.Linear(4, 8), real_torch.nn.Tanh(),
                                        real_torch.nn.Linear(8, 2))
        rnet.load_state_dict(rstate)
        routes["net.pt -> real torch.load"] = rnet(real_torch.tensor(x)).detach().numpy()
        real_torch.save({"weights": rnet.state_dict(), "step": 7}, work / "from_real_torch.pt")
        back = torch.load(work / "from_real_torch.pt")
        print("written by real PyTorch, read by tapegrad:", {k: type(v).__name__ for k, v in back.items()},
              "| same weights:", all(np.array_equal(back["weights"][k].numpy(), v.numpy())
                                     for k, v in state.items()))

    real_tf = real_framework("tensorflow")
    if real_tf is not None:
        import keras as real_keras
        rk = real_keras.models.load_model(work / "net.keras")
        routes["net.keras -> real keras.models.load_model"] = np.asarray(rk(x))
        rk2 = real_keras.Sequential([real_keras.Input(shape=(4,)),
                                     real_keras.layers.Dense(8, activation="tanh"),
                                     real_keras.layers.Dense(2)])
        rk2.load_weights(work / "net.weights.h5")
        routes["net.weights.h5 -> real load_weights"] = np.asarray(rk2(x))

    for name, y in routes.items():
        print(f"{name:45} max |output - PyTorch-style output| = {np.abs(y - y_net).max():.1e}")
    '''),
    md('''
    Every route gives the same outputs; where two frameworks' float32 matrix products sum in
    another order the last bit can differ (a few 1e-8).  The plot shows the largest difference
    per route on a log scale (zero is drawn at 1e-10):
    '''),
    code('''
    diffs = {k: max(float(np.abs(v - y_net).max()), 1e-10) for k, v in routes.items()}
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(diffs) + 1))
    ax.barh(list(diffs), list(diffs.values()), color="#1f77b4")
    ax.axvline(np.finfo(np.float32).eps, color="gray", linestyle=":", label="float32 epsilon")
    ax.set(xscale="log", xlim=(1e-11, 1e-4), xlabel="max |output - original output|",
           title="The same network after each save/load route")
    ax.invert_yaxis()
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()
    '''),
    md('''
    ## What `weights_only` protects against

    A pickle is a small program: besides building lists and dicts it may say "import this
    function and call it with these arguments", and `pickle.load` does so.  A class decides
    what its pickle says with `__reduce__`.  Here a harmless one makes the loader call
    `print`; a real attack would name `os.system` or anything else.  The object is saved
    beside perfectly ordinary weights, as a shared checkpoint might carry it.
    '''),
    code('''
    class Surprise:
        """An object whose pickle tells the loader to call print(...)."""

        def __reduce__(self):
            return (print, ("!!! this line was printed by code inside the checkpoint, during loading",))

    torch.save({"weights": net.state_dict(), "extra": Surprise()}, work / "suspicious.pt")
    print(pickle.loads(pickle.dumps(Surprise())))   # what any plain unpickling does: it calls print
    '''),
    md('''
    With the default `weights_only=True`, tapegrad's `torch.load` runs the pickle in a small
    interpreter that can build only tensors, parameters, containers, numbers, strings, dtypes
    and `torch.Size`; it meets `builtins.print`, refuses it with PyTorch's `UnpicklingError`
    and message, and nothing is called.  `weights_only=False` is plain pickle: the code runs.
    Only use it for files you made or trust.
    '''),
    code('''
    import re

    def try_loading(torch, path):
        out, message = {}, ""
        try:
            torch.load(path)                              # weights_only=True
            out["weights_only=True"] = "loaded"
        except pickle.UnpicklingError as e:
            message = re.sub(r"\\x1b\\[[0-9;]*m", "", str(e))   # (the message has bold-face codes)
            why = next(line for line in message.splitlines() if "Unsupported global" in line)
            out["weights_only=True"] = f"{type(e).__name__}: {why.strip()[:95]}"
        loaded = torch.load(path, weights_only=False)     # runs the file's code: print(...)
        out["weights_only=False"] = f"loaded {sorted(loaded)}; 'extra' is {loaded['extra']!r}"
        return out, message

    ours, message = try_loading(torch, work / "suspicious.pt")
    for k, v in ours.items():
        print(f"{k:18} {v}")
    print("\\nThe whole message (PyTorch's words):\\n" + message)
    '''),
    md('''
    Allow-listing is explicit: `torch.serialization.add_safe_globals([...])` (or the
    `safe_globals([...])` context manager) names the classes and functions a trusted file may
    use.  Loading the weights alone needs none of it: save the state dict, not the objects.
    '''),
    code('''
    torch.save(net.state_dict(), work / "plain.pt")
    print("a plain state dict loads with the default:", sorted(torch.load(work / "plain.pt")))
    '''),
    REAL_MD,
    code('''
    # the same checkpoint (written by tapegrad) and the same loading code, on real PyTorch
    def torch_style(torch):
        out, message = try_loading(torch, work / "suspicious.pt")
        state = torch.load(work / "net.pt")
        return {**out, "the whole message": message,
                "net.pt: 0.weight[0]": state["0.weight"][0].numpy(),
                "net.pt: 2.bias": state["2.bias"].numpy()}

    compare(torch_style, "torch");
    '''),
    md('''
    ## The difference

    PyTorch saves Python objects (a state dict is an `OrderedDict` of tensors) through pickle,
    so a checkpoint is only as safe as the loader that reads it: `weights_only=True` restricts
    the pickle to data, `weights_only=False` trusts the file with your process.  Keras saves a
    model as data: a JSON config (class names looked up in a registry, never imported from the
    file by tapegrad) and an HDF5 file of arrays, so `load_model` rebuilds the layers from the
    config and assigns the weights.  The layouts of the weights differ (`(out, in)` against
    `(in, out)`), which is all it takes to move a trained network from one style to the other.
    '''),
]


NOTEBOOKS: dict[str, list[Cell]] = {
    "01_recording": NB01,
    "02_starting_the_computation": NB02,
    "03_accumulation": NB03,
    "04_persistence": NB04,
    "05_higher_order": NB05,
    "06_stopping_gradients": NB06,
    "07_training_loop": NB07,
    "08_functional_transforms": NB08,
    "09_conv_nets": NB09,
    "10_training_pipelines": NB10,
    "11_tf_function_and_compile": NB11,
    "12_saving_and_loading": NB12,
    "13_data_parallel": NB13,
}


def make_notebook(name: str) -> Any:
    """A fresh notebook object (no outputs) for ``name``, with stable cell ids."""
    import copy

    nb = new_notebook()
    nb.cells = [copy.deepcopy(c) for c in NOTEBOOKS[name]]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{name[:2]}-{i:02d}"
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    return nb


def execute(nb: Any, cwd: Path, timeout: int = 300) -> Any:
    """Execute ``nb`` in a fresh kernel whose working directory is ``cwd``."""
    from nbclient import NotebookClient

    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}}, record_timing=False)
    client.execute()
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("only", nargs="*", help="build only the notebooks whose names start so")
    parser.add_argument("--no-execute", action="store_true", help="write the cells without outputs")
    args = parser.parse_args(argv)
    names = [n for n in NOTEBOOKS if not args.only or any(n.startswith(p) for p in args.only)]
    if not names:
        parser.error(f"no notebook matches {args.only}")
    total = time.perf_counter()
    for name in names:
        nb = make_notebook(name)
        start = time.perf_counter()
        if not args.no_execute:
            execute(nb, HERE)
        path = HERE / f"{name}.ipynb"
        nbformat.validate(nb)
        nbformat.write(nb, str(path))
        print(f"{path.name}: {len(nb.cells)} cells"
              + ("" if args.no_execute else f", executed in {time.perf_counter() - start:.1f} s"))
    print(f"done in {time.perf_counter() - total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
