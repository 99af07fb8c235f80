#!/usr/bin/env python3
"""`eagerlm serve` end to end, with the standard library only (unittest, http.client).

Starts servers on ephemeral loopback ports over a small random-initialized model and checks every
endpoint, streaming, the error objects, concurrency (each response's ids equal `eagerlm generate`
for the same prompt, options and seed while others run), cancel on disconnect, a full queue,
authentication, the body limit and the SIGTERM drain. Every wait is bounded.

    EAGERLM=build/bin/eagerlm python3 test/server/test_server.py   (CTest runs it so)
"""
import http.client
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

EAGERLM = os.environ.get("EAGERLM", "build/bin/eagerlm")
# Two layers, 2048 positions: fast, and long enough to cancel a request mid-run.
TINY_CONFIG = {"n_layer": 2, "n_embd": 64, "n_head": 4, "n_positions": 2048, "vocab_size": 50257}
MODEL_ID = "tiny"


class Server:
    """One `eagerlm serve` process; its port is read from its "listening on" line."""

    def __init__(self, model_dir, *flags, wait_ready=True):
        self.stderr_lines = []
        self.proc = subprocess.Popen(
            [EAGERLM, "serve", "-m", model_dir, "--alias", MODEL_ID, "--port", "0", "-t", "1", *flags],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.port = None
        self.ready = threading.Event()
        self.listening = threading.Event()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        if not self.listening.wait(30):
            self.kill()
            raise AssertionError("the server did not start: " + "".join(self.stderr_lines))
        if wait_ready and not self.ready.wait(60):
            self.kill()
            raise AssertionError("the server did not become ready: " + "".join(self.stderr_lines))

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                self.listening.set()
            if "eagerlm: ready" in line:
                self.ready.set()

    def connection(self, timeout=30):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=30):
        """(status, headers, parsed JSON or text)."""
        c = self.connection(timeout)
        data = body if body is None or isinstance(body, (bytes, str)) else json.dumps(body)
        c.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
        r = c.getresponse()
        raw = r.read()
        c.close()
        kind = r.getheader("Content-Type", "")
        return r.status, r, json.loads(raw) if kind.startswith("application/json") else raw.decode()

    def complete(self, **body):
        body.setdefault("model", MODEL_ID)
        return self.request("POST", "/v1/completions", body)

    def stream(self, headers=None, **body):
        """The parsed events of a streamed completion, and whether it ended with [DONE]."""
        body.setdefault("model", MODEL_ID)
        body["stream"] = True
        c = self.connection()
        c.request("POST", "/v1/completions", body=json.dumps(body),
                  headers={"Content-Type": "application/json", **(headers or {})})
        r = c.getresponse()
        assert r.status == 200, (r.status, r.read())
        assert r.getheader("Content-Type", "").startswith("text/event-stream")
        events, done = [], False
        for line in iter(r.readline, b""):
            line = line.decode().rstrip("\n")
            if not line:
                continue
            assert line.startswith("data: "), line
            if line == "data: [DONE]":
                done = True
                break
            events.append(json.loads(line[6:]))
        c.close()
        return events, done

    def metric(self, name):
        _, _, text = self.request("GET", "/metrics")
        m = re.search("^" + re.escape(name) + r" (\S+)$", text, re.M)
        return float(m.group(1)) if m else None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def generate_cli(model_dir, prompt, max_tokens, temperature=0.0, seed=1, extra=()):
    """`eagerlm generate --json`'s first result: the reference for the server's answers."""
    cmd = [EAGERLM, "generate", "-m", model_dir, "-p", prompt, "-n", str(max_tokens), "--temp", str(temperature),
           "--top-k", "0", "--top-p", "1", "--min-p", "0", "--seed", str(seed), "--json", "-t", "1", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out)["results"][0]


def ulps(x, k):
    """k units in the last place of float32 at x: the rounding a different batch may cause."""
    return k * 2.0 ** (math.frexp(abs(x))[1] - 24) if x else k * 2.0 ** -149


def error_of(test, status, body, expected_status, param=None):
    test.assertEqual(status, expected_status, body)
    test.assertEqual(set(body), {"error"})
    test.assertEqual(set(body["error"]), {"message", "type", "param", "code"})
    test.assertTrue(body["error"]["message"])
    if param is not None:
        test.assertEqual(body["error"]["param"], param, body)
    return body["error"]


def setUpModule():
    global WORK, MODEL_DIR
    WORK = tempfile.mkdtemp(prefix="eagerlm-server-test-")
    config = os.path.join(WORK, "tiny.json")
    with open(config, "w") as f:
        json.dump(TINY_CONFIG, f)
    MODEL_DIR = os.path.join(WORK, "model")
    subprocess.run([EAGERLM, "init", "--config", config, "--out", MODEL_DIR, "--seed", "3"], check=True,
                   capture_output=True, timeout=120)


def tearDownModule():
    shutil.rmtree(WORK, ignore_errors=True)


class Endpoints(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = Server(MODEL_DIR, "--parallel", "4", "--max-queue", "32", *os.environ.get("SERVE_FLAGS", "").split())

    @classmethod
    def tearDownClass(cls):
        cls.s.kill()

    def test_health_models_metrics(self):
        status, _, body = self.s.request("GET", "/health")
        self.assertEqual((status, body["status"]), (200, "ok"))
        self.assertEqual(body["slots_idle"] + body["slots_processing"], 4)
        status, _, body = self.s.request("GET", "/v1/models")
        self.assertEqual(status, 200)
        self.assertEqual(body["object"], "list")
        self.assertEqual([m["id"] for m in body["data"]], [MODEL_ID])
        self.assertEqual(body["data"][0]["max_model_len"], TINY_CONFIG["n_positions"])
        self.s.complete(prompt="metrics", max_tokens=2)
        _, r, text = self.s.request("GET", "/metrics")
        self.assertTrue(r.getheader("Content-Type").startswith("text/plain"))
        for name in ["eagerlm_http_requests_total{", "eagerlm_prompt_tokens_total", "eagerlm_generation_tokens_total",
                     "eagerlm_queue_depth", "eagerlm_slots_busy", "eagerlm_time_to_first_token_seconds_bucket",
                     "eagerlm_inter_token_latency_seconds_bucket"]:
            self.assertIn(name, text)
        self.assertRegex(text, r'eagerlm_http_requests_total\{endpoint="/v1/completions",status="200"\} [1-9]')
        self.assertEqual(self.s.metric("eagerlm_slots_total"), 4)
        # Every engine step is of one kind; the completion above ran a prompt and a decode step.
        # (Other tests may be running requests between the two reads: the sum is read last.)
        by_kind = {k: self.s.metric('eagerlm_engine_steps_by_kind_total{kind="%s"}' % k)
                   for k in ("decode", "mixed", "prompt")}
        self.assertGreater(by_kind["prompt"], 0)
        self.assertGreater(by_kind["decode"], 0)
        self.assertGreaterEqual(self.s.metric("eagerlm_engine_steps_total"), sum(by_kind.values()))
        self.assertGreater(self.s.metric('eagerlm_engine_step_seconds_total{kind="prompt"}'), 0)
        self.assertGreater(self.s.metric('eagerlm_engine_step_rows_total{kind="prompt"}'), 0)

    def test_greedy_equals_generate(self):
        ref = generate_cli(MODEL_DIR, "Hello world", 8)
        status, _, body = self.s.complete(prompt="Hello world", max_tokens=8, temperature=0, return_token_ids=True)
        self.assertEqual(status, 200, body)
        self.assertEqual(body["object"], "text_completion")
        choice = body["choices"][0]
        self.assertEqual(choice["token_ids"], ref["ids"])
        self.assertEqual(choice["text"], ref["text"])
        self.assertEqual(choice["finish_reason"], "stop" if ref["finish_reason"] != "length" else "length")
        self.assertEqual(body["usage"], {"prompt_tokens": len(ref["prompt_ids"]), "completion_tokens": len(ref["ids"]),
                                         "total_tokens": len(ref["prompt_ids"]) + len(ref["ids"])})

    def test_seeded_sampling_equals_generate(self):
        ref = generate_cli(MODEL_DIR, "Once upon a time", 10, temperature=1.0, seed=77)
        _, _, body = self.s.complete(prompt="Once upon a time", max_tokens=10, temperature=1.0, seed=77,
                                     return_token_ids=True)
        self.assertEqual(body["choices"][0]["token_ids"], ref["ids"])

    def test_prompt_forms(self):
        ref_a = generate_cli(MODEL_DIR, "The cat", 4)
        ref_b = generate_cli(MODEL_DIR, "A dog", 4)
        ids_a, ids_b = ref_a["prompt_ids"], ref_b["prompt_ids"]
        for prompt in [["The cat", "A dog"], [ids_a, ids_b]]:
            _, _, body = self.s.complete(prompt=prompt, max_tokens=4, temperature=0, return_token_ids=True)
            self.assertEqual([c["index"] for c in body["choices"]], [0, 1])
            self.assertEqual([c["token_ids"] for c in body["choices"]], [ref_a["ids"], ref_b["ids"]])
        _, _, body = self.s.complete(prompt=ids_a, max_tokens=4, temperature=0)
        self.assertEqual(body["choices"][0]["text"], ref_a["text"])

    def test_n_samples_are_seeded_and_distinct(self):
        _, _, a = self.s.complete(prompt="Hi", max_tokens=12, temperature=1.0, seed=5, n=3, return_token_ids=True)
        _, _, b = self.s.complete(prompt="Hi", max_tokens=12, temperature=1.0, seed=5, n=3, return_token_ids=True)
        ids = [c["token_ids"] for c in a["choices"]]
        self.assertEqual(len(ids), 3)
        self.assertEqual(ids, [c["token_ids"] for c in b["choices"]])
        self.assertGreater(len({tuple(i) for i in ids}), 1)
        self.assertEqual(a["usage"]["completion_tokens"], sum(len(i) for i in ids))

    def test_stream_equals_whole_response(self):
        _, _, whole = self.s.complete(prompt="Streaming", max_tokens=12, temperature=0, logprobs=2)
        events, done = self.s.stream(prompt="Streaming", max_tokens=12, temperature=0, logprobs=2,
                                     stream_options={"include_usage": True})
        self.assertTrue(done)
        choices = [c for e in events for c in e["choices"]]
        self.assertEqual("".join(c["text"] for c in choices), whole["choices"][0]["text"])
        self.assertEqual(choices[-1]["finish_reason"], whole["choices"][0]["finish_reason"])
        self.assertTrue(all(c["finish_reason"] is None for c in choices[:-1]))
        streamed_lp = [x for c in choices for x in c["logprobs"]["token_logprobs"]]
        whole_lp = whole["choices"][0]["logprobs"]["token_logprobs"]
        self.assertEqual(len(streamed_lp), len(whole_lp))
        # The second run hits the prompt cache: the CPU forward pass is batch-invariant, so the
        # logprobs are the same to the bit.
        self.assertEqual(streamed_lp, whole_lp)
        self.assertEqual(events[-1]["usage"], whole["usage"])
        self.assertEqual(len({e["id"] for e in events}), 1)

    def test_logprobs_equal_generate(self):
        ref = generate_cli(MODEL_DIR, "Numbers", 5, extra=["--logprobs", "--top-logprobs", "3"])
        _, _, body = self.s.complete(prompt="Numbers", max_tokens=5, temperature=0, logprobs=3)
        lp = body["choices"][0]["logprobs"]
        self.assertEqual(len(lp["tokens"]), 5)
        self.assertEqual(lp["token_logprobs"], ref["logprobs"])
        for got, want in zip(lp["top_logprobs"], ref["top_logprobs"]):
            self.assertEqual(len(got), 3)
            self.assertEqual(max(got.values()), want[0]["logprob"])
        offsets = lp["text_offset"]
        self.assertEqual(offsets, sorted(offsets))

    def test_echo_and_stop(self):
        ref = generate_cli(MODEL_DIR, "Echo", 10)
        _, _, body = self.s.complete(prompt="Echo", max_tokens=10, temperature=0, echo=True)
        self.assertEqual(body["choices"][0]["text"], "Echo" + ref["text"])
        text = ref["text"]
        stop = text[len(text) // 2:len(text) // 2 + 3]
        _, _, body = self.s.complete(prompt="Echo", max_tokens=10, temperature=0, stop=[stop])
        self.assertEqual(body["choices"][0]["text"], text[:text.find(stop)])
        self.assertEqual(body["choices"][0]["finish_reason"], "stop")

    def test_tokenize_detokenize(self):
        status, _, body = self.s.request("POST", "/tokenize", {"content": "Hello world"})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["tokens"], [15496, 995])
        status, _, body = self.s.request("POST", "/detokenize", {"tokens": [15496, 995]})
        self.assertEqual((status, body["content"]), (200, "Hello world"))

    def test_bad_requests(self):
        error_of(self, *self.s.request("POST", "/v1/completions", '{"model": "tiny", "max_tokens": 1e309}')[::2], 400)
        e = error_of(self, *self.s.request("POST", "/v1/completions", "{not json")[::2], 400)
        self.assertIn("JSON", e["message"])
        e = error_of(self, *self.s.complete(prompt="x", temperature="hot")[::2], 400, "temperature")
        self.assertIn("string", e["message"])
        error_of(self, *self.s.complete(prompt="x", max_tokens=-1)[::2], 400, "max_tokens")
        # Ranges the engine checks, reported under the request's field names.
        error_of(self, *self.s.complete(prompt="x", top_p=0)[::2], 400, "top_p")
        error_of(self, *self.s.complete(prompt="x", presence_penalty=3)[::2], 400, "presence_penalty")
        error_of(self, *self.s.complete(prompt="x", logit_bias={"5": 500})[::2], 400, "logit_bias")
        error_of(self, *self.s.complete(prompt="x", max_tokens=2, min_tokens=3)[::2], 400, "min_tokens")
        error_of(self, *self.s.complete(prompt=[1, "a"])[::2], 400, "prompt")
        error_of(self, *self.s.complete(prompt=[99999999])[::2], 400, "prompt")
        error_of(self, *self.s.complete(prompt="x", logit_bias={"a": 1})[::2], 400, "logit_bias")
        error_of(self, *self.s.complete(prompt="x", n=5)[::2], 400, "n")  # more than --parallel 4
        error_of(self, *self.s.complete(prompt="x", frobnicate=1)[::2], 400, "frobnicate")
        error_of(self, *self.s.request("POST", "/v1/completions", {"prompt": "x"})[::2], 400, "model")
        e = error_of(self, *self.s.complete(model="gpt-4", prompt="x")[::2], 404, "model")
        self.assertEqual(e["code"], "model_not_found")
        # Client text quoted in a message is escaped: one line, whatever the request holds.
        e = error_of(self, *self.s.complete(prompt="x", **{"log\nprobs": 2})[::2], 400, "log\nprobs")
        self.assertIn("log\\nprobs", e["message"])
        self.assertNotIn("\n", e["message"])
        e = error_of(self, *self.s.complete(model="a\nb" * 100, prompt="x")[::2], 404, "model")
        self.assertNotIn("\n", e["message"])
        self.assertLess(len(e["message"]), 300)
        # prompt + max_tokens past the context: both numbers named.
        e = error_of(self, *self.s.complete(prompt="Hello world", max_tokens=2047)[::2], 400, "max_tokens")
        self.assertEqual(e["code"], "context_length_exceeded")
        self.assertIn("2048", e["message"])
        self.assertIn("2047", e["message"])
        e = error_of(self, *self.s.request("POST", "/v1/chat/completions",
                                           {"model": MODEL_ID, "messages": [{"role": "user", "content": "hi"}]})[::2],
                     400, "messages")
        self.assertIn("chat template", e["message"])
        error_of(self, *self.s.request("GET", "/v1/nothing")[::2], 404)
        # The server is still well after all that.
        self.assertEqual(self.s.complete(prompt="still", max_tokens=1)[0], 200)

    def run_concurrently(self, specs):
        """specs: (prompt, temperature, seed, max_tokens); every third streamed. Each client's
        (ids, text, ended with [DONE]), all sent at once."""
        results = [None] * len(specs)

        def client(i):
            p, t, seed, n = specs[i]
            if i % 3 == 0:
                events, done = self.s.stream(prompt=p, max_tokens=n, temperature=t, seed=seed, return_token_ids=True)
                ids = [x for e in events for c in e["choices"] for x in c.get("token_ids", [])]
                results[i] = (ids, "".join(c["text"] for e in events for c in e["choices"]), done)
            else:
                _, _, body = self.s.complete(prompt=p, max_tokens=n, temperature=t, seed=seed, return_token_ids=True)
                results[i] = (body["choices"][0]["token_ids"], body["choices"][0]["text"], True)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(len(specs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        return results

    def test_concurrent_clients_get_their_own_ids(self):
        # 16 clients at once, more than the 4 slots (some wait in the queue), lengths mixed.
        specs = [("Alpha %d" % i, 0.0, 1, 6 + i % 5) for i in range(16)]
        refs = [generate_cli(MODEL_DIR, p, n, temperature=t, seed=seed) for p, t, seed, n in specs]
        results = self.run_concurrently(specs)
        for i, ref in enumerate(refs):
            self.assertIsNotNone(results[i], "client %d got no answer" % i)
            self.assertEqual(results[i], (ref["ids"], ref["text"], True), "client %d" % i)

    def test_concurrent_seeded_sampling_equals_generate(self):
        specs = [("Alpha %d" % i, 1.0, 100 + i, 6 + i % 5) for i in range(16)]
        refs = [generate_cli(MODEL_DIR, p, n, temperature=t, seed=seed) for p, t, seed, n in specs]
        results = self.run_concurrently(specs)
        self.assertEqual(results, [(r["ids"], r["text"], True) for r in refs])

    def test_concurrent_logprobs_equal_generate(self):
        # Batching changes nothing on the CPU: logprobs equal each request's solo run to the bit.
        specs = [("Beta %d" % i, 5 + i % 4) for i in range(12)]
        refs = [generate_cli(MODEL_DIR, p, n, extra=["--logprobs"]) for p, n in specs]
        got = [None] * len(specs)

        def client(i):
            _, _, body = self.s.complete(prompt=specs[i][0], max_tokens=specs[i][1], temperature=0, logprobs=0)
            got[i] = body["choices"][0]["logprobs"]["token_logprobs"]

        threads = [threading.Thread(target=client, args=(i,)) for i in range(len(specs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        for i, ref in enumerate(refs):
            self.assertEqual(len(got[i]), len(ref["logprobs"]))
            self.assertEqual(got[i], ref["logprobs"], "client %d" % i)

    def test_bounded_load_run(self):
        # 200 requests, 16 at a time, lengths and kinds mixed: every answer complete and
        # well-formed, and the server's memory the same after the second hundred as after the first.
        def rss_kib():
            with open("/proc/%d/status" % self.s.proc.pid) as f:
                return int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1))

        failures = []

        def one(i):
            n = 1 + (i * 7) % 40
            if i % 4 == 0:
                events, done = self.s.stream(prompt="load %d" % i, max_tokens=n, temperature=0.8, seed=i,
                                             ignore_eos=True)
                finish = [c["finish_reason"] for e in events for c in e["choices"]]
                ok = done and finish[-1] == "length" and all(f is None for f in finish[:-1])
            else:
                status, _, body = self.s.complete(prompt=["load", "x" * (i % 50)][i % 2], max_tokens=n, seed=i,
                                                  ignore_eos=True, return_token_ids=True)
                ok = (status == 200 and len(body["choices"][0]["token_ids"]) == n and
                      body["usage"]["completion_tokens"] == n)
            if not ok:
                failures.append(i)

        def batch(first):
            todo = list(range(first, first + 100))
            lock = threading.Lock()

            def worker():
                while True:
                    with lock:
                        if not todo:
                            return
                        i = todo.pop()
                    one(i)

            threads = [threading.Thread(target=worker) for _ in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(300)

        batch(0)
        after_first = rss_kib()
        batch(100)
        after_second = rss_kib()
        self.assertEqual(failures, [])
        self.assertLess(after_second - after_first, max(after_first // 20, 4096),
                        "RSS grew from %d to %d KiB" % (after_first, after_second))
        # The engine frees a slot on its next step after the answer went out: no slot leaks.
        deadline = time.monotonic() + 5
        while self.s.metric("eagerlm_slots_busy") != 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(self.s.metric("eagerlm_slots_busy"), 0)
        self.assertEqual(self.s.metric("eagerlm_queue_depth"), 0)

    def test_disconnect_cancels_within_a_step(self):
        before = self.s.metric("eagerlm_client_disconnects_total")
        tokens_before = self.s.metric("eagerlm_engine_steps_total")
        sock = socket.create_connection(("127.0.0.1", self.s.port), timeout=10)
        body = json.dumps({"model": MODEL_ID, "prompt": "Go on", "max_tokens": 2000, "ignore_eos": True,
                           "temperature": 0, "stream": True})
        sock.sendall(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Content-Length: %d\r\n\r\n%s" % (len(body), body)).encode())
        got = b""
        while b"data: " not in got:
            chunk = sock.recv(4096)
            self.assertTrue(chunk, "the stream ended before its first event")
            got += chunk
        sock.close()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if self.s.metric("eagerlm_client_disconnects_total") > before and self.s.metric("eagerlm_slots_busy") == 0:
                break
            time.sleep(0.02)
        self.assertGreater(self.s.metric("eagerlm_client_disconnects_total"), before)
        self.assertEqual(self.s.metric("eagerlm_slots_busy"), 0)
        # Far fewer than the 2000 steps it asked for.
        self.assertLess(self.s.metric("eagerlm_engine_steps_total") - tokens_before, 1000)


class LimitsAndShutdown(unittest.TestCase):
    """One slot, no queue, an API key, a small body limit."""

    KEY = "sk-test-key"

    def setUp(self):
        self.s = Server(MODEL_DIR, "--parallel", "1", "--max-queue", "0", "--api-key", self.KEY,
                        "--max-body", "4096", "--timeout", "120", "--read-timeout", "1", "--idle-timeout", "1")
        self.auth = {"Authorization": "Bearer " + self.KEY}

    def tearDown(self):
        self.s.kill()

    def post(self, body, headers=None):
        return self.s.request("POST", "/v1/completions", body, headers=self.auth if headers is None else headers)

    def test_api_key(self):
        body = {"model": MODEL_ID, "prompt": "x", "max_tokens": 1}
        e = error_of(self, *self.post(body, headers={})[::2], 401)
        self.assertEqual(e["code"], "invalid_api_key")
        error_of(self, *self.post(body, headers={"Authorization": "Bearer wrong"})[::2], 401)
        error_of(self, *self.s.request("GET", "/v1/models")[::2], 401)
        self.assertEqual(self.post(body)[0], 200)
        self.assertEqual(self.s.request("GET", "/health")[0], 200)  # health checks need no key

    def test_body_limit(self):
        e = error_of(self, *self.post({"model": MODEL_ID, "prompt": "x" * 5000})[::2], 413)
        self.assertIn("4096", e["message"])
        self.assertEqual(self.post({"model": MODEL_ID, "prompt": "x", "max_tokens": 1})[0], 200)

    def test_slow_and_idle_connections_time_out(self):
        # A body that never completes: 408 after --read-timeout (1 s), and the connection closed.
        slow = socket.create_connection(("127.0.0.1", self.s.port), timeout=10)
        slow.sendall(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                      "Content-Length: 100\r\n\r\n{" % self.KEY).encode())
        # A connection that sends nothing at all is closed too.
        idle = socket.create_connection(("127.0.0.1", self.s.port), timeout=10)
        start = time.monotonic()
        answer = b""
        while True:
            chunk = slow.recv(4096)
            if not chunk:
                break
            answer += chunk
        self.assertLess(time.monotonic() - start, 5)
        self.assertTrue(answer.startswith(b"HTTP/1.1 408"), answer[:80])
        self.assertIn(b"request_timeout", answer)
        self.assertEqual(idle.recv(4096), b"")
        self.assertLess(time.monotonic() - start, 5)
        slow.close()
        idle.close()
        self.assertEqual(self.s.request("GET", "/health")[0], 200)

    def start_long_stream(self, max_tokens):
        """A streamed request holding the one slot; returns once its first event arrived."""
        out = {}
        first = threading.Event()

        def run():
            c = self.s.connection(60)
            c.request("POST", "/v1/completions", json.dumps(
                {"model": MODEL_ID, "prompt": "long", "max_tokens": max_tokens, "ignore_eos": True, "stream": True}),
                headers={"Content-Type": "application/json", **self.auth})
            r = c.getresponse()
            lines = []
            for line in iter(r.readline, b""):
                if line.startswith(b"data: "):
                    lines.append(line.decode().strip())
                    first.set()
            out["lines"] = lines
            first.set()

        t = threading.Thread(target=run)
        t.start()
        self.assertTrue(first.wait(30))
        return t, out

    def test_queue_full_is_503_with_retry_after(self):
        t, out = self.start_long_stream(400)
        status, r, body = self.post({"model": MODEL_ID, "prompt": "y", "max_tokens": 1})
        error_of(self, status, body, 503)
        self.assertEqual(body["error"]["code"], "server_busy")
        self.assertTrue(r.getheader("Retry-After"))
        t.join(60)
        self.assertEqual(out["lines"][-1], "data: [DONE]")
        self.assertEqual(self.post({"model": MODEL_ID, "prompt": "y", "max_tokens": 1})[0], 200)

    def test_sigterm_drains(self):
        t, out = self.start_long_stream(300)
        # Sent twice 10 ms apart, as timeout(1) does (child, then its process group): one request.
        self.s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.01)
        self.s.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        status = None
        while time.monotonic() < deadline:
            status, _, body = self.s.request("GET", "/health")
            if status == 503:
                break
            time.sleep(0.01)
        self.assertEqual((status, body["status"]), (503, "draining"))
        status, r, body = self.post({"model": MODEL_ID, "prompt": "y", "max_tokens": 1})
        error_of(self, status, body, 503)
        t.join(60)
        # The running request finished: every token, then [DONE].
        self.assertEqual(out["lines"][-1], "data: [DONE]")
        finish = [json.loads(x[6:])["choices"][0]["finish_reason"] for x in out["lines"][:-1]]
        self.assertEqual(finish[-1], "length")
        self.assertEqual(self.s.proc.wait(30), 0)

    def test_second_signal_exits_at_once(self):
        t, out = self.start_long_stream(2040)  # ~1.5 s here
        self.s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)  # past the 250 ms in which a repeat is the same request
        self.s.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.s.proc.wait(30), 128 + signal.SIGTERM)
        t.join(60)
        self.assertNotEqual(out["lines"][-1:], ["data: [DONE]"])


class WeightTypes(unittest.TestCase):
    def test_weights_and_kv_type_as_generate(self):
        # serve loads through the same LoadOptions as generate: the same ids at int8 weights and
        # a bf16 cache, and other ids than float32 would give (so the flags did take effect).
        flags = ["--weights", "int8", "--kv-type", "bf16"]
        s = Server(MODEL_DIR, "--parallel", "2", *flags)
        try:
            ref = generate_cli(MODEL_DIR, "Hello world", 12, extra=flags + ["--logprobs"])
            f32 = generate_cli(MODEL_DIR, "Hello world", 12, extra=["--logprobs"])
            status, _, body = s.complete(prompt="Hello world", max_tokens=12, temperature=0, return_token_ids=True,
                                         logprobs=1)
            self.assertEqual(status, 200, body)
            self.assertEqual(body["choices"][0]["token_ids"], ref["ids"])
            got = body["choices"][0]["logprobs"]["token_logprobs"]
            self.assertEqual(got, ref["logprobs"])
            self.assertNotEqual(ref["logprobs"], f32["logprobs"])
        finally:
            s.kill()
        out = subprocess.run([EAGERLM, "serve", "-m", MODEL_DIR, "--port", "0", "--weights", "int4"],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 2, out.stderr)
        self.assertIn("--weights", out.stderr)


class Loading(unittest.TestCase):
    def test_health_is_503_while_loading(self):
        # A preset of 124M parameters takes a while to initialize: /health says so meanwhile.
        s = subprocess.Popen([EAGERLM, "serve", "--preset", "gpt2", "--port", "0", "-t", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            line = ""
            deadline = time.monotonic() + 30
            while "listening on" not in line and time.monotonic() < deadline:
                line = s.stderr.readline()
            port = int(re.search(r":(\d+) ", line).group(1))
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/health")
            r = c.getresponse()
            body = json.loads(r.read())
            self.assertEqual((r.status, body["status"]), (503, "loading"))
            c.request("POST", "/v1/completions", json.dumps({"model": "gpt2", "prompt": "x"}))
            r = c.getresponse()
            body = json.loads(r.read())
            self.assertEqual((r.status, body["error"]["code"]), (503, "model_loading"))
        finally:
            s.kill()
            s.wait(10)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(shutil.which("nginx") or os.path.exists("/usr/sbin/nginx"), "nginx is not installed")
class BehindNginx(unittest.TestCase):
    """Two replicas behind nginx, configured as docs/serving.md says."""

    def setUp(self):
        self.replicas = [Server(MODEL_DIR, "--parallel", "2") for _ in range(2)]
        self.dir = tempfile.mkdtemp(prefix="eagerlm-nginx-", dir=WORK)
        os.chmod(self.dir, 0o777)  # nginx's workers may run as another user
        self.port = free_port()
        servers = "\n".join("        server 127.0.0.1:%d max_fails=1 fail_timeout=5s;" % r.port for r in self.replicas)
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write("""worker_processes 1;
error_log %(d)s/error.log warn;
pid %(d)s/nginx.pid;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path %(d)s/body; proxy_temp_path %(d)s/proxy; fastcgi_temp_path %(d)s/fcgi;
    uwsgi_temp_path %(d)s/uwsgi; scgi_temp_path %(d)s/scgi;
    upstream eagerlm {
        least_conn;
%(servers)s
        keepalive 32;
    }
    server {
        listen 127.0.0.1:%(port)d;
        client_max_body_size 1m;
        location / {
            proxy_pass http://eagerlm;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 600s;
            proxy_next_upstream error timeout http_502 http_503 non_idempotent;
            proxy_next_upstream_tries 2;
        }
    }
}
""" % {"d": self.dir, "servers": servers, "port": self.port})
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.nginx = subprocess.Popen([nginx, "-p", self.dir, "-c", conf, "-e", os.path.join(self.dir, "error.log"),
                                       "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.nginx.poll() is not None:
                    raise AssertionError("nginx did not start: " + self.nginx.stderr.read().decode())
                time.sleep(0.05)
        self.front = Server.__new__(Server)  # the Server helpers, aimed at nginx
        self.front.port = self.port

    def tearDown(self):
        self.nginx.terminate()
        self.nginx.wait(10)
        for r in self.replicas:
            r.kill()

    def completions_served(self, replica):
        _, _, text = replica.request("GET", "/metrics")
        m = re.search(r'^eagerlm_http_requests_total\{endpoint="/v1/completions",status="200"\} (\d+)$', text, re.M)
        return int(m.group(1)) if m else 0

    def test_spread_and_failover(self):
        ref = generate_cli(MODEL_DIR, "Through nginx", 6)
        for _ in range(8):
            status, _, body = self.front.complete(prompt="Through nginx", max_tokens=6, temperature=0,
                                                  return_token_ids=True)
            self.assertEqual((status, body["choices"][0]["token_ids"]), (200, ref["ids"]))
        events, done = self.front.stream(prompt="Through nginx", max_tokens=6, temperature=0)
        self.assertTrue(done)
        self.assertEqual("".join(c["text"] for e in events for c in e["choices"]), ref["text"])
        self.assertGreater(self.completions_served(self.replicas[0]), 0)
        self.assertGreater(self.completions_served(self.replicas[1]), 0)

        # Kill one replica mid-run: new requests keep succeeding through the other.
        busy = threading.Thread(target=lambda: [self.front.complete(prompt="bg", max_tokens=200, ignore_eos=True)
                                                for _ in range(3)])
        busy.start()
        time.sleep(0.1)
        self.replicas[0].proc.send_signal(signal.SIGKILL)
        self.replicas[0].proc.wait(10)
        for _ in range(10):
            status, _, body = self.front.complete(prompt="Through nginx", max_tokens=6, temperature=0,
                                                  return_token_ids=True)
            self.assertEqual((status, body["choices"][0]["token_ids"]), (200, ref["ids"]))
        busy.join(60)


if __name__ == "__main__":
    unittest.main(verbosity=2)
