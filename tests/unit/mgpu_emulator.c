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
// Built with -DEMULATE_DRIVER, the file is instead a host-memory libcuda.so.1
// (the few driver calls backends/gpu/driver.py makes), so that the Python
// runtime can run end to end too.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EMULATE_DRIVER

#define MAX_OPS 65536
#define MAX_OBJS 65536

enum { OP_COPY, OP_KERNEL, OP_RECORD, OP_WAIT, OP_FREE };

typedef struct {
  int kind, stream, done;
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

enum { C_STREAM, C_EVENT, C_COPY, C_KERNEL, C_ALLOC, C_FREE, C_WAIT_EVENT, C_SYNC, C_RECORD };

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

static Op *push(int kind, int stream) {
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

static void execute(Op *op) {
  switch (op->kind) {
  case OP_COPY: memmove(op->dst, op->src, op->bytes); break;
  case OP_KERNEL:
    if (on_launch) on_launch(op->kernel, op->grid, op->block, op->params, op->nparams);
    else fail("kernel launched but no launch callback is set (%ld)", 0);
    free(op->params);
    op->params = NULL;
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
  if (s) run_until_stream_done(s);
  if (!error[0]) drop_finished();
}

// Between program calls nothing is alive: start the tables afresh, and
// really free what was freed (poisoned until now), so that long runs fit.
static void compact(void) {
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

void mgpuEventRecord(void *event, void *stream) {
  int e = check_event(event), s = check_stream(stream);
  if (!e || !s) return;
  Op *op = push(OP_RECORD, s);
  op->record = e;
  event_last_record[e] = (int)(op - ops);
  counts[C_RECORD]++;
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  int s = check_stream(stream), e = check_event(event);
  if (!e || !s) return;
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
void mgpuEmuReset(uint64_t seed, launch_fn fn) {
  for (int a = 0; a < nallocs; ++a) free(allocs[a]);
  for (int i = 0; i < nops; ++i) free(ops[i].params);
  nops = nstreams = nevents = nallocs = 0;
  error[0] = 0;
  memset(counts, 0, sizeof counts);
  rng = seed;
  on_launch = fn;
}

const char *mgpuEmuError(void) {
  if (error[0]) return error;
  for (int s = 1; s <= nstreams; ++s)
    if (stream_alive[s]) { fail("stream %ld was never destroyed", s); return error; }
  for (int e = 1; e <= nevents; ++e)
    if (event_alive[e]) { fail("event %ld was never destroyed", e); return error; }
  for (int a = 0; a < nallocs; ++a)
    if (!alloc_freed[a]) { fail("allocation %ld was never freed", a); return error; }
  if (pending(0)) fail("work still queued after the call (%ld)", 0);
  return error;
}

// streams, events, copies, kernels, allocs, frees, stream waits, syncs, records
int64_t mgpuEmuCount(int what) { return what >= 0 && what < 16 ? counts[what] : -1; }

// Ops still queued (after a call that returned: work it did not wait for).
int64_t mgpuEmuPending(void) {
  int64_t n = 0;
  for (int i = 0; i < nops; ++i) n += !ops[i].done;
  return n;
}

#else
// -- a host-memory CUDA driver (libcuda.so.1) for backends/gpu/driver.py ------
int cuInit(unsigned flags) { (void)flags; return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGet(int *dev, int ordinal) { *dev = ordinal; return ordinal == 0 ? 0 : 101; }
int cuDeviceGetName(char *name, int len, int dev) {
  (void)dev;
  snprintf(name, (size_t)len, "host emulator");
  return 0;
}
int cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = (void *)1; return 0; }
int cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }
int cuCtxSynchronize(void) { return 0; }
int cuGetErrorString(int rc, const char **msg) { (void)rc; *msg = "emulated error"; return 0; }
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
