"""
Builders and drivers shared by the passes of every level: loop-nest builders, pattern
dispatch by op class, the online softmax recurrences. No pass lives here, and nothing
here imports a pass.
"""
