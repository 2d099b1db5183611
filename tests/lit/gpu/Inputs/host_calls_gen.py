"""Writes tests/lit/gpu/host_calls.mlir (run from the repository root with the venv on PATH):
    python tests/lit/gpu/Inputs/host_calls_gen.py ring,all2all,oneshot,twoshot > tests/lit/gpu/host_calls.mlir
Each expected count comes from the host LLVM IR; the memcpy and launch counts
are asserted here to equal the explicit level's coll.copy and coll.combine."""
import re, subprocess, sys
from collections import Counter
configs = [(s, n) for s in sys.argv[1].split(",") for n in (4, 8)]
head = """// Host LLVM IR, per call vs once: for each strategy at N = 4 and 8 (1000
// floats per device; the peer strategies on logical devices of one GPU,
// which coll-build marks coll.peer_access), the entry function enqueues one mgpuMemcpy per
// coll.copy and one mgpuLaunchKernel per coll.combine, creates no stream or
// event, records each event once (one per cross-stream dependency) and
// syncs the host once; the constructor __coll_init creates the streams (one
// per device), the events and the scratch pool (oneshot and twoshot need
// none), once per program. (Generated, then checked against coll.copy and
// coll.combine counts of the explicit level: Inputs/host_calls_gen.py.)
"""
body = []
for s, n in configs:
    p = f"{s.upper()}{n}"
    t = f"%t.{s}{n}.ll"
    ll = subprocess.run(f"coll-gen all-reduce --devices {n} --shape 1000 | python -m coll.tools.coll_build --emit=llvmir --strategy={s} --format=isa", shell=True, capture_output=True, text=True).stdout
    fns = {m.group(1): Counter(re.findall(r'call \w+ @(mgpu\w+)', m.group(0))) for m in re.finditer(r'define [^@]*@(\w+)\(.*?\n}\n', ll, re.S)}
    c, i = fns["all_reduce"], fns["__coll_init"]
    ex = subprocess.run(f"coll-gen all-reduce --devices {n} --shape 1000 --peer-access | coll-opt --coll-lower-all-reduce=strategy={s}", shell=True, capture_output=True, text=True).stdout
    copies, combines = ex.count('"coll.copy"'), ex.count('"coll.combine"')
    assert copies == c["mgpuMemcpy"] and combines == c["mgpuLaunchKernel"], (s, n)
    body.append(f"""
// {s}, N = {n}: {copies} coll.copy, {combines} coll.combine.
// RUN: coll-gen all-reduce --devices {n} --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy={s} --format=isa > {t}
// RUN: FileCheck %s --check-prefix={p}-COPY < {t}
// RUN: FileCheck %s --check-prefix={p}-LAUNCH < {t}
// RUN: FileCheck %s --check-prefix={p}-CALL < {t}
// RUN: FileCheck %s --check-prefix={p}-INIT < {t}
// {p}-COPY-LABEL: define void @all_reduce(""" + (f"""
// {p}-COPY-COUNT-{copies}: call void @mgpuMemcpy(""" if copies else "") + f"""
// {p}-COPY-NOT: call void @mgpuMemcpy(
// {p}-COPY-LABEL: define void @_mlir_ciface_all_reduce(
// {p}-LAUNCH-LABEL: define void @all_reduce(
// {p}-LAUNCH-COUNT-{combines}: call void @mgpuLaunchKernel(
// {p}-LAUNCH-NOT: call void @mgpuLaunchKernel(
// {p}-LAUNCH-LABEL: define void @_mlir_ciface_all_reduce(
// {p}-CALL-LABEL: define void @all_reduce(
// {p}-CALL-NOT: @mgpuStreamCreate(
// {p}-CALL-NOT: @mgpuEventCreate(
// {p}-CALL-NOT: @mgpuMemAlloc(
// {p}-CALL-NOT: @mgpuStreamDestroy(""" + (f"""
// {p}-CALL-COUNT-{c['mgpuEventRecord']}: call void @mgpuEventRecord(
// {p}-CALL-NOT: @mgpuEventRecord(""" if c['mgpuEventRecord'] else f"""
// {p}-CALL-NOT: @mgpuEventRecord(""") + f"""
// {p}-CALL-NOT: @mgpuStreamCreate(
// {p}-CALL-NOT: @mgpuEventCreate(
// {p}-CALL: call void @mgpuStreamSynchronize(
// {p}-CALL-NOT: @mgpuStreamSynchronize(
// {p}-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// {p}-INIT-LABEL: define internal void @__coll_init()
// {p}-INIT-COUNT-{i['mgpuStreamCreate']}: call ptr @mgpuStreamCreate()
// {p}-INIT-NOT: @mgpuStreamCreate(""" + (f"""
// {p}-INIT-COUNT-{i['mgpuEventCreate']}: call ptr @mgpuEventCreate()
// {p}-INIT-NOT: @mgpuEventCreate(""" if i['mgpuEventCreate'] else "") + f"""
""" + (f"""
// {p}-INIT: call ptr @mgpuMemAlloc(""" if i['mgpuMemAlloc'] else f"""
// {p}-INIT-NOT: @mgpuMemAlloc(""") + f"""
// {p}-INIT-LABEL: define internal void @__coll_fini()""")
    print(s, n, dict(c), dict(i), file=sys.stderr)
print(head + "".join(body))
