// How the console writes numbers a person reads: a duration in ms under one second and in
// seconds above ("850 ms", "1.25 s", "12.4 s"), "—" when unknown.
//
// Not here: building elements (`dom.js`).

export function fmtMs(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return "—";
  const n = Math.round(ms);
  if (n < 1000) return `${n} ms`;
  return `${(n / 1000).toFixed(n < 10000 ? 2 : 1)} s`;
}
