"""The optional compiled core: `pip install` builds pipeline/engine/_core.c when it can.

The metadata lives in pyproject.toml; this file only adds the extension. A missing compiler or
a failed build prints one warning line and the install goes on in pure Python (as msgpack's and
MarkupSafe's do); `CC=false pip install -e .` shows it.
"""

import hashlib
import sys
from pathlib import Path

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


SOURCE = "pipeline/engine/_core.c"
# The core names the source it was built from (`_core.SOURCE_SHA256`): pipeline.engine.backend
# refuses a core built from another _core.c than the one beside it (an editable install's stale
# build) and runs in pure Python.
try:
    SOURCE_SHA256 = hashlib.sha256((Path(__file__).parent / SOURCE).read_bytes()).hexdigest()
except OSError:  # no C source here: the build below fails and warns, the install goes on
    SOURCE_SHA256 = ""

setup(
    ext_modules=[
        Extension(
            "pipeline.engine._core",
            sources=[SOURCE],
            extra_compile_args=["-O3"],
            define_macros=[("NM_SOURCE_SHA256", f'"{SOURCE_SHA256}"')],
            optional=True,
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
