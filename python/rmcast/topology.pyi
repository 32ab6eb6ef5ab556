from typing import Literal, Optional, Sequence, TypedDict, Union

from typing_extensions import Unpack

import networkx as nx

__all__ = [
    "bus",
    "star",
    "local_exchanges",
    "binary_tree",
    "flat_random",
    "waxman",
    "transit_stub",
    "edge_list",
]

_G = Union[nx.Graph, nx.MultiGraph]
_Placement = Literal["distinct", "with_replacement"]

_Bus = TypedDict("_Bus", {"overhead": int, "min_frame": int, "backoff": Literal["inclusive", "exclusive"], "max_attempts": int}, total=False)

def bus(receivers: int, bandwidth_bps: Optional[int] = ..., **params: Unpack[_Bus]) -> nx.Graph: ...
def star(
    children: int,
    class_: Optional[Literal["lan", "interlan", "wan", "hybrid"]] = ...,
    bandwidth_bps: Optional[int] = ...,
    *,
    class_loss: bool = ...,
) -> nx.Graph: ...
def local_exchanges(
    rtds_ms: Optional[Sequence[float]] = ...,
    per_exchange: Optional[Sequence[int]] = ...,
    bandwidth_bps: Optional[int] = ...,
    access_delay_ms: Optional[float] = ...,
    *,
    destinations: int = ...,
) -> nx.Graph: ...
def binary_tree(
    height: int,
    bandwidth_bps: Optional[int] = ...,
    delay_ms: Optional[float] = ...,
    source_link: Optional[bool] = ...,
) -> nx.Graph: ...
class _Generated(TypedDict, total=False):
    """Keyword arguments of every generated graph (see `flat_random`)."""

    scale: float
    delay_per_unit_ms: float
    bandwidth_bps: int
    attempts: int
    receivers: int
    placement: _Placement
    host_delay_ms: float
    host_bandwidth_bps: int
    host_seed: int

class _TransitStub(_Generated, total=False):
    transit_domains: int
    transit_nodes: int
    stubs_per_transit: int
    stub_nodes: int
    p_transit: float
    p_stub: float

def flat_random(n: int, p: float, seed: int = ..., **plane: Unpack[_Generated]) -> nx.Graph: ...
def waxman(
    n: int,
    alpha: Optional[float] = ...,
    beta: Optional[float] = ...,
    seed: int = ...,
    **plane: Unpack[_Generated],
) -> nx.Graph: ...
def transit_stub(seed: int = ..., **params: Unpack[_TransitStub]) -> nx.Graph: ...
def edge_list(
    text: str,
    delay_ms: Optional[float] = ...,
    bandwidth_bps: Optional[int] = ...,
    *,
    source: int = ...,
    receiver_ids: Sequence[int] = ...,
    receivers: int = ...,
) -> _G: ...
