"""Build hook for the C extensions (everything else is in pyproject.toml).

``fingerprints.rule._kernel`` holds the engine's inner loops; the pure NumPy code computes
the same bytes and runs when the extension is missing (see fingerprints/rule/kernel.py).
``fingerprints.rule._segment`` is jieba's precise-mode segmentation (HMM off); rjieba
gives the same tokens when it is missing (see fingerprints/rule/segment_c.py).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "fingerprints.rule._kernel",
            ["fingerprints/rule/_kernel.c"],
            depends=[
                "fingerprints/rule/_bound.h",
                "fingerprints/rule/_scratch.h",
                "fingerprints/rule/_stamped.h",
                "fingerprints/rule/_samples.h",
                "fingerprints/rule/_pack.h",
                "fingerprints/rule/_cut.h",
                "fingerprints/rule/_fingerprint_cut.h",
                "fingerprints/rule/_args.h",
                "fingerprints/rule/_jsonl.h",
            ],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
        ),
        Extension(
            "fingerprints.rule._segment",
            ["fingerprints/rule/_segment.c"],
            depends=["fingerprints/rule/_cut.h", "fingerprints/rule/_huge.h",
                     "fingerprints/rule/_scratch.h"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
        ),
    ]
)
