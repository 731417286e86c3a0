"""The optional compiled core: `pip install` builds pipeline/engine/_core.c when it can.

The metadata lives in pyproject.toml; this file only adds the extension. A missing compiler or
a failed build prints one warning line and the install goes on in pure Python (as msgpack's and
MarkupSafe's do); `CC=false pip install -e .` shows it.
"""

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that turns any build failure into a one-line warning."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            self._warn(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._warn(exc)

    def _warn(self, exc: Exception) -> None:
        line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(
            f"WARNING: numbermatch's compiled core was not built ({line}); running in pure Python",
            file=sys.stderr,
        )


setup(
    ext_modules=[
        Extension(
            "pipeline.engine._core",
            sources=["pipeline/engine/_core.c"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
