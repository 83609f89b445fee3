"""
Reverse-mode automatic differentiation of `ml` programs.

    emitter       the builder VJP rules write with (locations, constants, shape helpers)
    rule_table    the registry of VJP rules by op class
    rules/        the rules, one module per op family
    differentiate the traversal (`differentiate`) and the `autodiff` pass
    shift_invariance  maxima subtracted for stability only, which get no cotangent
    api           `mlc.grad` and `mlc.value_and_grad` on traced Python functions
    joint         the `ml.joint` mark of a joint forward/backward function
    min_cut       which forward values a backward saves or recomputes (a minimum cut)
    partition     the `autodiff-partition` pass: a joint function into forward and backward
    vjp           `mlc.vjp`: the two halves, compiled
    device        where `mlc.vjp`'s arrays live on `cuda` (residuals stay GPUArrays)
    imported      `traced_call`: an imported module's function called inside a trace

The output is `ml` ops like any other, so the graph passes, fusion and both targets
compile the backward program as they compile the forward one
(`docs/passes/autodiff.md`, `docs/training.md`).
"""
