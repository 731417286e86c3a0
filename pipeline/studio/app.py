"""The studio's Starlette application: pages rendered on the server with Jinja2 templates.

Routes (all pages take `path`, a file or folder relative to the studio's folder):

    GET  /          nights, bundles and puzzle folders, newest first, with counts per tier
    GET  /bundle    the curve chart and a card per Stage; the draft (swaps, pins, excludes)
    GET  /folder    a folder of puzzle files (a night's pool), a card per puzzle
    GET  /stage     play a Stage: the board as buttons, Add, undo, restart, hint, winnable?,
                    and the certificate step by step (`sol=K`)
    GET  /act       one click or button of the stage page; redirects to the new /stage address
    GET  /swap      the candidates for one Stage (the night's pool, or the stock for a night
                    drawn from it), nearest first
    POST /draft     change the draft (no file is written); redirects to /bundle
    POST /save      apply the draft, validate, write atomically; refuses a stale base

Every rules decision is the engine's; the browser only sends the cell it clicked. Every POST
passes `guard.Guard` first (own origin, per-run token, a small urlencoded body): see guard.py.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from pipeline.engine.board import WIDTH, parse
from pipeline.engine.moves import ADD, Move
from pipeline.engine.rulesets import SHIPPED, Ruleset, ruleset_for
from pipeline.errors import IllegalMoveError, NumberMatchError
from pipeline.formats.bundle import Bundle, Stage
from pipeline.formats.curation import Curation, curation_beside, curation_path
from pipeline.formats.difficulty import Difficulty
from pipeline.formats.puzzle import BUNDLE_KIND, PUZZLE_KIND, Puzzle
from pipeline.formats.scale import block_profile, puzzles_tiers, same_scale
from pipeline.formats.slot import Slot
from pipeline.jobs import curate
from pipeline.jobs.picture import board_svg
from pipeline.jobs.report_html import FAVICON_SVG, curve_svg, tier_badge_css
from pipeline.jobs.swap import candidate_order
from pipeline.limits import MAX_BANNER_CHARS
from pipeline.rating.explain import explain
from pipeline.rating.profile import RatingProfile
from pipeline.rating.tiers import tier_for
from pipeline.solver import SOLVED, UNSOLVABLE
from pipeline.solver.budgets import HINT_BUDGET_NODES
from pipeline.studio import game
from pipeline.studio.draft import (
    Draft,
    DraftError,
    SaveStopped,
    StaleSave,
    curation_of,
    draft_from,
    nearest,
    offer_pool,
    save,
    split_at,
    stage_ids,
    stage_name,
)
from pipeline.studio.guard import LOCAL_HOSTS, Guard, new_token
from pipeline.studio.library import Library, LibraryError, Offers, content_hash, puzzle_value
from pipeline.studio.overview import COLUMNS, DEFAULT_SORT, by_level, rows, total_deviation
from pipeline.studio.paths import PathRefused, inside, relative

log = logging.getLogger("numbermatch.studio")
STATIC = Path(__file__).resolve().parent / "static"
CHART_WIDTH = 1200  # the bundle page's curve chart, in its own units (scaled to the page)


def board_picture(cells: bytes, highlight: tuple[int, ...] = ()) -> Markup:
    """The designers' board picture (`pipeline.jobs.picture`), inlined in a card."""
    return Markup(board_svg(cells, highlight=highlight, numbers=False, cell=20, compact=True))


def explained(difficulty: Difficulty | Mapping[str, Any]) -> Any:
    """The rating's explanation of a stored difficulty block, or None when it has none."""
    block = difficulty.data if isinstance(difficulty, Difficulty) else difficulty
    if not isinstance(block, dict) or not block:
        return None
    try:
        return explain(block)
    except ValueError:
        return None


@dataclass(frozen=True)
class StageSource:
    """What a stage page plays: a bundle's Stage (`at`, the draft's swap applied) or a puzzle
    file, and the address parts (path, at, draft, base) its links keep."""

    path: str
    at: str
    draft: str
    base: str
    title: str
    target: float | None
    puzzle: Puzzle
    start: bytes
    ruleset: Ruleset

    @property
    def adds(self) -> int:
        return self.puzzle.adds

    @property
    def query(self) -> dict[str, str]:
        return {
            k: v
            for k, v in (
                ("path", self.path),
                ("at", self.at),
                ("draft", self.draft),
                ("base", self.base),
            )
            if v
        }


class Studio:
    """The studio's state (the folder it serves, the scan cache, the telemetry and profile it was
    started with) and its request handlers, one method per page or form."""

    def __init__(
        self,
        root: Path,
        observed: Mapping[str, Mapping[str, Any]] | None = None,
        profile: RatingProfile | None = None,
    ) -> None:
        self.root = root.resolve()
        self.library = Library(self.root)
        # `studio --telemetry`: per puzzle id, what the players did (pipeline.telemetry.observed.stage_figures)
        self.observed = dict(observed or {})
        self.profile = (
            profile  # `studio --profile`: cards also show the score and tier for that audience
        )
        self.token = new_token()  # put in every form; a POST without it is refused (guard.py)
        self.env = Environment(
            loader=PackageLoader("pipeline.studio", "templates"),
            autoescape=select_autoescape(default=True),
        )
        self.env.globals.update(
            url=url,
            picture=board_picture,
            explained=explained,
            WIDTH=WIDTH,
            token=self.token,
            stage_name=stage_name,
            tier_css=Markup(tier_badge_css()),
            observed=self.observed.get,
            profiled=self.profiled,
        )

    def profiled(self, rated: Difficulty) -> tuple[float, str] | None:
        """A stored rating's score and tier under `--profile` (None without one, or no score)."""
        if self.profile is None or same_scale(block_profile(rated.data), self.profile):
            return None  # already scored on it (a rescored bundle): the card's score is it
        try:
            score = rated.score_under(self.profile)
        except (ValueError, KeyError, TypeError):
            return None
        return None if score is None else (score, rated.tier_under(self.profile))

    # -- helpers -------------------------------------------------------------------------
    def page(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(
            self.env.get_template(name).render(root=self.root.name or str(self.root), **context),
            status_code=status,
        )

    def error(self, status: int, message: str) -> HTMLResponse:
        return self.page(
            "message.html",
            status=status,
            title="Refused" if status == 403 else "Problem",
            message=message,
        )

    def file(self, request: Request, key: str = "path") -> tuple[Path, str]:
        rel = request.query_params.get(key, "")
        return inside(self.root, rel), rel

    def curation(self, bundle: Path, rel: str) -> Curation:
        """The pins and excludes kept beside a bundle (a curation file linking out of PATH is refused)."""
        inside(self.root, curation_path(Path(rel)).as_posix())
        return curation_beside(bundle, rel)

    def offers(self, path: Path, bundle: Bundle) -> Offers:
        """The swap candidates the studio may ship for a bundle (its pool, or the stock of a
        night drawn from it: `Library.offers`), and a line per file it may not: the validator's
        refusals, and any puzzle whose canonical key (a relabelled copy included) a bundle under
        the studio's folder already ships (NM321; `stock.store`)."""
        found = self.library.offers(path, bundle)
        accepted, repeats = curate.shipped_repeats(self.root, found.accepted)
        return Offers(found.source, found.folder, tuple(accepted), found.refused + tuple(repeats))

    # -- pages -----------------------------------------------------------------------------
    def index(self, request: Request) -> Response:
        return self.page("index.html", folders=self.library.folders())

    def bundle_page(self, request: Request) -> Response:
        path, rel = self.file(request)
        bundle, raw = self.library.bundle(path, rel)
        current = content_hash(raw)
        base = request.query_params.get("base") or current
        saved = self.curation(path, rel)  # the pins and excludes kept by an earlier Save
        if "draft" in request.query_params:
            draft = Draft.parse(request.query_params["draft"])
        else:
            draft = draft_from(saved)
        changes = bool(draft.swaps) or curation_of(draft, stage_ids(bundle)) != saved
        offers = self.offers(path, bundle)
        pool = {p.id: p for p in offers.puzzles}
        shown = drafted(bundle.stages, draft, pool)
        cards = [card(p, s, old) for s, p, old in shown]
        sort = request.query_params.get("sort", DEFAULT_SORT)
        sort = sort if sort in COLUMNS else DEFAULT_SORT
        table = rows(shown, sort)
        return self.page(
            "bundle.html",
            rel=rel,
            bundle=bundle,
            cards=cards,
            levels=by_level(cards),
            table=table,
            sort=sort,
            columns=COLUMNS,
            deviation=total_deviation(table),
            chart=curve((s, p) for s, p, _ in shown),
            draft=draft,
            draft_text=str(draft),
            base=base,
            stale=base != current,
            pool_size=len(pool),
            changes=changes,
            curation_name=curation_path(path).name,
            saved_pins={f"{lv}.{st}" for (lv, st), _ in saved.pins},
            saved_excludes=set(saved.excludes),
            source=offers.source,
            message=request.query_params.get("msg", "")[:MAX_BANNER_CHARS],
            pool_rel=_pool_rel(self.root, offers),
        )

    def folder_page(self, request: Request) -> Response:
        path, rel = self.file(request)
        if not path.is_dir():
            raise LibraryError(f"{rel}: no such folder")
        entries = []
        for name, puzzle, problem in self.library.puzzle_files(path):
            entries.append((name, card(puzzle, None, None) if puzzle else None, problem))
        return self.page("folder.html", rel=rel, entries=entries)

    def stage_source(self, request: Request) -> StageSource:
        """The puzzle a stage page plays: a bundle's Stage (`at`, drafts applied) or a puzzle file."""
        path, rel = self.file(request)
        data, _ = self.library.document(path, rel)
        q = request.query_params
        at, draft_text, base = q.get("at", ""), q.get("draft", ""), q.get("base", "")
        target: float | None = None
        if data.get("kind") == BUNDLE_KIND:
            bundle, _ = self.library.bundle(path, rel)
            stage = bundle.locate(Slot(*split_at(at)), rel)
            puzzle, title, target = stage.puzzle, str(stage.slot), stage.target_score
            swap_id = Draft.parse(draft_text).swap_for(at)
            if swap_id:
                found = next(
                    (p for p in self.offers(path, bundle).puzzles if p.id == swap_id), None
                )
                if found is None:
                    raise DraftError(f"draft puzzle {swap_id} is not in the pool")
                puzzle = found
        elif data.get("kind") == PUZZLE_KIND:
            puzzle = puzzle_value(data, rel)
            title = puzzle.id
        else:
            raise LibraryError(f"{rel}: is neither a bundle nor a puzzle file")
        ruleset = ruleset_for(puzzle.ruleset, SHIPPED)
        if not 0 <= puzzle.adds <= 99:
            raise LibraryError(f"{rel}: the puzzle's board or adds is missing or malformed")
        return StageSource(
            rel, at, draft_text, base, title, target, puzzle, parse(puzzle.board), ruleset
        )

    def stage_page(self, request: Request) -> Response:
        src = self.stage_source(request)
        q = request.query_params
        solution = list(src.puzzle.solution)
        base_query = src.query
        if "sol" in q:
            step = _int(q.get("sol"), 0)
            pos, nxt = game.certificate_step(src.start, src.adds, solution, step, src.ruleset)
            step = len(pos.moves)
            highlight: tuple[int, ...] = (
                ()
                if nxt is None or nxt.first is None or nxt.second is None
                else (nxt.first, nxt.second)
            )
            game_text = q.get("game", "")  # the game in progress when the solution was opened: kept
            game_moves = len(game.parse_moves(game_text)) if game_text else 0
            return self.page(
                "solution.html",
                src=src,
                pos=pos,
                step=step,
                total=len(solution),
                next_move=nxt,
                cells=_cells(pos.cells, highlight=highlight),
                q=base_query,
                solution=solution,
                game=game_text if game_moves else "",
                game_moves=game_moves,
            )
        pos = game.replay(src.start, src.adds, game.parse_moves(q.get("m", "")), src.ruleset)
        sel = _int(q.get("sel"), None)
        if sel is not None and not (0 <= sel < len(pos.cells) and pos.cells[sel]):
            sel = None
        note, highlight = self.note(pos, q.get("note", ""))
        return self.page(
            "stage.html",
            src=src,
            pos=pos,
            sel=sel,
            note=note,
            q=base_query,
            focus=_int(q.get("f"), sel),
            cells=_cells(pos.cells, selected=sel, highlight=highlight),
            solution=solution,
            adds_used=src.adds - pos.adds_left,
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
                return {
                    "kind": "info",
                    "text": "The Stage is won: there is nothing left to hint.",
                }, ()
            if h.move is not None and h.move.is_add:
                return {
                    "kind": "hint",
                    "text": "Hint: Add numbers (+) keeps the Stage winnable.",
                    "move": "+",
                }, ()
            if h.move is not None:
                assert h.move.first is not None and h.move.second is not None
                text = f"Hint: pair {h.move} keeps the Stage winnable."
                return {"kind": "hint", "text": text, "move": str(h.move)}, (
                    h.move.first,
                    h.move.second,
                )
            if h.status == UNSOLVABLE:
                return {
                    "kind": "lost",
                    "text": "No move keeps the Stage winnable: it can no longer be won. Undo or restart.",
                }, ()
            return {
                "kind": "info",
                "text": f"No hint: the solver's budget ({HINT_BUDGET_NODES:,} nodes) ran out.",
            }, ()
        if note == "win":
            w = game.winnable(pos)
            if w.status == SOLVED:
                fewest = f"{w.fewest} add{'s' if w.fewest != 1 else ''}"
                how = (
                    f"with {fewest} at fewest"
                    if w.exact
                    else f"with at most {fewest} (fewer not decided within the budget)"
                )
                return {"kind": "yes", "text": f"Still winnable: {how}; {pos.adds_left} left."}, ()
            if w.status == UNSOLVABLE:
                return {
                    "kind": "lost",
                    "text": "Not winnable any more, even with every add left (proved by the solver).",
                }, ()
            return {
                "kind": "info",
                "text": f"Unknown: the solver's budget ({HINT_BUDGET_NODES:,} nodes) ran out.",
            }, ()
        return None, ()

    def act(self, request: Request) -> Response:
        """One click of the stage page: a cell (select, deselect or pair) or a button."""
        src = self.stage_source(request)
        q = request.query_params
        pos = game.replay(src.start, src.adds, game.parse_moves(q.get("m", "")), src.ruleset)
        sel = _int(q.get("sel"), None)
        out: dict[str, Any] = dict(src.query)
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
        slot = Slot(*split_at(at))
        draft = Draft.parse(request.query_params.get("draft", ""))
        bundle, raw = self.library.bundle(path, rel)
        stage = bundle.locate(slot, rel)
        base = request.query_params.get("base") or content_hash(raw)
        found = self.offers(path, bundle)
        files = {p.id: name for name, p in found.accepted}
        pool = found.puzzles
        offered = offer_pool(pool, draft.without_swap(at), set(stage_ids(bundle).values()))
        flat = bundle.stages.index(stage)
        stages = drafted_stages(bundle.stages, draft.without_swap(at), pool)
        where = found.source or "pool"
        best, why = (
            nearest(stages, flat, at, offered, where)
            if offered
            else (None, f"the {where} has no unused puzzle")
        )
        target = stage.target_score
        tier = tier_for(target) if target is not None and 0 <= target <= 100 else None
        order = candidate_order(target if target is not None else 0.0)
        others = sorted((p for p in offered if best is None or p.id != best.id), key=order)
        return self.page(
            "swap.html",
            rel=rel,
            at=at,
            stage=stage,
            tier=tier,
            best=best,
            why=why,
            others=others,
            draft=draft,
            draft_text=str(draft),
            base=base,
            pinned=at in draft.pins,
            current=draft.swap_for(at),
            files=files,
            refused=found.refused,
            source=where,
        )

    def draft_edit(self, request: Request) -> Response:
        q: dict[str, str] = request.scope.get("form", {})
        rel = q.get("path", "")
        path = inside(self.root, rel)
        draft = Draft.parse(q.get("draft", ""))
        op, at, pid = q.get("op", ""), q.get("at", ""), q.get("id", "")
        if "do" in q:  # a button of the bundle page's one edit form: `op:at:id`
            op, at, pid = (q["do"].split(":", 2) + ["", ""])[:3]
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
            bundle, _ = self.library.bundle(path, rel)
            on_disk = stage_ids(bundle)
            in_stage = at and (draft.swap_for(at) or on_disk.get(at)) == pid
            if was or not at or not in_stage:
                msg = f"{pid} {'included again' if was else 'excluded: it is not offered any more'}"
            elif at in draft.pins:
                msg = f"{pid} excluded; {stage_name(at)} is pinned, so it keeps its puzzle"
            else:
                used = set(on_disk.values())
                offers = self.offers(path, bundle)
                pool = offers.puzzles
                rest = draft.without_swap(at)
                if at not in on_disk:
                    raise DraftError(f"{rel}: has no Stage {stage_name(at)}")
                flat = list(on_disk).index(at)
                best, why = nearest(
                    drafted_stages(bundle.stages, rest, pool),
                    flat,
                    at,
                    offer_pool(pool, rest, used),
                    offers.source or "pool",
                )
                if best is not None:
                    draft = draft.with_swap(at, best.id)
                    msg = f"{pid} excluded; {stage_name(at)} takes {best.id} in the draft (not saved yet)"
                else:
                    msg = f"{pid} excluded; no replacement for {stage_name(at)}: {why}"
        else:
            raise DraftError(f"unknown draft operation {op[:20]!r}")
        query = {
            "path": rel,
            "base": q.get("base", ""),
            "draft": str(draft),
            "msg": msg,
        }  # an empty draft too: it
        return RedirectResponse(
            "/bundle?" + urlencode({k: v for k, v in query.items() if v or k == "draft"}),
            status_code=303,
        )

    async def save_post(self, request: Request) -> Response:
        form: dict[str, str] = request.scope.get("form", {})
        rel, base, draft_text = (form.get(k, "") for k in ("path", "base", "draft"))
        path = inside(self.root, rel)
        if not path.is_file():
            raise LibraryError(f"{rel}: no such file (a Save names the bundle it changes)")
        draft = Draft.parse(draft_text)

        def refused(status: int, message: str, left: Draft, base: str) -> Response:
            return self.page(
                "stale.html",
                status=status,
                rel=rel,
                message=message,
                draft=left,
                draft_text=str(left),
                base=base,
            )

        try:
            saved = self.curation(path, rel)
            offers = Offers("", None, (), ())
            if draft.swaps:
                try:
                    offers = self.offers(path, self.library.bundle(path, rel)[0])
                except LibraryError:
                    pass  # not a bundle: `save` says what the file is
            done = await run_in_threadpool(save, path, rel, base, draft, offers, saved, self.root)
        except StaleSave as exc:
            return refused(409, str(exc), draft, "")
        except SaveStopped as exc:
            return refused(400, str(exc), exc.saved.left, exc.saved.base)
        except NumberMatchError as exc:  # nothing written; the draft is kept
            return refused(400, str(exc), draft, base)
        query = {
            "path": rel,
            "base": done.base,
            "msg": "Saved (validated, written atomically): " + "; ".join(done.lines),
        }
        return RedirectResponse("/bundle?" + urlencode(query), status_code=303)


def drafted(
    stages: Sequence[Stage], draft: Draft, pool: Mapping[str, Puzzle]
) -> list[tuple[Stage, Puzzle, Puzzle | None]]:
    """Each Stage with the puzzle the draft puts there and the one it replaces (None: unchanged)."""
    out: list[tuple[Stage, Puzzle, Puzzle | None]] = []
    for s in stages:
        new = pool.get(draft.swap_for(s.slot.short) or "")
        out.append((s, new, s.puzzle) if new is not None else (s, s.puzzle, None))
    return out


def drafted_stages(
    stages: Sequence[Stage], draft: Draft, pool: Sequence[Puzzle]
) -> list[dict[str, Any]]:
    """The bundle's Stage mappings as the draft would make them (what `choose_replacement` reads)."""
    by_id = {p.id: p for p in pool}
    return [
        {"target_score": s.target_score, "puzzle": p.core_dict()}
        for s, p, _ in drafted(stages, draft, by_id)
    ]


def curve(stages: Iterable[tuple[Stage, Puzzle]]) -> Markup:
    """The designers' curve chart (report.html's) over these Stages, Levels side by side."""
    stages = list(stages)
    points: list[tuple[str, float, float | None, str]] = []
    ticks: list[str] = []
    breaks: list[int] = []
    for k, (s, p) in enumerate(stages):
        if k and s.slot.stage == 1:
            breaks.append(k)
        ticks.append(f"L{s.slot.level}" if s.slot.stage == 1 else "")
        points.append((str(s.slot), s.target_score or 0.0, p.rated.score, p.tier))
    # drawn wide (the page scales it to the panel's width): a night's Stages get room apart
    tiers = puzzles_tiers(p for _, p in stages)  # the bands of the scale the bundle is on
    return Markup(curve_svg(points, breaks=breaks, ticks=ticks, width=CHART_WIDTH, tiers=tiers))


def card(puzzle: Puzzle, stage: Stage | None, replaced: Puzzle | None) -> dict[str, Any]:
    """What a card shows about one puzzle, in a bundle's Stage or a puzzle file."""
    try:
        cells = parse(puzzle.board)
    except NumberMatchError:
        cells = b""
    return {
        "stage": stage,
        "at": stage.slot.short if stage else "",
        "puzzle": puzzle,
        "id": puzzle.id,
        "cells": cells,
        "rated": puzzle.rated,
        "tier": puzzle.tier,
        "score": puzzle.rated.score,
        "adds": puzzle.adds,
        "replaced": replaced,
    }


def _cells(
    cells: bytes, *, selected: int | None = None, highlight: tuple[int, ...] = ()
) -> list[list[dict[str, Any]]]:
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


def _pool_rel(root: Path, offers: Offers) -> str | None:
    """The pool folder's name under PATH (a link on the bundle page), or None when the
    candidates come from no pool folder (none, or the stock)."""
    if offers.source != "pool" or offers.folder is None:
        return None
    try:
        return relative(root, offers.folder)
    except (ValueError, OSError, RuntimeError):
        return None


def url(route: str, /, **params: Any) -> str:
    """A link with its query (empty values left out)."""
    query = urlencode({k: v for k, v in params.items() if v is not None and v != ""})
    return f"{route}?{query}" if query else route


def _guard(studio: Studio, handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
    """Input errors become a one-line page (403 for a path outside the folder), never a traceback."""
    if inspect.iscoroutinefunction(handler):

        async def run_async(request: Request) -> Response:
            try:
                return await handler(request)  # type: ignore[no-any-return]
            except PathRefused as exc:
                return studio.error(403, str(exc))
            except NumberMatchError as exc:
                return studio.error(400, str(exc))
            except OSError as exc:  # the message names no path: the page already shows the user's
                return studio.error(
                    400, f"cannot use that file: {exc.strerror or type(exc).__name__}"
                )

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
    return Response(
        FAVICON_SVG, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"}
    )


def create_app(
    root: str | Path,
    *,
    observed: Mapping[str, Mapping[str, Any]] | None = None,
    profile: RatingProfile | None = None,
) -> Guard:
    """The studio over folder `root` (which must exist), behind its guard (guard.py); with play
    telemetry's figures per puzzle id and a rating profile when given (`studio --telemetry/--profile`)."""
    folder = Path(root)
    if not folder.is_dir():
        raise LibraryError(f"{root}: no such folder")
    studio = Studio(folder, observed, profile)
    g = functools.partial(_guard, studio)
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
        return studio.error(
            500, f"internal error ({type(exc).__name__}); the files on disk are unchanged"
        )

    app = Starlette(
        routes=routes,
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(LOCAL_HOSTS))],
        exception_handlers={404: not_found, 500: server_error},
    )
    return Guard(app, studio.token, studio.error)
