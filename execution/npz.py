"""Reading the arrays of an .npz file that nobody vouches for: each
member's .npy header is read and checked against what is expected (name,
shape, dtype, no objects or pickles, the member's real size) before any
data is expanded, so a lying header or a zip bomb costs nothing."""
import zipfile
import zlib
from collections.abc import Mapping
from typing import IO

import numpy as np
import numpy.typing as npt


class NpzError(ValueError):
    pass


def _header(f: IO[bytes], member: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f, max_header_size=10000)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f, max_header_size=10000)
        else:
            raise NpzError(f"'{member}' has .npy format version {version}; expected 1.0, 2.0 or 3.0")
    except NpzError:
        raise
    except (ValueError, OSError, EOFError, zlib.error, zipfile.BadZipFile, SyntaxError, TypeError) as e:
        raise NpzError(f"'{member}' is not a valid .npy array: {e}") from None
    return shape, fortran, dtype


def load(path: str, expected: Mapping[str, tuple[tuple[int, ...], npt.DTypeLike]],
         hint: str = "") -> dict[str, np.ndarray]:
    """{name: array} for the members `expected` = {name: (shape, dtype)}.
    Raises NpzError (or OSError for the file itself) naming the member."""
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise NpzError("not an .npz archive (np.savez writes one; a plain .npy or a pickle is not)") from None
    except (ValueError, EOFError, OSError) as e:
        if isinstance(e, OSError) and e.errno is not None:
            raise
        raise NpzError(f"not a readable .npz archive: {e}") from None
    names = sorted(expected)
    with zf:
        members = {i.filename[:-4] if i.filename.endswith(".npy") else i.filename: i for i in zf.infolist()}
        missing = [n for n in names if n not in members]
        if missing:
            listed = ', '.join(names) if len(names) < 5 else names[0] + '..' + names[-1]
            raise NpzError(f"missing array '{missing[0]}' (expected {listed})")
        extra = sorted(set(members) - set(names))
        if extra:
            raise NpzError(f"unexpected arrays {', '.join(extra)} "
                           f"({f'expected {names[0]}..{names[-1]}' if names else 'the program takes no inputs'})")
        out: dict[str, np.ndarray] = {}
        for name in names:
            want_shape, want_dtype = expected[name]
            info = members[name]
            try:
                with zf.open(info) as f:
                    shape, fortran, dtype = _header(f, name)
                    if dtype.hasobject:
                        raise NpzError(f"'{name}' holds Python objects (a pickle); "
                                       f"expected {want_dtype}{list(want_shape)}")
                    if tuple(shape) != tuple(want_shape) or dtype != want_dtype:
                        raise NpzError(f"'{name}' is {dtype}{list(shape)}, "
                                       f"expected {want_dtype}{list(want_shape)}{hint}")
                    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                    if info.file_size != f.tell() + nbytes:
                        raise NpzError(f"'{name}' has {info.file_size - f.tell()} bytes of data but its header "
                                       f"says {dtype}{list(shape)} ({nbytes} bytes)")
                    data = f.read(nbytes)
            except NpzError:
                raise
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError) as e:
                raise NpzError(f"'{name}' cannot be read (truncated or corrupt archive?): {e}") from None
            if len(data) != nbytes:
                raise NpzError(f"'{name}' is truncated: {len(data)} of {nbytes} bytes")
            a = np.frombuffer(data, dtype=dtype)
            a = a.reshape(shape, order="F" if fortran else "C")
            out[name] = np.asarray(a, order="C")  # a 0-d array stays 0-d (ascontiguousarray makes it 1-d)
    return out
