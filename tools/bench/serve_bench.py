#!/usr/bin/env python3
"""Load a running OpenAI-compatible server with C concurrent streams; report throughput and the
p50/p99 time to first token and inter-token latency. Standard library only; works against
`eagerlm serve` and llama.cpp's `llama-server` alike (both speak /v1/completions with SSE).

    tools/bench/serve_bench.py --url http://127.0.0.1:8080 --model gpt2 --concurrency 1,4,8,16 \
        --requests 16 --max-tokens 32 [--json]
"""
import argparse
import http.client
import json
import statistics
import threading
import time
import urllib.parse


def percentile(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def one_stream(url, model, prompt, max_tokens, out):
    u = urllib.parse.urlparse(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": True,
            "ignore_eos": True}
    start = time.perf_counter()
    c.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError("HTTP %d: %s" % (r.status, r.read()[:200]))
    stamps = []
    for line in iter(r.readline, b""):
        if line.startswith(b"data: [DONE]"):
            break
        if line.startswith(b"data: "):
            event = json.loads(line[6:])
            if event.get("choices") and event["choices"][0].get("text"):
                stamps.append(time.perf_counter())
    c.close()
    out.append((start, stamps))


def run_level(url, model, concurrency, requests, max_tokens, prompt):
    results, todo, lock = [], list(range(requests)), threading.Lock()

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop()
            one_stream(url, model, "%s %d" % (prompt, i), max_tokens, results)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    ttft = [stamps[0] - start for start, stamps in results if stamps]
    itl = [b - a for _, stamps in results for a, b in zip(stamps, stamps[1:])]
    tokens = sum(len(stamps) for _, stamps in results)
    return {"concurrency": concurrency, "requests": len(results), "tokens": tokens, "wall_s": wall,
            "tokens_per_s": tokens / wall, "ttft_p50_ms": 1e3 * percentile(ttft, 50),
            "ttft_p99_ms": 1e3 * percentile(ttft, 99), "itl_p50_ms": 1e3 * percentile(itl, 50),
            "itl_p99_ms": 1e3 * percentile(itl, 99), "itl_mean_ms": 1e3 * statistics.fmean(itl) if itl else 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--model", default="gpt2")
    ap.add_argument("--concurrency", default="1,4,8,16")
    ap.add_argument("--requests", type=int, default=16, help="requests per concurrency level")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--prompt", default="The quick brown fox jumps over the lazy dog, request")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = []
    for c in [int(x) for x in a.concurrency.split(",")]:
        rows.append(run_level(a.url, a.model, c, max(a.requests, c), a.max_tokens, a.prompt))
        if not a.json:
            r = rows[-1]
            print("concurrency %(concurrency)2d: %(tokens_per_s)7.1f tok/s  TTFT p50 %(ttft_p50_ms)7.1f ms "
                  "p99 %(ttft_p99_ms)7.1f ms  ITL p50 %(itl_p50_ms)6.1f ms p99 %(itl_p99_ms)6.1f ms" % r, flush=True)
    if a.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
