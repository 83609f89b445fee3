"""
The main job of `make run`: take each example program through mlc's graph passes
and show what comes out.

For each `examples/*.mlir`, it parses and verifies the program, runs the pipeline
below with pass timing, and prints the resulting IR with a one-line summary.
"""

import sys
from pathlib import Path

from mlc import driver
from mlc.registry import parse_pipeline

PIPELINE = "canonicalize,matmul-chain-reorder,cse,licm,dce"


def main() -> int:
    options = driver.OptOptions(passes=parse_pipeline(PIPELINE))
    failed = False
    for path in sorted(Path(__file__).parent.glob("*.mlir")):
        text = path.read_text()
        timer = driver.Timer()
        result = driver.process(text, str(path), options, timer=timer)
        print(f"==== {path.name}: mlc-opt -p '{PIPELINE}' ====")
        for diagnostic in result.diagnostics:
            print(diagnostic.render({str(path): text}), file=sys.stderr)
        if result.output is None:
            failed = True
            continue
        print(result.output, end="")
        times = ", ".join(f"{p.name} {timer.seconds[p.name] * 1e3:.1f} ms" for p in options.passes)
        print(f"---- {times}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
