// The skills view (every skill the caller may see, filtered by tag, category, status and text)
// and one skill's details (status, blocked reason, tags, tools, provider, environment, SKILL.md
// and schemas).

import { getJson } from "./api.js";
import { $, el } from "./dom.js";

let skills = [];

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

function environmentOf(skill) {
  const m = skill.metadata || {};
  if (m.environment_failed) return `failed: ${m.environment_failed}`;
  if (m.environment) return typeof m.environment === "string" ? m.environment : JSON.stringify(m.environment);
  if (m["a2e-requirements"] || m.requirements) return "ready";
  return "none needed";
}

function names(list) {
  return (list || []).map((t) => (typeof t === "string" ? t : t.name || JSON.stringify(t))).join(", ");
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
}

// Fills the skill view; resolves to {skill, skill_md}.
export async function showSkill(name) {
  const { skill, skill_md } = await getJson(`/console/api/skills/${encodeURIComponent(name)}`);
  $("skill-title").textContent = skill.name;
  const dl = el("dl", "meta");
  const row = (k, v) => {
    if (v) dl.append(el("dt", null, k), el("dd", null, v));
  };
  row("Status", skill.status + (blockedReason(skill) ? ` — ${blockedReason(skill)}` : ""));
  row("Version", skill.version);
  row("Description", skill.description);
  row("When to use", skill.when_to_use);
  row("Category", skill.category);
  row("Tags", (skill.tags || []).join(", "));
  row("Tools", names(skill.tools));
  row("Toolkits", names(skill.toolkits));
  row("Provider / model", providerOf(skill));
  row("Environment", environmentOf(skill));
  row("Max turns", skill.max_turns && String(skill.max_turns));
  row("Timeout", skill.timeout_seconds && `${skill.timeout_seconds} s`);
  $("skill-meta").replaceChildren(dl);
  $("skill-md").textContent = skill_md || "(no SKILL.md: a native skill)";
  $("skill-input-schema").textContent = JSON.stringify(skill.input_schema, null, 2);
  $("skill-output-schema").textContent = JSON.stringify(skill.output_schema, null, 2);
  return { skill, skill_md };
}
