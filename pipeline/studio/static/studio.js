// The studio's only script: keyboard use. Arrow keys move between board cells; a letter key
// presses the button or link with that data-key (a add, u undo, r restart, h hint,
// w winnable?, s solution; arrows/Home/End step through a solution). Without it every page
// still works with Tab and Enter.
document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target;
  if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
  if (t && t.classList && t.classList.contains("cell") && ev.key.startsWith("Arrow")) {
    const r = +t.dataset.r + (ev.key === "ArrowDown") - (ev.key === "ArrowUp");
    const c = +t.dataset.c + (ev.key === "ArrowRight") - (ev.key === "ArrowLeft");
    const next = document.querySelector(`button.cell[data-r="${r}"][data-c="${c}"]`);
    if (next) { next.focus(); ev.preventDefault(); }
    return;
  }
  if (ev.key === "Escape") {
    const sel = document.querySelector("input[name=sel]");
    if (sel) { sel.remove(); document.querySelector("button.cell.sel")?.classList.remove("sel"); }
    return;
  }
  const hit = document.querySelector(`[data-key="${CSS.escape(ev.key)}"]`);
  if (hit && !hit.disabled) { ev.preventDefault(); hit.click(); }
});
// Put keyboard focus back on the board after a move (the server marks the cell autofocus).
window.addEventListener("DOMContentLoaded", () => {
  const f = document.querySelector("[autofocus]") || document.querySelector("button.cell:not(.gap)");
  if (f && !document.activeElement?.matches("button, a")) f.focus({preventScroll: true});
});
