"""Type stubs of tcplab._native, the Rust extension module under the
tcplab package (crates/tcplab-python/src). Users call the functions of
``tcplab`` itself; these are what they call."""

from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__version__: str

class Error(Exception):
    """An error of tcplab, with the CLI's message as its text."""

    location: Optional[str]
    path: Optional[str]
    message: str

class Scenario:
    """A scenario: TOML text and its ``--set`` overrides, validated at once."""

    @staticmethod
    def load(path: Union[str, "PathLike[str]"]) -> "Scenario": ...
    @staticmethod
    def from_toml(text: str, name: str = "<toml>") -> "Scenario": ...
    def set(self, key: Union[str, Dict[str, Any]], value: Any = None) -> "Scenario": ...
    def check(self, seed: Optional[int] = None) -> str: ...
    def copy(self) -> "Scenario": ...
    @property
    def name(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def settings(self) -> List[str]: ...
    @property
    def description(self) -> Optional[str]: ...
    @property
    def duration_s(self) -> float: ...
    @property
    def seed(self) -> int: ...
    @property
    def flows(self) -> List[str]: ...
    @property
    def nodes(self) -> List[str]: ...
    @property
    def links(self) -> List[str]: ...
    @property
    def hash(self) -> str: ...
    def _repr_html_(self) -> str: ...

class ArrowTable:
    """An Arrow table (Arrow PyCapsule interface)."""

    @property
    def num_rows(self) -> int: ...
    @property
    def column_names(self) -> List[str]: ...
    def __len__(self) -> int: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...
    def __arrow_c_schema__(self) -> object: ...

class Task:
    """A run or batch going on in the background."""

    kind: str
    def wait(self, timeout: float) -> bool: ...
    @property
    def finished(self) -> bool: ...
    @property
    def done(self) -> int: ...
    @property
    def total(self) -> int: ...
    def cancel(self) -> None: ...
    @property
    def cancelled(self) -> bool: ...
    def result(self) -> Tuple[Any, bool]: ...

class RunOutput:
    def table(self, name: str) -> ArrowTable: ...
    @staticmethod
    def table_names() -> List[str]: ...
    def to_json(self) -> str: ...
    def text(self) -> str: ...
    scenario: str
    description: Optional[str]
    backend: str
    seed: int
    sim_time_s: float
    events: int
    wall_s: float
    traced: bool
    flow_count: int
    link_count: int
    fairness: Optional[Tuple[float, Optional[float]]]

class _ComparisonLike:
    def comparison_table(self, name: str) -> ArrowTable: ...
    def trace(self, arm: str) -> ArrowTable: ...
    def notes(self) -> List[str]: ...
    def to_json(self) -> str: ...
    def text(self) -> str: ...
    arms: List[str]
    metrics: List[str]
    arm_settings: List[Tuple[str, str, List[str]]]
    runs: int
    finished_runs: int
    complete: bool
    scenario: str
    wall_s: float

class ComparisonOutput(_ComparisonLike): ...

class DiffOutput(_ComparisonLike):
    def rows(self) -> ArrowTable: ...
    model_settings: List[str]

class ReproductionOutput(_ComparisonLike):
    def checks(self) -> ArrowTable: ...
    def reference(self) -> ArrowTable: ...
    name: str
    title: str
    source: str
    summary: str
    quote: str
    passed: bool
    linux: Optional[str]

class SweepOutput:
    def table(self, name: str) -> ArrowTable: ...
    def to_json(self) -> str: ...
    def to_csv(self) -> str: ...
    def text(self) -> str: ...
    vary: List[Tuple[str, List[str]]]
    metrics: List[str]
    points: int
    runs: int
    finished_runs: int
    complete: bool
    scenario: str

Settings = Union[None, str, Sequence[str], Dict[str, Any]]

def start_run(
    scenario: Scenario,
    seed: Optional[int] = None,
    backend: str = "model",
    kernel: Optional[str] = None,
    trace: bool = True,
    max_wall: Optional[float] = None,
) -> Task: ...
def start_compare(
    scenario: Scenario,
    arms: Sequence[Tuple[str, Settings]],
    runs: int = 10,
    metrics: Sequence[str] = ...,
    jobs: Optional[int] = None,
    backend: str = "model",
    kernel: Optional[str] = None,
    max_wall: Optional[float] = None,
    keep_traces: bool = False,
    max_runs: int = ...,
) -> Task: ...
def start_sweep(
    scenario: Scenario,
    vary: Sequence[Tuple[str, Sequence[Any]]],
    runs: int = 3,
    metrics: Sequence[str] = ...,
    jobs: Optional[int] = None,
    backend: str = "model",
    kernel: Optional[str] = None,
    max_wall: Optional[float] = None,
    shard: Optional[str] = None,
    max_runs: int = ...,
) -> Task: ...
def start_diff(
    scenario: Scenario,
    runs: int = 5,
    metrics: Sequence[str] = ...,
    jobs: Optional[int] = None,
    kernel: Optional[str] = None,
    max_wall: Optional[float] = None,
    keep_traces: bool = True,
) -> Task: ...
def start_reproduce(
    name: str,
    runs: Optional[int] = None,
    jobs: Optional[int] = None,
    backend: str = "model",
    kernel: Optional[str] = None,
    max_wall: Optional[float] = None,
    root: Optional[str] = None,
) -> Task: ...
def parse_vary(arg: str) -> Tuple[str, List[str]]: ...
def knobs_table() -> ArrowTable: ...
def presets_table() -> ArrowTable: ...
def preset_names() -> List[str]: ...
def counter_names() -> List[str]: ...
def experiments_table() -> ArrowTable: ...
def experiment(name: str) -> Tuple[Scenario, List[Tuple[str, List[str]]], List[str], int]: ...
def kernel_image(kernel: Optional[str] = None) -> str: ...
def kernel_images() -> ArrowTable: ...
def default_jobs() -> int: ...
