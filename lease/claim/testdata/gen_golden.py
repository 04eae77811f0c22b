#!/usr/bin/python3
"""Regenerate the claim-record golden files with the reference writer.

Run with Debian's python3-yaml (PyYAML) from lease/claim/testdata:
    /usr/bin/python3 gen_golden.py

For each case it writes:
  <name>.yaml            the file as a Python peer wrote it
                         (yaml.safe_dump(rec, sort_keys=False))
  <name>.canonical.yaml  what the current Python writer writes for the record
                         a reader sees in it (known fields, None omitted, in the
                         writer's field order): leasewrap must write these bytes
  <name>.json            that record as JSON, for the reader assertions
The Go test (golden_test.go) needs no Python.
"""
import json
import yaml

ORDER = ["schema_version", "key", "holder", "acquired_at", "pid", "host",
         "machine_id", "expires_at", "reason", "harness", "metadata"]


def canonical(rec):
    out = {}
    for k in ORDER:
        v = rec.get(k)
        if k == "schema_version" and v is None:
            v = 1
        if v is None or (k == "metadata" and not v):
            continue
        out[k] = v
    return out


BASE = {"schema_version": 1, "key": "session:u1", "holder": "pty:aa",
        "acquired_at": 1767225600123, "pid": 4242, "host": "build-7"}

CASES = {
    "pid_claim": dict(BASE, machine_id="3d1219c7c4c5404aaa1f6d2a48adfda4:4026531836"),
    "ttl_claim": dict(BASE, key="node:ab-1234abcd", machine_id="m1:1",
                      expires_at=1767225660123, reason="nightly build", harness="claude"),
    "escaped_non_ascii": dict(BASE, key="session:café 走 😀", holder="pty:\t'quoted' \"dq\"",
                              host="h\u00e9te", reason="r\u00e9sum\u00e9 \\ back"),
    "quoting_and_folding": dict(BASE, key="dispatch:- leading dash", holder="yes",
                                host="123", machine_id="2024-01-02",
                                reason="a long reason that keeps going well past the eighty column "
                                       "limit so that PyYAML folds the plain scalar onto a second "
                                       "line and then a third one for good measure",
                                harness="null"),
    "nested_metadata": dict(BASE, metadata={
        "ticket": "X-42",
        "attempt": 3,
        "ratio": 0.25,
        "big": 1e16,
        "flags": {"dry_run": False, "force": True, "note": None},
        "tags": ["a", "b c", "on", "1:30", ""],
        "matrix": [[1, 2], [], {}, {"k": "v", "l": [True]}],
        "empty_map": {},
        "empty_list": [],
        "multi": "line one\nline two",
        "url": "https://example.com/a?b=c#frag",
    }),
    "old_writer_null_expires": {"schema_version": 1, "key": "session:old", "holder": "pty:old",
                                "acquired_at": 1700000000000, "pid": 77, "host": "oldbox",
                                "expires_at": None, "reason": None},
    "unknown_fields": {"key": "reconcile:r1", "holder": "daemon", "acquired_at": 5,
                       "pid": 1, "host": "x", "future_field": [1, 2],
                       "another": {"nested": "ignored"}, "metadata": {}},
}

for name, rec in CASES.items():
    with open(name + ".yaml", "w") as f:
        f.write(yaml.safe_dump(rec, sort_keys=False))
    canon = canonical(rec)
    with open(name + ".canonical.yaml", "w") as f:
        f.write(yaml.safe_dump(canon, sort_keys=False))
    with open(name + ".json", "w") as f:
        json.dump(canon, f, ensure_ascii=False, indent=1)
        f.write("\n")


# A seeded random corpus of awkward records (quoting, escapes, folding,
# nesting) for the byte-for-byte writer comparison: pyyaml_corpus.json holds
# [{"json": <record as JSON, key order kept>, "yaml": <safe_dump output>}].
import random

random.seed(20260509)
ATOMS = ["yes", "no", "on", "Off", "null", "~", "true", "1", "-1", "0x1F", "017", "1_000",
         "1:30", "1.5", ".5", "1e5", ".inf", "2024-01-02", "2024-1-2 10:00:00", "<<", "=",
         "!", "&", "*", "---", "...", "- a", "-a", "? x", ":x", "x:", "a: b", "a:b", "#c",
         "a #b", "a#b", "'q'", '"dq"', "%", "@", "`", "|", ">", "[", "]", "{", "}", ",",
         "é", "走", "😀", "\t", "\n", "a\nb", "a\n\nb", " a", "a ", " ", "a \nb", "a\n b",
         "\\", "\x00", "\x85", "\u2028", "\xa0", "\ufeff", "\x7f", "it's"]
WORDS = ["alpha", "beta", "gamma", "x", "zzzzzzzzzzzzzzzzzzz", "node:abc", "with space", "a'b", 'a"b']


def rstr():
    r = random.random()
    if r < 0.3:
        return random.choice(ATOMS)
    if r < 0.5:
        return "".join(random.choice(ATOMS + WORDS + [" ", "  "]) for _ in range(random.randint(1, 6)))
    seps = [" "] * 10 + ["  ", "\n", "'", "é", "\t"]
    return "".join(random.choice(WORDS) + random.choice(seps) for _ in range(random.randint(5, 40)))


def rkey():
    while True:
        k = rstr()
        if 0 < len(k) < 100 and not any(c in k for c in "\n\x85\u2028\u2029"):
            return k


def rval(d):
    r = random.random()
    if d < 3 and r < 0.15:
        return {rkey(): rval(d + 1) for _ in range(random.randint(0, 4))}
    if d < 3 and r < 0.3:
        return [rval(d + 1) for _ in range(random.randint(0, 4))]
    if r < 0.4:
        return random.randint(-10**20, 10**20)
    if r < 0.5:
        return random.choice([0.1, 1e16, 1e-5, -0.0, 123.456, 1e300, 2.5e-310, 1e15, 100.0])
    if r < 0.55:
        return random.choice([True, False, None])
    return rstr()


corpus = []
for _ in range(150):
    doc = {"schema_version": 1, "key": rstr() or "k", "holder": rstr() or "h",
           "acquired_at": random.randint(0, 2**41), "pid": random.randint(1, 4 * 10**6), "host": rstr()}
    for field in ["machine_id", "expires_at", "reason", "harness"]:
        if random.random() < 0.5:
            doc[field] = random.randint(0, 2**41) if field == "expires_at" else rstr()
    if random.random() < 0.7:
        doc["metadata"] = {rkey(): rval(1) for _ in range(random.randint(1, 5))}
    corpus.append({"json": json.dumps(doc), "yaml": yaml.safe_dump(doc, sort_keys=False)})
with open("pyyaml_corpus.json", "w") as f:
    json.dump(corpus, f, indent=0)
    f.write("\n")
