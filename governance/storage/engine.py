"""What the decision store needs of a storage engine: one :class:`Engine` protocol that SQLite
(:mod:`governance.storage.sqlite`) and PostgreSQL (:mod:`governance.storage.postgres`) satisfy.

The decision store (``governance.decisions.store``) keeps the logic: which terms a query matches on,
the ``similarity`` of a hit, calibration from sums. An engine keeps the SQL: it stores
:class:`Record` rows, answers with :data:`Row` tuples (the :data:`COLUMNS` in order, times as epoch
seconds, reasons, tags and context as the JSON text they were stored as) and renders the query
filters as its own SQL conditions. Neither engine is ever asked which it is.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

COLUMNS = ("id", "agent_id", "description", "category", "stakes", "confidence", "reasons", "tags",
           "pattern", "context", "state", "cycle", "phase", "work_item", "created_at", "outcome",
           "outcome_note", "reviewed_at")
# The searchable fields and how much a word in each weighs in a keyword match (FTS5's BM25 column
# weights; PostgreSQL's ts_rank weights of the A, D, B and C labels its tsvector gives them).
FIELD_WEIGHTS = (1.0, 0.5, 1.0, 1.0)   # description, reasons, tags, pattern
SCORED = ("success", "partial", "failure")   # the outcomes calibration counts (not abandoned)

Row = Sequence[Any]
Where = tuple[list[str], list[Any]]   # an engine's SQL conditions on alias ``d``, its parameters
CalibrationRow = tuple[str, int, int, float, float, float, float, float]
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Pending(Protocol[T_co]):
    """Work under way or to come (a :class:`concurrent.futures.Future`, or :class:`Later`)."""

    def result(self) -> T_co:
        """Its result (the work's exception raised), once it is done."""
        ...

    def exception(self) -> BaseException | None:
        """Its exception or None, once it is done."""
        ...

    def cancel(self) -> bool:
        """True when the work will never run; False when it runs or ran."""
        ...


class Later(Generic[T]):
    """Work run when its result is first asked for: what an engine whose statements run one at a
    time answers for :meth:`Engine.beside` (the work runs after the caller's own statements)."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work: Callable[[], T] | None = work
        self._value: T | None = None
        self._error: BaseException | None = None

    def _run(self) -> None:
        work, self._work = self._work, None
        if work is not None:
            try:
                self._value = work()
            except Exception as exc:   # kept for result() and exception()
                self._error = exc

    def result(self) -> T:
        self._run()
        if self._error is not None:
            raise self._error
        return self._value   # type: ignore[return-value]

    def exception(self) -> BaseException | None:
        self._run()
        return self._error

    def cancel(self) -> bool:
        if self._work is None:
            return False
        self._work = None
        self._error = RuntimeError("cancelled before it ran")
        return True


def column_filters(mark: str, category: str | None, outcome: str | None, agent_id: str | None,
                   since: float | None, until: float | None) -> Where:
    """The filters on the decisions' own columns as SQL conditions on alias ``d`` with ``mark``
    for a parameter (``?`` for SQLite, ``%s`` for PostgreSQL); each engine adds its tag filter."""
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("d.category", category), ("d.agent_id", agent_id)):
        if value:
            where.append(f"{column} = {mark}")
            params.append(value)
    if outcome == "unreviewed":
        where.append("d.outcome IS NULL")
    elif outcome:
        where.append(f"d.outcome = {mark}")
        params.append(outcome)
    for condition, bound in ((f"d.created_at >= {mark}", since), (f"d.created_at < {mark}", until)):
        if bound is not None:
            where.append(condition)
            params.append(bound)
    return where, params


class Record(NamedTuple):
    """One decision to store, as every engine stores it."""

    id: str
    agent_id: str
    description: str
    category: str
    stakes: str
    confidence: float
    reasons: str        # JSON
    tags: str           # JSON
    pattern: str
    context: str        # JSON
    state: str | None
    cycle: str | None
    phase: str | None
    work_item: str | None
    created_at: float
    tag_list: list[str]
    reasons_text: str   # the reasons' texts, as the search index reads them
    terms: Collection[str]   # the decision's distinct searchable words (for term statistics)


class Engine(Protocol):
    """A decision store's database. Reads and writes are scoped to one project (a SQLite file is
    one project; a PostgreSQL engine opened for the team reads across every project and writes
    nothing)."""

    name: str           # "sqlite" or "postgresql"
    where: str          # the file, or the URL without its password: for messages
    integrity_errors: tuple[type[BaseException], ...]   # a decision id already taken

    def close(self) -> None: ...

    def beside(self, work: Callable[[], T]) -> Pending[T]:
        """``work`` (calls of this engine) run beside the caller's next statements where the
        engine lets a store run statements at once (each on a connection of its own), else run
        when its result is asked for (:class:`Later`)."""
        ...

    # -- writing
    def insert(self, records: Sequence[Record]) -> int:
        """Store ``records`` in one transaction (all or none)."""
        ...

    def review(self, decision_id: str, outcome: str, note: str, at: float) -> bool:
        """Set a decision's outcome; False when there is no such decision."""
        ...

    # -- reading
    def get(self, decision_id: str) -> Row | None: ...

    def count(self) -> int: ...

    def doc_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """(decisions ever stored, decisions holding each term)."""
        ...

    def filters(self, category: str | None, tags: Sequence[str], outcome: str | None,
                agent_id: str | None, since: float | None, until: float | None) -> Where: ...

    def newest(self, where: Where, limit: int) -> list[Row]: ...

    def keyword_hits(self, terms: list[str], total: int, docs: dict[str, int], where: Where,
                     ranked: int | None, limit: int, recent: tuple[int, int] | None
                     ) -> list[Row]:
        """The decisions holding any of ``terms``, best first by BM25 (``total`` decisions ever
        stored, ``docs`` holding each term), each row followed by its ``seq``. The index ranks
        its matches alone, ``ranked`` of them (None: all), and only those are filtered.
        ``recent`` = (window, budget): only the newest ``budget`` matches among the newest
        ``window`` decisions are ranked."""
        ...

    def rows_by_seq(self, seqs: Sequence[int], where: Where) -> list[Row]:
        """The decisions of ``seqs`` that pass ``where``, each row followed by its ``seq``."""
        ...

    def calibration_rows(self, agent_id: str | None, category: str | None
                         ) -> list[CalibrationRow]:
        """(category, bin, n, conf, score, conf2, conf_score, score2) summed over the scope."""
        ...

    def reviewed(self, agent_id: str | None, category: str | None
                 ) -> list[tuple[str, float, str]]: ...

    # -- sentence vectors (hybrid ranking)
    def seq_of(self, decision_id: str) -> int | None: ...

    def unembedded(self, seqs: Sequence[int] | None) -> list[tuple[int, str, str, str, str]]:
        """(seq, description, pattern, tags JSON, reasons JSON) of decisions without a vector,
        among ``seqs`` (None: every decision in scope)."""
        ...

    def put_vectors(self, pairs: Sequence[tuple[int, bytes]]) -> None: ...

    def vectors(self, seqs: Sequence[int] | None) -> list[tuple[int, bytes]]: ...
