"""Each case: make(DATA) plants hostile input beside the well-formed run DATA/good and returns the planted secrets."""
import json, os, string
from pathlib import Path
from lib import good_trace, rnd, secrets, write

XSS = '<img src=x onerror="window.__xss=1"><b id="pwn43">x</b>"><script>window.__xss=1</script>'
JS = "javascript:window.__xss=1//"
CASES = {}


def case(place):
    def deco(f):
        CASES[f.__name__] = (place, f)
        return f
    return deco


@case("DATA/kernelbench-problems.json (problem set): a level key that str.isdigit() accepts but int() refuses")
def c01_problemset_superscript_level(data):
    write(data / "evil-sweep" / "kernelbench-problems.json", {"format": 1, "benchmark": "kernelbench", "source": "p", "commit": None,
                                               "levels": {"\u00b2": {"1": {"file": "1_x.py", "sha256": "0" * 64}}}})
    return []


@case("DATA/kernelbench-problems.json (problem set): a problem id of 5,000 digits (a JSON key, so MAX_INT_DIGITS does not apply)")
def c02_problemset_huge_key(data):
    write(data / "evil-sweep" / "kernelbench-problems.json", {"format": 1, "benchmark": "kernelbench", "levels": {"1": {"9" * 5000: {"file": "x.py", "sha256": "0" * 64}}}})
    return []


@case("DATA/kernelbench-problems.json (problem set): the recorded file name of a problem not attempted (listed on the grid page)")
def c03_problemset_file_secret(data):
    s = secrets()
    names = {"93": f"93_{s['github']}.py", "95": f"95_{s['openai']}.py", "97": "97_" + XSS + ".py", "98": f"98 {s['dbpw']}.py"}
    write(data / "kernelbench-problems.json", {"format": 1, "benchmark": "kernelbench", "source": s["aws"], "commit": None,
                                               "levels": {"1": {k: {"file": v, "sha256": "0" * 64} for k, v in
                                                                {**names, "92": "92_cumsum_exclusive.py"}.items()}}})
    return [s["github"], s["openai"], s["aws"], s["dbpw"]]


@case("run slugs: a model name / run folder that is no secret as written but whose slug (lower case, punctuation to '-') has a key's shape")
def c04_slug_makes_secret(data):
    hx = rnd(32, "0123456789abcdef")
    write(data / "natural" / "trace.json", good_trace(model="Key " + hx, problem_id=94, problem_file="94_MSELoss.py"))
    return []  # nothing secret was planted: the question is whether the site survives


@case("run folder name: key_<32 hex> (a uuid-like folder name whose run slug reads as a Mailgun key)")
def c05_run_folder_slug(data):
    hx = rnd(32, "0123456789abcdef")
    write(data / f"key_{hx}" / "trace.json", good_trace(problem_id=94, problem_file="94_MSELoss.py"))
    return []


@case("DATA/redact-allow.txt: a re: line RE2 refuses (back-reference) and Python's re cannot parse without recursing too deep")
def c06_allowlist_recursion(data):
    (data / "redact-allow.txt").write_text("# allow\nre:" + "(" * 5000 + "a" + ")" * 5000 + "\\1\n")
    s = secrets()
    t = good_trace(problem_id=94, problem_file="94_MSELoss.py")
    t["run"]["source_note"] = "token " + s["github"]
    write(data / "withsecret" / "trace.json", t)
    return [s["github"]]


@case("DATA/reviews.toml: verdict (echoed cut at 40 chars), note, reviewer, quote, unknown table and field names, run")
def c07_reviews_fields(data):
    s = secrets()
    import hashlib
    sha = hashlib.sha256(good_trace()["final_kernel"]["source"].encode()).hexdigest()
    verdict = "v" * 15 + " " + s["github"]  # [:40] keeps 'ghp_' + 20 of the 36: no longer a whole token
    toml = f'''
[[review]]
run = "good"
kernel_sha256 = "{sha}"
reviewer = {json.dumps(XSS)}
verdict = "clean"
quote = "kernel.py:3"
note = {json.dumps("note " + s["openai"] + " " + XSS + " " + s["dbpw"])}

[[review]]
run = "good"
kernel_sha256 = "{'a' * 64}"
reviewer = "eve"
verdict = {json.dumps(verdict)}
quote = "turn 1"
note = "n"

[[review]]
run = {json.dumps("nosuch-" + s["aws"])}
kernel_sha256 = "{'b' * 64}"
reviewer = "eve"
verdict = "clean"
note = "n"

[[review]]
run = "good"
kernel_sha256 = "{'c' * 64}"
reviewer = "eve"
verdict = "clean"
note = "n"
{s["openai"]} = "x"

["{s["github"]}"]
x = 1
'''
    (data / "reviews.toml").write_text(toml)
    return [s["github"], s["openai"], s["aws"], s["dbpw"]]


NCU_HEAD = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",'


@case("Nsight CSV attachment: ID cell (echoed cut at 80 chars), metric header names (stall reasons, pipes), units, Kernel Name")
def c08_ncu_csv(data):
    s = secrets()
    run = data / "ncu"
    t = good_trace(problem_id=94, problem_file="94_MSELoss.py")
    t["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel", "path": "k_raw.csv"}]
    stall = f"smsp__average_warps_issue_stalled_{s['github']}_per_issue_active.ratio"
    stall2 = "smsp__average_warps_issue_stalled_" + XSS + "_per_issue_active.ratio"
    pipe = f"sm__inst_executed_pipe_{s['openai']}.avg.pct_of_peak_sustained_active"
    cols = ["gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", stall, stall2, pipe]
    head = NCU_HEAD + ",".join(json.dumps(c) for c in cols)
    units = '"","","","","","","","","","","",' + ",".join(['"usecond"', '"%"', '"%"', json.dumps(s["aws"]), '""', '"%"'])
    row = '"1","1","python","h",' + json.dumps(XSS) + ',"1","7","(256, 1, 1)","(64, 1, 1)","0","9.0",' + '"12.5","40","50","3","2","60"'
    write(run / "k_raw.csv", "\n".join([head, units, row]) + "\n")
    write(run / "trace.json", t)
    # a second run whose ncu ID cell holds a key that the 80-char cut breaks
    run2 = data / "ncu-id"
    t2 = good_trace(problem_id=96, problem_file="96_HuberLoss.py")
    t2["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel", "path": "k_raw.csv"}]
    idcell = "x" * 56 + s["github"]  # [:80] keeps ghp_ and 20 of the 36
    write(run2 / "k_raw.csv", "\n".join([NCU_HEAD + '"gpu__time_duration.sum"', '"","","","","","","","","","","","usecond"',
                                         json.dumps(idcell) + ',"1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","1"']) + "\n")
    write(run2 / "trace.json", t2)
    return [s["github"], s["openai"], s["aws"]]


@case("torch.profiler trace attachment: a dur (echoed cut at 80 chars), event names, args/metadata")
def c09_profiler(data):
    s = secrets()
    run = data / "prof"
    t = good_trace(problem_id=94, problem_file="94_MSELoss.py")
    t["attachments"] = [{"kind": "torch_profiler_trace", "role": "kernel", "path": "prof.json"}]
    ev = {"traceEvents": [{"ph": "X", "cat": "kernel", "name": XSS + " " + s["aws"], "dur": 3.5, "args": {s["github"]: s["openai"]}},
                          {"ph": "X", "cat": "kernel", "name": "k2", "dur": "y" * 56 + s["github"]}],
          "deviceProperties": [{"name": s["dbpw"]}], "metadata": {"API_KEY": "hunter2-very-secret-9"}}
    write(run / "prof.json", ev)
    write(run / "trace.json", t)
    # a second, good profile so the names are shown
    run2 = data / "prof-ok"
    t2 = good_trace(problem_id=96, problem_file="96_HuberLoss.py")
    t2["attachments"] = [{"kind": "torch_profiler_trace", "role": "kernel", "path": "prof.json"}]
    write(run2 / "prof.json", {"traceEvents": [{"ph": "X", "cat": "kernel", "name": XSS + " " + s["aws"], "dur": 3.5,
                                                "args": {s["github"]: s["openai"]}}]})
    write(run2 / "trace.json", t2)
    return [s["github"], s["openai"], s["aws"]]


@case("timing and count fields: NaN, Infinity, -Infinity, 1e309, -0.0, negative and int64-overflowing numbers")
def c10_numbers(data):
    for i, (v, n) in enumerate([(float("nan"), "nan"), (float("inf"), "inf"), (float("-inf"), "ninf"), (-0.0, "negzero"), (-5.0, "neg")]):
        t = good_trace(problem_id=100 + i, problem_file=f"{100 + i}_p.py", wall_clock_s=v, sample=i)
        t["metrics"] = {"timing": {"unit": "ms", "runtime": v, "ref_runtime": 1.0 if n != "negzero" else -0.0, "speedup": v,
                                   "kernel_mean": v, "kernel_std": v, "ref_mean": v},
                        "precision": {"max_abs_error": v, "trials_passed": 5, "trials_total": 5},
                        "memory": {"kernel_peak_mb": v, "ref_peak_mb": v, "ratio": v},
                        "launches": {"kernel_launches": -1, "ref_launches": 0, "fusion_ratio": v, "total_cuda_time_us": v},
                        "nsight": {"sol_score": v, "dram_util_pct": v, "warp_stalls_pct": {"x": v}}}
        t["run"]["tokens_total"] = -(2 ** 63)
        t["run"]["recorded_verdict"] = "correct"
        (data / f"num-{n}").mkdir()
        (data / f"num-{n}" / "trace.json").write_text(json.dumps(t).replace('"wall_clock_s": 1e309', '"wall_clock_s": 1e309'))
    # 1e309 written literally (json would parse it to inf), and an int64 overflow
    t = good_trace(problem_id=120, problem_file="120_p.py", recorded_verdict="correct")
    t["metrics"] = {"timing": {"unit": "ms", "runtime": 1.0, "ref_runtime": 2.0, "speedup": 2.0}}
    txt = json.dumps(t).replace('"runtime": 1.0', '"runtime": 1e309').replace('"speedup": 2.0', '"speedup": -1e309')
    txt = txt.replace('"sample": 0', '"sample": 99999999999999999999999999999999999999')
    write(data / "num-1e309" / "trace.json", txt)
    return []


@case("transcript: turn indexes duplicated/negative/huge, final_kernel.turn pointing nowhere, tool-call argument KEYS holding secrets")
def c11_turns_and_arg_keys(data):
    s = secrets()
    t = good_trace(problem_id=94, problem_file="94_MSELoss.py")
    t["turns"] = [
        {"index": 5, "reasoning": "a " + XSS, "calls": [{"tool": XSS, "arguments": {s["github"]: 1, "x" + s["aws"]: "v",
                                                                                      "DB_PASSWORD": "hunter2-very-secret-9",
                                                                                      XSS: JS}, "result": {"ok": True, "text": JS}}]},
        {"index": 5, "reasoning": "dup", "reasoning_format": "markdown", "calls": []},
        {"index": -1, "reasoning": f"[click]({JS}) <a href='{JS}'>x</a> " + XSS, "reasoning_format": "markdown"},
        {"index": 2 ** 62, "reasoning": "big", "final": True},
    ]
    t["final_kernel"]["turn"] = -7
    t["harness_metadata"] = {s["openai"]: {"nested": {s["github"][:20]: s["github"][20:]}}, "deep": {"API_KEY": ["hunter2-very-secret-9"]}}
    write(data / "turns" / "trace.json", t)
    return [s["github"], s["openai"], s["aws"], s["dbpw"]]


@case("trace encoding: UTF-8 BOM, UTF-16, duplicate keys, lone surrogate escapes in keys and values, nesting at and over the limit")
def c12_encodings(data):
    s = secrets()
    base = json.dumps(good_trace(problem_id=94, problem_file="94_MSELoss.py"))
    write(data / "bom" / "trace.json", b"\xef\xbb\xbf" + base.encode())
    write(data / "utf16" / "trace.json", base.encode("utf-16"))
    dup = base[:-1] + ', "run": {"model": "' + XSS.replace('"', '\\"') + '", "benchmark": "kernelbench", "level": 1, "problem_id": 96, "problem_file": "96_HuberLoss.py"}}'
    write(data / "dupkeys" / "trace.json", dup)
    sur = good_trace(problem_id=100, problem_file="100_HingeLoss.py")
    sur["harness_metadata"] = {"PLACEHOLDER": 1}
    txt = json.dumps(sur).replace('"PLACEHOLDER"', '"\\ud800k\\udfff"')
    txt = txt.replace('"model": "demo-alpha"', '"model": "demo\\ud800alpha"')
    # a secret with a lone surrogate in the middle: the replacement (U+FFFD) leaves two halves of 18 characters
    txt = txt.replace('"source_note": "', '"source_note": "' + s["github"][:18] + '\\udc00' + s["github"][18:] + ' ')
    write(data / "surrogate" / "trace.json", txt)
    deep = good_trace(problem_id=97, problem_file="97_x.py")
    node = "leaf"
    for _ in range(62):
        node = [node]
    deep["harness_metadata"] = {"d": node}
    write(data / "deep63" / "trace.json", deep)
    deep2 = json.dumps(good_trace(problem_id=98, problem_file="98_x.py"))[:-1] + ', "harness_metadata": {"d": ' + "[" * 100000 + "]" * 100000 + "}}"
    write(data / "deep100k" / "trace.json", deep2)
    return [s["github"]]


@case("attachments: a FIFO, a symlink to /dev/zero, a hard link, '..' out of the folder, a folder, an absolute path, a huge sparse file")
def c13_attachments(data):
    run = data / "att"
    t = good_trace(problem_id=94, problem_file="94_MSELoss.py")
    paths = ["fifo.csv", "zero.csv", "hard.csv", "../good/trace.json", "sub", "/etc/passwd", "sparse.csv", "ok\nname" + XSS + ".csv", "\x1b]0;TERMTITLE43\x07\x1b[2J\x1b[31mESC43.csv"]
    t["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel", "path": p} for p in paths]
    write(run / "trace.json", t)
    os.mkfifo(run / "fifo.csv")
    os.symlink("/dev/zero", run / "zero.csv")
    (data.parent / "outside.csv").write_text(NCU_HEAD + '"x"\n')
    os.link(data.parent / "outside.csv", run / "hard.csv")
    (run / "sub").mkdir()
    with open(run / "sparse.csv", "wb") as f:
        f.truncate(300 * 1024 * 1024)
    return []


@case("run folder names that collide with site paths or each other: index.html, search, runs, static, pagefind, 404, .., Good/good, NFC/NFD")
def c14_folder_names(data):
    names = ["index.html", "search", "runs", "static", "pagefind", "404", "...", "Good", "caf\u00e9", "cafe\u0301", "good.kernel",
             "\u202egnp.evil", "x\\y", "-" * 300 if False else "a" * 250]
    for i, n in enumerate(names):
        write(data / n / "trace.json", good_trace(problem_id=92, sample=i + 1))
    write(data / "trace.json", good_trace(problem_id=92, sample=50))  # DATA/trace.json: run id "trace"
    write(data / "trace" / "trace.json", good_trace(problem_id=92, sample=51))
    return []


@case("KernelBench import: eval_results.json keys and metadata, generation_config.yaml (model_name, a tag), kernel/prompt files; then build")
def c15_kb_import(data):
    s = secrets()
    kb = data.parent / "kbruns" / "run1"
    probs = data.parent / "problems" / "level1"
    probs.mkdir(parents=True)
    (probs / "1_Square.py").write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, a, b):\n        return a @ b\n")
    kb.mkdir(parents=True)
    (kb / "level_1_problem_1_sample_0_kernel.py").write_text("# " + s["github"] + "\nimport torch\nclass ModelNew(torch.nn.Module):\n    pass\n")
    (kb / "level_1_problem_1_sample_0_prompt.txt").write_text("prompt " + XSS)
    (kb / "generation_config.yaml").write_text(f"model_name: {json.dumps(XSS)}\nbackend: cuda\nprecision: !!python/name:os.system {s['aws']}\n")
    (kb / "eval_results.json").write_text(json.dumps({
        "1": [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 1.0, "ref_runtime": float("nan"),
               "metadata": {"hardware": XSS, s["openai"]: "k", "runtime_error": {"API_KEY": "hunter2-very-secret-9"}}}],
        s["github"]: [], "2_" + s["openai"]: {"compiled": True}}))
    return [s["github"], s["openai"], s["aws"], s["dbpw"]]


@case("programs from DATA: DATA/.git (fsmonitor, hooks, filter driver), DATA/sitecustomize.py|json.py|re.py, DATA/pagefind|ncu|git executables, a .ncu-rep attachment")
def c16_programs(data):
    m = "/tmp/blind43-after/MARKER_RAN"
    sh = f"#!/bin/sh\necho ran $0 >> {m}\n"
    py = f"open({m!r}, 'a').write('ran ' + __file__ + '\\n')\n"
    g = data / ".git"
    (g / "hooks").mkdir(parents=True)
    (g / "refs" / "heads").mkdir(parents=True)
    (g / "HEAD").write_text("ref: refs/heads/main\n")
    (g / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    (g / "config").write_text(f"[core]\n\tfsmonitor = {data}/fsmon.sh\n\thooksPath = {data}/hooks\n\tpager = {data}/fsmon.sh\n"
                              f"[filter \"x\"]\n\tclean = {data}/fsmon.sh\n\tsmudge = {data}/fsmon.sh\n")
    (data / ".gitattributes").write_text("* filter=x\n")
    for name in ("fsmon.sh", "pagefind", "ncu", "git", "python", "python3", "hooks/post-checkout", "hooks/pre-commit"):
        p = data / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(sh)
        p.chmod(0o755)
    for name in ("sitecustomize.py", "usercustomize.py", "json.py", "re.py", "runpy.py", "ncu_report.py", "good/ncu_report.py", "good/json.py"):
        (data / name).write_text(py)
    run = data / "rep"
    t = good_trace(problem_id=94, problem_file="94_MSELoss.py")
    t["attachments"] = [{"kind": "ncu_report", "role": "kernel", "path": "k.ncu-rep"}]
    write(run / "trace.json", t)
    (run / "k.ncu-rep").write_bytes(b"\0" * 64)
    (run / "ncu_report.py").write_text(py)
    return []


@case("DATA/validation/<key>/<m>.json (a cached re-validation result for the good run): ncu_files name (echoed cut at 80), GPU name, log, zero/negative times")
def c17_validation_cache(data):
    import glob, sys
    sys.path.insert(0, "/work/main")
    from reporter.core.cache import content_key
    from reporter.core.records import sha256_text
    s = secrets()
    src = json.load(open(glob.glob("/work/main/data/validation/0ef2f695a1860cf4d52d/*.json")[0]))
    g = good_trace()
    fk, ref = g["final_kernel"]["source"], g["reference_source"]
    src["kernel_sha256"], src["reference_sha256"] = sha256_text(fk), sha256_text(ref)
    src["environment"]["gpu"] = "NVIDIA " + XSS
    src["environment"]["host"] = s["aws"]
    src["log"] = "build log " + s["dbpw"] + " " + XSS
    src["reason"] = XSS
    src["measured_at"] = "2030-01-01T00:00:00Z"
    src["ncu_files"] = {"kernel": "z" * 56 + s["github"]}  # [:80] keeps ghp_ and 20 of the 36
    for side in ("kernel_timing",):
        for basis in ("device", "wall"):
            src[side][basis].update(median_ms=0.0, min_ms=0.0, max_ms=0.0, ci_low_ms=0.0, ci_high_ms=0.0, iqr_ms=0.0)
    src["reference_timing"]["device"]["median_ms"] = -3.0
    key = content_key(fk, ref)
    write(data / "validation" / key / "aaaaaaaaaaaa.json", src)
    # and one for a second run whose kernel time is NaN-like garbage (JSON NaN)
    g2 = good_trace(problem_id=94, problem_file="94_MSELoss.py")
    g2["final_kernel"]["source"] += "\n# v2\n"
    write(data / "nan-cache" / "trace.json", g2)
    src2 = dict(src)
    src2["ncu_files"] = {}
    src2["kernel_sha256"] = sha256_text(g2["final_kernel"]["source"])
    src2["kernel_timing"] = json.loads(json.dumps(src["kernel_timing"]))
    src2["kernel_timing"]["device"]["median_ms"] = float("nan")
    src2["kernel_timing"]["wall"]["median_ms"] = float("inf")
    write(data / "validation" / content_key(g2["final_kernel"]["source"], ref) / "bbbbbbbbbbbb.json", json.dumps(src2))
    return [s["openai"], s["github"], s["aws"], s["dbpw"]]


@case("DATA/<folder>/kernelbench-problems.json (problem set): a 20-digit problem id (beyond int64; no odd characters at all)")
def c02b_problemset_int64_key(data):
    write(data / "evil-sweep" / "kernelbench-problems.json", {"format": 1, "benchmark": "kernelbench", "levels": {"1": {"99999999999999999999": {"file": "x.py", "sha256": "0" * 64}}}})
    return []


@case("DATA/validation/work/<ref>/work.json (the reference's work count): why, torch, estimated op names, tensor roles; int counts beyond int64")
def c18_work_count(data):
    import sys
    sys.path.insert(0, "/work/main")
    from reporter.core.records import sha256_text
    s = secrets()
    ref = good_trace()["reference_source"]
    sha = sha256_text(ref)
    doc = {"dtype": "fp32", "estimated": [f"aten.{s['github']} x1", XSS], "flop_counter_total": 0, "format": 1, "how": "cpu",
           "why": "ran on CPU: " + s["dbpw"] + " " + XSS,
           "ops": [{"calls": 1, "dtype": "fp32", "floor_flops": 0, "flops": 10 ** 39, "kind": "other"}],
           "reference_sha256": sha,
           "tensors": [{"dtype": "fp32", "moved": 10 ** 39, "nbytes": 10 ** 39, "role": "input 0 " + s["aws"], "shape": [10 ** 30]},
                       {"dtype": "fp32", "moved": 4, "nbytes": 4, "role": "output 0", "shape": []}],
           "torch": "2.13 " + XSS}
    write(data / "validation" / "work" / sha[:20] / "work.json", doc)
    return [s["github"], s["aws"], s["dbpw"]]


@case("model name key_<32 hex> (what `reporter import kernelbench` writes for a run folder of that name without --model)")
def c04b_model_folder_name(data):
    hx = rnd(32, "0123456789abcdef")
    write(data / "natural" / "trace.json", good_trace(model="key_" + hx, problem_id=94, problem_file="94_MSELoss.py"))
    return []


@case("KernelBench import of a run folder named key_<32 hex> (no generation_config.yaml, no --model), then build")
def c15b_kb_folder_named_like_key(data):
    hx = rnd(32, "0123456789abcdef")
    kb = data.parent / "kbruns" / ("key_" + hx)
    probs = data.parent / "problems" / "level1"
    probs.mkdir(parents=True)
    (probs / "1_Square.py").write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, a, b):\n        return a @ b\n")
    kb.mkdir(parents=True)
    (kb / "level_1_problem_1_sample_0_kernel.py").write_text("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n")
    (kb / "eval_results.json").write_text(json.dumps({"1": [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 1.0}]}))
    return []


@case("DATA/validation/<key>/<m>.json: an ncu_files name with a '/' (echoed cut at 80 chars)")
def c17b_validation_ncu_name(data):
    import glob, sys
    sys.path.insert(0, "/work/main")
    from reporter.core.cache import content_key
    from reporter.core.records import sha256_text
    s = secrets()
    src = json.load(open(glob.glob("/work/main/data/validation/0ef2f695a1860cf4d52d/*.json")[0]))
    g = good_trace()
    fk, ref = g["final_kernel"]["source"], g["reference_source"]
    src["kernel_sha256"], src["reference_sha256"] = sha256_text(fk), sha256_text(ref)
    src["ncu_files"] = {"kernel": "z" * 55 + "/" + s["github"]}  # [:80] keeps ghp_ and 20 of the 36
    write(data / "validation" / content_key(fk, ref) / "aaaaaaaaaaaa.json", src)
    return [s["github"]]


@case("DATA/validation/work/<ref>/work.json with no secret: markup in why/estimated/roles, counts of 10^39 and below zero")
def c18b_work_count_numbers(data):
    import sys
    sys.path.insert(0, "/work/main")
    from reporter.core.records import sha256_text
    ref = good_trace()["reference_source"]
    sha = sha256_text(ref)
    doc = {"dtype": "fp32", "estimated": [XSS], "flop_counter_total": -(10 ** 39), "format": 1, "how": "cpu",
           "why": XSS, "reference_sha256": sha, "torch": XSS,
           "ops": [{"calls": -1, "dtype": XSS, "floor_flops": 10 ** 39, "flops": 10 ** 39, "kind": "matmul"},
                   {"calls": 1, "dtype": "fp32", "floor_flops": 0, "flops": -(10 ** 39) + 1, "kind": "pointwise"}],
           "tensors": [{"dtype": "fp32", "moved": 10 ** 39, "nbytes": 10 ** 39, "role": "input 0 " + XSS, "shape": [10 ** 30]},
                       {"dtype": "fp32", "moved": -(10 ** 39), "nbytes": 4, "role": "output 0", "shape": []}]}
    write(data / "validation" / "work" / sha[:20] / "work.json", doc)
    return []


@case("DATA/kernelbench-problems.json: recorded file names holding markup only (no secret), listed on the grid page")
def c03b_problemset_file_markup(data):
    write(data / "kernelbench-problems.json", {"format": 1, "benchmark": "kernelbench", "source": XSS, "commit": XSS,
                                               "levels": {"1": {"92": {"file": "92_cumsum_exclusive.py", "sha256": "0" * 64},
                                                                "97": {"file": "97_" + XSS + ".py", "sha256": XSS},
                                                                "98": {"file": JS, "sha256": "1" * 64}}}})
    return []
