#!/usr/bin/env python3
"""The report of tools/gpu_check.sh: $OUT/gpu_check.json and $OUT/gpu_check.md, both rewritten
(atomically) after every step, so that a run killed at any point leaves a complete report of
the steps that ended. Standard library only.

    report.py init OUT KEY=VALUE...          header fields (mode, commit, GPU, host, ...)
    report.py add OUT --name N --kind cpu|gpu --status S --seconds T [--detail D]
                      [--tail FILE] [--data FILE.json]
    report.py result OUT [--dry-run] [--expect N]   the verdict (N: the steps the script ran);
                                                    exit 0 if it holds

Statuses: pass, FAIL, timeout, no GPU, unsupported (a tool refused the device: not a code
failure), not run. A GPU run holds when every step passed or was unsupported; a dry run
(--dry-run) when every CPU step passed and every GPU step reported no GPU.
"""

import json
import os
import sys

OK = {"pass", "unsupported"}
TAIL_LINES = 40


def load(out):
    with open(os.path.join(out, "gpu_check.json")) as f:
        return json.load(f)


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def markdown(report):
    h = report["header"]
    lines = ["# eagerlm GPU check", ""]
    lines += [f"- {k}: {v}" for k, v in h.items()]
    lines += ["", "| step | result | time | detail |", "|---|---|---|---|"]
    for s in report["steps"]:
        status = s["status"] if s["status"] in OK or s["status"] == "no GPU" else f"**{s['status']}**"
        detail = s.get("detail", "").replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {s['name']} | {status} | {s['seconds']:.0f} s | {detail} |")
    for s in report["steps"]:
        if s.get("data") is not None:
            lines += ["", f"### {s['name']}", "", "```json", json.dumps(s["data"], indent=1), "```"]
        if s.get("tail"):
            lines += ["", f"### {s['name']}: last lines of its output", "", "```", s["tail"].rstrip(), "```"]
    return "\n".join(lines) + "\n"


def save(out, report):
    write_atomic(os.path.join(out, "gpu_check.json"), json.dumps(report, indent=1) + "\n")
    write_atomic(os.path.join(out, "gpu_check.md"), markdown(report))


def cmd_init(out, fields):
    header = dict(f.split("=", 1) for f in fields)
    save(out, {"header": header, "steps": []})


def cmd_add(out, args):
    opts = {"detail": ""}
    i = 0
    while i < len(args):
        opts[args[i].lstrip("-")] = args[i + 1]
        i += 2
    step = {"name": opts["name"], "kind": opts["kind"], "status": opts["status"],
            "seconds": float(opts["seconds"]), "detail": opts["detail"]}
    if opts.get("data") and os.path.exists(opts["data"]) and os.path.getsize(opts["data"]) > 0:
        with open(opts["data"]) as f:
            try:
                step["data"] = json.load(f)
            except ValueError as e:
                step["detail"] += f" (its data was no JSON: {e})"
    if opts.get("tail") and os.path.exists(opts["tail"]):
        with open(opts["tail"], errors="replace") as f:
            step["tail"] = "".join(f.readlines()[-TAIL_LINES:])
    report = load(out)
    report["steps"].append(step)
    save(out, report)


def verdict(report, dry, expect):
    steps = report["steps"]
    if not steps:
        return False, "no step ran"
    bad = []
    if expect is not None and len(steps) != expect:
        bad.append(f"{expect} steps ran but the report holds {len(steps)}")
    for s in steps:
        want_ok = s["status"] in OK if not dry or s["kind"] == "cpu" else s["status"] == "no GPU"
        if not want_ok:
            bad.append(f"{s['name']}: {s['status']}")
    if dry and not any(s["kind"] == "gpu" for s in steps):
        bad.append("no GPU step was reached")
    if bad:
        return False, "; ".join(bad)
    if dry:
        return True, "dry run as expected: every CPU step passed, every GPU step reported no GPU"
    return True, "every step passed"


def main():
    cmd, out, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    if cmd == "init":
        cmd_init(out, rest)
    elif cmd == "add":
        cmd_add(out, rest)
    elif cmd == "result":
        expect = int(rest[rest.index("--expect") + 1]) if "--expect" in rest else None
        ok, why = verdict(load(out), "--dry-run" in rest, expect)
        print(("PASS: " if ok else "FAIL: ") + why)
        sys.exit(0 if ok else 1)
    else:
        sys.exit(f"report.py: unknown command {cmd}")


if __name__ == "__main__":
    main()
