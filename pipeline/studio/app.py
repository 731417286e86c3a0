"""The studio's Starlette application: pages rendered on the server with Jinja2 templates.

Routes (all pages take `path`, a file or folder relative to the studio's folder):

    GET  /          nights, bundles and puzzle folders, newest first, with counts per tier
    GET  /bundle    the curve chart and a card per Stage; the draft (swaps, pins, excludes)
    GET  /folder    a folder of puzzle files (a night's pool), a card per puzzle
    GET  /stage     play a Stage: the board as buttons, Add, undo, restart, hint, winnable?,
                    and the certificate step by step (`sol=K`)
    GET  /act       one click or button of the stage page; redirects to the new /stage address
    GET  /swap      the pool's candidates for one Stage, nearest first
    POST /draft     change the draft (no file is written); redirects to /bundle
    POST /save      apply the draft, validate, write atomically; refuses a stale base

Every rules decision is the engine's; the browser only sends the cell it clicked. Every POST
passes `guard.Guard` first (own origin, per-run token, a small urlencoded body): see guard.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from pipeline.solver.budgets import HINT_BUDGET_NODES
from pipeline.engine.board import WIDTH, parse
from pipeline.engine.moves import ADD, Move
from pipeline.engine.rulesets import SHIPPED, ruleset_for
from pipeline.errors import IllegalMoveError, NumberMatchError
from pipeline.formats.difficulty import Difficulty
from pipeline.formats.puzzle import Puzzle
from pipeline.jobs.curation import Curation, curation_beside, curation_path
from pipeline.jobs.report_html import FAVICON_SVG, tier_badge_css
from pipeline.jobs.swap import candidate_order
from pipeline.rating.profile import RatingProfile
from pipeline.rating.tiers import tier_for
from pipeline.solver import SOLVED, UNSOLVABLE
from pipeline.studio import game
from pipeline.studio.curate import (
    Draft, DraftError, SaveStopped, StaleSave, curation_of, draft_from, nearest, offer_pool, save, split_at, stage_name,
)
from pipeline.studio.library import (
    POOL_DIR, Library, LibraryError, StageSlot, bundle_stages, content_hash, difficulty_of, score_of, tier_of,
)
from pipeline.studio.guard import LOCAL_HOSTS, Guard, new_token
from pipeline.studio.paths import PathRefused, inside, relative

log = logging.getLogger("numbermatch.studio")
STATIC = Path(__file__).resolve().parent / "static"


def board_picture(cells: bytes, highlight: tuple[int, ...] = ()) -> Markup:
    """The designers' board picture (`pipeline.jobs.picture`), inlined in a card."""
    from pipeline.jobs.picture import board_svg

    return Markup(board_svg(cells, highlight=highlight, numbers=False, cell=20))


def explained(difficulty: Any) -> Any:
    """The rating's explanation of a stored difficulty block, or None when it has none."""
    from pipeline.rating.explain import explain

    if not isinstance(difficulty, dict):
        return None
    try:
        return explain(difficulty)
    except ValueError:
        return None


class Studio:
    """The application's state: the folder it serves and the scan cache. Nothing else."""

    def __init__(self, root: Path, observed: Mapping[str, Mapping[str, Any]] | None = None,
                 profile: RatingProfile | None = None) -> None:
        self.root = root.resolve()
        self.library = Library(self.root)
        # `studio --telemetry`: per puzzle id, what the players did (pipeline.telemetry.observed.stage_figures)
        self.observed = dict(observed or {})
        self.profile = profile  # `studio --profile`: cards also show the score and tier for that audience
        self.token = new_token()  # put in every form; a POST without it is refused (guard.py)
        self.env = Environment(loader=PackageLoader("pipeline.studio", "templates"), autoescape=select_autoescape(default=True))
        self.env.globals.update(
            url=url, picture=board_picture, explained=explained, WIDTH=WIDTH, token=self.token, stage_name=stage_name,
            tier_css=Markup(tier_badge_css()),
            observed=self.observed.get, profiled=self.profiled,
        )

    def profiled(self, difficulty: Any) -> tuple[float, str] | None:
        """A stored block's score and tier under `--profile` (None without one, or no score)."""
        if self.profile is None or not isinstance(difficulty, dict):
            return None
        try:
            rated = Difficulty.from_dict(difficulty)
            score = rated.score_under(self.profile)
        except (ValueError, KeyError, TypeError):
            return None
        return None if score is None else (score, rated.tier_under(self.profile))

    # -- helpers -------------------------------------------------------------------------
    def page(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(self.env.get_template(name).render(root=self.root.name or str(self.root), **context), status_code=status)

    def error(self, status: int, message: str) -> HTMLResponse:
        return self.page("message.html", status=status, title="Refused" if status == 403 else "Problem", message=message)

    def file(self, request: Request, key: str = "path") -> tuple[Path, str]:
        rel = request.query_params.get(key, "")
        return inside(self.root, rel), rel

    def bundle(self, path: Path, rel: str) -> tuple[dict[str, Any], bytes, list[StageSlot]]:
        data, raw = self.library.document(path, rel)
        return data, raw, bundle_stages(data, rel)

    def curation(self, bundle: Path, rel: str) -> Curation:
        """The pins and excludes kept beside a bundle (a curation file linking out of PATH is refused)."""
        inside(self.root, curation_path(Path(rel)).as_posix())
        return curation_beside(bundle, rel)

    def pool(self, bundle: Path) -> list[Puzzle]:
        return [p for _, p in self.pool_checked(bundle)[0]]

    def pool_checked(self, bundle: Path) -> tuple[list[tuple[str, Puzzle]], list[str]]:
        """The pool's puzzles the studio may ship, and a line per file it may not: the
        validator's refusals, and any puzzle whose canonical key (a relabelled copy included)
        a bundle under the studio's folder already ships (NM321; `stock.store`)."""
        from pipeline.stock.store import shipped_places

        accepted, refused = self.library.pool_checked(bundle)
        shipped = shipped_places(self.root)
        repeats = [f"{name}: NM321: {p.id} (or a relabelled copy) is already shipped at"
                   f" {Path(shipped[p.key]).relative_to(self.root).as_posix()}"
                   for name, p in accepted if p.key in shipped]
        return [(name, p) for name, p in accepted if p.key not in shipped], refused + repeats

    # -- pages -----------------------------------------------------------------------------
    def index(self, request: Request) -> Response:
        return self.page("index.html", folders=self.library.folders())

    def bundle_page(self, request: Request) -> Response:
        path, rel = self.file(request)
        data, raw, slots = self.bundle(path, rel)
        current = content_hash(raw)
        base = request.query_params.get("base") or current
        saved = self.curation(path, rel)  # the pins and excludes kept by an earlier Save
        if "draft" in request.query_params:
            draft = Draft.parse(request.query_params["draft"])
        else:
            draft = draft_from(saved)
        changes = bool(draft.swaps) or curation_of(draft, {s.at: str(s.puzzle.get("id")) for s in slots}) != saved
        pool = {p.id: p for p in self.pool(path)}
        shown: list[tuple[StageSlot, dict[str, Any] | None]] = []
        for slot in slots:
            new_id = draft.swap_for(slot.at)
            if new_id and new_id in pool:
                shown.append((StageSlot(slot.level, slot.stage, slot.target, pool[new_id].core_dict()), slot.puzzle))
            else:
                shown.append((slot, None))
        cards = [card(s, old) for s, old in shown]
        return self.page(
            "bundle.html", rel=rel, data=data, cards=cards, chart=curve(s for s, _ in shown),
            draft=draft, draft_text=str(draft), base=base, stale=base != current, pool_size=len(pool), changes=changes,
            curation_name=curation_path(path).name,
            message=request.query_params.get("msg", "")[:300], pool_rel=_pool_rel(self.root, path),
        )

    def folder_page(self, request: Request) -> Response:
        path, rel = self.file(request)
        if not path.is_dir():
            raise LibraryError(f"{rel}: no such folder")
        entries = []
        for name, puzzle, problem in self.library.puzzle_files(path):
            slot = StageSlot(0, 0, None, puzzle.core_dict()) if puzzle else None
            entries.append((name, card(slot, None) if slot else None, problem))
        return self.page("folder.html", rel=rel, entries=entries)

    def stage_source(self, request: Request) -> dict[str, Any]:
        """The puzzle a stage page plays: a bundle's Stage (`at`, drafts applied) or a puzzle file."""
        path, rel = self.file(request)
        data, raw = self.library.document(path, rel)
        at = request.query_params.get("at", "")
        draft_text = request.query_params.get("draft", "")
        source: dict[str, Any] = {"path": rel, "at": at, "draft": draft_text, "base": request.query_params.get("base", "")}
        if data.get("kind") == "bundle":
            level, stage = split_at(at)
            slot = next((s for s in bundle_stages(data, rel) if (s.level, s.stage) == (level, stage)), None)
            if slot is None:
                raise LibraryError(f"{rel}: has no Stage L{level}.S{stage}")
            puzzle = slot.puzzle
            swap_id = Draft.parse(draft_text).swap_for(at)
            if swap_id:
                found = next((p for p in self.pool(path) if p.id == swap_id), None)
                if found is None:
                    raise DraftError(f"draft puzzle {swap_id} is not in the pool")
                puzzle = found.core_dict()
            source.update(title=f"L{level}.S{stage}", target=slot.target)
        elif data.get("kind") == "puzzle":
            puzzle = data
            source.update(title=str(data.get("id")), target=None)
        else:
            raise LibraryError(f"{rel}: is neither a bundle nor a puzzle file")
        ruleset = ruleset_for(puzzle.get("ruleset", 1), SHIPPED)
        board, adds = puzzle.get("board"), puzzle.get("adds")
        if not isinstance(board, str) or not isinstance(adds, int) or isinstance(adds, bool) or not 0 <= adds <= 99:
            raise LibraryError(f"{rel}: the puzzle's board or adds is missing or malformed")
        source.update(puzzle=puzzle, start=parse(board), adds=adds, ruleset=ruleset)
        return source

    def stage_page(self, request: Request) -> Response:
        src = self.stage_source(request)
        q = request.query_params
        solution = [str(m) for m in src["puzzle"].get("solution") or []]
        base_query = {k: src[k] for k in ("path", "at", "draft", "base") if src[k]}
        if "sol" in q:
            step = _int(q.get("sol"), 0)
            pos, nxt = game.certificate_step(src["start"], src["adds"], solution, step, src["ruleset"])
            step = len(pos.moves)
            highlight: tuple[int, ...] = () if nxt is None or nxt.first is None or nxt.second is None else (nxt.first, nxt.second)
            game_text = q.get("game", "")  # the game in progress when the solution was opened: kept
            game_moves = len(game.parse_moves(game_text)) if game_text else 0
            return self.page(
                "solution.html", src=src, pos=pos, step=step, total=len(solution), next_move=nxt,
                cells=_cells(pos.cells, highlight=highlight), q=base_query, solution=solution,
                game=game_text if game_moves else "", game_moves=game_moves,
            )
        pos = game.replay(src["start"], src["adds"], game.parse_moves(q.get("m", "")), src["ruleset"])
        sel = _int(q.get("sel"), None)
        if sel is not None and not (0 <= sel < len(pos.cells) and pos.cells[sel]):
            sel = None
        note, highlight = self.note(pos, q.get("note", ""))
        return self.page(
            "stage.html", src=src, pos=pos, sel=sel, note=note, q=base_query, focus=_int(q.get("f"), sel),
            cells=_cells(pos.cells, selected=sel, highlight=highlight), solution=solution,
            adds_used=src["adds"] - pos.adds_left,
        )

    def note(self, pos: game.Position, note: str) -> tuple[dict[str, Any] | None, tuple[int, ...]]:
        """The message a stage page shows after an action; recomputed from the position."""
        if note.startswith("bad:"):
            spec = note[4:]
            if spec == "+":
                try:
                    pos.then(ADD)
                except IllegalMoveError as exc:
                    return {"kind": "illegal", "text": f"Add refused: {_reason(str(exc))}"}, ()
                return None, ()
            i, _, j = spec.partition("-")
            a, b = _int(i, -1), _int(j, -1)
            problem = pos.pair_problem(a, b) if a >= 0 and b >= 0 else None
            if problem is None:
                return None, ()
            return {"kind": "illegal", "text": f"Illegal pair {Move.pair(a, b)}: {problem}"}, ()
        if note == "hint":
            h = game.hint(pos)
            if h.status == SOLVED and h.move is None:
                return {"kind": "info", "text": "The Stage is won: there is nothing left to hint."}, ()
            if h.move is not None and h.move.is_add:
                return {"kind": "hint", "text": "Hint: Add numbers (+) keeps the Stage winnable.", "move": "+"}, ()
            if h.move is not None:
                assert h.move.first is not None and h.move.second is not None
                text = f"Hint: pair {h.move} keeps the Stage winnable."
                return {"kind": "hint", "text": text, "move": str(h.move)}, (h.move.first, h.move.second)
            if h.status == UNSOLVABLE:
                return {"kind": "lost", "text": "No move keeps the Stage winnable: it can no longer be won. Undo or restart."}, ()
            return {"kind": "info", "text": f"No hint: the solver's budget ({HINT_BUDGET_NODES:,} nodes) ran out."}, ()
        if note == "win":
            w = game.winnable(pos)
            if w.status == SOLVED:
                fewest = f"{w.fewest} add{'s' if w.fewest != 1 else ''}"
                how = f"with {fewest} at fewest" if w.exact else f"with at most {fewest} (fewer not decided within the budget)"
                return {"kind": "yes", "text": f"Still winnable: {how}; {pos.adds_left} left."}, ()
            if w.status == UNSOLVABLE:
                return {"kind": "lost", "text": "Not winnable any more, even with every add left (proved by the solver)."}, ()
            return {"kind": "info", "text": f"Unknown: the solver's budget ({HINT_BUDGET_NODES:,} nodes) ran out."}, ()
        return None, ()

    def act(self, request: Request) -> Response:
        """One click of the stage page: a cell (select, deselect or pair) or a button."""
        src = self.stage_source(request)
        q = request.query_params
        pos = game.replay(src["start"], src["adds"], game.parse_moves(q.get("m", "")), src["ruleset"])
        sel = _int(q.get("sel"), None)
        out: dict[str, Any] = {k: src[k] for k in ("path", "at", "draft", "base") if src[k]}
        do = q.get("do", "")
        note = ""
        focus: int | None = None
        if "click" in q:
            cell = _int(q.get("click"), -1)
            focus = cell
            if sel is None or not (0 <= sel < len(pos.cells)):
                if 0 <= cell < len(pos.cells) and pos.cells[cell]:
                    sel = cell
                else:
                    problem = pos.pair_problem(cell, cell) if cell >= 0 else None
                    note = f"bad:{cell}-{cell}" if problem else ""
                    sel = None
            elif sel == cell:
                sel = None
            else:
                if pos.pair_problem(sel, cell) is None:
                    pos = pos.then(Move.pair(sel, cell))
                    focus = min(cell, len(pos.cells) - 1) if pos.cells else None
                else:
                    note = f"bad:{sel}-{cell}"
                sel = None
        elif do == "add":
            try:
                pos = pos.then(ADD)
            except IllegalMoveError:
                note = "bad:+"
            sel = None
        elif do == "undo":
            pos, sel = pos.undo(), None
        elif do == "restart":
            pos, sel = game.replay(pos.start, pos.adds, (), pos.ruleset), None
        elif do in ("hint", "win"):
            note = do
        if pos.moves:
            out["m"] = pos.moves_text
        if sel is not None:
            out["sel"] = sel
        if note:
            out["note"] = note
        if focus is not None and focus >= 0:
            out["f"] = focus
        return RedirectResponse("/stage?" + urlencode(out), status_code=303)

    def swap_page(self, request: Request) -> Response:
        path, rel = self.file(request)
        at = request.query_params.get("at", "")
        level, stage = split_at(at)
        draft = Draft.parse(request.query_params.get("draft", ""))
        data, raw, slots = self.bundle(path, rel)
        slot = next((s for s in slots if (s.level, s.stage) == (level, stage)), None)
        if slot is None:
            raise LibraryError(f"{rel}: has no Stage L{level}.S{stage}")
        base = request.query_params.get("base") or content_hash(raw)
        used = {str(s.puzzle.get("id")) for s in slots}
        accepted, refused = self.pool_checked(path)
        files = {p.id: name for name, p in accepted}
        pool = [p for _, p in accepted]
        offered = offer_pool(pool, draft.without_swap(at), used)
        flat = slots.index(slot)
        stages = drafted_stages(slots, draft.without_swap(at), pool)
        best, why = nearest(stages, flat, at, offered) if offered else (None, "the pool has no unused puzzle")
        tier = tier_for(slot.target) if slot.target is not None and 0 <= slot.target <= 100 else None
        order = candidate_order(slot.target if slot.target is not None else 0.0)
        others = sorted((p for p in offered if best is None or p.id != best.id), key=order)
        return self.page(
            "swap.html", rel=rel, at=at, slot=slot, tier=tier, best=best, why=why, others=others, draft=draft,
            draft_text=str(draft), base=base, pinned=at in draft.pins, current=draft.swap_for(at), files=files, refused=refused,
        )

    def draft_edit(self, request: Request) -> Response:
        q: dict[str, str] = request.scope.get("form", {})
        rel = q.get("path", "")
        path = inside(self.root, rel)
        draft = Draft.parse(q.get("draft", ""))
        op, at, pid = q.get("op", ""), q.get("at", ""), q.get("id", "")
        msg = ""
        if op == "swap":
            split_at(at)
            draft = draft.with_swap(at, pid)
            msg = f"{stage_name(at)}: {pid} in the draft (not saved yet)"
        elif op == "unswap":
            draft = draft.without_swap(at)
        elif op == "pin":
            split_at(at)
            draft = draft.toggle_pin(at)
        elif op == "exclude":
            if not pid:
                raise DraftError("exclude names no puzzle")
            was = pid in draft.excludes
            draft = draft.toggle_exclude(pid)
            _, raw, slots = self.bundle(path, rel)
            on_disk = {s.at: str(s.puzzle.get("id")) for s in slots}
            in_stage = at and (draft.swap_for(at) or on_disk.get(at)) == pid
            if was or not at or not in_stage:
                msg = f"{pid} {'included again' if was else 'excluded: it is not offered any more'}"
            elif at in draft.pins:
                msg = f"{pid} excluded; {stage_name(at)} is pinned, so it keeps its puzzle"
            else:
                used = set(on_disk.values())
                pool = self.pool(path)
                rest = draft.without_swap(at)
                flat = next((k for k, s in enumerate(slots) if s.at == at), None)
                if flat is None:
                    raise DraftError(f"{rel}: has no Stage {stage_name(at)}")
                best, why = nearest(drafted_stages(slots, rest, pool), flat, at, offer_pool(pool, rest, used))
                if best is not None:
                    draft = draft.with_swap(at, best.id)
                    msg = f"{pid} excluded; {stage_name(at)} takes {best.id} in the draft (not saved yet)"
                else:
                    msg = f"{pid} excluded; no replacement for {stage_name(at)}: {why}"
        else:
            raise DraftError(f"unknown draft operation {op[:20]!r}")
        query = {"path": rel, "base": q.get("base", ""), "draft": str(draft), "msg": msg}  # an empty draft too: it
        return RedirectResponse("/bundle?" + urlencode({k: v for k, v in query.items() if v or k == "draft"}), status_code=303)

    async def save_post(self, request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        form: dict[str, str] = request.scope.get("form", {})
        rel, base, draft_text = (form.get(k, "") for k in ("path", "base", "draft"))
        path = inside(self.root, rel)
        if not path.is_file():
            raise LibraryError(f"{rel}: no such file (a Save names the bundle it changes)")
        draft = Draft.parse(draft_text)

        def refused(status: int, message: str, left: Draft, base: str) -> Response:
            return self.page("stale.html", status=status, rel=rel, message=message, draft=left, draft_text=str(left), base=base)

        try:
            saved = self.curation(path, rel)
            done = await run_in_threadpool(save, path, rel, base, draft, self.pool(path), saved, self.root)
        except StaleSave as exc:
            return refused(409, str(exc), draft, "")
        except SaveStopped as exc:
            return refused(400, str(exc), exc.saved.left, exc.saved.base)
        except NumberMatchError as exc:  # nothing written; the draft is kept
            return refused(400, str(exc), draft, base)
        query = {"path": rel, "base": done.base, "msg": "Saved (validated, written atomically): " + "; ".join(done.lines)}
        return RedirectResponse("/bundle?" + urlencode(query), status_code=303)


def drafted_stages(slots: list[StageSlot], draft: Draft, pool: list[Puzzle]) -> list[dict[str, Any]]:
    """The bundle's Stage mappings as the draft would make them (what `swap` would see)."""
    by_id = {p.id: p for p in pool}
    out = []
    for s in slots:
        pid = draft.swap_for(s.at)
        puzzle = by_id[pid].core_dict() if pid in by_id else s.puzzle
        out.append({"target_score": s.target, "puzzle": puzzle})
    return out


def curve(slots: Iterable[StageSlot]) -> Markup:
    """The designers' curve chart (report.html's) over these Stages, Levels side by side."""
    from pipeline.jobs.report_html import curve_svg

    points: list[tuple[str, float, float | None, str]] = []
    ticks: list[str] = []
    breaks: list[int] = []
    for k, s in enumerate(slots):
        if k and s.stage == 1:
            breaks.append(k)
        ticks.append(f"L{s.level}" if s.stage == 1 else "")
        points.append((f"L{s.level}.S{s.stage}", s.target or 0.0, score_of(s.puzzle), tier_of(s.puzzle)))
    return Markup(curve_svg(points, breaks=breaks, ticks=ticks))


def card(slot: StageSlot | None, replaced: dict[str, Any] | None) -> dict[str, Any]:
    """What a card shows about one Stage or puzzle."""
    assert slot is not None
    p = slot.puzzle
    try:
        cells = parse(str(p.get("board", "")))
    except NumberMatchError:
        cells = b""
    return {
        "slot": slot, "id": p.get("id"), "board": p.get("board"), "cells": cells, "adds": p.get("adds"),
        "tier": tier_of(p), "score": score_of(p), "difficulty": difficulty_of(p), "replaced": replaced,
    }


def _cells(cells: bytes, *, selected: int | None = None, highlight: tuple[int, ...] = ()) -> list[list[dict[str, Any]]]:
    rows = []
    for s in range(0, len(cells), WIDTH):
        row = []
        for i in range(s, min(s + WIDTH, len(cells))):
            r, c = divmod(i, WIDTH)
            v = cells[i]
            row.append({"i": i, "r": r, "c": c, "v": v, "sel": i == selected, "hl": i in highlight})
        rows.append(row)
    return rows


def _int(text: str | None, default: Any) -> Any:
    try:
        return int(text) if text is not None and len(text) < 12 else default
    except ValueError:
        return default


def _reason(text: str) -> str:
    """The engine's reason without the board (the page shows the board)."""
    return text.rsplit(": ", 1)[-1]


def _pool_rel(root: Path, bundle: Path) -> str | None:
    """The pool folder's name under PATH, or None when there is none (or it links outside)."""
    pool = bundle.parent / POOL_DIR
    try:
        return relative(root, pool) if pool.is_dir() else None
    except (ValueError, OSError, RuntimeError):
        return None


def url(route: str, /, **params: Any) -> str:
    """A link with its query (empty values left out)."""
    query = urlencode({k: v for k, v in params.items() if v is not None and v != ""})
    return f"{route}?{query}" if query else route


def _guard(studio: Studio, handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
    """Input errors become a one-line page (403 for a path outside the folder), never a traceback."""
    import inspect

    if inspect.iscoroutinefunction(handler):

        async def run_async(request: Request) -> Response:
            try:
                return await handler(request)  # type: ignore[no-any-return]
            except PathRefused as exc:
                return studio.error(403, str(exc))
            except NumberMatchError as exc:
                return studio.error(400, str(exc))
            except OSError as exc:  # the message names no path: the page already shows the user's
                return studio.error(400, f"cannot use that file: {exc.strerror or type(exc).__name__}")

        return run_async

    def run(request: Request) -> Response:
        try:
            return handler(request)  # type: ignore[no-any-return]
        except PathRefused as exc:
            return studio.error(403, str(exc))
        except NumberMatchError as exc:
            return studio.error(400, str(exc))
        except OSError as exc:
            return studio.error(400, f"cannot use that file: {exc.strerror or type(exc).__name__}")

    return run


def favicon(request: Request) -> Response:
    """The studio's icon (report.html's), also where browsers look without being told."""
    return Response(FAVICON_SVG, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


def create_app(root: str | Path, *, observed: Mapping[str, Mapping[str, Any]] | None = None,
               profile: RatingProfile | None = None) -> Guard:
    """The studio over folder `root` (which must exist), behind its guard (guard.py); with play
    telemetry's figures per puzzle id and a rating profile when given (`studio --telemetry/--profile`)."""
    folder = Path(root)
    if not folder.is_dir():
        raise LibraryError(f"{root}: no such folder")
    studio = Studio(folder, observed, profile)
    g = lambda h: _guard(studio, h)  # noqa: E731
    routes = [
        Route("/", g(studio.index)),
        Route("/bundle", g(studio.bundle_page)),
        Route("/folder", g(studio.folder_page)),
        Route("/stage", g(studio.stage_page)),
        Route("/act", g(studio.act)),
        Route("/swap", g(studio.swap_page)),
        Route("/draft", g(studio.draft_edit), methods=["POST"]),
        Route("/save", g(studio.save_post), methods=["POST"]),
        Route("/favicon.svg", favicon),
        Route("/favicon.ico", favicon),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        return studio.error(404, f"no page {request.url.path}")

    async def server_error(request: Request, exc: Exception) -> Response:
        log.exception("studio: %s", request.url)
        return studio.error(500, f"internal error ({type(exc).__name__}); the files on disk are unchanged")

    app = Starlette(
        routes=routes,
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(LOCAL_HOSTS))],
        exception_handlers={404: not_found, 500: server_error},
    )
    return Guard(app, studio.token, studio.error)
