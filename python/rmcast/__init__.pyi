import os
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union, overload

import pandas as pd

from . import topology as topology

__all__ = [
    "ScenarioError",
    "TopologyError",
    "protocols",
    "simulate",
    "repro",
    "studies",
    "topology",
    "__version__",
]

_Path = Union[str, os.PathLike[str]]

__version__: str

class ScenarioError(ValueError):
    """A scenario `rmcast sim` would refuse; the message is the CLI's one-line error."""

class TopologyError(ValueError):
    """Topology generator parameters out of range, or no connected graph."""

def protocols() -> List[Dict[str, Any]]: ...
@overload
def simulate(
    scenario: Union[_Path, Mapping[str, Any]],
    *,
    records: Literal[False] = ...,
    out: Optional[_Path] = ...,
    threads: Optional[int] = ...,
    progress: Optional[Callable[[int, int], Any]] = ...,
) -> pd.DataFrame: ...
@overload
def simulate(
    scenario: Union[_Path, Mapping[str, Any]],
    *,
    records: Literal[True],
    out: Optional[_Path] = ...,
    threads: Optional[int] = ...,
    progress: Optional[Callable[[int, int], Any]] = ...,
) -> Tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]: ...
def studies() -> List[Tuple[str, str, str]]: ...
def repro(
    study: Union[str, Sequence[str], None] = ...,
    *,
    quick: bool = ...,
    jobs: Optional[int] = ...,
    claims: Optional[_Path] = ...,
    out: Optional[_Path] = ...,
    progress: Optional[Callable[[int, int], Any]] = ...,
    runs_factor: int = ...,
) -> pd.DataFrame: ...
