#!/usr/bin/env python3
"""`eagerlm serve` through the real `openai` Python client (PyPI), and through curl.

Needs a Python with the openai package (CMake's EAGERLM_OPENAI_PYTHON; the test is not registered
without one). Shares the server helpers of test_server.py.
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_server as ts  # noqa: E402

import openai  # noqa: E402


def setUpModule():
    ts.setUpModule()


def tearDownModule():
    ts.tearDownModule()


class OpenAIClient(unittest.TestCase):
    KEY = "sk-openai-client-test"

    @classmethod
    def setUpClass(cls):
        cls.s = ts.Server(ts.MODEL_DIR, "--parallel", "4", "--api-key", cls.KEY)
        cls.client = openai.OpenAI(base_url="http://127.0.0.1:%d/v1" % cls.s.port, api_key=cls.KEY, max_retries=0,
                                   timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.s.kill()

    def test_models(self):
        self.assertEqual([m.id for m in self.client.models.list()], [ts.MODEL_ID])

    def test_completion_equals_generate(self):
        ref = ts.generate_cli(ts.MODEL_DIR, "Hello there", 8)
        r = self.client.completions.create(model=ts.MODEL_ID, prompt="Hello there", max_tokens=8, temperature=0,
                                           extra_body={"return_token_ids": True})
        self.assertEqual(r.choices[0].text, ref["text"])
        self.assertEqual(r.choices[0].model_extra["token_ids"], ref["ids"])
        self.assertEqual(r.usage.completion_tokens, len(ref["ids"]))
        seeded = ts.generate_cli(ts.MODEL_DIR, "Hello there", 8, temperature=1.0, seed=9)
        r = self.client.completions.create(model=ts.MODEL_ID, prompt="Hello there", max_tokens=8, temperature=1.0,
                                           seed=9, extra_body={"return_token_ids": True})
        self.assertEqual(r.choices[0].model_extra["token_ids"], seeded["ids"])

    def test_stream_n_logprobs_echo_stop(self):
        whole = self.client.completions.create(model=ts.MODEL_ID, prompt="Go", max_tokens=10, temperature=0)
        text = "".join(c.choices[0].text for c in self.client.completions.create(
            model=ts.MODEL_ID, prompt="Go", max_tokens=10, temperature=0, stream=True) if c.choices)
        self.assertEqual(text, whole.choices[0].text)
        r = self.client.completions.create(model=ts.MODEL_ID, prompt="Go", max_tokens=4, temperature=1, n=3, seed=1)
        self.assertEqual(sorted(c.index for c in r.choices), [0, 1, 2])
        r = self.client.completions.create(model=ts.MODEL_ID, prompt="Go", max_tokens=4, temperature=0, logprobs=2,
                                           echo=True)
        lp = r.choices[0].logprobs
        self.assertTrue(r.choices[0].text.startswith("Go"))
        self.assertEqual(len(lp.tokens), len(lp.token_logprobs))
        self.assertIsNone(lp.token_logprobs[0])  # the first prompt token has no logprob
        stop = whole.choices[0].text[3:5]
        r = self.client.completions.create(model=ts.MODEL_ID, prompt="Go", max_tokens=10, temperature=0, stop=[stop])
        self.assertEqual(r.choices[0].text, whole.choices[0].text[:whole.choices[0].text.find(stop)])
        self.assertEqual(r.choices[0].finish_reason, "stop")

    def test_errors(self):
        with self.assertRaises(openai.BadRequestError) as e:
            self.client.completions.create(model=ts.MODEL_ID, prompt="x", max_tokens=5000)
        self.assertEqual(e.exception.body["param"], "max_tokens")
        with self.assertRaises(openai.NotFoundError):
            self.client.completions.create(model="gpt-4", prompt="x")
        with self.assertRaises(openai.AuthenticationError):
            openai.OpenAI(base_url=self.client.base_url, api_key="wrong", max_retries=0).models.list()
        with self.assertRaises(openai.BadRequestError) as e:
            self.client.chat.completions.create(model=ts.MODEL_ID, messages=[{"role": "user", "content": "hi"}])
        self.assertEqual(e.exception.body["code"], "chat_template_missing")

    @unittest.skipUnless(shutil.which("curl"), "curl is not installed")
    def test_curl(self):
        url = "http://127.0.0.1:%d/v1/completions" % self.s.port
        body = json.dumps({"model": ts.MODEL_ID, "prompt": "curl", "max_tokens": 3, "temperature": 0, "stream": True})
        out = subprocess.run(["curl", "-sN", "-H", "Authorization: Bearer " + self.KEY, "-H",
                              "Content-Type: application/json", "-d", body, url],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        lines = [x for x in out.split("\n") if x]
        self.assertEqual(lines[-1], "data: [DONE]")
        ref = ts.generate_cli(ts.MODEL_DIR, "curl", 3)
        self.assertEqual("".join(json.loads(x[6:])["choices"][0]["text"] for x in lines[:-1]), ref["text"])
        out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url, "-d", "{}"],
                             capture_output=True, text=True, timeout=60).stdout
        self.assertEqual(out, "401")


if __name__ == "__main__":
    unittest.main(verbosity=2)
