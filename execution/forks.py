"""Program locks that a forked child gets back free.

A compiled program runs one call at a time under its lock. A process
forked while another of its threads was in a call copies the lock held,
and no thread of the child would ever release it: the child's first call
waited forever (an outside attack: 5 of 8 children hung). After a fork,
the child gives every registered owner a new lock (os.register_at_fork).
"""
import os
import threading
import weakref
from typing import Any

# owner -> whether its lock is reentrant
_owners: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()


def program_lock(owner: Any, reentrant: bool = False) -> Any:
    """A new lock for `owner` (kept as owner._lock), renewed in a forked child."""
    _owners[owner] = reentrant
    return threading.RLock() if reentrant else threading.Lock()


def _renew() -> None:
    for owner, reentrant in list(_owners.items()):
        owner._lock = threading.RLock() if reentrant else threading.Lock()


os.register_at_fork(after_in_child=_renew)
