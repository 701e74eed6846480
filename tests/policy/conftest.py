"""Every test here runs torch on one thread (tests.torch_threads)."""

from tests.torch_threads import one_torch_thread

__all__ = ["one_torch_thread"]
