"""What `--help` shows: real type names, no type on flags, a plain usage line, an example last.

Typer's help writes Python-ish types (`<bool>` on a flag that takes no value, `<list[Path]>`,
`<int range>`) and marks a required argument `{NAME}`. `polish()` replaces that display with
click's plain names (INTEGER, FLOAT, TEXT, PATH, the choices a|b|c), nothing for a flag, and
`NAME` / `[NAME]...` in the usage line; and it ends every command's help with an example
(`EXAMPLES`). Only the display changes; parsing is typer's. Guarded by `hasattr`, so another
typer version at worst shows its own display (a test checks ours).
"""

from __future__ import annotations

from typing import Any

from typer import core

from pipeline.cli.base import app

EXAMPLES: dict[str, str] = {
    "moves": "numbermatch moves 1.......9/3.5 --json",
    "apply": "numbermatch apply 19......./5.......5/2 0,0-0,1 --adds 1",
    "show": "numbermatch show generated/2026-11-29/bundle.yaml:L1.S1",
    "solve": "numbermatch solve 123456789/987654321/135 --adds 1",
    "rate": "numbermatch rate generated/2026-11-29/bundle.yaml:L1.S1 --explain",
    "generate": "numbermatch generate --count 20 --cells 27 --adds 1 --tier hard --seed 7 --out puzzles/",
    "validate": "numbermatch validate generated/ --format github",
    "assemble": "numbermatch assemble puzzles/ --levels 3 --stages 5 --pin L1.S1=nm1-b6ab4c7d13cb --out bundle.yaml",
    "nightly": "numbermatch nightly --date 2026-11-29",
    "play": "numbermatch play generated/2026-11-29/bundle.yaml:L1.S1   (or: printf '0,1-1,1\\nq\\n' | numbermatch play ...)",
    "puzzle": "numbermatch puzzle 315931549/192849699/884365556 --adds 3 --out puzzles/   (then: numbermatch puzzle --refresh puzzles/*.yaml)",
    "swap": "numbermatch swap generated/2026-11-29/bundle.yaml L3.S2   (the pool is generated/2026-11-29/pool/)",
    "render": "numbermatch render generated/2026-11-29/bundle.yaml:L1.S1 --next --out stage.svg",
    "report": "numbermatch report generated/2026-11-29/bundle.yaml --out night.html",
    "studio": "numbermatch studio generated/ --port 8765   (then open http://127.0.0.1:8765/)",
    "telemetry": "numbermatch telemetry simulate generated/2026-11-29/bundle.yaml --audience random:0.5,local:0.5 --attempts 200 --out night.jsonl",
    "observed": "numbermatch observed night.jsonl --levels generated/2026-11-29/bundle.yaml --format html --out observed.html",
    "calibrate": "numbermatch calibrate night.jsonl --levels generated/2026-11-29/bundle.yaml --out casual.yaml",
    "rescore": "numbermatch rescore --profile casual.yaml generated/2026-11-29/",
    "stock": "numbermatch stock --out generated   (also: stock refill --tier hard --cells 30 --adds 1 --count 20; stock prune)",
    "conformance": 'numbermatch conformance check --engine "node examples/conformance-js/engine.mjs"   (also: conformance export --out DIR; conformance serve)',
}

_NAMES = {
    "int": "INTEGER",
    "float": "FLOAT",
    "str": "TEXT",
    "path": "PATH",
    "Path": "PATH",
    "bool": "BOOLEAN",
}
_done = False


def type_name(param: Any, ctx: Any) -> str | None:
    """The plain type shown for an option; None for a flag and for an argument."""
    if getattr(param, "param_type_name", "") == "argument":
        return None  # an argument's name (its metavar) says what it is; its help says the rest
    if param.metavar is not None:
        return str(param.metavar)  # an option's metavar names its value
    if getattr(param, "is_flag", False):
        return None
    shown = str(param.display_type(ctx)).strip("<>")
    if getattr(param.type_descriptor, "is_choice", False):
        return shown.removeprefix("list[").removesuffix("]")
    many = shown.startswith("list[") or getattr(param, "nargs", 1) != 1
    shown = shown.removeprefix("list[").removesuffix("]").removesuffix(" range")
    name = _NAMES.get(shown, shown.upper())
    return f"{name}..." if many else name


def _usage_name(param: Any) -> str:
    name = param.display_name_raw
    if param.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name if param.required else f"[{name}]"


def polish() -> None:
    """Install the display (once) and add the examples to the registered commands."""
    global _done

    for info in app.registered_commands:
        name = info.name or (info.callback.__name__.replace("_", "-") if info.callback else None)
        if name in EXAMPLES and info.epilog is None:
            info.epilog = f"Example: {EXAMPLES[name]}"
    if _done:
        return
    _done = True

    for cls in (core.TyperOption, core.TyperArgument):
        if hasattr(cls, "display_type_rich") and hasattr(cls, "display_type"):
            cls.display_type_rich = lambda self, ctx: type_name(self, ctx)  # type: ignore[method-assign]
    if hasattr(core.TyperArgument, "_usage_display_name"):
        core.TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign, assignment]
