"""mpi-exe: a program for the user's own `mpirun`, its contract in one place.

    mpirun -n N PROG [--in PREFIX] [--out PREFIX] [--repeat K]
    PROG --help | --layout            (no mpirun needed)

The contract (docs/running.md, "MPI"):
  - rank r reads exactly the slots `FileLayout.reads(r)` from PREFIX<r>.bin:
    raw, native byte order, row-major, concatenated in slot order, and the
    file holds exactly their bytes (a rank with nothing to read opens no
    file); without --in each of those slots holds rank + 1 in every element
    (i1: (rank + 1) & 1). Inputs the program writes in place are read too.
  - every rank reads its file, then all of them agree (one MPI_Allreduce)
    before anything runs: one missing, short, long or non-regular file, a
    .npy file, or an i1 byte other than 0 or 1 stops every rank with exit
    1, nothing run, nothing written. The same for an output path on any
    rank that is no file or cannot be written: its temporary file is made
    before the run.
  - every rank must be given the same --in, --out and --repeat (their
    hash is compared): else exit 2, nothing run; a usage error on some
    ranks only is said by each of them (by rank 0 when all have it).
  - `--repeat K`: K timed runs after the first, each after a barrier, every
    slot restored from a copy of the state as read before each of them, so
    the outputs are those of one run on the inputs as read, whatever K.
  - with --out, rank r writes the slots `FileLayout.writes(r)` to
    PREFIX<r>.bin (an empty file when it writes nothing; through a symbolic
    link to its target; an existing file keeps its mode): to the temporary
    file beside it; the ranks agree that every write succeeded, then each
    moves an existing output aside, then renames its new one into place,
    agreeing after each step; after a failure on any rank at any step,
    every rank puts back what was there and removes its temporary file:
    the outputs are all of this run or all as they were. A rank told to
    stop (SIGTERM, SIGINT, SIGHUP: what mpirun sends when another rank
    dies) removes its temporary file; a SIGKILL cannot be handled.
  - exit codes: 0 ran (and wrote); 1 nothing written: wrong rank count, a
    tag above MPI_TAG_UB, an input or output problem on any rank (each
    rank says its own, rank 0 how many failed); 2 a usage error (or
    ranks given different arguments).
  - an output the program never writes is not in the `out` lists (an
    in-place collective with nothing to do: one device, a broadcast's
    root): its value is that of the input file.

The note coll-build prints, `PROG --layout` and the tables the C main
reads are all made from one FileLayout.
"""
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from mlir import ir

from ...core.errors import PassError
from ...execution.signature import ArgSpec
from ...ir.kinds import ELEMENTS
from . import toolchain


class MpiProgram(Protocol):
    """What this module reads of a runtime.MpiProgram (which imports it)."""
    entry: str
    ranks: int
    rank_specs: list[ArgSpec]
    n_inputs: int
    rank_inputs: int
    max_tag: int
    mpi: toolchain.Mpi

    def rank_args(self, r: int) -> list[int]: ...

_C_TYPES = {"f16": "uint16_t", "bf16": "uint16_t", "f8E4M3FN": "uint8_t", "f8E5M2": "uint8_t", "f32": "float",
            "f64": "double", "i1": "uint8_t", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t"}


def _fill_value(elem: str) -> str:
    """C expression of the default input element, rank + 1, as `elem`'s bits."""
    e = ELEMENTS[elem]
    if elem in ("i1", "f16", "bf16"):
        return {"i1": "(rank + 1) & 1", "f16": "f16_of(rank + 1)", "bf16": "bf16_of(rank + 1)"}[elem]
    if not e.integer and e.bytes == 1:  # fp8: mantissa bits and bias from the table
        m, bias = -int(math.log2(e.eps)), 1 - int(math.log2(e.tiny))
        return f"fp8_of(rank + 1, {m}, {bias}, {int(math.log2(e.max_finite))})"
    return "rank + 1"

USAGE = ("usage: mpirun -n {ranks} {prog} [--in PREFIX] [--out PREFIX] [--repeat K]\n"
         "       {prog} --help | --layout\n"
         "  --in PREFIX   rank r reads its input slots from PREFIX<r>.bin (see --layout);\n"
         "                default: rank + 1 in every element\n"
         "  --out PREFIX  rank r writes its output slots to PREFIX<r>.bin, only when every rank succeeded\n"
         "  --repeat K    K timed runs after the first, each on the inputs as read (0 <= K <= 1000000000)\n"
         "exit status: 0 ran; 1 nothing was written (a rank's error says why); 2 a usage error\n"
         "  (every rank takes the same arguments)\n")


@dataclass(frozen=True)
class FileLayout:
    """What each rank's files hold. `slots`: [(shape, element)] of one
    rank's arguments; `args`: per rank, each slot's global-view argument
    (-1: a placeholder); arguments below `n_inputs` are the global view's
    inputs; slots from `rank_inputs` on are the ones the program writes."""
    entry: str
    ranks: int
    slots: tuple[tuple[tuple[int, ...], str], ...]  # (shape, element) per slot
    args: tuple[tuple[int, ...], ...]
    n_inputs: int
    rank_inputs: int
    max_tag: int = 0

    @classmethod
    def of(cls, prog: "MpiProgram") -> "FileLayout":
        """The layout of an MpiProgram (lowering/mpi/runtime.py)."""
        return cls(prog.entry, prog.ranks, tuple((tuple(s.shape), s.element) for s in prog.rank_specs),
                   tuple(tuple(prog.rank_args(r)) for r in range(prog.ranks)), prog.n_inputs, prog.rank_inputs,
                   prog.max_tag)

    def reads(self, r: int) -> list[int]:
        """Slots rank r reads: those holding an input of the global view
        (in place ones too)."""
        return [i for i, g in enumerate(self.args[r]) if 0 <= g < self.n_inputs]

    def writes(self, r: int) -> list[int]:
        """Slots rank r writes back: the written ones that hold an argument."""
        return [i for i, g in enumerate(self.args[r]) if i >= self.rank_inputs and g >= 0]

    def nbytes(self, i: int) -> int:
        shape, elem = self.slots[i]
        n = 1
        for d in shape:
            n *= d
        return n * ELEMENTS[elem].bytes

    def _list(self, r: int, which: list[int]) -> str:
        shown = [f"#{self.args[r][i]} {'x'.join(map(str, self.slots[i][0] + (self.slots[i][1],)))}"
                 for i in which]
        return f"[{', '.join(shown)}] ({sum(self.nbytes(i) for i in which)} bytes)"

    def note(self, shown: int = 8) -> list[str]:
        """The lines that say, per rank, what its files hold."""
        lines = [f"built for mpirun -n {self.ranks}: rank r reads the arguments listed under 'in' from "
                 "<--in PREFIX>r.bin and writes those under 'out' to <--out PREFIX>r.bin, raw (native byte "
                 "order, row-major), concatenated in the order listed, exactly that many bytes; #g is the "
                 "global view's argument g (an input the program writes in place is in both lists):"]
        for r in range(min(self.ranks, shown)):
            lines.append(f"  rank {r}: in {self._list(r, self.reads(r))} out {self._list(r, self.writes(r))}")
        if self.ranks > shown:
            lines.append(f"  ... ({self.ranks - shown} more ranks: run the program with --layout for all)")
        return lines


def _c_string(text: str) -> str:
    return "".join(f'"{line}\\n"\n' for line in text.replace("\\", "\\\\").replace('"', '\\"').splitlines())


def _table(rows: list[list[int]]) -> str:
    return "{" + ", ".join("{" + ", ".join(map(str, row)) + "}" for row in rows) + "}"


def main_source(lay: FileLayout) -> str:
    """The C `main` of the executable for FileLayout `lay` (see the module's
    docstring for what it does)."""
    k = len(lay.slots)
    kk = max(k, 1)  # (C has no empty arrays)
    dims = sorted({len(shape) for shape, _ in lay.slots})
    structs = "\n".join(
        "typedef struct { void *allocated, *aligned; int64_t offset"
        + (f", sizes[{d}], strides[{d}]" if d else "") + f"; }} memref{d};" for d in dims)
    params = ", ".join(f"memref{len(s)} *" for s, _ in lay.slots) or "void"
    reads = [[int(i in lay.reads(r)) for i in range(kk)] for r in range(lay.ranks)]
    writes = [[int(i in lay.writes(r)) for i in range(kk)] for r in range(lay.ranks)]
    bools = [int(i < k and lay.slots[i][1] == "i1") for i in range(kk)]
    reads_any = int(any(lay.reads(r) for r in range(lay.ranks)))
    setup, fill = [], []
    for i, (shape, elem) in enumerate(lay.slots):
        setup.append(f"  memref{len(shape)} m{i} = {{0}};")
        setup.append(f"  bytes[{i}] = {lay.nbytes(i)}LL;")
        setup.append(f"  buf[{i}] = m{i}.allocated = m{i}.aligned = calloc(1, bytes[{i}] ? bytes[{i}] : 1);")
        stride = 1
        for j in reversed(range(len(shape))):
            setup.append(f"  m{i}.sizes[{j}] = {shape[j]}; m{i}.strides[{j}] = {stride};")
            stride *= shape[j]
        value = _fill_value(elem)
        fill.append(f"    if (READS[rank][{i}]) for (int64_t e = 0; e < bytes[{i}] / {ELEMENTS[elem].bytes}; e++) "
                    f"(({_C_TYPES[elem]} *)buf[{i}])[e] = ({_C_TYPES[elem]})({value});")
    call = f"_mlir_ciface_{lay.entry}({', '.join(f'&m{i}' for i in range(k))})"
    layout_text = "\n".join(lay.note(shown=lay.ranks))
    return f"""/* Generated by coll-build --emit=mpi-exe for @{lay.entry} on {lay.ranks} ranks (lowering/mpi/exe.py). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
{structs}
int32_t coll_mpi_init(void);
int32_t coll_mpi_finalize(void);
int32_t coll_mpi_rank(void);
int32_t coll_mpi_size(void);
int32_t coll_mpi_barrier(void);
int32_t coll_mpi_tag_ub(void);
int32_t coll_mpi_count(int32_t flag);
int32_t coll_mpi_differ(int64_t value);
double coll_mpi_wtime(void);
void _mlir_ciface_{lay.entry}({params});
/* OpenBLAS (contractions: passes/blas_contractions.py), when linked: one
   thread per rank, as the mpi runtime sets it; weak, so null without it. */
void scipy_openblas_set_num_threads(int) __attribute__((weak));

#define K {kk}
static const unsigned char READS[{lay.ranks}][K] = {_table(reads)};
static const unsigned char WRITES[{lay.ranks}][K] = {_table(writes)};
static const unsigned char BOOL[K] = {{{", ".join(map(str, bools))}}};  /* i1 slots: bytes 0 or 1 */
#define READS_ANY {reads_any}
static const char USAGE[] =
{_c_string(USAGE.format(ranks=lay.ranks, prog="%s"))};
static const char LAYOUT[] =
{_c_string(layout_text)};

/* rank + 1 as f16 / bf16 / fp8 bits (exact for the small integers used). */
static uint16_t f16_of(int v) {{
  int e = 0;
  while ((v >> e) > 1) e++;
  return (uint16_t)(e > 15 ? 0x7c00 : ((e + 15) << 10) | (((v << 10) >> e) & 0x3ff));
}}
/* ... as fp8 bits (m mantissa bits, bias; exact up to 2^(m+1), truncated
   above, the largest finite value's binade `top` at most). */
static uint8_t fp8_of(int v, int m, int bias, int top) {{
  int e = 0;
  while ((v >> e) > 1) e++;
  if (e > top) e = top;
  return (uint8_t)(((e + bias) << m) | (((v << m) >> e) & ((1 << m) - 1)));
}}
static uint16_t bf16_of(int v) {{
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}}

/* Whether mpirun (or another launcher) started the process. */
static int launched(void) {{
  const char *names[] = {{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}};
  for (int i = 0; i < 3; i++)
    if (getenv(names[i])) return 1;
  return 0;
}}

/* A usage error: said (`who`: "" or "rank r: "), with the usage text, exit 2. */
static int usage(const char *prog, const char *who, const char *fmt, const char *arg) {{
  fprintf(stderr, "%s%s: error: ", who, prog);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\\n");
  fprintf(stderr, USAGE, prog, prog);
  return 2;
}}

/* FNV-1a of the arguments every rank must share (--in, --out, --repeat). */
static int64_t args_hash(const char *in, const char *out, long repeat) {{
  uint64_t h = 1469598103934665603ULL;
  const char *parts[2] = {{in ? in : "", out ? out : ""}};
  for (int p = 0; p < 2; p++) {{
    h = (h ^ (uint64_t)(parts[p] == (p ? out : in))) * 1099511628211ULL;  /* given or not */
    for (const char *c = parts[p]; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  }}
  h = (h ^ (uint64_t)repeat) * 1099511628211ULL;
  return (int64_t)(h >> 2);  /* non-negative: coll_mpi_differ negates it */
}}

/* The temporary output file while it exists: removed if the rank is told to stop. */
static char tmp_path[4300];
static volatile sig_atomic_t tmp_live = 0;
static void on_signal(int sig) {{
  if (tmp_live) unlink(tmp_path);
  signal(sig, SIG_DFL);
  raise(sig);
}}

/* Reads rank `rank`'s input slots from PREFIX<rank>.bin; 0, or 1 after
   saying what is wrong with the file. */
static int read_inputs(const char *prefix, int rank, void **buf, long long *bytes) {{
  char path[4096];
  long long want = 0;
  int any = 0;
  for (int i = 0; i < K; i++)
    if (READS[rank][i]) {{ want += bytes[i]; any = 1; }}
  if (!any) return 0;
  if (snprintf(path, sizeof path, "%s%d.bin", prefix, rank) >= (int)sizeof path) {{
    fprintf(stderr, "rank %d: error: the --in prefix is too long\\n", rank);
    return 1;
  }}
  struct stat st;
  if (stat(path, &st)) {{
    fprintf(stderr, "rank %d: error: cannot read %s: %s; expected %lld bytes of inputs (see --layout)\\n",
            rank, path, strerror(errno), want);
    return 1;
  }}
  if (!S_ISREG(st.st_mode)) {{
    fprintf(stderr, "rank %d: error: %s is not a regular file; expected %lld bytes of inputs (see --layout)\\n",
            rank, path, want);
    return 1;
  }}
  FILE *f = fopen(path, "rb");
  if (!f) {{
    fprintf(stderr, "rank %d: error: cannot open %s: %s\\n", rank, path, strerror(errno));
    return 1;
  }}
  unsigned char magic[6] = {{0}};
  size_t got = fread(magic, 1, 6, f);
  if (got == 6 && !memcmp(magic, "\\x93NUMPY", 6)) {{
    fprintf(stderr, "rank %d: error: %s is a .npy file (numpy.save); expected the raw bytes of the inputs "
            "(numpy.ndarray.tofile), %lld bytes (see --layout)\\n", rank, path, want);
    fclose(f);
    return 1;
  }}
  if ((long long)st.st_size != want) {{
    fprintf(stderr, "rank %d: error: %s holds %lld bytes; expected exactly %lld, rank %d's inputs raw and in "
            "order (a wrong element type or shape, or another rank's file?) (see --layout)\\n",
            rank, path, (long long)st.st_size, want, rank);
    fclose(f);
    return 1;
  }}
  rewind(f);
  long long at = 0;
  for (int i = 0; i < K; i++) {{
    if (!READS[rank][i]) continue;
    if (fread(buf[i], 1, bytes[i], f) != (size_t)bytes[i]) {{
      fprintf(stderr, "rank %d: error: reading %s failed: %s\\n", rank, path, strerror(errno));
      fclose(f);
      return 1;
    }}
    for (long long e = 0; BOOL[i] && e < bytes[i]; e++)
      if (((unsigned char *)buf[i])[e] > 1) {{
        fprintf(stderr, "rank %d: error: %s holds byte 0x%02x at offset %lld, in an i1 argument; expected 0 or 1 "
                "(numpy bool) (see --layout)\\n", rank, path, ((unsigned char *)buf[i])[e], at + e);
        fclose(f);
        return 1;
      }}
    at += bytes[i];
  }}
  fclose(f);
  return 0;
}}

/* Writes rank `rank`'s output slots to `fd` (the file `tmp`); 0, or 1 after saying why. */
static int write_outputs(int fd, const char *tmp, int rank, void **buf, long long *bytes) {{
  FILE *f = fdopen(fd, "wb");
  if (!f) {{
    fprintf(stderr, "rank %d: error: cannot write %s: %s\\n", rank, tmp, strerror(errno));
    close(fd);
    return 1;
  }}
  int bad = 0;
  for (int i = 0; i < K && !bad; i++)
    if (WRITES[rank][i] && fwrite(buf[i], 1, bytes[i], f) != (size_t)bytes[i]) bad = 1;
  if (fclose(f)) bad = 1;
  if (bad) fprintf(stderr, "rank %d: error: writing %s failed: %s\\n", rank, tmp, strerror(errno));
  return bad;
}}

/* Before the run: PREFIX<rank>.bin's path (a symbolic link's target, so
   that the link stays), its mode when it exists (kept), and its temporary
   file, created now so that an output nobody can write stops every rank
   before anything runs. 0, or 1 after saying why. */
static int prepare_output(const char *prefix, int rank, char *path, size_t size, int *fd, int *have_old) {{
  if (snprintf(path, size, "%s%d.bin", prefix, rank) >= (int)size) {{
    fprintf(stderr, "rank %d: error: the --out prefix is too long\\n", rank);
    return 1;
  }}
  struct stat st;
  char real[PATH_MAX];
  if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {{
    if (realpath(path, real)) {{
      if (strlen(real) < size) strcpy(path, real);
    }} else {{  /* a link to a file not made yet: its target, beside the link when relative */
      ssize_t n = readlink(path, real, sizeof real - 1);
      const char *slash = strrchr(path, '/');
      int dir = n <= 0 || real[0] == '/' || !slash ? 0 : (int)(slash - path) + 1;
      if (n > 0 && dir + n < (ssize_t)size) {{
        real[n] = 0;
        memmove(path + dir, real, (size_t)n + 1);
      }}
    }}
  }}
  *have_old = !stat(path, &st);
  if (*have_old && !S_ISREG(st.st_mode)) {{
    fprintf(stderr, "rank %d: error: %s exists and is not a regular file; expected a file path to write\\n",
            rank, path);
    return 1;
  }}
  snprintf(tmp_path, sizeof tmp_path, "%s.coll-tmp-%ld", path, (long)getpid());
  *fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL, 0666);
  if (*fd < 0) {{
    fprintf(stderr, "rank %d: error: cannot write %s: %s\\n", rank, tmp_path, strerror(errno));
    return 1;
  }}
  tmp_live = 1;
  if (*have_old) fchmod(*fd, st.st_mode & 07777);
  return 0;
}}

static int stop(int rank, int failed, const char *what) {{
  if (rank == 0)
    fprintf(stderr, "error: %d rank(s) %s\\n", failed, what);
  coll_mpi_finalize();
  return 1;
}}

int main(int argc, char **argv) {{
  const char *in = NULL, *out = NULL, *err = NULL, *err_arg = NULL;
  long repeat = 0;
  for (int a = 1; a < argc && !err; a++) {{
    if (!strcmp(argv[a], "--help")) {{ printf(USAGE, argv[0], argv[0]); return 0; }}
    if (!strcmp(argv[a], "--layout")) {{ fputs(LAYOUT, stdout); return 0; }}
    if (strcmp(argv[a], "--in") && strcmp(argv[a], "--out") && strcmp(argv[a], "--repeat")) {{
      err = "unknown argument '%s'", err_arg = argv[a];
      break;
    }}
    if (a + 1 >= argc) {{ err = "%s needs a value", err_arg = argv[a]; break; }}
    const char *v = argv[++a];
    if (!*v) {{ err = "%s needs a non-empty value", err_arg = argv[a - 1]; break; }}
    if (!strcmp(argv[a - 1], "--in")) in = v;
    else if (!strcmp(argv[a - 1], "--out")) out = v;
    else {{
      char *end;
      errno = 0;
      repeat = strtol(v, &end, 10);
      if (!*v || *end || errno || repeat < 0 || repeat > 1000000000L)
        err = "--repeat takes an integer from 0 to 1000000000, got '%s'", err_arg = v;
    }}
  }}
  if (!err && in && !READS_ANY)
    err = "--in %s: this program reads no input file (every rank's 'in' list is empty: see --layout)", err_arg = in;
  if (err && !launched()) return usage(argv[0], "", err, err_arg);  /* no MPI needed to say it */
  if (scipy_openblas_set_num_threads && !getenv("OPENBLAS_NUM_THREADS")) scipy_openblas_set_num_threads(1);
  coll_mpi_init();
  int rank = coll_mpi_rank(), size = coll_mpi_size();
  /* Told to stop (mpirun forwards SIGTERM when a rank dies): no temporary file stays. */
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  signal(SIGHUP, on_signal);
  if (size != {lay.ranks}) {{
    if (rank == 0)
      fprintf(stderr, "%s: error: built for {lay.ranks} ranks, started on %d; nothing was sent\\n", argv[0], size);
    coll_mpi_finalize();
    return 1;
  }}
  /* Usage errors: said by rank 0 when every rank has one (the same command
     line), else by each rank that has one; every rank exits 2. */
  int usage_bad = coll_mpi_count(err != NULL);
  if (usage_bad) {{
    char who[32];
    snprintf(who, sizeof who, usage_bad < size ? "rank %d: " : "", rank);
    if (err && (usage_bad < size || rank == 0)) usage(argv[0], who, err, err_arg);
    coll_mpi_finalize();
    return 2;
  }}
  if (coll_mpi_differ(args_hash(in, out, repeat))) {{
    if (rank == 0)
      fprintf(stderr, "%s: error: the ranks were given different arguments; expected the same --in, --out and "
              "--repeat on every rank (their prefixes are completed with the rank); nothing was run\\n", argv[0]);
    coll_mpi_finalize();
    return 2;
  }}
  if (coll_mpi_tag_ub() < {lay.max_tag}) {{
    if (rank == 0)
      fprintf(stderr, "%s: error: the program uses MPI tags up to {lay.max_tag}, above this MPI's MPI_TAG_UB %d; "
              "nothing was sent\\n", argv[0], coll_mpi_tag_ub());
    coll_mpi_finalize();
    return 1;
  }}
  void *buf[K] = {{0}};
  void *saved[K] = {{0}};
  long long bytes[K] = {{0}};
{chr(10).join(setup)}
  int bad = 0;
  for (int i = 0; i < {k}; i++)
    if (!buf[i]) bad = 1;
  if (bad) fprintf(stderr, "rank %d: error: out of memory for its buffers\\n", rank);
  else if (in) bad = read_inputs(in, rank, buf, bytes);
  else {{
{chr(10).join(fill)}
  }}
  /* Before each timed run every slot gets back the state as read. */
  for (int i = 0; i < {k} && repeat && !bad; i++) {{
    saved[i] = malloc(bytes[i] ? bytes[i] : 1);
    if (!saved[i]) {{
      fprintf(stderr, "rank %d: error: out of memory for the copy --repeat restores\\n", rank);
      bad = 1;
    }}
    else memcpy(saved[i], buf[i], bytes[i]);
  }}
  int failed = coll_mpi_count(bad);
  if (failed)
    return stop(rank, failed, "could not read their inputs (see above): nothing was run, no file was written");
  char path[4096], old[4400];
  int fd = -1, have_old = 0;
  bad = out && prepare_output(out, rank, path, sizeof path, &fd, &have_old);
  failed = coll_mpi_count(bad);
  if (failed) {{
    if (fd >= 0) {{ close(fd); unlink(tmp_path); tmp_live = 0; }}
    return stop(rank, failed, "could not write their outputs (see above): nothing was run, no file was written");
  }}
  {call};
  double worst = 0;
  for (long r = 0; r < repeat; r++) {{
    for (int i = 0; i < {k}; i++) memcpy(buf[i], saved[i], bytes[i]);
    coll_mpi_barrier();
    double t0 = coll_mpi_wtime();
    {call};
    double t = coll_mpi_wtime() - t0;
    if (t > worst) worst = t;
  }}
  if (repeat && rank == 0) printf("rank 0: slowest of %ld runs %.3f ms\\n", repeat, worst * 1e3);
  if (out) {{
    /* All or nothing: every rank writes its temporary file; then each moves
       an existing output aside, then puts its new one in place; after a
       failure on any rank at any step, every rank puts back what was there. */
    bad = write_outputs(fd, tmp_path, rank, buf, bytes);
    failed = coll_mpi_count(bad);
    if (failed) {{
      unlink(tmp_path);
      tmp_live = 0;
      return stop(rank, failed, "could not write their outputs (see above): no output file was written");
    }}
    snprintf(old, sizeof old, "%s.coll-old-%ld", path, (long)getpid());
    bad = have_old && rename(path, old) != 0;
    if (bad) fprintf(stderr, "rank %d: error: cannot replace %s: %s\\n", rank, path, strerror(errno));
    failed = coll_mpi_count(bad);
    if (failed) {{
      if (have_old && !bad) rename(old, path);
      unlink(tmp_path);
      tmp_live = 0;
      return stop(rank, failed, "could not replace their output files (see above): every output file is as it was");
    }}
    bad = rename(tmp_path, path) != 0;
    if (bad) fprintf(stderr, "rank %d: error: cannot rename %s to %s: %s\\n", rank, tmp_path, path, strerror(errno));
    failed = coll_mpi_count(bad);
    if (failed) {{
      unlink(bad ? tmp_path : path);
      if (have_old) rename(old, path);
      tmp_live = 0;
      return stop(rank, failed, "could not put their output files in place (see above): every output file is as "
                  "it was");
    }}
    tmp_live = 0;
    if (have_old) unlink(old);
  }}
  coll_mpi_finalize();
  return 0;
}}
"""


def build_executable(prog: "MpiProgram", module_op: ir.Operation, executable: str | Path, out_dir: Path) -> None:
    """Links `module_op` (the LLVM dialect of MpiProgram `prog`) with the
    main of its FileLayout into `executable`."""
    strided = [i for i, s in enumerate(prog.rank_specs) if s.layout is not None]
    if strided:  # the main allocates each slot as a dense buffer of its shape
        s = prog.rank_specs[strided[0]]
        assert s.layout is not None  # (strided: it has one)
        entry = ir.SymbolTable(module_op)[prog.entry]
        raise PassError(f"mpi-exe takes arguments with the identity layout; argument {strided[0]} of each rank is "
                        f"{s} with the static layout offset {s.layout[0]}, strides {list(s.layout[1])} (a window "
                        "of a larger buffer: coll-run --backend=mpi runs it)", entry.location)
    main = out_dir / "main.c"
    main.write_text(main_source(FileLayout.of(prog)))
    toolchain.build(module_op, executable, prog.mpi, executable_main=main)
