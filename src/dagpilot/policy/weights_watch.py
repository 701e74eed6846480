"""Whether a layer's weights are still the ones an inference memory was filled with.

The memories of `graph_cache` and `row_memory` hold outputs of some layers, which are only
right for the weights they were computed with. A parameter changed in place (an optimiser
step, `load_state_dict`) moves torch's version counter, one given other storage through
`.data` (as `module.to` does) moves its data pointer, and a replaced parameter is another
tensor: any of these tells the memory to forget. Writing into `parameter.data` in place
escapes all three, so the memories' `clear` must follow that.
"""

from __future__ import annotations

from collections.abc import Sequence

from torch import Tensor


class WeightsWatch:
    """The parameters seen last, and their versions and storage then."""

    __slots__ = ("_parameters", "_versions")

    def __init__(self) -> None:
        self._parameters: tuple[Tensor, ...] = ()
        self._versions: tuple[tuple[int, int], ...] = ()

    def moved(self, parameters: Sequence[Tensor]) -> bool:
        """Whether `parameters` are not the tensors of the last look, as they were then
        (True at the first look); remembers them as they are now."""
        versions = tuple((parameter._version, parameter.data_ptr()) for parameter in parameters)
        same = len(parameters) == len(self._parameters) and all(
            mine is theirs for mine, theirs in zip(self._parameters, parameters, strict=True))
        if same and versions == self._versions:
            return False
        self._parameters, self._versions = tuple(parameters), versions
        return True
