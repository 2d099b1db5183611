// A host-memory stand-in for libmlir_cuda_runtime.so, to run compiled coll
// GPU programs on a machine without a GPU (tests only).
//
// Work is not run when enqueued: every stream keeps a queue, and queued work
// runs only when the host synchronizes, in an order picked by a seeded
// policy among the streams whose head is ready. So a dependency missing from
// the streams and events of the program shows up as a wrong result for some
// seed. Streams and events may live across calls (a program makes them once,
// at load): once nothing is queued, the finished work is dropped and an
// event keeps only "recorded and complete". Kernels run through a callback (the test runs the kernel body on the
// CPU). Misuse of the wrapper API (a destroyed stream or event, an event
// waited on before it is recorded, a leak) is recorded as an error.
//
// CUDA graphs (the driver calls of lowering/gpu/graph.c): while a stream
// captures, work on it and on the streams that joined it (by waiting on an
// event recorded in the capture) is recorded, not queued; ending the capture
// checks that every such stream was joined back into the origin; a launch
// queues the recorded ops again on the launch stream and on streams of the
// instantiated graph, with the same dependencies. Work on a stream outside
// the capture while one runs, a sync inside it, or a wait on an event
// recorded outside it is recorded as an error.
//
// COLL_EMU_REFUSE_CAPTURE set: every capture ends with an error, its work
// dropped (as a driver that invalidated it), to test the fallback.
//
// Fault injection for the device-run dry run (tests/unit/test_gpu_run.py):
// COLL_EMU_INJECT=fault:TEXT, hang:TEXT or wrong:TEXT acts while the
// environment's COLL_CURRENT_PROGRAM (set by bench/gpu_run.py) contains TEXT:
// a kernel faults (sticky: syncs report it, the emulated driver's
// cuCtxSynchronize fails), a kernel never ends, or copies flip a bit of
// their last byte.
//
// Built with -DEMULATE_DRIVER, the file is instead a host-memory libcuda.so.1
// (the few driver calls lowering/gpu/driver.py makes), so that the Python
// runtime can run end to end too.
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef EMULATE_DRIVER

#define MAX_OPS 65536
#define MAX_OBJS 65536

enum { OP_COPY, OP_KERNEL, OP_RECORD, OP_WAIT, OP_FREE };

typedef struct {
  int kind, stream, done;
  int prev;             // in a capture: the previous op of its stream (-1)
  void *dst, *src;
  size_t bytes;
  int record;           // OP_WAIT: the record op it waits for; OP_RECORD: event
  const char *kernel;
  int64_t grid[3], block[3];
  int64_t *params;
  int64_t nparams;
} Op;

typedef void (*launch_fn)(const char *name, const int64_t *grid, const int64_t *block,
                          const int64_t *params, int64_t nparams);

static Op ops[MAX_OPS];
static int nops;
static int stream_alive[MAX_OBJS], nstreams;
static int event_alive[MAX_OBJS], event_last_record[MAX_OBJS], nevents;
static void *allocs[MAX_OBJS];
static size_t alloc_bytes[MAX_OBJS];
static int alloc_freed[MAX_OBJS], nallocs;
static char error[512];
static uint64_t rng = 1;
static launch_fn on_launch;
static int64_t counts[16];  // per API: see mgpuEmuCount

enum { C_STREAM, C_EVENT, C_COPY, C_KERNEL, C_ALLOC, C_FREE, C_WAIT_EVENT, C_SYNC, C_RECORD,
       C_CAPTURE, C_INSTANTIATE, C_GRAPH_LAUNCH, C_TIMING };

// -- graphs ------------------------------------------------------------------------
#define MAX_GRAPHS 1024
#define MAX_LOCAL 256
typedef struct {
  Op *ops;
  int nops, nlocal, alive;
} Graph;
typedef struct {
  Graph g;                 // a copy: the graph may be destroyed once instantiated
  int alive;
  int streams[MAX_LOCAL];  // local stream l >= 1 -> an emulator stream of its own
} Exec;
static Graph graphs[MAX_GRAPHS];
static Exec execs[MAX_GRAPHS];
static int ngraphs, nexecs;
static int cap_origin;              // the capturing stream (0: none)
static int cap_local[MAX_OBJS];     // stream -> local id + 1 while in the capture
static int cap_streams[MAX_LOCAL], cap_nlocal;
static int cap_last[MAX_LOCAL];     // last op of each local stream
static Op *cap_ops;
static int cap_nops, cap_size;
static int event_cap_record[MAX_OBJS];  // event -> its record in the capture (-1)
static double event_time[MAX_OBJS];     // when the event's last record ran
static int stream_internal[MAX_OBJS];   // streams of instantiated graphs
static int faulted, hung;
static char fault_msg[256];

static void fail(const char *msg, long a) {
  if (!error[0]) snprintf(error, sizeof error, msg, a);
}

// Handles are small integers stored in pointers (0 is never a handle).
static int handle(void *p) { return (int)(intptr_t)p; }
static void *as_ptr(int h) { return (void *)(intptr_t)h; }

static int check_stream(void *s) {
  int h = handle(s);
  if (h <= 0 || h > nstreams || !stream_alive[h]) {
    fail("use of a destroyed or unknown stream %ld", h);
    return 0;
  }
  return h;
}

static int check_event(void *e) {
  int h = handle(e);
  if (h <= 0 || h > nevents || !event_alive[h]) {
    fail("use of a destroyed or unknown event %ld", h);
    return 0;
  }
  return h;
}

static Op *cap_append(int kind, int stream) {
  if (cap_nops == cap_size) {
    cap_size = cap_size ? 2 * cap_size : 256;
    cap_ops = realloc(cap_ops, sizeof(Op) * (size_t)cap_size);
  }
  int local = cap_local[stream] - 1;
  Op *op = &cap_ops[cap_nops];
  memset(op, 0, sizeof *op);
  op->kind = kind;
  op->stream = local;
  op->prev = cap_last[local];
  cap_last[local] = cap_nops++;
  return op;
}

static Op scratch_op;  // where misused calls write, so that callers need no checks

static Op *push(int kind, int stream) {
  if (cap_origin) {
    if (cap_local[stream]) return cap_append(kind, stream);
    fail("stream %ld enqueued work outside the running capture (it never waited on an event "
         "recorded in the capture)", stream);
    return &scratch_op;
  }
  if (nops >= MAX_OPS) { fail("too many queued ops (%ld)", nops); return &ops[0]; }
  Op *op = &ops[nops++];
  memset(op, 0, sizeof *op);
  op->kind = kind;
  op->stream = stream;
  return op;
}

// -- the scheduler -------------------------------------------------------------
static int head_of(int s) {
  for (int i = 0; i < nops; ++i)
    if (!ops[i].done && ops[i].stream == s) return i;
  return -1;
}

static int ready(int i) {
  return ops[i].kind != OP_WAIT || ops[i].record < 0 || ops[ops[i].record].done;
}

#define RECORD_DONE (-2)  // event_last_record: recorded, and that work is done

// Nothing queued: drop the finished ops, so that programs whose streams and
// events outlive a call do not fill the table over many calls.
static int pending(int stream);
static void drop_finished(void) {
  if (pending(0)) return;
  for (int i = 0; i < nops; ++i) free(ops[i].params);
  for (int e = 1; e <= nevents; ++e)
    if (event_last_record[e] >= 0) event_last_record[e] = RECORD_DONE;
  nops = 0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// COLL_EMU_INJECT=what:TEXT[,what:TEXT...], each active while
// COLL_CURRENT_PROGRAM contains its TEXT.
static int injected(const char *what) {
  const char *spec = getenv("COLL_EMU_INJECT"), *prog = getenv("COLL_CURRENT_PROGRAM");
  if (!spec || !prog) return 0;
  size_t n = strlen(what);
  char item[512];
  while (*spec) {
    size_t len = strcspn(spec, ",");
    snprintf(item, sizeof item, "%.*s", (int)len, spec);
    if (strncmp(item, what, n) == 0 && item[n] == ':' && strstr(prog, item + n + 1)) return 1;
    spec += len + (spec[len] == ',');
  }
  return 0;
}

static void execute(Op *op) {
  switch (op->kind) {
  case OP_COPY:
    if (!faulted) memmove(op->dst, op->src, op->bytes);
    // the top byte of the last element: its sign and exponent, for any type
    if (op->bytes && injected("wrong")) ((unsigned char *)op->dst)[op->bytes - 1] ^= 0x40;
    break;
  case OP_KERNEL:
    if (injected("hang")) {
      hung = 1;
      fprintf(stderr, "emulator: kernel %s never ends (COLL_EMU_INJECT)\n", op->kernel);
      for (;;) sleep(60);
    }
    if (!faulted && injected("fault")) {
      faulted = 1;
      snprintf(fault_msg, sizeof fault_msg, "kernel %s: an illegal memory access was encountered", op->kernel);
    }
    if (faulted) { /* a faulted context runs nothing more */ }
    else if (on_launch) on_launch(op->kernel, op->grid, op->block, op->params, op->nparams);
    else fail("kernel launched but no launch callback is set (%ld)", 0);
    free(op->params);
    op->params = NULL;
    break;
  case OP_RECORD:
    if (op->record > 0 && op->record < MAX_OBJS) event_time[op->record] = now();
    break;
  case OP_FREE: {
    // Poison instead of freeing: a later read sees garbage, not a crash.
    for (int a = 0; a < nallocs; ++a)
      if (allocs[a] == op->dst) memset(allocs[a], 0xFF, alloc_bytes[a]);
    break;
  }
  default: break;
  }
  op->done = 1;
}

static uint64_t next_random(void) {
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return rng;
}

// Runs one ready head (policy: seed 0 = oldest op first, else random).
static int step(void) {
  int cand[MAX_OBJS / 4], n = 0;
  for (int s = 1; s <= nstreams && n < MAX_OBJS / 4; ++s) {
    int i = head_of(s);
    if (i >= 0 && ready(i)) cand[n++] = i;
  }
  if (!n) return 0;
  int pick = cand[0];
  if (rng != 0) pick = cand[next_random() % n];
  else
    for (int k = 1; k < n; ++k)
      if (cand[k] < pick) pick = cand[k];
  execute(&ops[pick]);
  return 1;
}

static int pending(int stream) {  // stream 0: any stream
  for (int i = 0; i < nops; ++i)
    if (!ops[i].done && (stream == 0 || ops[i].stream == stream)) return 1;
  return 0;
}

static void run_until_stream_done(int s) {
  while (pending(s))
    if (!step()) { fail("deadlock: stream %ld waits for work never recorded", s); return; }
}

static void run_until_op_done(int i) {
  while (!ops[i].done)
    if (!step()) { fail("deadlock waiting for op %ld", i); return; }
}

// -- the upstream wrapper API ------------------------------------------------------
void *mgpuModuleLoad(void *data, size_t size) { (void)data; (void)size; return as_ptr(1); }
void *mgpuModuleLoadJIT(void *data, int opt) { (void)data; (void)opt; return as_ptr(1); }
void mgpuModuleUnload(void *module) { (void)module; }
void *mgpuModuleGetFunction(void *module, const char *name) { (void)module; return strdup(name); }
void mgpuSetDefaultDevice(int32_t device) { (void)device; }

void *mgpuStreamCreate(void) {
  if (nstreams + 1 >= MAX_OBJS) { fail("too many streams (%ld)", nstreams); return as_ptr(1); }
  stream_alive[++nstreams] = 1;
  counts[C_STREAM]++;
  return as_ptr(nstreams);
}

void mgpuStreamSynchronize(void *stream) {
  int s = check_stream(stream);
  counts[C_SYNC]++;
  if (s && cap_origin && cap_local[s]) {
    fail("stream %ld synchronized inside a capture", s);
    return;
  }
  if (s) run_until_stream_done(s);
  if (!error[0]) drop_finished();
  if (faulted)  // as the upstream wrappers report a failed call
    fprintf(stderr, "'cuStreamSynchronize(stream)' failed with '%s'\n", fault_msg);
}

// Between program calls nothing is alive: start the tables afresh, and
// really free what was freed (poisoned until now), so that long runs fit.
static void compact(void) {
  for (int g = 0; g < ngraphs; ++g) if (graphs[g].alive) return;
  for (int x = 0; x < nexecs; ++x) if (execs[x].alive) return;
  ngraphs = nexecs = 0;
  for (int s = 1; s <= nstreams; ++s) if (stream_alive[s]) return;
  for (int e = 1; e <= nevents; ++e) if (event_alive[e]) return;
  if (pending(0)) return;
  for (int i = 0; i < nops; ++i) free(ops[i].params);
  nops = nstreams = nevents = 0;
  int kept = 0;
  for (int a = 0; a < nallocs; ++a) {
    if (alloc_freed[a]) { free(allocs[a]); continue; }
    allocs[kept] = allocs[a];
    alloc_bytes[kept] = alloc_bytes[a];
    alloc_freed[kept++] = 0;
  }
  nallocs = kept;
}

void mgpuStreamDestroy(void *stream) {
  int s = check_stream(stream);
  if (!s) return;
  if (pending(s)) fail("stream %ld destroyed with queued work", s);
  stream_alive[s] = 0;
  if (!error[0]) compact();
}

void *mgpuEventCreate(void) {
  if (nevents + 1 >= MAX_OBJS) { fail("too many events (%ld)", nevents); return as_ptr(1); }
  event_alive[++nevents] = 1;
  event_last_record[nevents] = -1;
  counts[C_EVENT]++;
  return as_ptr(nevents);
}

void mgpuEventDestroy(void *event) {
  int e = check_event(event);
  if (e) event_alive[e] = 0;  // CUDA releases it once its record completes
}

static void record(int e, int s) {
  Op *op = push(OP_RECORD, s);
  op->record = e;
  if (cap_origin && cap_local[s]) event_cap_record[e] = (int)(op - cap_ops);
  else if (op != &scratch_op) event_last_record[e] = (int)(op - ops);
}

void mgpuEventRecord(void *event, void *stream) {
  int e = check_event(event), s = check_stream(stream);
  if (!e || !s) return;
  record(e, s);
  counts[C_RECORD]++;
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  int s = check_stream(stream), e = check_event(event);
  if (!e || !s) return;
  if (cap_origin && event_cap_record[e] >= 0) {  // joins the capture, or waits inside it
    if (!cap_local[s]) {
      if (cap_nlocal >= MAX_LOCAL) { fail("too many streams in one capture (%ld)", cap_nlocal); return; }
      cap_streams[cap_nlocal] = s;
      cap_last[cap_nlocal] = -1;
      cap_local[s] = ++cap_nlocal;
    }
    cap_append(OP_WAIT, s)->record = event_cap_record[e];
    counts[C_WAIT_EVENT]++;
    return;
  }
  if (cap_origin && cap_local[s]) {
    fail("a capturing stream waits on event %ld recorded outside the capture", e);
    return;
  }
  if (event_last_record[e] == -1) fail("stream waits on event %ld that was never recorded", e);
  Op *op = push(OP_WAIT, s);
  op->record = event_last_record[e] >= 0 ? event_last_record[e] : -1;
  counts[C_WAIT_EVENT]++;
}

void mgpuEventSynchronize(void *event) {
  int e = check_event(event);
  if (e && event_last_record[e] >= 0) run_until_op_done(event_last_record[e]);
}

void *mgpuMemAlloc(uint64_t bytes, void *stream, int8_t host_shared) {
  (void)host_shared;
  check_stream(stream);
  if (nallocs >= MAX_OBJS) { fail("too many allocations (%ld)", nallocs); return NULL; }
  size_t rounded = (bytes + 255) / 256 * 256;
  void *p = aligned_alloc(256, rounded ? rounded : 256);
  memset(p, 0xEE, rounded);
  allocs[nallocs] = p;
  alloc_bytes[nallocs] = rounded;
  alloc_freed[nallocs++] = 0;
  counts[C_ALLOC]++;
  return p;
}

void mgpuMemFree(void *ptr, void *stream) {
  int s = check_stream(stream);
  counts[C_FREE]++;
  for (int a = 0; a < nallocs; ++a)
    if (allocs[a] == ptr) {
      if (alloc_freed[a]) fail("double free of allocation %ld", a);
      alloc_freed[a] = 1;
      if (s) push(OP_FREE, s)->dst = ptr;
      return;
    }
  fail("free of a pointer that was not allocated (%ld)", 0);
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  int s = check_stream(stream);
  if (!s) return;
  Op *op = push(OP_COPY, s);
  op->dst = dst;
  op->src = src;
  op->bytes = bytes;
  counts[C_COPY]++;
}

void mgpuLaunchKernel(void *function, intptr_t gx, intptr_t gy, intptr_t gz, intptr_t bx,
                      intptr_t by, intptr_t bz, int32_t smem, void *stream, void **params,
                      void **extra, size_t nparams) {
  (void)smem; (void)extra;
  int s = check_stream(stream);
  if (!s) return;
  Op *op = push(OP_KERNEL, s);
  op->kernel = (const char *)function;
  op->grid[0] = gx; op->grid[1] = gy; op->grid[2] = gz;
  op->block[0] = bx; op->block[1] = by; op->block[2] = bz;
  // The argument struct lives on the caller's stack: copy it now. Every
  // kernel argument is 8 bytes (pointers, i64 and index).
  op->params = malloc(sizeof(int64_t) * (nparams ? nparams : 1));
  for (size_t i = 0; i < nparams; ++i) memcpy(&op->params[i], params[i], 8);
  op->nparams = (int64_t)nparams;
  counts[C_KERNEL]++;
}

// -- test controls --------------------------------------------------------------
static void free_graph(Graph *g) {
  for (int i = 0; i < g->nops; ++i) free(g->ops[i].params);
  free(g->ops);
  g->ops = NULL;
  g->nops = g->alive = 0;
}

static void end_capture_state(void) {
  for (int l = 0; l < cap_nlocal; ++l) cap_local[cap_streams[l]] = 0;
  cap_nlocal = 0;
  cap_origin = 0;
  for (int e = 0; e < MAX_OBJS; ++e) event_cap_record[e] = -1;
}

__attribute__((constructor)) static void init_tables(void) { end_capture_state(); }

void mgpuEmuReset(uint64_t seed, launch_fn fn) {
  for (int a = 0; a < nallocs; ++a) free(allocs[a]);
  for (int i = 0; i < nops; ++i) free(ops[i].params);
  for (int g = 0; g < ngraphs; ++g) if (graphs[g].alive) free_graph(&graphs[g]);
  for (int x = 0; x < nexecs; ++x) if (execs[x].alive) free_graph(&execs[x].g);
  for (int i = 0; i < cap_nops; ++i) free(cap_ops[i].params);
  cap_nops = 0;
  end_capture_state();
  memset(stream_internal, 0, sizeof stream_internal);
  ngraphs = nexecs = faulted = hung = 0;
  nops = nstreams = nevents = nallocs = 0;
  error[0] = 0;
  memset(counts, 0, sizeof counts);
  rng = seed;
  on_launch = fn;
}

const char *mgpuEmuError(void) {
  if (error[0]) return error;
  if (cap_origin) { fail("stream %ld still captures", cap_origin); return error; }
  for (int g = 0; g < ngraphs; ++g)
    if (graphs[g].alive) { fail("graph %ld was never destroyed", g + 1); return error; }
  for (int x = 0; x < nexecs; ++x)
    if (execs[x].alive) { fail("graph exec %ld was never destroyed", x + 1); return error; }
  for (int s = 1; s <= nstreams; ++s)
    if (stream_alive[s]) { fail("stream %ld was never destroyed", s); return error; }
  for (int e = 1; e <= nevents; ++e)
    if (event_alive[e]) { fail("event %ld was never destroyed", e); return error; }
  for (int a = 0; a < nallocs; ++a)
    if (!alloc_freed[a]) { fail("allocation %ld was never freed", a); return error; }
  if (pending(0)) fail("work still queued after the call (%ld)", 0);
  return error;
}

// streams, events, copies, kernels, allocs, frees, stream waits, syncs, records,
// captures, instantiations, graph launches, timing calls (driver API events)
int64_t mgpuEmuCount(int what) { return what >= 0 && what < 16 ? counts[what] : -1; }

int mgpuEmuFaulted(void) { return faulted; }

// -- the driver calls of lowering/gpu/graph.c ---------------------------------------
int cuGetErrorString(int rc, const char **msg) {
  static char text[64];
  snprintf(text, sizeof text, rc == 700 ? "an illegal memory access was encountered" : "emulated error %d", rc);
  *msg = text;
  return 0;
}
int cuStreamGetCtx(void *stream, void **ctx) { (void)stream; *ctx = (void *)1; return 0; }
int cuCtxPushCurrent_v2(void *ctx) { (void)ctx; return 0; }
int cuCtxPopCurrent_v2(void **ctx) { if (ctx) *ctx = (void *)1; return 0; }

int cuStreamBeginCapture_v2(void *stream, int mode) {
  (void)mode;
  int s = check_stream(stream);
  if (!s) return 400;
  if (cap_origin) { fail("capture begun on stream %ld while another runs", s); return 900; }
  cap_origin = s;
  cap_streams[0] = s;
  cap_last[0] = -1;
  cap_local[s] = 1;
  cap_nlocal = 1;
  cap_nops = 0;
  counts[C_CAPTURE]++;
  return 0;
}

int cuStreamEndCapture(void *stream, void **graph) {
  int s = check_stream(stream);
  *graph = NULL;
  if (!s || s != cap_origin) { fail("capture ended on stream %ld, which does not capture", s); return 901; }
  if (getenv("COLL_EMU_REFUSE_CAPTURE")) {  // as a driver that invalidated the capture
    for (int i = 0; i < cap_nops; ++i) free(cap_ops[i].params);
    cap_nops = 0;
    end_capture_state();
    return 901;
  }
  // Every stream in the capture must be joined into the origin's last op.
  char *seen = calloc((size_t)(cap_nops ? cap_nops : 1), 1);
  int stack_n = 0, *stack = malloc(sizeof(int) * (size_t)(2 * cap_nops + 1));
  if (cap_last[0] >= 0) stack[stack_n++] = cap_last[0];
  while (stack_n) {
    int i = stack[--stack_n];
    if (i < 0 || seen[i]) continue;
    seen[i] = 1;
    stack[stack_n++] = cap_ops[i].prev;
    if (cap_ops[i].kind == OP_WAIT) stack[stack_n++] = cap_ops[i].record;
  }
  int rc = 0;
  for (int l = 1; l < cap_nlocal; ++l)
    if (cap_last[l] >= 0 && !seen[cap_last[l]]) {
      fail("stream %ld was not joined into the origin before the capture ended", cap_streams[l]);
      rc = 904;
    }
  free(seen);
  free(stack);
  if (ngraphs >= MAX_GRAPHS) { fail("too many graphs (%ld)", ngraphs); rc = 2; }
  if (rc) {
    for (int i = 0; i < cap_nops; ++i) free(cap_ops[i].params);
    cap_nops = 0;
    end_capture_state();
    return rc;
  }
  Graph *g = &graphs[ngraphs++];
  g->ops = malloc(sizeof(Op) * (size_t)(cap_nops ? cap_nops : 1));
  memcpy(g->ops, cap_ops, sizeof(Op) * (size_t)cap_nops);
  g->nops = cap_nops;
  g->nlocal = cap_nlocal;
  g->alive = 1;
  cap_nops = 0;
  end_capture_state();
  *graph = as_ptr(ngraphs);
  return 0;
}

static Graph *graph_of(void *p) {
  int h = handle(p);
  if (h <= 0 || h > ngraphs || !graphs[h - 1].alive) { fail("use of a destroyed or unknown graph %ld", h); return NULL; }
  return &graphs[h - 1];
}

static Exec *exec_of(void *p) {
  int h = handle(p);
  if (h <= 0 || h > nexecs || !execs[h - 1].alive) { fail("use of a destroyed or unknown graph exec %ld", h); return NULL; }
  return &execs[h - 1];
}

int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
  (void)flags;
  Graph *g = graph_of(graph);
  *exec = NULL;
  if (!g) return 400;
  if (nexecs >= MAX_GRAPHS) { fail("too many graph execs (%ld)", nexecs); return 2; }
  Exec *x = &execs[nexecs++];
  memset(x, 0, sizeof *x);
  x->g = *g;
  x->g.ops = malloc(sizeof(Op) * (size_t)(g->nops ? g->nops : 1));
  memcpy(x->g.ops, g->ops, sizeof(Op) * (size_t)g->nops);
  for (int i = 0; i < g->nops; ++i)
    if (g->ops[i].kind == OP_KERNEL) {
      x->g.ops[i].params = malloc(sizeof(int64_t) * (size_t)(g->ops[i].nparams ? g->ops[i].nparams : 1));
      memcpy(x->g.ops[i].params, g->ops[i].params, sizeof(int64_t) * (size_t)g->ops[i].nparams);
    }
  x->alive = 1;
  for (int l = 1; l < g->nlocal; ++l) {  // the graph's own streams (not counted as created)
    if (nstreams + 1 >= MAX_OBJS) { fail("too many streams (%ld)", nstreams); return 2; }
    stream_alive[++nstreams] = 1;
    stream_internal[nstreams] = 1;
    x->streams[l] = nstreams;
  }
  counts[C_INSTANTIATE]++;
  *exec = as_ptr(nexecs);
  return 0;
}

int cuGraphLaunch(void *exec, void *stream) {
  Exec *x = exec_of(exec);
  int s = check_stream(stream);
  if (!x || !s) return 400;
  if (cap_origin) { fail("graph launched while stream %ld captures", cap_origin); return 900; }
  Graph *g = &x->g;
  int base = nops;
  for (int i = 0; i < g->nops; ++i) {
    const Op *src = &g->ops[i];
    Op *op = push(src->kind, src->stream == 0 ? s : x->streams[src->stream]);
    int64_t *params = op->params;
    *op = *src;
    op->stream = src->stream == 0 ? s : x->streams[src->stream];
    op->done = 0;
    op->params = params;
    if (src->kind == OP_WAIT) op->record = base + src->record;
    if (src->kind == OP_KERNEL) {
      op->params = malloc(sizeof(int64_t) * (size_t)(src->nparams ? src->nparams : 1));
      memcpy(op->params, src->params, sizeof(int64_t) * (size_t)src->nparams);
    }
  }
  counts[C_GRAPH_LAUNCH]++;
  return 0;
}

int cuGraphExecDestroy(void *exec) {
  Exec *x = exec_of(exec);
  if (!x) return 400;
  Graph *g = &x->g;
  for (int l = 1; l < g->nlocal; ++l) {
    if (pending(x->streams[l])) fail("graph exec destroyed while its stream %ld has queued work", x->streams[l]);
    stream_alive[x->streams[l]] = 0;
  }
  free_graph(g);
  x->alive = 0;
  return 0;
}

int cuGraphDestroy(void *graph) {
  Graph *g = graph_of(graph);
  if (!g) return 400;
  free_graph(g);
  return 0;
}

// Timing events (gpu_graph.c's coll_set_timing): the emulator's events, with
// the host time at which their record ran.
int cuEventCreate(void **event, unsigned flags) {
  (void)flags;
  if (nevents + 1 >= MAX_OBJS) { fail("too many events (%ld)", nevents); return 2; }
  event_alive[++nevents] = 1;
  event_last_record[nevents] = -1;
  counts[C_TIMING]++;
  *event = as_ptr(nevents);
  return 0;
}
int cuEventDestroy_v2(void *event) { mgpuEventDestroy(event); return 0; }
int cuEventRecord(void *event, void *stream) {
  int e = check_event(event), s = check_stream(stream);
  if (!e || !s) return 400;
  record(e, s);
  counts[C_TIMING]++;
  return 0;
}
int cuEventSynchronize(void *event) {
  mgpuEventSynchronize(event);
  return faulted ? 700 : 0;
}
int cuEventElapsedTime(float *ms, void *start, void *end) {
  int a = check_event(start), b = check_event(end);
  if (!a || !b) return 400;
  if (event_last_record[a] == -1 || event_last_record[b] == -1) return 600;  // not ready
  *ms = (float)((event_time[b] - event_time[a]) * 1e3);
  return faulted ? 700 : 0;
}

// Ops still queued (after a call that returned: work it did not wait for).
int64_t mgpuEmuPending(void) {
  int64_t n = 0;
  for (int i = 0; i < nops; ++i) n += !ops[i].done;
  return n;
}

#else
// -- a host-memory CUDA driver (libcuda.so.1) for lowering/gpu/driver.py ------
int cuInit(unsigned flags) { (void)flags; return 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGet(int *dev, int ordinal) { *dev = ordinal; return ordinal == 0 ? 0 : 101; }
int cuDeviceGetName(char *name, int len, int dev) {
  (void)dev;
  snprintf(name, (size_t)len, "host emulator");
  return 0;
}
int cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = (void *)1; return 0; }
int cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }
// A fault in the emulated runtime (mgpuEmuFaulted, when loaded) is sticky here too.
int cuCtxSynchronize(void) {
  int (*faulted)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "mgpuEmuFaulted");
  return faulted && faulted() ? 700 : 0;
}
int cuGetErrorString(int rc, const char **msg) {
  *msg = rc == 700 ? "an illegal memory access was encountered" : "emulated error";
  return 0;
}
int cuMemAlloc_v2(uint64_t *ptr, size_t bytes) {
  *ptr = (uint64_t)(uintptr_t)aligned_alloc(256, (bytes + 255) / 256 * 256);
  return 0;
}
int cuMemFree_v2(uint64_t ptr) { free((void *)(uintptr_t)ptr); return 0; }
int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t n) {
  memcpy((void *)(uintptr_t)dst, src, n);
  return 0;
}
int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n) {
  memcpy(dst, (void *)(uintptr_t)src, n);
  return 0;
}
int cuMemsetD8_v2(uint64_t dst, unsigned char v, size_t n) {
  memset((void *)(uintptr_t)dst, v, n);
  return 0;
}
#endif
