// The two DOM helpers every view module uses: `$` finds an element by id, `el` makes one with
// a class and a text (never HTML: text only, so nothing a server sends becomes markup).

export const $ = (id) => document.getElementById(id);

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
