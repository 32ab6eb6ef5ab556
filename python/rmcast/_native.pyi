"""The compiled extension (PyO3). Use the functions of `rmcast` and `rmcast.topology`."""
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

__all__ = [
    "ScenarioError",
    "TopologyError",
    "__version__",
    "protocols_json",
    "simulate",
    "studies",
    "repro",
    "topology",
]

__version__: str

class ScenarioError(ValueError): ...
class TopologyError(ValueError): ...

def protocols_json() -> str: ...
def simulate(
    scenario: Any,
    records: bool = ...,
    out: Optional[str] = ...,
    threads: Optional[int] = ...,
    progress: Optional[Callable[[int, int], Any]] = ...,
) -> Tuple[List[str], Dict[str, List[Any]], Optional[str], Optional[str]]: ...
def studies() -> List[Tuple[str, str, str]]: ...
def repro(
    studies: List[str],
    quick: bool = ...,
    jobs: Optional[int] = ...,
    claims: Optional[str] = ...,
    out: Optional[str] = ...,
    progress: Optional[Callable[[int, int], Any]] = ...,
    runs_factor: int = ...,
) -> str: ...
def topology(
    table: Mapping[str, Any], host_seed: Optional[int] = ..., dir: Optional[str] = ...
) -> Dict[str, Any]: ...
