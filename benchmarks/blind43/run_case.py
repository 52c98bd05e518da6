"""python run_case.py NAME [--xss]: plant the case, build twice into one SITE, measure."""
import json, os, shutil, subprocess, sys, time
from pathlib import Path
import lib
from cases import CASES

name = sys.argv[1]
want_xss = "--xss" in sys.argv
place, make = CASES[name]
data = lib.new_data(name)
site = data.parent / "SITE"
if lib.MARK.exists():
    lib.MARK.unlink()
planted = make(data)
builds = []
if name.startswith("c15"):
    e = {**os.environ, "PYTHONPATH": "/work/main"}
    p = subprocess.run(["nice", "-n", "10", sys.executable, "-m", "reporter.cli", "import", "kernelbench", *map(str, sorted((data.parent / "kbruns").iterdir())),
                        "--problems", str(data.parent / "problems"), "--out", str(data)], capture_output=True, text=True, cwd=lib.ROOT, env=e)
    builds.append({"label": "import", "rc": p.returncode, "out": p.stdout + p.stderr, "secs": 0})
if name.startswith("c16"):
    # like the console script: started from inside DATA, sys.path[0] is the script's folder, not DATA
    wrapper = lib.ROOT / "rep.py"
    wrapper.write_text("import sys; sys.path.insert(1, '/work/main')\nfrom reporter.cli import run\nrun()\n")
    e = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run(["nice", "-n", "10", sys.executable, str(wrapper), "build", ".", str(site), "--no-validate"],
                       capture_output=True, text=True, cwd=data, env=e)
    builds.append({"label": "build (cwd=DATA)", "rc": p.returncode, "out": p.stdout + p.stderr, "secs": 0})
builds.append(lib.build(data, site, label="build 1"))
builds.append(lib.build(data, site, label="build 2 (same DATA, same SITE)"))
xss = None
if want_xss and site.exists():
    xss = lib.xss(site, port=8700 + (abs(hash(name)) % 200))
    # HTML injection (executed or not): any page holding our <b id="pwn43"> as an element
res = lib.summary(name, place, builds, site, planted, xss)
inj = []
for rel, text in lib.site_texts(site) if site.exists() else []:
    if rel.endswith(".html") and '<b id="pwn43">' in text:
        inj.append(rel)
res["raw_injection_pages"] = inj
res["runs_pages"] = sorted(p.name for p in (site / "runs").glob("*.html")) if (site / "runs").exists() else []
(lib.ROOT / "cases" / name / "result.json").write_text(json.dumps(res, indent=1, default=str))
print(json.dumps({k: v for k, v in res.items() if k != "builds"}, indent=1, default=str)[:3000])
for b in builds:
    print(f"--- {b['label']}: rc={b['rc']} ({b['secs']} s)\n{b['out'][-2500:]}")
