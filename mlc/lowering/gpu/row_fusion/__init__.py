"""
How `fuse-row-epilogues` joins the loops that consume a row reduction to its loop: the
places the row body stores and accesses (`row_places`), short column loops unrolled as
they join (`column_unrolling`, softmax's two-pass form in `two_pass_softmax`), and the
loads forwarded and stores dropped after (`row_forwarding`). `scf.parallel` in and out.
"""
