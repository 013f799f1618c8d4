// The console's entry point: hash routing between the views (#/skills, #/skill/NAME,
// #/history?FILTERS, #/run/ID), the API key dialog, keyboard shortcuts, notices. A skill or run that
// cannot be shown leaves only the notice and a link back (no form to run, no empty record).

import { getJson, ApiError, apiKey, setApiKey } from "./api.js";
import { loadSkills, renderSkills, showSkill, skillNames, wireSkill, setSkillRoots } from "./skills.js";
import { showEvals } from "./evals.js";
import { prepareRun, setInfo, wireRun } from "./run.js";
import { loadHistory, showRun, fillSkillFilter, filterHash, setFilters } from "./history.js";
import { $ } from "./dom.js";

const VIEWS = ["view-skills", "view-skill", "view-history", "view-run"];

let info = null;
let rerun = null; // {skill, arguments} carried from a recorded run to the skill view

// Shows `text` in the notice, with a link `back` ({href, text}) after it when given.
function notice(text, back) {
  $("notice").hidden = !text;
  $("notice").textContent = text || "";
  if (text && back) {
    const a = document.createElement("a");
    a.href = back.href;
    a.textContent = back.text;
    $("notice").append(" ", a);
  }
}

// A route whose skill or run cannot be shown: the notice only, nothing to run from.
function nothingToShow() {
  show(null);
  $("run-button").disabled = true;
  $("rerun-button").disabled = true;
  document.title = "Not found — Skillet console";
}

function show(view) {
  for (const v of VIEWS) $(v).hidden = v !== view;
  $("nav-skills").toggleAttribute("aria-current", view === "view-skills" || view === "view-skill");
  if ($("nav-skills").hasAttribute("aria-current")) $("nav-skills").setAttribute("aria-current", "page");
  $("nav-history").toggleAttribute("aria-current", view === "view-history" || view === "view-run");
  if ($("nav-history").hasAttribute("aria-current")) $("nav-history").setAttribute("aria-current", "page");
}

function askKey(message) {
  $("key-error").textContent = message || "";
  $("key-input").value = "";
  if (!$("key-dialog").open) $("key-dialog").showModal();
}

async function ensureInfo() {
  if (!info) {
    info = await getJson("/console/api/info");
    setInfo(info);
    setSkillRoots(info.skill_roots);
    $("key-button").hidden = !info.auth;
  }
  return info;
}

async function route() {
  const hash = location.hash || "#/skills";
  const [, view, arg, search] = /^#\/([a-z]+)(?:\/([^?]*))?(?:\?(.*))?$/.exec(hash) || [null, "skills", null, null];
  notice("");
  try {
    await ensureInfo();
    if (view === "skill" && arg) {
      const { skill, skill_md, examples, has_evals } = await showSkill(decodeURIComponent(arg));
      show("view-skill");
      const carried = rerun && rerun.skill === skill.name ? rerun.arguments : undefined;
      rerun = null;
      prepareRun(skill, carried, !skill_md, examples);
      document.title = `${skill.name} — Skillet console`;
      await showEvals(skill.name, has_evals && Boolean(info.history));
    } else if (view === "history") {
      show("view-history");
      if (!skillNames().length) await loadSkills().catch(() => {});
      fillSkillFilter(skillNames());
      setFilters(new URLSearchParams(search || ""));
      await loadHistory(false);
      document.title = "History — Skillet console";
    } else if (view === "run" && arg) {
      const run = await showRun(arg);
      show("view-run");
      $("rerun-button").onclick = () => {
        rerun = { skill: run.skill, arguments: run.arguments };
        location.hash = `#/skill/${encodeURIComponent(run.skill)}`;
      };
      document.title = `Run ${run.id} — Skillet console`;
    } else {
      show("view-skills");
      await loadSkills();
      document.title = "Skills — Skillet console";
    }
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      askKey(apiKey() ? "That key was refused." : "");
    } else if (e instanceof ApiError && e.status === 403) {
      notice("This key may not use the console: it needs the console scope.");
    } else if (view === "skill" || view === "run") {
      nothingToShow();
      notice(e.message || String(e), view === "run" ? { href: "#/history", text: "Back to the history" } : { href: "#/skills", text: "Back to all skills" });
    } else {
      notice(e.message || String(e));
    }
  }
}

function wire() {
  $("skill-filters").addEventListener("input", renderSkills);
  // Selects also on `change`; the search box only on `input` (its `change` on blur would redraw
  // the list under the click that blurred it).
  for (const id of ["skill-tag", "skill-category", "skill-status"]) $(id).addEventListener("change", renderSkills);
  $("skill-filters").addEventListener("submit", (e) => e.preventDefault());
  $("history-filters").addEventListener("submit", (e) => {
    e.preventDefault();
    // The filters go into the URL; the route loads the list (at once when the URL is unchanged).
    const target = filterHash();
    if (location.hash === target) loadHistory(false).catch((err) => notice(err.message));
    else location.hash = target;
  });
  $("history-more").addEventListener("click", () => loadHistory(true).catch((err) => notice(err.message)));
  $("key-button").addEventListener("click", () => askKey(""));
  $("key-form").addEventListener("submit", () => {
    setApiKey($("key-input").value.trim());
    info = null;
    route();
  });
  $("key-forget").addEventListener("click", () => {
    setApiKey("");
    $("key-dialog").close();
  });
  document.addEventListener("skillet:auth", () => askKey("The server asked for a key."));
  document.addEventListener("keydown", (e) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
    if (e.key === "/" && !typing) {
      e.preventDefault();
      location.hash = "#/skills";
      $("skill-search").focus();
    }
  });
  wireRun();
  wireSkill();
  window.addEventListener("hashchange", () => {
    route();
    $("main").focus({ preventScroll: true });
  });
}

wire();
route();
