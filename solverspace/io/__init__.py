"""Files in: space files (`loader`: a path, the built-in `gemm`, or source text -> `Model`) and T1
tuning-problem files (`t1/`: the reader, the writer, their shared format, the condition reader and
the safe evaluator of Kernel Tuner restriction strings)."""
