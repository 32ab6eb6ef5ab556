from typing import Literal, Optional, Sequence, Union

import networkx as nx

_G = Union[nx.Graph, nx.MultiGraph]
_Placement = Literal["distinct", "with_replacement"]

def bus(receivers: int, bandwidth_bps: Optional[int] = ...) -> nx.Graph: ...
def star(
    children: int,
    class_: Literal["lan", "interlan", "wan", "hybrid"] = ...,
    bandwidth_bps: int = ...,
) -> nx.Graph: ...
def local_exchanges(
    rtds_ms: Sequence[float],
    per_exchange: Sequence[int],
    bandwidth_bps: int = ...,
    access_delay_ms: float = ...,
) -> nx.Graph: ...
def binary_tree(
    height: int, bandwidth_bps: int = ..., delay_ms: float = ..., source_link: bool = ...
) -> nx.Graph: ...
def flat_random(
    n: int,
    p: float,
    seed: int = ...,
    *,
    scale: Optional[float] = ...,
    delay_per_unit_ms: Optional[float] = ...,
    bandwidth_bps: Optional[int] = ...,
    attempts: Optional[int] = ...,
    receivers: Optional[int] = ...,
    placement: _Placement = ...,
    host_delay_ms: float = ...,
    host_bandwidth_bps: int = ...,
    host_seed: int = ...,
) -> nx.Graph: ...
def waxman(
    n: int,
    alpha: float = ...,
    beta: float = ...,
    seed: int = ...,
    *,
    scale: Optional[float] = ...,
    delay_per_unit_ms: Optional[float] = ...,
    bandwidth_bps: Optional[int] = ...,
    attempts: Optional[int] = ...,
    receivers: Optional[int] = ...,
    placement: _Placement = ...,
    host_delay_ms: float = ...,
    host_bandwidth_bps: int = ...,
    host_seed: int = ...,
) -> nx.Graph: ...
def transit_stub(
    seed: int = ...,
    *,
    transit_domains: Optional[int] = ...,
    transit_nodes: Optional[int] = ...,
    stubs_per_transit: Optional[int] = ...,
    stub_nodes: Optional[int] = ...,
    p_transit: Optional[float] = ...,
    p_stub: Optional[float] = ...,
    scale: Optional[float] = ...,
    delay_per_unit_ms: Optional[float] = ...,
    bandwidth_bps: Optional[int] = ...,
    attempts: Optional[int] = ...,
    receivers: Optional[int] = ...,
    placement: _Placement = ...,
    host_delay_ms: float = ...,
    host_bandwidth_bps: int = ...,
    host_seed: int = ...,
) -> nx.Graph: ...
def edge_list(text: str, delay_ms: float = ..., bandwidth_bps: int = ...) -> _G: ...
