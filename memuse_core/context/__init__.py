"""Evaluation context (MemUse 3.3, A.1): exposure matching, prior context, recording checks.

Injection spans and credit windows live in `memuse_core.spans`; `context.build` runs everything
for an episode and stores it.
"""
