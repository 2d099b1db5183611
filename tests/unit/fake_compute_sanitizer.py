"""A stand-in for compute-sanitizer in the device-run dry run
(tests/unit/test_gpu_run.py): runs the application, passes its output on,
and reports like the real tool. FAKE_SANITIZER_FIND=TOOL:TEXT plants a
finding when the application starts a program (`@@begin ID`, gpu_run.py's
marker) whose id contains TEXT under that tool."""
import os
import subprocess
import sys

VALUED = {"--tool", "--error-exitcode", "--leak-check", "--print-limit", "--log-file"}


def main(argv):
    if argv[:1] == ["--version"]:
        print("NVIDIA (R) Compute Sanitizer\nVersion 2099.1.0 (fake, tests/unit/fake_compute_sanitizer.py)")
        return 0
    opts, i = {}, 0
    while i < len(argv) and argv[i].startswith("--"):
        if argv[i] in VALUED:
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            i += 1
    tool = opts.get("--tool", "memcheck")
    plant = os.environ.get("FAKE_SANITIZER_FIND", "")
    p = subprocess.Popen(argv[i:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    errors = 0
    print("========= COMPUTE-SANITIZER", flush=True)
    for line in p.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if line.startswith("@@begin ") and plant.startswith(tool + ":") and plant.split(":", 1)[1] in line:
            errors += 1
            print("========= Invalid __global__ read of size 4 bytes\n"
                  "=========     at combine_sum_f32_x2+0x1f0 (planted by the fake sanitizer)", flush=True)
    rc = p.wait()
    if tool == "racecheck":
        print(f"========= RACECHECK SUMMARY: {errors} hazards displayed ({errors} errors, 0 warnings)")
    else:
        print(f"========= ERROR SUMMARY: {errors} error{'s' if errors != 1 else ''}")
    return int(opts.get("--error-exitcode", 0)) if errors else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
