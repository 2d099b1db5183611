"""Writes tests/lit/gpu/host_calls.mlir (run from the repository root with the venv on PATH):
    python tests/lit/gpu/Inputs/host_calls_gen.py ring,all2all,oneshot,twoshot > tests/lit/gpu/host_calls.mlir
Each expected count comes from the host LLVM IR; the memcpy and launch counts
are asserted here to equal the explicit level's coll.copy and coll.combine."""
import re
import subprocess
import sys
from collections import Counter

configs = [(s, n) for s in sys.argv[1].split(",") for n in (4, 8)]
head = """// Host LLVM IR, per call vs once: for each strategy at N = 4 and 8 (1000
// floats per device; the peer strategies on logical devices of one GPU,
// which coll-build marks coll.peer_access).
// - per call (@all_reduce): no runtime call but one mgpuStreamSynchronize;
//   the work is a CUDA graph (lowering/gpu/graph.c): __coll_call_begin,
//   then either the capture (the body, __coll_capture_end) and the launch,
//   or the launch alone (a warm call: one graph launch and one sync), or
//   the body run directly (graphs off); no kernel lookup, no creation;
// - the body (@__coll_body_all_reduce, run once per capture): one mgpuMemcpy
//   per coll.copy and one mgpuLaunchKernel per coll.combine, each event
//   recorded once (one per cross-stream dependency, plus the fork of the
//   capture), no host sync, no lookup, no creation;
// - at load: __coll_init creates the streams (one per device), the events and
//   the scratch pool (oneshot and twoshot need none); __coll_kernels_load
//   looks up each distinct kernel once.
// (Generated, then checked against coll.copy and coll.combine counts of the
// explicit level: Inputs/host_calls_gen.py.)
"""
body = []
for s, n in configs:
    p = f"{s.upper()}{n}"
    t = f"%t.{s}{n}.ll"
    ll = subprocess.run(f"coll-gen all-reduce --devices {n} --shape 1000 | python -m coll.tools.coll_build --emit=llvmir --strategy={s} --format=isa", shell=True, capture_output=True, text=True).stdout
    fns = {m.group(1): Counter(re.findall(r'call \w+ @(mgpu\w+)', m.group(0))) for m in re.finditer(r'define [^@]*@(\w+)\(.*?\n}\n', ll, re.S)}
    w, c, i, ld = fns["all_reduce"], fns["__coll_body_all_reduce"], fns["__coll_init"], fns["__coll_kernels_load"]
    ex = subprocess.run(f"coll-gen all-reduce --devices {n} --shape 1000 --peer-access | coll-opt --coll-lower-all-reduce=strategy={s}", shell=True, capture_output=True, text=True).stdout
    copies, combines = ex.count('"coll.copy"'), ex.count('"coll.combine"')
    kernels = len(set(re.findall(r'kernel_name = "?@?(combine_\w+)', ex))) or ld["mgpuModuleGetFunction"]
    assert copies == c["mgpuMemcpy"] and combines == c["mgpuLaunchKernel"], (s, n)
    assert dict(w) == {"mgpuStreamSynchronize": 1}, (s, n, w)
    assert c["mgpuModuleGetFunction"] == 0 and c["mgpuStreamSynchronize"] == 0, (s, n, c)
    body.append(f"""
// {s}, N = {n}: {copies} coll.copy, {combines} coll.combine.
// RUN: coll-gen all-reduce --devices {n} --shape 1000 | %PYTHON -m coll.tools.coll_build --emit=llvmir --strategy={s} --format=isa > {t}
// RUN: FileCheck %s --check-prefix={p}-CALL < {t}
// RUN: FileCheck %s --check-prefix={p}-SYNC < {t}
// RUN: FileCheck %s --check-prefix={p}-COPY < {t}
// RUN: FileCheck %s --check-prefix={p}-LAUNCH < {t}
// RUN: FileCheck %s --check-prefix={p}-BODY < {t}
// RUN: FileCheck %s --check-prefix={p}-INIT < {t}
// {p}-CALL-LABEL: define void @all_reduce(
// {p}-CALL: call i32 @__coll_call_begin(ptr @__coll_graph_0,
// {p}-CALL: call void @__coll_body_all_reduce(
// {p}-CALL: call i32 @__coll_capture_end(ptr @__coll_graph_0,
// {p}-CALL: call void @__coll_graph_launch(ptr @__coll_graph_0,
// {p}-CALL: call void @__coll_body_all_reduce(
// {p}-CALL: call void @__coll_call_end(ptr @__coll_graph_0,
// {p}-CALL-LABEL: define void @_mlir_ciface_all_reduce(
// {p}-SYNC-LABEL: define void @all_reduce(
// {p}-SYNC-NOT: @mgpu
// {p}-SYNC: call void @__coll_call_end(
// {p}-SYNC-NEXT: call void @mgpuStreamSynchronize(
// {p}-SYNC-NOT: @mgpu
// {p}-SYNC-LABEL: define void @_mlir_ciface_all_reduce(
// {p}-COPY-LABEL: define internal void @__coll_body_all_reduce(""" + (f"""
// {p}-COPY-COUNT-{copies}: call void @mgpuMemcpy(""" if copies else "") + f"""
// {p}-COPY-NOT: call void @mgpuMemcpy(
// {p}-COPY-LABEL: define internal void @__coll_init()
// {p}-LAUNCH-LABEL: define internal void @__coll_body_all_reduce(
// {p}-LAUNCH-COUNT-{combines}: call void @mgpuLaunchKernel(
// {p}-LAUNCH-NOT: call void @mgpuLaunchKernel(
// {p}-LAUNCH-LABEL: define internal void @__coll_init()
// {p}-BODY-LABEL: define internal void @__coll_body_all_reduce(
// {p}-BODY-NOT: call {{.*}}@mgpuModuleGetFunction(
// {p}-BODY-NOT: call {{.*}}@mgpuStreamSynchronize(
// {p}-BODY-NOT: call {{.*}}@mgpuStreamCreate(
// {p}-BODY-NOT: call {{.*}}@mgpuEventCreate(
// {p}-BODY-NOT: call {{.*}}@mgpuMemAlloc(
// {p}-BODY-LABEL: define internal void @__coll_init()
// {p}-INIT-LABEL: define internal void @__coll_body_all_reduce(
// {p}-INIT-COUNT-{c['mgpuEventRecord']}: call void @mgpuEventRecord(
// {p}-INIT-NOT: call void @mgpuEventRecord(
// {p}-INIT-LABEL: define internal void @__coll_init()
// {p}-INIT-COUNT-{i['mgpuStreamCreate']}: call ptr @mgpuStreamCreate()
// {p}-INIT-NOT: @mgpuStreamCreate(""" + (f"""
// {p}-INIT-COUNT-{i['mgpuEventCreate']}: call ptr @mgpuEventCreate()
// {p}-INIT-NOT: @mgpuEventCreate(""" if i['mgpuEventCreate'] else "") + """
""" + (f"""
// {p}-INIT: call ptr @mgpuMemAlloc(""" if i['mgpuMemAlloc'] else f"""
// {p}-INIT-NOT: @mgpuMemAlloc(""") + f"""
// {p}-INIT-LABEL: define internal void @__coll_fini()
// {p}-INIT: call void @__coll_graph_destroy(ptr @__coll_graph_0)
// {p}-INIT-LABEL: define internal void @__coll_kernels_load()
// {p}-INIT-COUNT-{ld['mgpuModuleGetFunction']}: call ptr @mgpuModuleGetFunction(
// {p}-INIT-NOT: call ptr @mgpuModuleGetFunction(
// {p}-INIT-LABEL: define internal void @__coll_kernels_unload()""")
    print(s, n, dict(w), dict(c), dict(i), dict(ld), file=sys.stderr)
print(head + "".join(body))
