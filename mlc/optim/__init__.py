"""
`mlc.optim`: optimisers as pure update functions, and a compiled training step.

    opt = mlc.optim.AdamW(lr=1e-3)            # or SGD(lr, momentum, ...), Adam(...)
    state = opt.init(params)                  # a tuple of arrays (zeros, a step count)
    params, state = opt.update(params, grads, state)

`update` computes torch.optim's formulas with array arithmetic, so it runs on numpy
arrays and traces inside `mlc.jit` alike. `training_step(loss, opt)` compiles forward,
backward and update as one program (`docs/training.md`).
"""

from mlc.optim.optimizers import SGD, Adam, AdamW, Optimizer
from mlc.optim.step import training_step

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "training_step"]
