"""Make a realistic synthetic corpus of traces from the shipped runs, for views and performance work.

    python benchmarks/make_corpus.py OUT [--runs 240] [--seed 0] [--unique [--fenced 0.172]]

Every trace says SYNTHETIC in its source note and config; never mix the output into data/. Runs vary
model, variant, problem, verdict (correct / incorrect / compile error / no submission / runtime error),
turn count, timings and recorded metrics, and keep the seed runs' reasoning, tool calls and kernels.

With --unique every run is seed-sized and its text is its own, so no cache can share work between
runs (the worst case for a build, and what a real sweep looks like): all of seed 000's turns, with
≈300 KB of freshly worded reasoning and ≈60 KB of code whose identifiers are renamed per run. Like the
seeds' reasoning (17% of its characters are fenced code: C++, Python, CUDA), the reasoning carries fenced
blocks of the run's own renamed code in the seeds' languages and sizes (`FENCED_SHARE`, `--fenced`).
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ["Kimi-K2.6", "GPT-5.1", "Claude-Opus-4.5", "Gemini-3-Pro", "DeepSeek-V3.2", "Qwen3-Coder"]
VARIANTS = [("synthetic_l12", "popcorn"), ("synthetic_l12", "kernelbench")]
PROBLEM_NAMES = ["FusedPairwiseNodeAggregate", "DeepSeekMoEGroundedTop2Routing", "Conv2d_ReLU_BiasAdd", "Matmul_Scale_LogSumExp",
                 "LayerNorm_GELU", "Softmax_Dropout", "ScatterAddEdges", "BatchedGEMM_Bias", "RMSNorm_SiLU_Mul",
                 "Attention_Causal", "TopK_Gather", "Conv3d_MaxPool", "Embedding_Bag", "Cumsum_Reverse",
                 "GroupNorm_Swish", "CrossEntropy_Smooth", "Depthwise_Conv_BN", "Rotary_Embedding", "KL_Div_Loss",
                 "Segment_Max_Reduce", "Bilinear_Upsample", "Masked_Mean_Pool"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--runs", type=int, default=240)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--unique", action="store_true", help="seed-sized runs whose reasoning and code are unique")
    ap.add_argument("--fenced", type=float, default=FENCED_SHARE, help="share of the reasoning in fenced code (--unique)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    seeds = [json.loads(p.read_text()) for p in sorted((ROOT / "data").glob("*/trace.json"))]
    complete = [t for t in seeds if t["run"].get("complete", True) and t.get("final_kernel")]
    if not complete:
        sys.exit("no complete runs under data/ to build from")
    if args.unique:
        # The largest complete seed has every turn; each run rewords and renames it.
        complete = [max(complete, key=lambda t: len(json.dumps(t)))]
        vocab = sorted({w for t in seeds for turn in t["turns"] for w in (turn.get("reasoning") or "").split() if w.isalpha()})
    problems = [(2, i + 1, f"{i + 1}_{name}.py") for i, name in enumerate(PROBLEM_NAMES)]
    n = 0
    while n < args.runs:
        config, variant = rng.choice(VARIANTS)
        model = rng.choice(MODELS)
        level, pid, pfile = rng.choice(problems)
        base = copy.deepcopy(rng.choice(complete))
        skill = {m: 0.35 + 0.1 * i for i, m in enumerate(sorted(MODELS))}[model]
        roll = rng.random()
        verdict = ("correct" if roll < skill else "incorrect" if roll < skill + 0.2 else
                   "compile_error" if roll < skill + 0.3 else "runtime_error" if roll < skill + 0.35 else "no_submission")
        turns = base["turns"] if args.unique else base["turns"][: rng.randint(1, len(base["turns"]))]
        if args.unique:
            make_unique(base, rng, vocab, n, args.fenced)
        for i, t in enumerate(turns):
            t["index"] = i
            t["final"] = i == len(turns) - 1 and verdict != "no_submission"
            for key in ("turn_s", "llm_s"):
                if t.get(key) is not None:
                    t[key] = round(t[key] * rng.uniform(0.3, 2.0), 1)
        ref_ms = rng.lognormvariate(-1.5, 1.0)
        speedup = rng.lognormvariate(0.0, 0.7)
        unit = rng.choice(["us", "ms"])  # some harnesses mislabel ms as us, like the seeds
        m = base.get("metrics", {})
        if verdict == "correct" and "timing" in m:
            m["timing"].update(unit=unit, runtime=round(ref_ms / speedup, 4), ref_runtime=round(ref_ms, 4),
                               speedup=round(speedup, 2), kernel_mean=round(ref_ms / speedup, 4), ref_mean=round(ref_ms, 4))
        else:
            m.pop("timing", None)
        if verdict == "no_submission":
            base["final_kernel"] = None
        base["run"].update(configuration=config, benchmark=variant, model=model, level=level, problem_id=pid, problem_file=pfile,
                           recorded_verdict=verdict, turns_used=len(turns), tool_calls=sum(len(t["calls"]) for t in turns),
                           tokens_total=rng.choice([0, rng.randint(20_000, 400_000)]),
                           source_note="SYNTHETIC run made by benchmarks/make_corpus.py from a shipped trace; "
                                       "its numbers are random and mean nothing.")
        base["turns"] = turns
        base["attachments"] = []
        folder = args.out / f"{config}-{variant}" / model.lower() / f"l{level}-p{pid}-{n:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "trace.json").write_text(json.dumps(base), encoding="utf-8")
        n += 1
    print(f"wrote {n} synthetic traces under {args.out}")


REASONING_BYTES = 300_000
IDENT = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")
# The seeds' reasoning (data/): 17.2% of its characters are in 186 fenced blocks (by the site's own fence
# rule), 540 characters on average (median 250, 90th percentile 1,424, largest 4,218), tagged cpp 77 times,
# python 55, cuda 48 and untagged 6.
FENCED_SHARE = 0.172
FENCE_LANGS = (("cpp", 77), ("python", 55), ("cuda", 48), ("", 6))
FENCE_MEAN, FENCE_MEDIAN, FENCE_MAX = 540, 250, 4218
TICKS = "`" * 3


def _fence(rng: random.Random, code: list[str]) -> str:
    """A fenced block of about a seed fence's size: consecutive lines of the run's own (renamed) code."""
    size = min(FENCE_MAX, max(40, int(rng.lognormvariate(0, 1.1) * FENCE_MEDIAN)))
    start = rng.randrange(len(code))
    lines: list[str] = []
    chars = 0
    for line in code[start:] + code[:start]:
        if chars >= size:
            break
        lines.append(line.replace(TICKS, "`` `"))
        chars += len(line) + 1
    lang = rng.choices([lang for lang, _ in FENCE_LANGS], [w for _, w in FENCE_LANGS])[0]
    return f"{TICKS}{lang}\n" + "\n".join(lines) + f"\n{TICKS}"


def _prose(rng: random.Random, vocab: list[str], size: int, code: list[str] | None = None, fenced: float = 0.0) -> str:
    """Fresh text of about `size` characters: sentences of seed words, paragraphs and list items, and (with
    `code`) fenced blocks of it between them, making up about `fenced` of the characters."""
    words = rng.choices(vocab, k=max(1, int(size * (1 - fenced)) // 7))
    out, i, prose, fences = [], 0, 0, 0
    while i < len(words):
        k = rng.randint(8, 24)
        sentence = " ".join(words[i:i + k])
        out.append(("\n\n" if rng.random() < 0.15 else "\n- " if rng.random() < 0.1 else " ") + sentence.capitalize() + ".")
        prose += len(out[-1])
        i += k
        while code and fences + FENCE_MEAN / 2 < fenced * (prose + fences):  # on target on average, not above it
            out.append("\n\n" + _fence(rng, code) + "\n\n")
            fences += len(out[-1])
    return "".join(out).strip()


def make_unique(trace: dict, rng: random.Random, vocab: list[str], n: int, fenced: float = FENCED_SHARE) -> None:
    """Reword every turn's reasoning and rename the code's identifiers, so no two runs share text; the
    reasoning's fenced blocks quote the run's renamed code.

    A kernel resent unchanged stays identical within the run (like real agents); across runs none is."""
    total = sum(len(t.get("reasoning") or "") for t in trace["turns"]) or 1
    renamed: dict[str, str] = {}

    def rename(src: str) -> str:
        if src not in renamed:
            tag = f"r{n}v{len(renamed)}"
            renamed[src] = IDENT.sub(lambda m: f"{m.group(0)}_{tag}", src)
        return renamed[src]

    for turn in trace["turns"]:
        for call in turn["calls"]:
            if isinstance(call["arguments"].get("kernel_code"), str):
                call["arguments"]["kernel_code"] = rename(call["arguments"]["kernel_code"])
    if trace.get("final_kernel"):
        trace["final_kernel"]["source"] = rename(trace["final_kernel"]["source"])
    code = [line for src in renamed.values() for line in src.splitlines() if line.strip()]
    for turn in trace["turns"]:
        if turn.get("reasoning"):
            turn["reasoning"] = _prose(rng, vocab, len(turn["reasoning"]) * REASONING_BYTES // total, code, fenced)
    if trace.get("reference_source"):
        trace["reference_source"] = IDENT.sub(lambda m: f"{m.group(0)}_r{n}", trace["reference_source"])


if __name__ == "__main__":
    main()
