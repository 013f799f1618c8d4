// A small Markdown renderer for a skill's SKILL.md: headings, paragraphs, lists (nested by
// indent), block quotes, fenced and indented code, rules, pipe tables, and inline code,
// emphasis, strong and links. The file is hostile input, so the renderer builds DOM nodes and
// sets every text with `textContent` — no HTML in the file ever becomes markup (it shows as
// text) — and a link keeps only an http(s) or mailto address (any other, `javascript:` among
// them, is shown as plain text). The YAML front matter is left out (the raw view shows it).
//
// Not here: the raw view and its toggle (`skills.js`).

import { el } from "./dom.js";

const SAFE_LINK = /^(https?:|mailto:)/i;

// The text of `markdown` without a leading `---` front matter block.
export function withoutFrontMatter(markdown) {
  const m = /^---\r?\n[\s\S]*?\r?\n---[ \t]*(\r?\n|$)/.exec(markdown || "");
  return m ? markdown.slice(m[0].length) : markdown || "";
}

// Appends the inline content of `text` to `parent`.
function inline(parent, text) {
  const pattern = /(`+)([\s\S]*?)\1|\*\*([^*]+)\*\*|(?<!\w)__([^_]+)__(?!\w)|\*([^*\s][^*]*)\*|(?<!\w)_([^_\s][^_]*)_(?!\w)|\[([^\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)|<(https?:\/\/[^>\s]+)>/g;
  let last = 0;
  let m;
  while ((m = pattern.exec(text))) {
    if (m.index > last) parent.append(text.slice(last, m.index));
    if (m[1]) parent.append(el("code", null, m[2]));
    else if (m[3] !== undefined || m[4] !== undefined) {
      const strong = el("strong");
      inline(strong, m[3] ?? m[4]);
      parent.append(strong);
    } else if (m[5] !== undefined || m[6] !== undefined) {
      const em = el("em");
      inline(em, m[5] ?? m[6]);
      parent.append(em);
    } else if (m[7] !== undefined || m[9] !== undefined) {
      const label = m[7] ?? m[9];
      const href = m[8] ?? m[9];
      if (SAFE_LINK.test(href)) {
        const a = el("a");
        inline(a, label);
        a.href = href;
        a.rel = "noopener noreferrer nofollow";
        parent.append(a);
      } else {
        // Relative (a file of the skill) or not a safe scheme: its text and target, unlinked.
        parent.append(href ? `${label} (${href})` : label);
      }
    }
    last = pattern.lastIndex;
  }
  if (last < text.length) parent.append(text.slice(last));
}

const indentOf = (line) => /^ */.exec(line)[0].length;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

// Renders the list starting at `lines[i]`; returns [element, next index].
function list(lines, i) {
  const first = LIST_ITEM.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const node = el(ordered ? "ol" : "ul");
  let item = null;
  while (i < lines.length) {
    const line = lines[i];
    const m = LIST_ITEM.exec(line);
    if (m && m[1].length === indent && /\d/.test(m[2]) === ordered) {
      item = el("li");
      inline(item, m[3]);
      node.append(item);
      i += 1;
    } else if (m && m[1].length > indent && item) {
      const [sub, next] = list(lines, i);
      item.append(sub);
      i = next;
    } else if (line.trim() && item && indentOf(line) > indent && !m) {
      item.append(" ");
      inline(item, line.trim());
      i += 1;
    } else break;
  }
  return [node, i];
}

// Renders `markdown` (front matter left out) into a new element.
export function renderMarkdown(markdown) {
  const root = el("div", "md");
  const lines = withoutFrontMatter(markdown).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let paragraph = [];
  const flush = () => {
    if (!paragraph.length) return;
    const p = el("p");
    inline(p, paragraph.join(" "));
    root.append(p);
    paragraph = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^\s*(```+|~~~+)\s*([\w+-]*)/.exec(line);
    if (fence) {
      flush();
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i += 1;
      const pre = el("pre");
      const code = el("code", null, body.join("\n"));
      if (fence[2]) code.dataset.lang = fence[2];
      pre.append(code);
      root.append(pre);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      const h = el(`h${Math.min(heading[1].length + 1, 6)}`);
      inline(h, heading[2]);
      root.append(h);
      i += 1;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      root.append(el("hr"));
      i += 1;
      continue;
    }
    if (LIST_ITEM.test(line) && indentOf(line) < 4) {
      flush();
      const [node, next] = list(lines, i);
      root.append(node);
      i = next;
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const quoted = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s*>\s?/, ""));
      const q = el("blockquote");
      q.append(renderMarkdown(quoted.join("\n")));
      root.append(q);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) {
      flush();
      const table = el("table", "md-table");
      const head = el("tr");
      for (const c of cells(line)) {
        const th = el("th");
        inline(th, c);
        head.append(th);
      }
      const thead = el("thead");
      thead.append(head);
      const tbody = el("tbody");
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
        const tr = el("tr");
        for (const c of cells(lines[i])) {
          const td = el("td");
          inline(td, c);
          tr.append(td);
        }
        tbody.append(tr);
        i += 1;
      }
      table.append(thead, tbody);
      const wrap = el("div", "table-wrap");
      wrap.append(table);
      root.append(wrap);
      continue;
    }
    if (/^( {4}|\t)/.test(line) && !paragraph.length) {
      const body = [];
      while (i < lines.length && (/^( {4}|\t)/.test(lines[i]) || !lines[i].trim())) body.push(lines[i++].replace(/^( {4}|\t)/, ""));
      while (body.length && !body[body.length - 1].trim()) body.pop();
      const pre = el("pre");
      pre.append(el("code", null, body.join("\n")));
      root.append(pre);
      continue;
    }
    if (!line.trim()) {
      flush();
      i += 1;
      continue;
    }
    paragraph.push(line.trim());
    i += 1;
  }
  flush();
  return root;
}
