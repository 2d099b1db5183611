// A whole call of a coll GPU program as one CUDA graph (lowering/gpu/streams.py
// emits the calls; lowering/gpu/nvvm.py links this file into the program library).
//
// Upstream's runtime wrappers (libmlir_cuda_runtime.so, 22.1.8) have no graph
// calls, so the few driver functions are declared here, without CUDA headers,
// and bound at load to libcuda.so.1, which the wrappers' library needs anyway.
//
// Per host function, a state (4 words, GRAPH_WORDS in gpu_streams.py):
//   the first call with a set of buffers captures the function's work (on its
//   first stream, the other streams forked from and joined back into it) and
//   instantiates it; later calls with the same buffers (the key: every memref
//   argument's address and offset) replay it: one launch and one sync. New
//   buffers, a new capture. A capture the driver refuses makes that function
//   run its work directly from then on (reported once on stderr).
// COLL_CUDA_GRAPHS=0 in the environment, or coll_set_graphs(0), runs every
// call directly (the same work, enqueued op by op), for comparison.
// coll_set_timing(1) records events around each call's enqueued work on the
// first stream: coll_last_device_seconds() is the GPU time of the last call
// without the host's enqueueing before it or its sync after it.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef void *CUstream, *CUgraph, *CUgraphExec, *CUevent, *CUcontext;
CUresult cuStreamBeginCapture_v2(CUstream stream, int mode);
CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags);
CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream);
CUresult cuGraphExecDestroy(CUgraphExec exec);
CUresult cuGraphDestroy(CUgraph graph);
CUresult cuStreamGetCtx(CUstream stream, CUcontext *ctx);
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuCtxPopCurrent_v2(CUcontext *ctx);
CUresult cuEventCreate(CUevent *event, unsigned flags);
CUresult cuEventDestroy_v2(CUevent event);
CUresult cuEventRecord(CUevent event, CUstream stream);
CUresult cuEventSynchronize(CUevent event);
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end);
CUresult cuGetErrorString(CUresult error, const char **text);

#define HIDDEN __attribute__((visibility("hidden")))
#define EXPORT __attribute__((visibility("default")))
enum { REPLAY = 0, CAPTURE = 1, DIRECT = 2 };
enum { CAPTURE_MODE_THREAD_LOCAL = 1 };

typedef struct {
  CUgraphExec exec;
  int64_t state;  // 0: none yet, 1: exec ready for `key`, -1: capture refused
  int64_t nkey;
  int64_t *key;
} coll_graph;

static int graphs = -1;  // -1: read COLL_CUDA_GRAPHS at the first call
static int timing, timed;
static CUevent ev_start, ev_end;
static int64_t counts[4];  // captures, replays, direct calls, refused captures

static int ok(CUresult rc, const char *what) {
  if (rc == 0) return 1;
  const char *text = NULL;
  cuGetErrorString(rc, &text);
  fprintf(stderr, "coll: '%s' failed with '%s'\n", what, text ? text : "unknown error");
  return 0;
}

// The library's context (the wrappers' one, the device's primary context),
// seen on its first stream: made current around every driver call here, the
// calls made outside a program call (unload, timing queries) included.
static CUcontext lib_ctx;

static void push(CUstream s) {
  if (!lib_ctx) ok(cuStreamGetCtx(s, &lib_ctx), "cuStreamGetCtx");
  if (lib_ctx) ok(cuCtxPushCurrent_v2(lib_ctx), "cuCtxPushCurrent");
}

static void pop(void) {
  CUcontext ctx;
  if (lib_ctx) cuCtxPopCurrent_v2(&ctx);
}

static void push_lib(void) {
  if (lib_ctx) cuCtxPushCurrent_v2(lib_ctx);
}

HIDDEN int32_t __coll_call_begin(coll_graph *g, const int64_t *key, int64_t nkey, CUstream s0) {
  if (graphs < 0) {
    const char *env = getenv("COLL_CUDA_GRAPHS");
    graphs = !(env && strcmp(env, "0") == 0);
  }
  push(s0);
  if (timing) {
    if (!ev_start && ok(cuEventCreate(&ev_start, 0), "cuEventCreate")) ok(cuEventCreate(&ev_end, 0), "cuEventCreate");
    timed = ev_end && ok(cuEventRecord(ev_start, s0), "cuEventRecord");
  }
  int mode = DIRECT;
  if (graphs && g->state >= 0) {
    if (g->state == 1 && g->nkey == nkey && memcmp(g->key, key, (size_t)nkey * 8) == 0) {
      mode = REPLAY;
    } else {
      if (g->state == 1) ok(cuGraphExecDestroy(g->exec), "cuGraphExecDestroy");
      g->exec = NULL;
      g->state = 0;
      free(g->key);
      g->key = malloc((size_t)(nkey ? nkey : 1) * 8);
      memcpy(g->key, key, (size_t)nkey * 8);
      g->nkey = nkey;
      if (ok(cuStreamBeginCapture_v2(s0, CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture"))
        mode = CAPTURE;
      else
        g->state = -1, counts[3]++;
    }
  }
  counts[mode == REPLAY ? 1 : mode == CAPTURE ? 0 : 2] += mode != CAPTURE;
  pop();
  return mode;
}

// 1: the graph is ready to launch; 0: the capture failed (nothing ran: the
// caller runs the work directly, and this function does so from now on).
HIDDEN int32_t __coll_capture_end(coll_graph *g, CUstream s0) {
  CUgraph graph = NULL;
  push(s0);
  int good = ok(cuStreamEndCapture(s0, &graph), "cuStreamEndCapture") &&
             ok(cuGraphInstantiateWithFlags(&g->exec, graph, 0), "cuGraphInstantiate");
  if (graph) ok(cuGraphDestroy(graph), "cuGraphDestroy");
  pop();
  if (!good) {
    fprintf(stderr, "coll: CUDA graph capture refused; this function's work is enqueued op by op from now on\n");
    g->exec = NULL;
    g->state = -1;
    counts[3]++;
    counts[2]++;
    return 0;
  }
  g->state = 1;
  counts[0]++;
  return 1;
}

HIDDEN void __coll_graph_launch(coll_graph *g, CUstream s0) {
  ok(cuGraphLaunch(g->exec, s0), "cuGraphLaunch");
}

HIDDEN void __coll_call_end(coll_graph *g, CUstream s0) {
  (void)g;
  if (timed) {
    push(s0);
    timed = ok(cuEventRecord(ev_end, s0), "cuEventRecord");
    pop();
  }
}

// From the library's destructor (__coll_fini), before its streams go.
HIDDEN void __coll_graph_destroy(coll_graph *g) {
  push_lib();
  if (g->state == 1) ok(cuGraphExecDestroy(g->exec), "cuGraphExecDestroy");
  pop();
  free(g->key);
  memset(g, 0, sizeof *g);
}

__attribute__((destructor)) static void release_events(void) {
  push_lib();
  if (ev_start) cuEventDestroy_v2(ev_start);
  if (ev_end) cuEventDestroy_v2(ev_end);
  pop();
  ev_start = ev_end = NULL;
}

// -- controls, for lowering/gpu/driver.py (each program library has its own) ----
EXPORT void coll_set_graphs(int32_t on) { graphs = on != 0; }

EXPORT void coll_set_timing(int32_t on) { timing = on != 0; }

// Seconds between the events around the last call's work; -1 if not timed.
EXPORT double coll_last_device_seconds(void) {
  float ms = -1;
  if (!timed || !ev_end) return -1;
  push_lib();
  int good = ok(cuEventSynchronize(ev_end), "cuEventSynchronize") &&
             ok(cuEventElapsedTime(&ms, ev_start, ev_end), "cuEventElapsedTime");
  pop();
  return good ? ms / 1e3 : -1;
}

// captures, replays, direct calls, refused captures, since the library loaded.
EXPORT void coll_graph_counts(int64_t *out) { memcpy(out, counts, sizeof counts); }
