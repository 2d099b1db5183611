"""Memory bounds checked before work starts: a program whose buffers
cannot fit in this machine's memory is refused with the estimate, instead
of being killed half way (or crashing on a failed allocation)."""
import os


class MemoryLimit(ValueError):
    pass


def available_bytes() -> int:
    """Memory this process can still use: MemAvailable (Linux), else the
    physical memory."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def gib(n: int) -> str:
    return f"{n / 2 ** 30:.2f} GiB" if n >= 2 ** 20 else f"{n} bytes"


def require(need: int, what: str) -> None:
    """Raises MemoryLimit when `need` bytes exceed what is available."""
    have = available_bytes()
    if need > have:
        raise MemoryLimit(f"{what} needs about {gib(need)}, more than the {gib(have)} of memory "
                          "available here; use smaller buffers or fewer devices")
