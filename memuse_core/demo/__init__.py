"""Deterministic demo corpus: realistic coding-agent episodes in four memory configurations with
planted memory use (MemUse 4.1, A.5.2, A.6.5, A.6.6). Also the scale generator.

    from memuse_core.demo import DemoPlan, generate, build_demo
    build_demo("data/memuse.duckdb", DemoPlan(episodes=120, seed=7))
"""

from .build import DemoResult, build_demo
from .generate import CONFIGS, DemoFiles, DemoPlan, generate

__all__ = ["CONFIGS", "DemoFiles", "DemoPlan", "DemoResult", "build_demo", "generate"]
