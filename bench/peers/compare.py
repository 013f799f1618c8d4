"""Skillet against its peers on the same server: every system's requests pass through one
logging proxy (proxy.py), so what each sends per model turn is measured the same way.

  compare.py --mock [--skillet BIN] [--mock-llm BIN] [--dump DIR] [--max-bytes N]
      The three-turn task (skills/length-check: word_count, calculator, then a checked
      {"verdict", "score"}) against mock-llm scripted by the skill's mock-scenario.yaml, so the
      conversation is identical for every system; prints each turn's request bytes and tokens.
      Exits 1 if a system does not finish the scripted conversation, or if Skillet's mean request
      per turn is over --max-bytes.

  compare.py ... --rig BIN
      Also rig's typed agent: the program built from rig/ (compare.sh --rig builds it).

  compare.py --upstream URL --model NAME --skillet BIN [--option KEY=TOML]... SKILL...
      Each bundled skill's eval cases that reach the model (skills/NAME/evals/evals.json) by
      every system on a real server (the GGUF lane); prints valid and correct answers, turns,
      bytes and tokens per turn, and each failure's first line. Never fails on a model's answers.

Bytes: the request body as sent. Tokens: that body's o200k_base tokens (tiktoken). A turn: one
chat-completions request.
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time

import peers
from proxy import LoggingProxy
from skill import Skill, compact, failed_checks
from tokens import o200k

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SYSTEMS = ("skillet",) + peers.SYSTEMS
# Skillet as each API kind it can use for the server: `openai-compatible` assumes a grammar
# server, whose model never reads a JSON Schema sent on the wire, so the instructions state it;
# `openai` is an API whose model reads `json_schema`, so they do not (docs/MODELS.md).
SKILLET_KINDS = {"skillet": "openai-compatible", "skillet-openai": "openai"}
MOCK_SYSTEMS = ("skillet", "skillet-openai") + peers.SYSTEMS


class Runner:
    """Runs one call by any system through the proxy, each under its own label."""

    def __init__(self, proxy, skillet, model, options, skills_dir, rig=None):
        self.proxy, self.skillet, self.model, self.rig = proxy, skillet, model, rig
        self.options, self.skills_dir = options, skills_dir
        self.count = 0
        self.work = tempfile.mkdtemp(prefix="skillet-peers-")

    def settings(self) -> dict:
        """The sampling options the peers are given: the same as Skillet's provider options."""
        keys = ("temperature", "max_tokens", "seed")
        return {k: json.loads(self.options[k]) for k in keys if k in self.options}

    def run(self, system, skill: Skill, arguments):
        self.count += 1
        label = f"r{self.count}-{system}"
        base = self.proxy.base_url(label)
        if system in SKILLET_KINDS:
            result = self._skillet(skill, arguments, base, SKILLET_KINDS[system])
        elif system == "rig":
            result = peers.run_rig(self.rig, skill, arguments, base, self.model, self.settings())
        else:
            result = asyncio.run(peers.run(system, skill, arguments, base, self.model, self.settings()))
        return result, self.proxy.turns(label)

    def _skillet(self, skill, arguments, base, kind):
        config = os.path.join(self.work, "skillet.toml")
        options = "".join(f"{k} = {v}\n" for k, v in self.options.items())
        # The `openai` kind needs a key; the mock and the proxy read none.
        key = 'api_key_env = "SKILLET_PEERS_KEY"\n' if kind == "openai" else ""
        with open(config, "w") as f:
            f.write(
                f'default_provider = "peers"\n\n[providers.peers]\nkind = "{kind}"\n{key}'
                f'model = "{self.model}"\nbase_url = "{base}"\n\n[providers.peers.options]\n{options}'
            )
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(self.work, "cache"),
                   SKILLET_PEERS_KEY="unused")
        done = subprocess.run(
            [self.skillet, "--config", config, "--skills-dir", self.skills_dir, "run", skill.name,
             "--args", compact(arguments), "--json", "-qq"],
            capture_output=True, text=True, env=env, timeout=900,
        )
        try:
            response = json.loads(done.stdout)
        except ValueError:
            lines = (done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}").splitlines()
            return peers.PeerResult(valid=False, error=lines[-1][:300])
        data = response.get("data") or {}
        called = [
            e["data"]["message"][len("tool call "):].split("(")[0]
            for e in data.get("events", [])
            if e.get("kind") == "log" and e["data"].get("message", "").startswith("tool call ")
        ]
        if data.get("success"):
            return peers.PeerResult(valid=True, output=data.get("data"), tools_called=called)
        if data:  # the run's outcome: error text and error_code beside it
            code, message = data.get("error_code", ""), data.get("error", "")
        else:  # refused before it ran: the response's error object
            error = response.get("error") or {}
            code, message = error.get("code", ""), error.get("message", compact(error))
        first = (str(message).splitlines() or [""])[0]
        return peers.PeerResult(valid=False, error=f"{code}: {first}"[:300], tools_called=called)


def per_turn(turns, encoding):
    sizes = [len(t.body) for t in turns]
    tokens = [len(encoding.encode(t.body.decode("utf-8", "replace"), disallowed_special=())) for t in turns]
    return sizes, tokens


def dump(folder, system, turns):
    """Each turn's request body as sent, into FOLDER/SYSTEM-turn-N.json (with --dump)."""
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    for n, turn in enumerate(turns, 1):
        with open(os.path.join(folder, f"{system}-turn-{n}.json"), "wb") as f:
            f.write(turn.body)


def mean(values):
    return sum(values) / len(values) if values else 0.0


def mock_comparison(args, encoding) -> int:
    skill = Skill(os.path.join(HERE, "skills", "length-check"))
    with open(os.path.join(skill.folder, "examples", "basic.json")) as f:
        arguments = json.load(f)
    expected = {"verdict": "fits", "score": 0.5}
    mock = subprocess.Popen(
        [args.mock_llm, "--scenario", os.path.join(skill.folder, "mock-scenario.yaml")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        line = mock.stdout.readline()
        if "listening on " not in line:
            print(f"mock-llm did not start: {line!r}", file=sys.stderr)
            return 1
        proxy = LoggingProxy(line.split("listening on ")[1].strip()).start()
        runner = Runner(proxy, args.skillet, "mock", {}, os.path.join(HERE, "skills"), args.rig)
        print("The three-turn task (bench/peers/skills/length-check) on mock-llm: request per turn")
        print(f"{'system':<14} {'turn':>4} {'bytes':>7} {'tokens':>7}")
        broken, means = [], []
        for system in MOCK_SYSTEMS + (("rig",) if args.rig else ()):
            result, turns = runner.run(system, skill, arguments)
            sizes, tokens = per_turn(turns, encoding)
            dump(args.dump, system, turns)
            for n, (b, t) in enumerate(zip(sizes, tokens), 1):
                print(f"{system:<14} {n:>4} {b:>7,} {t:>7,}")
            means.append((system, mean(sizes), mean(tokens)))
            if not result.valid or result.output != expected or len(turns) != 3:
                broken.append(f"{system}: {len(turns)} turns, {result.output or result.error}")
        print(f"\n{'system':<14} {'mean bytes/turn':>16} {'mean tokens/turn':>17}")
        for system, b, t in means:
            print(f"{system:<14} {b:>16,.0f} {t:>17,.1f}")
        proxy.stop()
    finally:
        mock.terminate()
        mock.wait()
    for line in broken:
        print(f"did not finish the scripted conversation: {line}", file=sys.stderr)
    skillet_bytes = means[0][1]
    if args.max_bytes is not None and skillet_bytes > args.max_bytes:
        print(f"Skillet's mean request is {skillet_bytes:,.0f} bytes per turn, over --max-bytes "
              f"{args.max_bytes:,}: see each turn's body with --dump DIR", file=sys.stderr)
        return 1
    return 1 if broken else 0


def server_comparison(args, encoding) -> int:
    proxy = LoggingProxy(args.upstream).start()
    runner = Runner(proxy, args.skillet, args.model, args.options, os.path.join(ROOT, "skills"), args.rig)
    rows, failures = [], []
    for name in args.skills:
        skill = Skill(os.path.join(ROOT, "skills", name))
        cases = skill.cases()
        for system in SYSTEMS + (("rig",) if args.rig else ()):
            valid = correct = 0
            all_turns, counts = [], []
            started = time.monotonic()
            for case in cases:
                result, turns = runner.run(system, skill, case["arguments"])
                all_turns += turns
                counts.append(len(turns))
                if result.valid:
                    valid += 1
                    misses = failed_checks(case["expect"], result.output, result.tools_called)
                    if misses:
                        failures.append(f"{system} · {name} · {case['name']}: valid, not correct: {'; '.join(misses)}")
                    else:
                        correct += 1
                else:
                    failures.append(f"{system} · {name} · {case['name']}: no valid answer: {result.error}")
            sizes, tokens = per_turn(all_turns, encoding)
            seconds = (time.monotonic() - started) / max(len(cases), 1)
            rows.append((name, system, f"{valid}/{len(cases)}", f"{correct}/{len(cases)}",
                         mean(counts), mean(sizes), mean(tokens), seconds))
    proxy.stop()
    print(f"{'skill':<15} {'system':<12} {'valid':>5} {'correct':>7} {'turns':>5} "
          f"{'bytes/turn':>10} {'tokens/turn':>11} {'s/call':>6}")
    for name, system, valid, correct, turns, b, t, seconds in rows:
        print(f"{name:<15} {system:<12} {valid:>5} {correct:>7} {turns:>5.1f} "
              f"{b:>10,.0f} {t:>11,.1f} {seconds:>6.1f}")
    for line in failures:
        print(f"  {line}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mock", action="store_true", help="the three-turn task on mock-llm")
    parser.add_argument("--mock-llm", default=os.path.join(ROOT, "target", "debug", "mock-llm"))
    parser.add_argument("--skillet", default=os.path.join(ROOT, "target", "debug", "skillet"))
    parser.add_argument("--upstream", help="the model server's root, e.g. http://127.0.0.1:8080")
    parser.add_argument("--model", default="model")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=TOML",
                        help="a Skillet provider option (temperature, max_tokens and seed also go to the peers)")
    parser.add_argument("--rig", metavar="BIN",
                        help="also run rig's typed agent, the program built from rig/ (compare.sh --rig builds it)")
    parser.add_argument("--max-bytes", type=int, metavar="N",
                        help="exit 1 if Skillet's mean request per turn is over N bytes (--mock)")
    parser.add_argument("--dump", metavar="DIR", help="write each turn's request body into DIR (--mock)")
    parser.add_argument("skills", nargs="*")
    args = parser.parse_args()
    args.options = dict(o.split("=", 1) for o in args.option)
    args.skillet = os.path.abspath(args.skillet)
    if args.rig:
        args.rig = os.path.abspath(args.rig)
    encoding = o200k()
    if args.mock:
        return mock_comparison(args, encoding)
    if not args.upstream or not args.skills:
        parser.error("give --mock, or --upstream URL and the skills to compare")
    return server_comparison(args, encoding)


if __name__ == "__main__":
    sys.exit(main())
