// A Number Match engine (ruleset 1) behind the conformance protocol, in plain JavaScript.
//
// A worked example for client teams: a whole engine in one file, written from docs/rules.md,
// sharing no code with the pipeline. Run it with Node.js (tested with 20; no npm packages, no build
// step; Node cannot run TypeScript itself, hence JavaScript); the types are JSDoc comments,
// which TypeScript's checkJs reads, so a TypeScript team can port it line by line.
//
//   numbermatch conformance check --engine "node examples/conformance-js/engine.mjs"
//
// Protocol (docs/conformance.md): one JSON request per line on stdin, one JSON answer per line
// on stdout. A refusal is {"error": CODE}; replay adds {"move": N}, the refused move's number.

import { createInterface } from "node:readline";

const WIDTH = 9;
const RULESET = 1;
const MAX_CELLS = 4000;

/** A board: cell values in reading order, 0 for a gap. @typedef {number[]} Cells */
/** A pair of flat indices, first < second. @typedef {[number, number]} Pair */

class Refusal extends Error {
  /** @param {string} code @param {number} [move] */
  constructor(code, move) {
    super(code);
    this.code = code;
    this.move = move;
  }
}

/** Value class: two values pair when equal or summing to 10. @param {number} v */
const valueClass = (v) => (v <= 5 ? v : 10 - v);

/** Parse board notation; throws Refusal("invalid-board"). @param {unknown} text @returns {Cells} */
function parse(text) {
  if (typeof text !== "string") throw new Refusal("bad-request");
  if (text === "") return [];
  const rows = text.split("/");
  /** @type {Cells} */
  const cells = [];
  rows.forEach((row, r) => {
    const last = r === rows.length - 1;
    if (!/^[1-9.]+$/.test(row) || row.length > WIDTH) throw new Refusal("invalid-board");
    if (!last && row.length !== WIDTH) throw new Refusal("invalid-board");
    if (!/[1-9]/.test(row)) throw new Refusal("invalid-board"); // an emptied row is gone
    for (const ch of row) cells.push(ch === "." ? 0 : Number(ch));
  });
  if (cells.length > MAX_CELLS) throw new Refusal("limit");
  return cells;
}

/** The notation of cells. @param {Cells} cells */
function format(cells) {
  const text = cells.map((v) => (v ? String(v) : ".")).join("");
  const rows = [];
  for (let s = 0; s < text.length; s += WIDTH) rows.push(text.slice(s, s + WIDTH));
  return rows.join("/");
}

/** @param {number} i */
const cellName = (i) => `${Math.floor(i / WIDTH)},${i % WIDTH}`;
/** @param {Pair} p */
const pairName = ([i, j]) => `${cellName(i)}-${cellName(j)}`;

/** Whether every cell strictly between i and j, stepping by `step`, is a gap.
 * @param {Cells} cells @param {number} i @param {number} j @param {number} step */
function clear(cells, i, j, step) {
  for (let x = i + step; x < j; x += step) if (cells[x]) return false;
  return true;
}

/** Whether active cells i < j are joined by a straight path of gaps: reading order (across row
 * ends, never from the last cell to the first), the column, or a diagonal (which never wraps).
 * @param {Cells} cells @param {number} i @param {number} j */
function connected(cells, i, j) {
  if (clear(cells, i, j, 1)) return true;
  const dr = Math.floor(j / WIDTH) - Math.floor(i / WIDTH);
  const dc = (j % WIDTH) - (i % WIDTH);
  if (dr <= 0) return false;
  if (dc === 0) return clear(cells, i, j, WIDTH);
  if (dc === dr) return clear(cells, i, j, WIDTH + 1);
  if (dc === -dr) return clear(cells, i, j, WIDTH - 1);
  return false;
}

/** Why removing i, j is refused, or null when the pair is legal.
 * @param {Cells} cells @param {number} i @param {number} j @returns {string | null} */
function pairError(cells, i, j) {
  const n = cells.length;
  if (i < 0 || j < 0 || i >= n || j >= n) return "off-board";
  if (i === j) return "self";
  if (!cells[i] || !cells[j]) return "gap";
  if (valueClass(cells[i]) !== valueClass(cells[j])) return "values";
  return connected(cells, Math.min(i, j), Math.max(i, j)) ? null : "blocked";
}

/** Every legal pair, in reading order of the first cell then the second. @param {Cells} cells */
function legalPairs(cells) {
  /** @type {Pair[]} */
  const out = [];
  for (let i = 0; i < cells.length; i++) {
    if (!cells[i]) continue;
    for (let j = i + 1; j < cells.length; j++) {
      if (cells[j] && valueClass(cells[i]) === valueClass(cells[j]) && connected(cells, i, j)) {
        out.push([i, j]);
      }
    }
  }
  return out;
}

/** Both cells become gaps, then every row left without a number disappears.
 * @param {Cells} cells @param {number} i @param {number} j @returns {Cells} */
function removePair(cells, i, j) {
  const b = cells.slice();
  b[i] = 0;
  b[j] = 0;
  /** @type {Cells} */
  const out = [];
  for (let s = 0; s < b.length; s += WIDTH) {
    const row = b.slice(s, s + WIDTH);
    if (row.some((v) => v)) out.push(...row);
  }
  return out;
}

/** Add numbers: copies of the numbers, in reading order, after the last cell.
 * @param {Cells} cells @returns {Cells} */
function addNumbers(cells) {
  const grown = cells.concat(cells.filter((v) => v));
  if (grown.length > MAX_CELLS) throw new Refusal("limit");
  return grown;
}

/** `R,C-R,C` as flat indices. @param {unknown} text @returns {Pair} */
function parsePair(text) {
  const m = typeof text === "string" ? /^(\d{1,6}),(\d{1,6})-(\d{1,6}),(\d{1,6})$/.exec(text) : null;
  if (!m) throw new Refusal("bad-request");
  const [r1, c1, r2, c2] = m.slice(1).map(Number);
  if (c1 >= WIDTH || c2 >= WIDTH) throw new Refusal("off-board");
  return [r1 * WIDTH + c1, r2 * WIDTH + c2];
}

/** @param {Cells} cells @param {unknown} text @param {number} [move] */
function remove(cells, text, move) {
  const [i, j] = parsePair(text);
  const code = pairError(cells, i, j);
  if (code) throw new Refusal(code, move);
  return removePair(cells, Math.min(i, j), Math.max(i, j));
}

/** @param {unknown} value @param {number} low @param {number} high */
function whole(value, low, high) {
  if (!Number.isInteger(value) || /** @type {number} */ (value) < low || /** @type {number} */ (value) > high) {
    throw new Refusal("bad-request");
  }
  return /** @type {number} */ (value);
}

/** Perft: move sequences of each length 1..depth (a move: a pair, or + while adds are left).
 * @param {Cells} cells @param {number} adds @param {number} depth */
function count(cells, adds, depth) {
  const counts = new Array(depth).fill(0);
  /** @param {Cells} board @param {number} left @param {number} level */
  const walk = (board, left, level) => {
    const pairs = legalPairs(board);
    const canAdd = left > 0 && board.length > 0;
    counts[level] += pairs.length + (canAdd ? 1 : 0);
    if (level + 1 === depth) return;
    for (const [i, j] of pairs) walk(removePair(board, i, j), left, level + 1);
    if (canAdd) walk(addNumbers(board), left - 1, level + 1);
  };
  walk(cells, adds, 0);
  return counts;
}

/** @param {Cells} cells @param {number} addsLeft */
function status(cells, addsLeft) {
  if (cells.length === 0) return "won";
  return addsLeft > 0 || legalPairs(cells).length > 0 ? "in play" : "stuck";
}

/** @param {any} req @returns {object} */
function handle(req) {
  if (typeof req !== "object" || req === null || Array.isArray(req)) throw new Refusal("bad-request");
  const ops = ["parse", "pairs", "remove", "add", "count", "replay"];
  if (!ops.includes(req.op)) throw new Refusal("bad-request");
  if ((req.ruleset ?? RULESET) !== RULESET) throw new Refusal("unknown-ruleset");
  const cells = parse(req.board);
  switch (req.op) {
    case "parse":
      return {
        board: format(cells),
        rows: Math.ceil(cells.length / WIDTH),
        active: cells.filter((v) => v).length,
      };
    case "pairs":
      return { pairs: legalPairs(cells).map(pairName) };
    case "remove":
      return { board: format(remove(cells, req.pair)) };
    case "add":
      if (cells.length === 0) throw new Refusal("empty-board");
      return { board: format(addNumbers(cells)) };
    case "count":
      return { counts: count(cells, whole(req.adds, 0, 16), whole(req.depth, 1, 3)) };
    default: {
      let board = cells;
      let adds = whole(req.adds, 0, 16);
      if (!Array.isArray(req.moves)) throw new Refusal("bad-request");
      req.moves.forEach((/** @type {unknown} */ move, /** @type {number} */ k) => {
        if (move === "+") {
          if (adds <= 0) throw new Refusal("no-adds", k + 1);
          if (board.length === 0) throw new Refusal("empty-board", k + 1);
          board = addNumbers(board);
          adds -= 1;
        } else {
          board = remove(board, move, k + 1);
        }
      });
      return { board: format(board), adds_left: adds, status: status(board, adds) };
    }
  }
}

/** One request line in, one answer line out. @param {string} line */
function answer(line) {
  try {
    return JSON.stringify(handle(JSON.parse(line)));
  } catch (err) {
    if (err instanceof Refusal) {
      return JSON.stringify(err.move === undefined ? { error: err.code } : { error: err.code, move: err.move });
    }
    return JSON.stringify({ error: "bad-request" }); // not JSON
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim()) process.stdout.write(answer(line) + "\n");
}
