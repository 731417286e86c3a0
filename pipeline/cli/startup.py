"""What the start-up paths share without loading `typing`: help and the fast path run in the
time Python itself starts, and `typing` alone is a visible part of it.

`TYPE_CHECKING` is False at run time; mypy reads every `if TYPE_CHECKING:` block as true
whatever module the name comes from, so the type-only imports stay checked.
"""

TYPE_CHECKING = False
