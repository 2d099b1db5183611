"""Token chains -> CUDA streams for coll-to-gpu (see lowering/gpu.py).

Upstream gpu-to-llvm lowers a chain of async tokens to one stream and
`gpu.wait async [a, b]` to a new stream that waits on events recorded after
`a` and `b`. `_Chains` keeps one chain per logical device and gives every
op the one async dependency upstream requires, waiting only for what its
chain does not already imply (vector clocks).
"""
from mlir.dialects import gpu


def _token_type():
    return gpu.AsyncTokenType.get()


class _Tok:
    """A gpu async token: the stream it lives on, and a vector clock of
    what is complete when it is (chain -> ops of that chain)."""
    __slots__ = ("value", "stream", "chain", "pos", "clock", "gen")

    def __init__(self, value, stream, chain, pos, clock, gen):
        self.value, self.stream, self.chain = value, stream, chain
        self.pos, self.clock, self.gen = pos, clock, gen


class _Stream:
    __slots__ = ("last",)

    def __init__(self):
        self.last = None


def _implies(clock, tok):
    return clock.get(tok.chain, 0) >= tok.pos


class _Chains:
    """One chain of async ops per logical device (see the module doc)."""

    def __init__(self):
        self.gen = 0          # bumped by every host sync: older tokens are done
        self.reset()

    def reset(self):
        self.head = {}        # chain -> _Tok
        self.count = {}       # chain -> ops issued on it
        self.streams = []     # streams created since the last sync

    def _new(self, value, stream, chain, clocks):
        pos = self.count.get(chain, 0) + 1
        self.count[chain] = pos
        clock = {}
        for c in clocks:
            for k, v in c.items():
                clock[k] = max(clock.get(k, 0), v)
        clock[chain] = pos
        tok = _Tok(value, stream, chain, pos, clock, self.gen)
        stream.last = tok
        self.head[chain] = tok
        return tok

    def needed(self, chain, deps):
        """The deps that `chain` must still wait for, minimal."""
        head = self.head.get(chain)
        known = head.clock if head else {}
        live = []
        for t in deps:
            if t.gen == self.gen and not _implies(known, t) and t not in live:
                live.append(t)
        return [t for t in live
                if not any(o is not t and _implies(o.clock, t) for o in live)]

    def issue(self, chain, deps, make):
        """Emits `make(dep_value) -> token value` on `chain` after `deps`."""
        head = self.head.get(chain)
        need = self.needed(chain, deps)
        if head is None or need:
            waits = ([head] if head else []) + need
            stream = _Stream()
            self.streams.append(stream)
            values = [t.value for t in waits]
            if len(values) == 1:
                # canonicalize folds `gpu.wait async [%t]` into %t, which
                # would put this chain on %t's stream; [%t, %t] keeps it own.
                values = values * 2
            value = gpu.WaitOp(_token_type(), values).result
            head = self._new(value, stream, chain, [t.clock for t in waits])
        value = make(head.value)
        return self._new(value, head.stream, chain, [head.clock])

    def join_all(self):
        """A token after everything issued so far (None if nothing is live)."""
        heads = [h for h in self.head.values() if h.gen == self.gen]
        if not heads:
            return None
        if len(heads) == 1:
            return heads[0]
        stream = _Stream()
        self.streams.append(stream)
        value = gpu.WaitOp(_token_type(), [t.value for t in heads]).result
        return self._new(value, stream, ("join", len(self.streams)), [t.clock for t in heads])

    def sync(self):
        """Host sync on every stream (gpu.wait destroys them): all done."""
        lasts = [s.last.value for s in self.streams if s.last is not None]
        if lasts:
            gpu.WaitOp(None, lasts)
        self.gen += 1
        self.reset()
