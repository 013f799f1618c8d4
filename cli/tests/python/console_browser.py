"""Drives the web console of a running `skillet serve --http` in headless Chromium (Selenium).

Usage: console_browser.py BASE_URL PHASE [SCREENSHOT_DIR]

Phase `run`: open the skills page, filter it, open `ticket-triage`, fill its generated form (a
nested object with an enum), submit an invalid value (the field error is shown and nothing is
sent), submit one only the server refuses (its violation shown at the field), run it on mock-llm and see its turns, its tool call and the validated result; cancel a
slow run; find both runs in the history after a reload; re-open a run; approve one gated tool
call and deny another with a reason (each decision and result in the timeline); pick an input
file the run reads, one over the host's limit (refused in the browser, nothing sent) and one
sent around the picker in raw JSON (refused by the server); copy the input as MCP `tools/call`
and A2A `SendMessage` (the MCP one sent by the official `mcp` client and the A2A body posted
to /a2a both run and read the file); run the bundled `code-review` (its mock scenario repairs
once) and read its transcript — turn 1's answer rejected with its violations, then turn 2 — live
and again from the history; a plain Agent Skill with a 1,000-character description: one
"Request" textarea, no horizontal overflow at 1280 and 390 px, a run whose transcript holds the
request; `#/skill/nope` and `#/run/999` show only their notice. Also: the repair side by side
(rejected answer, violations, repaired answer), a waterfall with a bar per turn and tool call, a
failed run's box naming the turn it failed at with a link that opens it, "Load example" from
`examples/*.json` and `a2a-examples`, SKILL.md rendered as Markdown (its HTML as text) with a
raw toggle, "Environment: none declared", the history showing a run posted to /a2e meanwhile
without a reload, its turns and repairs columns, durations in ms, its filters in the URL.
Phase `nocapture`: a server keeping no content: a run's page says its transcript is not kept
and how to keep it; the run view says what was not kept.
Phase `empty`: a server with no skills: the list says where it looked and what to do.
Phase `restarted`: the server was restarted; the `ticket-triage` run is still in the history,
the `code-review` run still shows its transcript, and ticket-triage's skill view shows the eval
report `skillet eval --save` made, its two models side by side with the Wilson interval of each
pass rate; the failing case's cell opens its run and the check that failed.
Both phases fail when the browser logged an error. With SCREENSHOT_DIR, PNGs of each view are
written there (docs/console/ in the repository).
"""

import asyncio
import base64
import json
import os
import re
import sys
import tempfile
import urllib.request

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE = sys.argv[1].rstrip("/")
PHASE = sys.argv[2]
SHOTS = sys.argv[3] if len(sys.argv) > 3 else None


def driver():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--force-color-profile=srgb", "--hide-scrollbars"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


def wait(d, seconds=20):
    return WebDriverWait(d, seconds)


def shot(d, name, width=1280):
    if not SHOTS:
        return
    os.makedirs(SHOTS, exist_ok=True)
    d.set_window_size(width, 900)
    height = d.execute_script("return Math.min(document.documentElement.scrollHeight, 2400)")
    d.set_window_size(width, max(height, 600))
    d.save_screenshot(os.path.join(SHOTS, f"{name}.png"))
    d.set_window_size(1280, 900)


def errors_in_log(d):
    return [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]


def history_runs():
    with urllib.request.urlopen(f"{BASE}/console/api/runs") as r:
        return json.load(r)["runs"]


def visible_cards(d):
    return [c.get_attribute("data-skill") for c in d.find_elements(By.CSS_SELECTOR, "#skill-list .card")]


def phase_run(d):
    d.get(f"{BASE}/")
    wait(d).until(lambda d: len(visible_cards(d)) >= 3)
    everything = visible_cards(d)
    assert "ticket-triage" in everything and "slow-echo" in everything, everything
    # Blocked skills say what they miss.
    blocked = d.find_element(By.CSS_SELECTOR, '.card[data-skill="needs-a-tool"] .blocked').text
    assert "Blocked" in blocked and "nonexistent_tool" in blocked, blocked
    shot(d, "skills")
    if SHOTS:
        d.execute_cdp_cmd("Emulation.setEmulatedMedia",
                          {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        shot(d, "skills-dark")
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    # Filter by tag, then by text.
    Select(d.find_element(By.ID, "skill-tag")).select_by_visible_text("support")
    assert visible_cards(d) == ["ticket-triage"], visible_cards(d)
    Select(d.find_element(By.ID, "skill-tag")).select_by_value("")
    search = d.find_element(By.ID, "skill-search")
    search.send_keys("slow")
    assert visible_cards(d) == ["slow-echo"], visible_cards(d)
    search.clear()
    search.send_keys("triage")
    assert visible_cards(d) == ["ticket-triage"], visible_cards(d)
    shot(d, "skills-phone", width=390)
    d.find_element(By.CSS_SELECTOR, '.card[data-skill="ticket-triage"]').click()

    # The skill view with its generated form.
    wait(d).until(EC.text_to_be_present_in_element((By.ID, "skill-title"), "ticket-triage"))
    md = d.find_element(By.ID, "skill-md").get_attribute("textContent")
    assert "You triage support tickets" in md, md
    priority = Select(d.find_element(By.CSS_SELECTOR, 'select[name="/ticket/priority"]'))
    assert [o.text for o in priority.options] == ["—", "low", "normal", "high"], [o.text for o in priority.options]
    title = d.find_element(By.CSS_SELECTOR, '[name="/ticket/title"]')
    count = d.find_element(By.CSS_SELECTOR, 'input[name="/copies"]')
    assert count.get_attribute("value") == "1", "the schema's default is filled in"
    required = d.find_elements(By.CSS_SELECTOR, '[data-path="/ticket/title"] .required')
    assert required, "required fields are marked"

    # An invalid value: shown at its field, nothing sent.
    before = len(history_runs())
    count.clear()
    count.send_keys("0")
    priority.select_by_visible_text("high")
    d.find_element(By.ID, "run-button").click()
    copies_error = d.find_element(By.CSS_SELECTOR, '[data-error-for="/copies"]').text
    title_error = d.find_element(By.CSS_SELECTOR, '[data-error-for="/ticket/title"]').text
    assert "≥ 1" in copies_error, copies_error
    assert "required" in title_error, title_error
    assert not d.find_element(By.ID, "run-timeline").is_displayed(), "nothing ran"
    assert len(history_runs()) == before, "an invalid form sent a call"
    shot(d, "form-errors")

    # A value only the server refuses (`not`): its violation is shown at its field.
    title.send_keys("Printer on fire")
    count.clear()
    count.send_keys("13")
    d.find_element(By.ID, "run-button").click()
    wait(d).until(EC.text_to_be_present_in_element(
        (By.CSS_SELECTOR, '#run-timeline [data-testid="result"]'), "Refused: schema_violation"))
    wait(d).until(lambda d: d.find_element(By.CSS_SELECTOR, '[data-error-for="/copies"]').text)
    assert "/copies" not in d.find_element(By.ID, "form-error").text, "the violation went to its field"

    # A valid run on mock-llm: turns, the tool call, the validated result.
    count.clear()
    count.send_keys("2")
    d.find_element(By.ID, "run-button").click()
    result = wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, '#run-timeline [data-testid="result"]')))
    wait(d).until(lambda d: "Succeeded" in result.text)
    assert "valid: the output matches the output schema" in result.text, result.text
    assert '"queue": "urgent"' in result.text, result.text
    turns = d.find_elements(By.CSS_SELECTOR, "#run-timeline .turn")
    assert len(turns) == 2, len(turns)
    check_waterfall(d, "#run-timeline", ["turn", "tool", "turn"])
    duration = result.find_element(By.XPATH, ".//dt[text()='Duration']/following-sibling::dd[1]").text
    assert DURATION.match(duration), duration
    tool = d.find_element(By.CSS_SELECTOR, "#run-timeline details.tool summary")
    assert "calculator" in tool.text and "result" in tool.text, tool.text
    tool.click()
    assert "2 * 3" in d.find_element(By.CSS_SELECTOR, "#run-timeline details.tool").text
    d.find_element(By.ID, "copy-curl").click()
    curl = d.find_element(By.ID, "copy-box").get_attribute("value")
    assert curl.startswith("curl -N -X POST") and "ticket-triage" in curl, curl
    shot(d, "run")

    # Cancel a slow run.
    d.get(f"{BASE}/#/skill/slow-echo")
    wait(d).until(EC.text_to_be_present_in_element((By.ID, "skill-title"), "slow-echo"))
    d.find_element(By.CSS_SELECTOR, '[name="/text"]').send_keys("take your time")
    d.find_element(By.ID, "run-button").click()
    wait(d).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "#run-timeline .turn"), "Turn 1"))
    # Its waterfall while it runs: the turn's bar grows with the time it takes.
    live = '#run-timeline [data-testid="waterfall-live"] li.wf-row .wf-ms'
    wait(d).until(lambda d: d.find_elements(By.CSS_SELECTOR, live)
                  and d.find_element(By.CSS_SELECTOR, live).text.endswith(" s"))
    d.find_element(By.ID, "cancel-button").click()
    wait(d).until(lambda d: not d.find_elements(By.CSS_SELECTOR, live))
    wait(d).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, '#run-timeline [data-testid="result"]'), "Cancelled"))

    # The history, after a reload: both runs; one re-opened.
    d.get(f"{BASE}/#/history")
    d.refresh()
    wait(d).until(lambda d: {"ticket-triage", "slow-echo"} <= {
        r.find_elements(By.TAG_NAME, "td")[1].text
        for r in d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")
    })
    rows = d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")
    slow = [r for r in rows if r.find_elements(By.TAG_NAME, "td")[1].text == "slow-echo"][0]
    assert "success" not in slow.text, slow.text
    shot(d, "history")
    Select(d.find_element(By.ID, "h-outcome")).select_by_visible_text("success")
    d.find_element(By.CSS_SELECTOR, "#history-filters button").click()
    wait(d).until(lambda d: [r.text for r in d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")]
                  and all("success" in r.text and "ticket-triage" in r.text
                          for r in d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")))
    # The filter is in the URL: a reload keeps it.
    assert "outcome=success" in d.current_url, d.current_url
    d.refresh()
    wait(d).until(lambda d: Select(d.find_element(By.ID, "h-outcome")).first_selected_option.text == "success")
    wait(d).until(lambda d: [r.text for r in d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")]
                  and all("success" in r.text for r in d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")))
    triage = [r for r in d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr") if "ticket-triage" in r.text][0]
    triage.find_element(By.TAG_NAME, "a").click()
    wait(d).until(EC.text_to_be_present_in_element((By.ID, "run-title"), "ticket-triage"))
    replayed = d.find_element(By.CSS_SELECTOR, '#run-replay [data-testid="result"]').text
    assert "Succeeded" in replayed, replayed
    assert "Printer on fire" in d.find_element(By.ID, "run-input").text
    shot(d, "run-record")
    # Re-run with the same input fills the form.
    d.find_element(By.ID, "rerun-button").click()
    wait(d).until(EC.text_to_be_present_in_element((By.ID, "skill-title"), "ticket-triage"))
    filled = d.find_element(By.CSS_SELECTOR, '[name="/ticket/title"]').get_attribute("value")
    assert filled == "Printer on fire", filled

    approvals(d)
    with tempfile.TemporaryDirectory() as scratch:
        input_files(d, scratch)
    transcript_live(d)
    plain_skill(d)
    failed_run(d)
    produced_file(d)
    examples(d)
    live_history(d)
    not_found(d)


DURATION = re.compile(r"^(\d{1,3} ms|\d+\.\d+ s)$")


def check_waterfall(d, root, kinds):
    box = wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, f'{root} [data-testid="waterfall"]')))
    rows = box.find_elements(By.CSS_SELECTOR, "li.wf-row")
    assert [r.get_attribute("data-kind") for r in rows] == kinds, [r.get_attribute("data-kind") for r in rows]
    for r in rows:
        bar = r.find_element(By.CSS_SELECTOR, ".wf-bar")
        assert bar.size["width"] >= 2, bar.size
        ms = r.find_element(By.CSS_SELECTOR, ".wf-ms").text
        assert DURATION.match(ms), ms
    track = rows[-1].find_element(By.CSS_SELECTOR, ".wf-track")
    last = rows[-1].find_element(By.CSS_SELECTOR, ".wf-bar")
    assert last.location["x"] > track.location["x"], "the last turn starts after the first"


def check_repair_side_by_side(d, root):
    box = wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, f'{root} [data-testid="repair"]')))
    cols = box.find_elements(By.CSS_SELECTOR, ".rc-col")
    texts = [c.get_attribute("textContent") for c in cols]
    assert "Rejected (turn 1)" in texts[0] and '"severity": "critical"' in texts[0], texts[0]
    assert "/issues/0/severity" in texts[1], texts[1]
    assert "Repaired (turn 2)" in texts[2] and '"severity": "error"' in texts[2], texts[2]
    # Side by side: one row, left to right.
    assert len({c.location["y"] for c in cols}) == 1, [c.location for c in cols]
    xs = [c.location["x"] for c in cols]
    assert xs == sorted(xs) and len(set(xs)) == 3, xs


def failed_run(d):
    # Its answer never matches its output schema: rejected at turn 1, failed at turn 2.
    open_skill(d, "never-valid")
    d.find_element(By.CSS_SELECTOR, 'textarea[name="/prompt"]').send_keys("anything")
    d.find_element(By.ID, "run-button").click()
    text = result_text(d)
    assert "Failed" in text, text
    where = d.find_element(By.CSS_SELECTOR, '#run-timeline [data-testid="failed-at"]')
    assert "It failed at turn 2" in where.text and "rejected for" in where.text, where.text
    d.execute_script("window.scrollTo(0, 0)")
    d.find_element(By.CSS_SELECTOR, '#run-timeline [data-testid="failed-at"] a.turn-link').click()
    turn = d.find_element(By.CSS_SELECTOR, '#run-timeline details.tx-turn[data-turn="2"]')
    assert turn.get_attribute("open") is not None, "the link opens the turn"
    top = d.execute_script("return arguments[0].getBoundingClientRect().top", turn)
    assert 0 <= top < d.execute_script("return window.innerHeight"), top
    assert "#/skill/never-valid" in d.current_url, d.current_url
    shot(d, "run-failed")


def produced_file(d):
    # A file the run wrote: a download link under the result.
    open_skill(d, "note-writer")
    d.find_element(By.CSS_SELECTOR, 'textarea[name="/prompt"]').send_keys("write it")
    d.find_element(By.ID, "run-button").click()
    text = result_text(d)
    assert "Succeeded" in text, text
    link = d.find_element(By.CSS_SELECTOR, '#run-timeline [data-testid="files"] a')
    assert link.text == "summary.md" and link.get_attribute("download") == "summary.md", link.text
    assert link.get_attribute("href").startswith("blob:"), link.get_attribute("href")
    size = d.find_element(By.CSS_SELECTOR, '#run-timeline [data-testid="files"] li').text
    assert "text/markdown" in size and "22 bytes" in size, size
    # Not streamed into the turn as the model's text.
    assert "ship Friday" not in d.find_element(By.CSS_SELECTOR, "#run-timeline .turns").text


def examples(d):
    # examples/*.json of the bundled code-review.
    open_skill(d, "code-review")
    buttons = d.find_elements(By.CSS_SELECTOR, "#example-list button.example")
    # Its examples/basic.json, then the one of its a2a-examples that is a JSON object (the second).
    assert [b.text for b in buttons] == ["basic.json", "a2a-examples 2"], [b.text for b in buttons]
    buttons[0].click()
    code = d.find_element(By.CSS_SELECTOR, '[name="/code"]').get_attribute("value")
    assert code == "def add(a, b): return a - b", code
    assert "Loaded basic.json" in d.find_element(By.ID, "example-note").text
    # a2a-examples of a plain skill, its SKILL.md as Markdown, its environment.
    open_skill(d, "plain-notes")
    d.find_element(By.CSS_SELECTOR, '#example-list button[data-example="Summarize: we ship on Friday"]').click()
    prompt = d.find_element(By.CSS_SELECTOR, 'textarea[name="/prompt"]').get_attribute("value")
    assert prompt == "Summarize: we ship on Friday", prompt
    rendered = d.find_element(By.ID, "skill-md-rendered")
    assert rendered.find_element(By.TAG_NAME, "h2").text == "Plain notes"
    assert rendered.find_element(By.TAG_NAME, "strong").text == "one"
    assert [li.text for li in rendered.find_elements(By.TAG_NAME, "li")] == ["keep names", "drop greetings"]
    assert "<img src=x id=injected>" in rendered.text, rendered.text
    assert not d.find_elements(By.ID, "injected"), "the file's HTML became markup"
    assert not d.find_element(By.ID, "skill-md").is_displayed()
    d.find_element(By.ID, "skill-md-raw").click()
    raw = d.find_element(By.ID, "skill-md")
    assert raw.is_displayed() and "name: plain-notes" in raw.text, raw.text[:100]
    env = d.find_element(By.XPATH, "//div[@id='skill-meta']//dt[text()='Environment']/following-sibling::dd[1]").text
    assert env == "none declared", env


def post_a2e(skill, arguments):
    body = {"type": "skill/call/req", "id": f"elsewhere-{skill}", "name": skill, "arguments": arguments}
    request = urllib.request.Request(f"{BASE}/a2e", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as r:
        return json.load(r)


def history_rows(d):
    return {r.get_attribute("data-run"): [td.text for td in r.find_elements(By.TAG_NAME, "td")]
            for r in d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")}


def live_history(d):
    d.get(f"{BASE}/#/history")
    d.refresh()
    wait(d).until(lambda d: len(history_rows(d)) >= 3)
    header = [th.text for th in d.find_elements(By.CSS_SELECTOR, "#history-table thead th")]
    assert header[5:8] == ["Duration", "Turns", "Repairs"], header
    rows = history_rows(d)
    review = next(cells for cells in rows.values() if cells[1] == "code-review")
    assert review[6] == "2" and review[7] == "1", review
    assert all(DURATION.match(cells[5]) for cells in rows.values() if cells[5] != "—"), rows
    # A run from another door shows up without a reload.
    d.execute_script("window.__not_reloaded = true")
    before = set(rows)
    answer = post_a2e("plain-notes", {"prompt": "notes from elsewhere"})
    assert answer.get("data", {}).get("success"), answer
    wait(d).until(lambda d: set(history_rows(d)) - before)
    new = [history_rows(d)[i] for i in set(history_rows(d)) - before]
    assert new[0][1] == "plain-notes", new
    assert d.execute_script("return window.__not_reloaded === true"), "the page was reloaded"
    # Each run names the door it came through: the page's own, the A2E post, the copies sent
    # to /mcp and /a2a.
    assert header[11] == "Door", header
    assert new[0][11] == "A2E", new
    doors = {cells[11] for cells in history_rows(d).values()}
    assert {"console", "A2E", "MCP", "A2A"} <= doors, doors
    shot(d, "history-live")
    # Filtered by door, kept in the URL.
    Select(d.find_element(By.ID, "h-door")).select_by_value("mcp")
    d.find_element(By.CSS_SELECTOR, "#history-filters button").click()
    wait(d).until(lambda d: "door=mcp" in d.current_url)
    wait(d).until(lambda d: history_rows(d) and all(c[11] == "MCP" for c in history_rows(d).values()))
    d.refresh()
    wait(d).until(lambda d: history_rows(d) and all(c[11] == "MCP" for c in history_rows(d).values()))
    assert Select(d.find_element(By.ID, "h-door")).first_selected_option.text == "MCP"


def open_skill(d, name):
    d.get(f"{BASE}/#/skill/{name}")
    d.refresh()  # the same hash twice is no navigation: start from a fresh form
    wait(d).until(EC.text_to_be_present_in_element((By.ID, "skill-title"), name))


def result_text(d):
    result = wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, '#run-timeline [data-testid="result"]')))
    wait(d).until(lambda d: "Succeeded" in result.text or "Failed" in result.text or "Refused" in result.text)
    return result.text


def enabled_button(d, action):
    selector = f'#run-timeline [data-testid="approval"] button[data-action="{action}"]'
    return wait(d).until(lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, selector) if b.is_enabled()), None))


def approvals(d):
    # Approve one gated call from the page.
    open_skill(d, "gated-calc")
    d.find_element(By.CSS_SELECTOR, '[name="/text"]').send_keys("6*7")
    d.find_element(By.ID, "run-button").click()
    approve = enabled_button(d, "approve")
    row = d.find_element(By.CSS_SELECTOR, '#run-timeline [data-testid="approval"]')
    assert "calculator" in row.text and "6*7" in row.text and "waiting" in row.text, row.text
    # The tab says so, and the question is on screen (the page scrolled to the timeline).
    assert d.title.startswith("(approval needed)"), d.title
    top = d.execute_script("return document.getElementById('run-timeline').getBoundingClientRect().top")
    assert 0 <= top < d.execute_script("return window.innerHeight"), top
    shot(d, "approval")
    approve.click()
    text = result_text(d)
    assert "Succeeded" in text and '"echo": "approved"' in text, text
    wait(d).until(lambda d: not d.title.startswith("(approval needed)"))
    wait(d).until(EC.text_to_be_present_in_element(
        (By.CSS_SELECTOR, '#run-timeline [data-testid="approval"]'), "approved by the caller"))
    # Deny another, with a reason the model reads.
    d.find_element(By.ID, "run-button").click()
    deny = enabled_button(d, "deny")
    d.find_element(By.CSS_SELECTOR, '#run-timeline [data-testid="approval"] input').send_keys("not on prod")
    deny.click()
    text = result_text(d)
    assert '"echo": "denied: not on prod"' in text, text
    wait(d).until(EC.text_to_be_present_in_element(
        (By.CSS_SELECTOR, '#run-timeline [data-testid="approval"]'), "denied by the caller: not on prod"))
    shot(d, "approval-denied")


def post_a2a(body):
    request = urllib.request.Request(f"{BASE}/a2a", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "A2A-Version": "1.0"})
    with urllib.request.urlopen(request) as r:
        return json.load(r)


async def call_mcp(params):
    # The copied tools/call's name and arguments, sent by the official MCP client to /mcp.
    async with streamable_http_client(f"{BASE}/mcp") as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            result = await session.call_tool(params["name"], params["arguments"])
            return result.model_dump_json()


def copied(d, button):
    d.find_element(By.ID, button).click()
    return json.loads(d.find_element(By.ID, "copy-box").get_attribute("value"))


def input_files(d, scratch):
    open_skill(d, "file-reader")
    d.find_element(By.CSS_SELECTOR, '[name="/text"]').send_keys("read the notes")
    notes = os.path.join(scratch, "notes.txt")
    with open(notes, "w") as f:
        f.write("hello from a file\n")
    d.find_element(By.ID, "input-files").send_keys(notes)
    wait(d).until(EC.text_to_be_present_in_element((By.ID, "file-list"), "notes.txt"))
    assert "4.0 KiB each" in d.find_element(By.ID, "files-help").text, d.find_element(By.ID, "files-help").text

    # The same input as MCP and A2A requests; the A2A one runs as it is.
    mcp = copied(d, "copy-mcp")
    assert mcp["method"] == "tools/call" and mcp["params"]["name"] == "file-reader", mcp
    assert mcp["params"]["arguments"]["_files"][0]["name"] == "notes.txt", mcp
    answered = asyncio.run(call_mcp(mcp["params"]))
    assert "read it" in answered, answered
    a2a = copied(d, "copy-a2a")
    parts = a2a["params"]["message"]["parts"]
    assert a2a["method"] == "SendMessage" and a2a["params"]["message"]["metadata"]["skillId"] == "file-reader", a2a
    assert parts[0] == {"data": {"text": "read the notes"}}, parts
    assert base64.b64decode(parts[1]["raw"]) == b"hello from a file\n" and parts[1]["filename"] == "notes.txt", parts
    answer = post_a2a(a2a)
    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", answer
    assert "read it" in json.dumps(task["artifacts"]), answer

    # Run it from the page: the run reads the file.
    d.find_element(By.ID, "run-button").click()
    text = result_text(d)
    assert "Succeeded" in text and '"echo": "read it"' in text, text
    tool = d.find_element(By.CSS_SELECTOR, "#run-timeline details.tool summary")
    assert "read_file" in tool.text and "result" in tool.text, tool.text
    shot(d, "run-files")

    # Over the host's limit: refused in the browser, nothing sent.
    open_skill(d, "file-reader")
    d.find_element(By.CSS_SELECTOR, '[name="/text"]').send_keys("too big")
    big = os.path.join(scratch, "big.txt")
    with open(big, "w") as f:
        f.write("x" * 5000)
    before = len(history_runs())
    d.find_element(By.ID, "input-files").send_keys(big)
    wait(d).until(EC.text_to_be_present_in_element((By.ID, "files-error"), "the limit is 4.0 KiB per file"))
    d.find_element(By.ID, "run-button").click()
    assert not d.find_element(By.ID, "run-timeline").is_displayed(), "nothing ran"
    assert len(history_runs()) == before, "an oversized file was sent"

    # Around the picker (raw JSON): the server refuses it, as for any caller.
    open_skill(d, "file-reader")
    d.find_element(By.CSS_SELECTOR, 'input[name="mode"][value="json"]').click()
    raw = json.dumps({"text": "too big", "_files": [{"name": "big.txt", "text": "x" * 5000}]})
    d.execute_script("document.getElementById('raw-json').value = arguments[0];", raw)
    d.find_element(By.ID, "run-button").click()
    text = result_text(d)
    assert "4096" in text and "big.txt" in text, text


def transcript_of(d, root):
    """The transcript under `root`: {turn number: (summary text, violations text, full text)}."""
    box = wait(d).until(EC.presence_of_element_located((By.CSS_SELECTOR, f'{root} [data-testid="transcript"]')))
    turns = {}
    for t in box.find_elements(By.CSS_SELECTOR, "details.tx-turn"):
        violations = t.find_elements(By.CSS_SELECTOR, ".violations")
        turns[int(t.get_attribute("data-turn"))] = (
            t.find_element(By.TAG_NAME, "summary").text,
            violations[0].get_attribute("textContent") if violations else "",
            t.get_attribute("textContent"),
        )
    system = box.find_element(By.CSS_SELECTOR, "details.tx-system")
    assert system.get_attribute("open") is None, "the system prompt starts collapsed"
    return turns, system.get_attribute("textContent")


def check_repair_transcript(d, root):
    turns, system = transcript_of(d, root)
    assert "You are a senior engineer doing a code review" in system, system[:200]
    assert sorted(turns) == [1, 2], turns
    summary, violations, text = turns[1]
    assert "turn 1" in summary and "answer rejected" in summary, summary
    assert "/issues/0/severity" in violations, violations
    assert '"severity": "critical"' in text, text  # the rejected answer, pretty-printed
    summary, violations, text = turns[2]
    assert "turn 2" in summary and "ms" in summary and not violations, (summary, violations)
    assert '"severity": "error"' in text, text


def transcript_live(d):
    # The bundled code-review: its first answer is rejected, the repaired one passes.
    open_skill(d, "code-review")
    d.find_element(By.CSS_SELECTOR, '[name="/code"]').send_keys("def add(a, b): return a - b")
    d.find_element(By.ID, "run-button").click()
    text = result_text(d)
    assert "Succeeded" in text, text
    check_repair_transcript(d, "#run-timeline")
    check_repair_side_by_side(d, "#run-timeline")
    check_waterfall(d, "#run-timeline", ["turn", "turn"])
    no_overflow(d, 1280)
    no_overflow(d, 390)
    assert not d.find_elements(By.CSS_SELECTOR, '#run-timeline [data-testid="not-kept"]'), "content is kept here"
    d.execute_script("arguments[0].scrollIntoView()", d.find_element(By.CSS_SELECTOR, '#run-timeline [data-testid="repair"]'))
    shot(d, "run-transcript")
    # The same transcript from the history.
    run = next(r for r in history_runs() if r["skill"] == "code-review")
    d.get(f"{BASE}/#/run/{run['id']}")
    wait(d).until(EC.text_to_be_present_in_element((By.ID, "run-title"), "code-review"))
    check_repair_transcript(d, "#run-replay")
    check_repair_side_by_side(d, "#run-replay")
    check_waterfall(d, "#run-replay", ["turn", "turn"])


def no_overflow(d, width):
    d.set_window_size(width, 900)
    try:
        wide = d.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert wide[0] <= wide[1], f"the page is {wide[0]} px wide in a {wide[1]} px window"
    finally:
        d.set_window_size(1280, 900)


def plain_skill(d):
    # A plain Agent Skill: one "Request" textarea, sent as {"prompt": TEXT}.
    open_skill(d, "plain-notes")
    request = d.find_element(By.CSS_SELECTOR, 'textarea[name="/prompt"]')
    label = d.find_element(By.CSS_SELECTOR, f'label[for="{request.get_attribute("id")}"]').text
    assert label.startswith("Request"), label
    assert not d.find_elements(By.XPATH, "//*[contains(text(), 'arguments (JSON object)')]"), "no JSON field"
    assert d.find_element(By.ID, "files-field").is_displayed(), "a plain skill may take files"
    no_overflow(d, 1280)
    no_overflow(d, 390)
    shot(d, "skill-plain")
    request.send_keys("Summarize my notes: ship on Friday, not Monday.")
    d.find_element(By.ID, "run-button").click()
    text = result_text(d)
    assert "Succeeded" in text and "ship on Friday" in text, text
    assert "not valid JSON" not in d.find_element(By.ID, "run-form").text
    turns, _ = transcript_of(d, "#run-timeline")
    assert "Summarize my notes: ship on Friday, not Monday." in turns[1][2], turns
    no_overflow(d, 1280)
    # Raw JSON shows the same request.
    d.find_element(By.CSS_SELECTOR, 'input[name="mode"][value="json"]').click()
    raw = json.loads(d.find_element(By.ID, "raw-json").get_attribute("value"))
    assert raw == {"prompt": "Summarize my notes: ship on Friday, not Monday."}, raw


def not_found(d):
    earlier = errors_in_log(d)  # reading the log empties it: check what came before first
    assert not earlier, f"the browser logged errors: {earlier}"
    for route, view, button in [("#/skill/nope", "view-skill", "run-button"), ("#/run/999", "view-run", "rerun-button")]:
        d.get(f"{BASE}/{route}")
        d.refresh()
        notice = wait(d).until(EC.visibility_of_element_located((By.ID, "notice")))
        wait(d).until(lambda d: notice.text)
        assert notice.find_elements(By.TAG_NAME, "a"), f"{route}: a way back"
        assert not d.find_element(By.ID, view).is_displayed(), f"{route}: only the notice"
        b = d.find_element(By.ID, button)
        assert not (b.is_displayed() and b.is_enabled()), f"{route}: no enabled {button}"
    shot(d, "not-found")
    # The only errors: the browser's own lines for the two 404 answers.
    unexpected = [e for e in errors_in_log(d)
                  if not ("404" in e["message"] and ("/skills/nope" in e["message"] or "/runs/999" in e["message"]))]
    assert not unexpected, f"the browser logged errors: {unexpected}"


def phase_restarted(d):
    d.get(f"{BASE}/#/history")
    wait(d).until(lambda d: any(
        "ticket-triage" in r.text for r in d.find_elements(By.CSS_SELECTOR, "#history-table tbody tr")))
    # The code-review run's transcript, kept across the restart.
    run = next(r for r in history_runs() if r["skill"] == "code-review")
    d.get(f"{BASE}/#/run/{run['id']}")
    wait(d).until(EC.text_to_be_present_in_element((By.ID, "run-title"), "code-review"))
    check_repair_transcript(d, "#run-replay")
    check_repair_side_by_side(d, "#run-replay")
    shot(d, "run-record-transcript")
    # The saved eval report: one column per model, one row per case, each pass rate with its
    # 95 % Wilson interval (1 of 1: 21–100 %, as `skillet eval` prints it).
    open_skill(d, "ticket-triage")
    table = wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#skill-evals table.evals")))
    header = [th.text for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    assert header == ["Case", "openai-compatible/small", "openai-compatible/large"], header
    rows = {tr.find_element(By.TAG_NAME, "th").text: [td.text.split("\n") for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in table.find_elements(By.CSS_SELECTOR, "tbody tr")}
    for case in ["routes-a-high-ticket", "refuses-13-copies"]:
        assert rows[case] == [["1/1 (100 %)", "95 % CI 21–100 %"]] * 2, rows
    assert rows["routes-to-the-low-queue"] == [["0/1 (0 %)", "95 % CI 0–79 %"]] * 2, rows
    assert rows["All runs"] == [["2/3 (67 %)", "95 % CI 21–94 %"]] * 2, rows
    assert "not every run passed" in table.find_element(By.TAG_NAME, "caption").text
    shot(d, "skill-evals")
    # The failing cell opens its run: the check that failed, what the run returned.
    cell = table.find_element(By.XPATH, ".//tr[th='routes-to-the-low-queue']/td[1]//button")
    cell.click()
    runs = wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, '#skill-evals [data-testid="eval-runs"]')))
    assert "routes-to-the-low-queue on openai-compatible/small" in runs.text, runs.text
    run = runs.find_element(By.CSS_SELECTOR, '[data-testid="eval-run"]')
    assert "failed" in run.find_element(By.TAG_NAME, "h4").text, run.text
    failed = run.find_element(By.CSS_SELECTOR, '[data-testid="failed-checks"]').text
    assert "/queue" in failed and "^low$" in failed, failed
    assert '"queue": "urgent"' in run.text, run.text
    d.execute_script("arguments[0].scrollIntoView()", runs)
    shot(d, "eval-failure")
    eval_baseline(d)
    run_evals(d)


def run_evals(d):
    # "Run evals" runs ticket-triage's evals on the host's model and shows the new report: one
    # model column instead of the two `skillet eval --model small --model large` saved.
    open_skill(d, "ticket-triage")
    table = wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#skill-evals table.evals")))
    assert len(table.find_elements(By.CSS_SELECTOR, "thead th")) == 3
    d.find_element(By.ID, "eval-run-button").click()
    wait(d, 60).until(EC.text_to_be_present_in_element((By.ID, "eval-run-status"), "Saved"))
    table = d.find_element(By.CSS_SELECTOR, "#skill-evals table.evals")
    header = [th.text for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    assert header == ["Case", "openai-compatible/mock-llm"], header
    earlier = d.find_element(By.CSS_SELECTOR, "#skill-evals .earlier-evals").text
    assert "openai-compatible/small" in earlier, earlier
    shot(d, "eval-run")


def eval_baseline(d):
    # summarize saved with --baseline --repeat 2: each model beside itself without the skill,
    # the delta, pass@2, and each run's graded expectations when a cell is opened.
    open_skill(d, "summarize")
    table = wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#skill-evals table.evals")))
    header = [th.text for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    model = "openai-compatible/mock-llm"
    assert header == ["Case", model, f"{model} without the skill"], header
    pair = d.find_element(By.CSS_SELECTOR, '#skill-evals [data-testid="eval-pairs"]').text
    assert f"{model}: with the skill 100 %" in pair and "without it 79 %" in pair and "delta +0.21" in pair, pair
    rows = {tr.find_element(By.TAG_NAME, "th").text: [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in table.find_elements(By.CSS_SELECTOR, "tbody tr")}
    with_skill, without = rows["summarizes-in-one-turn"]
    assert with_skill.startswith("2/2") and "expectations 4/4" in with_skill, with_skill
    assert without.startswith("0/2") and "expectations 0/4" in without, without
    assert rows["Repeats"] == ["pass@2 100 % · pass^2 100 %", "pass@2 50 % · pass^2 50 %"], rows["Repeats"]
    assert rows["Expectations"] == ["4/4 (100 %)", "0/4 (0 %)"], rows["Expectations"]
    # The baseline's cell opens its runs: each expectation failed, with the judge's evidence.
    table.find_element(By.XPATH, ".//tr[th='summarizes-in-one-turn']/td[2]//button").click()
    runs = wait(d).until(EC.visibility_of_element_located((By.CSS_SELECTOR, '#skill-evals [data-testid="eval-runs"]')))
    assert f"summarizes-in-one-turn on {model} without the skill: 2 runs" in runs.text, runs.text
    graded = runs.find_element(By.CSS_SELECTOR, '[data-testid="expectations"]').text
    assert "failed The summary says that Skillet runs skills for agent hosts." in graded, graded
    assert "No key point mentions validation." in graded, graded
    d.execute_script("arguments[0].scrollIntoView()", runs)
    shot(d, "eval-baseline")
    # The skill's own cell: both expectations passed, with their evidence.
    table.find_element(By.XPATH, ".//tr[th='summarizes-in-one-turn']/td[1]//button").click()
    wait(d).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, '#skill-evals [data-testid="eval-runs"] h3'), f"on {model}: 2 runs"))
    graded = d.find_element(By.CSS_SELECTOR, '#skill-evals [data-testid="expectations"]').text
    assert graded.count("passed") == 2 and "Key point 2" in graded, graded


def phase_nocapture(d):
    # No content capture: the transcript is shown once, and the page says it is not kept.
    open_skill(d, "plain-notes")
    d.find_element(By.CSS_SELECTOR, 'textarea[name="/prompt"]').send_keys("Summarize: ship on Friday.")
    d.find_element(By.ID, "run-button").click()
    text = result_text(d)
    assert "Succeeded" in text, text
    transcript_of(d, "#run-timeline")
    note = d.find_element(By.CSS_SELECTOR, '#run-timeline [data-testid="not-kept"]').text
    assert "not kept" in note.lower() and "transcript" in note and "capture_content = true" in note, note
    shot(d, "run-not-kept")
    run = history_runs()[0]
    d.get(f"{BASE}/#/run/{run['id']}")
    wait(d).until(EC.text_to_be_present_in_element((By.ID, "run-title"), "plain-notes"))
    replayed = d.find_element(By.ID, "run-replay").text
    assert "capture_content" in replayed, replayed


def phase_empty(d):
    d.get(f"{BASE}/")
    empty = wait(d).until(EC.visibility_of_element_located((By.ID, "skills-empty")))
    assert "skillet init NAME" in empty.text and "--skills-dir" in empty.text, empty.text
    # It names the folder this server was given (the test passes it as the 4th argument).
    looked = [c.text for c in empty.find_elements(By.CSS_SELECTOR, "code.skill-root")]
    assert looked == [sys.argv[4]], (looked, sys.argv[4:])
    shot(d, "skills-empty")


def main():
    d = driver()
    try:
        try:
            {"run": phase_run, "restarted": phase_restarted, "nocapture": phase_nocapture,
             "empty": phase_empty}[PHASE](d)
        except Exception:
            # What the page showed, for the failure report.
            print("URL:", d.current_url, file=sys.stderr)
            print("notice:", d.find_element(By.ID, "notice").text, file=sys.stderr)
            print("browser log:", d.get_log("browser"), file=sys.stderr)
            raise
        errors = errors_in_log(d)
        assert not errors, f"the browser logged errors: {errors}"
    finally:
        d.quit()
    print(f"console browser phase {PHASE}: ok")


if __name__ == "__main__":
    main()
