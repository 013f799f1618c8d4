// The skills view (every skill the caller may see, filtered by tag, category, status and text;
// when there is none, where the server looks and how to add one) and one skill's details
// (status, blocked reason, tags, tools, provider, the environment its folder declares, SKILL.md
// rendered as Markdown with the raw file on a toggle, and schemas).

import { getJson } from "./api.js";
import { renderMarkdown } from "./markdown.js";
import { $, el } from "./dom.js";

let skills = [];
// The folders the server loads skills from (GET /console/api/info `skill_roots`).
let roots = [];

export function setSkillRoots(list) {
  roots = Array.isArray(list) ? list : [];
}

export async function loadSkills() {
  skills = (await getJson("/console/api/skills")).skills;
  fillSelect($("skill-tag"), [...new Set(skills.flatMap((s) => s.tags || []))].sort());
  fillSelect($("skill-category"), [...new Set(skills.map((s) => s.category).filter(Boolean))].sort());
  renderSkills();
  return skills;
}

export function skillNames() {
  return skills.map((s) => s.name).sort();
}

function fillSelect(select, values) {
  const keep = select.value;
  select.replaceChildren(new Option("any", ""));
  for (const v of values) select.append(new Option(v, v));
  select.value = values.includes(keep) ? keep : "";
}

function blockedReason(skill) {
  const m = skill.metadata || {};
  return m.blocked_reason || m.provider_denied || m.environment_failed || "";
}

function providerOf(skill) {
  const c = skill.llm_config;
  if (!c) return "the host's default";
  const model = c.provider_config && c.provider_config.model;
  return [c.provider_name, model].filter(Boolean).join(" / ") || "the host's default";
}

// The environment line: what the host would build (the requirements the folder declares) or
// "none declared"; a build that failed says so first.
function environmentOf(skill, declared) {
  const m = skill.metadata || {};
  const parts = [];
  if (m.environment_failed) parts.push(`failed: ${m.environment_failed}`);
  const d = declared || {};
  if (d.error) parts.push(`unreadable: ${d.error}`);
  if (d.python && d.python.length) parts.push(`Python: ${d.python.join(", ")} (from ${d.sources.join(", ")})`);
  if (d.node && d.node.length) parts.push(`Node: ${d.node.join(", ")}`);
  if (!parts.length) return declared ? "none declared" : "none (a native skill)";
  return parts.join(" · ");
}

function names(list) {
  return (list || []).map((t) => (typeof t === "string" ? t : t.name || JSON.stringify(t))).join(", ");
}

// "It looked in DIR, DIR. " naming the folders this server loads from, when it said.
function lookedIn() {
  if (!roots.length) return [];
  const parts = ["It looked in "];
  roots.forEach((root, i) => parts.push(...(i ? [", "] : []), el("code", "skill-root", root)));
  parts.push(" and found no skill folder there. ");
  return parts;
}

export function renderSkills() {
  const text = $("skill-search").value.trim().toLowerCase();
  const tag = $("skill-tag").value;
  const category = $("skill-category").value;
  const status = $("skill-status").value;
  const shown = skills.filter((s) => {
    if (tag && !(s.tags || []).includes(tag)) return false;
    if (category && s.category !== category) return false;
    if (status && s.status !== status) return false;
    if (!text) return true;
    const hay = [s.name, s.description, s.when_to_use, s.category, ...(s.tags || [])].join(" ").toLowerCase();
    return hay.includes(text);
  });
  const list = $("skill-list");
  list.replaceChildren();
  for (const s of shown) {
    const li = el("li");
    const a = el("a", "card");
    a.href = `#/skill/${encodeURIComponent(s.name)}`;
    a.dataset.skill = s.name;
    const h = el("h2", null, s.name);
    const badge = el("span", `badge status-${s.status}`, s.status);
    const version = el("span", "muted", s.version ? ` v${s.version}` : "");
    a.append(h, badge, version, el("p", null, s.description));
    const reason = blockedReason(s);
    if (s.status === "Blocked" && reason) a.append(el("p", "blocked", `Blocked: ${reason}`));
    const tags = el("p");
    if (s.category) tags.append(el("span", "tag", `category: ${s.category}`));
    for (const t of s.tags || []) tags.append(el("span", "tag", t));
    a.append(tags);
    const tools = names(s.tools);
    const toolkits = names(s.toolkits);
    if (tools || toolkits) a.append(el("p", "muted", [tools && `tools: ${tools}`, toolkits && `toolkits: ${toolkits}`].filter(Boolean).join(" · ")));
    a.append(el("p", "muted", `model: ${providerOf(s)}`));
    li.append(a);
    list.append(li);
  }
  $("skill-count").textContent = `${shown.length} of ${skills.length} skills`;
  const empty = $("skills-empty");
  empty.hidden = skills.length > 0;
  if (!skills.length) {
    empty.replaceChildren(
      el("strong", null, "No skills on this server. "),
      ...lookedIn(),
      "It loads every skill folder (a folder with a SKILL.md) of its skills directories: the ones given with ",
      el("code", null, "--skills-dir DIR"),
      " or the config's ",
      el("code", null, "skills_dirs"),
      ", else ",
      el("code", null, "./skills"),
      " in the folder it was started from, else ",
      el("code", null, "$XDG_DATA_HOME/skillet/skills"),
      ". Make one with ",
      el("code", null, "skillet init NAME"),
      " (it writes ./skills/NAME), check it with ",
      el("code", null, "skillet validate"),
      ", then restart the server or point it there with ",
      el("code", null, "--skills-dir"),
      ".",
    );
  }
}

// Shows SKILL.md rendered, or raw when the toggle says so.
function showMarkdownMode() {
  const raw = $("skill-md-raw").checked;
  $("skill-md").hidden = !raw;
  $("skill-md-rendered").hidden = raw;
}

export function wireSkill() {
  $("skill-md-raw").addEventListener("change", showMarkdownMode);
}

// Fills the skill view; resolves to {skill, skill_md, examples, has_evals}.
export async function showSkill(name) {
  const { skill, skill_md, examples, environment, has_evals } = await getJson(`/console/api/skills/${encodeURIComponent(name)}`);
  $("skill-title").textContent = skill.name;
  const dl = el("dl", "meta");
  const row = (k, v) => {
    if (v) dl.append(el("dt", null, k), el("dd", null, v));
  };
  row("Status", skill.status + (blockedReason(skill) ? ` — ${blockedReason(skill)}` : ""));
  row("Version", skill.version);
  row("Description", skill.description);
  if (skill.when_to_use !== skill.description) row("When to use", skill.when_to_use);
  row("Category", skill.category);
  row("Tags", (skill.tags || []).join(", "));
  row("Tools", names(skill.tools));
  row("Toolkits", names(skill.toolkits));
  row("Provider / model", providerOf(skill));
  row("Environment", environmentOf(skill, environment));
  row("Max turns", skill.max_turns && String(skill.max_turns));
  row("Timeout", skill.timeout_seconds && `${skill.timeout_seconds} s`);
  $("skill-meta").replaceChildren(dl);
  $("skill-md").textContent = skill_md || "(no SKILL.md: a native skill)";
  $("skill-md-rendered").replaceChildren(skill_md ? renderMarkdown(skill_md) : el("p", "muted", "(no SKILL.md: a native skill)"));
  $("skill-md-raw").checked = false;
  showMarkdownMode();
  $("skill-input-schema").textContent = JSON.stringify(skill.input_schema, null, 2);
  $("skill-output-schema").textContent = JSON.stringify(skill.output_schema, null, 2);
  return { skill, skill_md, examples: examples || [], has_evals: Boolean(has_evals) };
}
