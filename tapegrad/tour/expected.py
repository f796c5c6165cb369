"""What the real frameworks print for each tour example (same order as EXAMPLES).

Recorded with TensorFlow 2.21 (CPU) and PyTorch 2.13 (CPU); refresh with
``python -m tapegrad tour --against-real --record`` when they are installed.
"""

from __future__ import annotations

EXPECTED: list[str] = [
    'TensorFlow y: 5.0\nTensorFlow d(y)/d(w): 4.0\nTensorFlow d(y)/d(b): 1.0\n',
    'PyTorch y: 5.0\nPyTorch d(y)/d(w): 4.0\nPyTorch d(y)/d(b): 1.0\n',
    'First gradient: 4.0\nSecond gradient (fresh, no accumulation): 3.0\n',
    'After first backward(): w.grad = 4.0\nAfter second backward() (no zero_grad): w.grad = 7.0\nAfter third backward() (with zero_grad): w.grad = 4.0\n',
    'dy/dx = 6.0, dz/dx = 27.0\nsecond call: A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)\n',
    'dz/dx = 27.0\nafter a second backward (accumulated): 54.0\nthird call: Trying to backward through the graph a second time\n',
    'TensorFlow dy/dx: 12.0, d2y/dx2: 12.0\n',
    'PyTorch dy/dx: 12.0, d2y/dx2: 12.0\n',
    'dy/dx: [[2.0, 2.0], [2.0, 2.0]]\nfrozen variable gradient: None\n',
    'y.requires_grad: True\nz.requires_grad: False\nw.requires_grad: True\nw_detached.requires_grad: False\n',
    'epoch 0: loss 0.4524\nepoch 1: loss 0.4002\nepoch 2: loss 0.3628\nepoch 3: loss 0.3356\nepoch 4: loss 0.3155\nw: [0.0159, -0.0708, 0.2258] b: -0.1599\n',
    'epoch 0: loss 0.4524\nepoch 1: loss 0.4002\nepoch 2: loss 0.3628\nepoch 3: loss 0.3356\nepoch 4: loss 0.3155\nw: [0.0159, -0.0708, 0.2258] b: -0.1599\n',
    'epoch 0: loss 0.4524\nepoch 1: loss 0.4002\nepoch 2: loss 0.3628\nepoch 3: loss 0.3356\nepoch 4: loss 0.3155\n',
    'epoch 0: loss 0.4524\nepoch 1: loss 0.4002\nepoch 2: loss 0.3628\nepoch 3: loss 0.3356\nepoch 4: loss 0.3155\n',
    'Jacobian: [[13.0, 1.0, 1.0], [4.0, 28.0, 4.0], [9.0, 9.0, 45.0]]\nJ @ [1, 0, 0]: [13.0, 4.0, 9.0]\nper-sample: [[-3.0, -6.0], [-15.0, -20.0]]\n',
    'Jacobian: [[13.0, 1.0, 1.0], [4.0, 28.0, 4.0], [9.0, 9.0, 45.0]]\nJ @ [1, 0, 0]: [13.0, 4.0, 9.0]\nper-sample: [[-3.0, -6.0], [-15.0, -20.0]]\n',
]
