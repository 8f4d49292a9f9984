"""A CSTP call from arrival to answer: who calls, whether its role and the rate limit let it,
its params validated (the models of :mod:`governance.server.messages`), the project it acts in,
then the method (:mod:`governance.server.methods`: guardrails, decision memory and calibration for
agents that ask over the network), and its audit.

Identity: the agent a caller *declares* (``agent_id``, ``agent.id``) is recorded as declared. The
*credential* (the bearer token's identity; the peer address when there is no token) is what the
rate limit keys on, never the declared id. Every call, answered or refused, is audited in the
ledger with both, the action, whether it was allowed, the violations and how many guardrails were
evaluated; every guardrail check is also written in the seed's audit format
(``event: guardrail_check``).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from governance.decisions.fields import DecisionInputError
from governance.errors import GovernanceError
from governance.ledger import chain
from governance.project import governance_dir
from governance.server.identity import Caller
from governance.server.messages import PARAMS, Action
from governance.server.methods import Identity, Methods
from governance.server.protocol import (
    FORBIDDEN,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RATE_LIMITED,
    Call,
    RpcError,
)
from governance.server.ratelimit import RateLimiter
from governance.server.stores import Stores
from governance.storage.database import database_url

__all__ = ["Identity", "Service", "credential_key", "declared_agent"]


def credential_key(token: str | None, peer: Any = None) -> str:
    """What the rate limit keys on: ``bearer:<sha256 prefix>`` for a bearer token (one key for the
    single-token server), else ``peer:<address>`` (``peer:unix`` on a unix socket)."""
    if token:
        return "bearer:" + hashlib.sha256(token.encode()).hexdigest()[:12]
    if isinstance(peer, list | tuple) and peer and peer[0]:
        return f"peer:{peer[0]}"
    return "peer:unix"


def declared_agent(params: dict[str, Any]) -> str | None:
    """The agent the params declare: ``agent_id`` (preAction), else ``agent.id``."""
    for value in (params.get("agent_id"), (params.get("agent") or {}).get("id")
                  if isinstance(params.get("agent"), dict) else None):
        if isinstance(value, str) and value.strip():
            return value.strip()[:200]
    return None


def _invalid(exc: ValidationError) -> RpcError:
    problems = [{"field": ".".join(str(p) for p in item["loc"]) or "params",
                 "message": item["msg"]} for item in exc.errors()[:20]]
    first = problems[0] if problems else {"field": "params", "message": "invalid"}
    return RpcError(INVALID_PARAMS, f"{first['field']}: {first['message']}", problems)


class Service:
    """The CSTP methods of one project (:class:`Methods`), with its rate limit and its audit.
    Calls may run on several worker threads at once: each keeps its own connection to the
    decision store (SQLite in WAL mode: readers run in parallel, and a writer does not stop them);
    their decisions are written by one :class:`BatchWriter`. With ``GOVERNANCE_DATABASE_URL``
    (``governance serve --database``) the store is the project's rows in that PostgreSQL
    database, on one pool of connections per process (:mod:`governance.server.stores`)."""

    def __init__(self, project: str, limiter: RateLimiter) -> None:
        self.project = project
        self.limiter = limiter
        self.database = database_url()
        self.stores = Stores(project, self.database)
        self.calls = Methods(project, self.stores)
        self.methods = self.calls.table()

    def served_id(self) -> str:
        """The id of the served project's rows (``GOVERNANCE_PROJECT_ID``, else its folder)."""
        return self.stores.served_id()

    def _acting(self, named: str | None, caller: Caller) -> str | None:
        """The project a call acts in: a scoped token's own project (naming another is
        forbidden), else the one the call names (``params.project`` or the
        ``X-Governance-Project`` header), else None: the served project. Only a server on a team
        database (``--database``) acts in projects other than its own."""
        if named is not None and caller.named is not None and named != caller.named:
            raise RpcError(INVALID_PARAMS, f"params.project is {named!r} but the "
                                           f"X-Governance-Project header is {caller.named!r}; "
                                           "name one project")
        named = named or caller.named
        if caller.project is not None:
            if named is not None and named != caller.project:
                raise RpcError(FORBIDDEN, f"the token of {caller.agent or caller.key} acts in "
                                          f"project {caller.project}, not {named}")
            named = caller.project
        if named is None or named == self.served_id():
            return None
        if not self.database:
            raise RpcError(INVALID_PARAMS, f"project {named!r}: this server keeps the decisions "
                                           f"of one project, {self.served_id()}, in its SQLite "
                                           "file; a server for many projects is started with "
                                           "--database postgresql://... (docs/team.md)",
                           [{"field": "project", "message": "not served here"}])
        return named

    def close(self) -> None:
        """Write the decisions still queued and stop the writer (the worker threads are done)."""
        self.stores.close()

    # -- the call ------------------------------------------------------------------------------
    def run(self, call: Call, credential: str | Caller) -> dict[str, Any]:
        """Answer one call (raises :class:`RpcError`); audit it either way. The rate limit keys
        on the authenticated caller (a bare string: the project token's key, an admin); the
        declared agent is recorded as declared."""
        caller = credential if isinstance(credential, Caller) else Caller(credential)
        declared = declared_agent(call.params)
        if caller.agent is not None and declared == caller.agent:
            declared = None
        who = Identity(declared, caller.key, caller.agent, caller.team)
        audit: dict[str, Any] = {"event": "CSTP", "method": call.method[:100], "agent": who.agent,
                                 "declared_agent": who.declared, "credential": who.credential,
                                 "rpc_id": str(call.id)[:100] if call.id is not None else None}
        started = time.perf_counter()
        try:
            if not caller.may(call.method):
                raise RpcError(FORBIDDEN, f"the token of {caller.agent or caller.key} has the role "
                                          f"{caller.role!r}, which may not call {call.method!r}; "
                                          "ask an admin for a token with a role that may")
            wait = self.limiter.take(who.credential)
            if wait:
                raise RpcError(RATE_LIMITED, f"too many calls with this credential; retry in "
                                             f"{wait:.2f} s", {"retryAfter": round(wait, 3)})
            method = self.methods.get(call.method)
            if method is None:
                raise RpcError(METHOD_NOT_FOUND, f"no method {call.method!r}; CSTP methods: "
                                                 + ", ".join(self.methods))
            try:
                params = PARAMS[call.method].model_validate(call.params)
            except ValidationError as exc:
                raise _invalid(exc) from None
            who = replace(who, project=self._acting(params.project, caller),
                          named=(params.project or caller.named) is not None)
            if who.project is not None:
                audit["project"] = who.project
            action = getattr(params, "action", None)
            if isinstance(action, Action):
                audit["action"] = action.description[:300]
            result = method(params, who)
            if who.project is None and isinstance(result.get("project"), str):
                audit["project"] = result["project"]   # where a review found its decision
            for key in ("allowed", "evaluated"):
                if key in result:
                    audit[key] = result[key]
            if "violations" in result:
                audit["violations"] = [v.get("guardrailId") for v in result["violations"]]
            return result
        except RpcError as exc:
            audit["error"] = exc.code
            raise
        except DecisionInputError as exc:
            audit["error"] = INVALID_PARAMS
            field = exc.key or "params"
            raise RpcError(INVALID_PARAMS, f"{field}: {exc.message}"
                           + (f" Fix: {exc.fix}" if exc.fix else ""),
                           [{"field": field, "message": exc.message}]) from None
        except GovernanceError as exc:
            audit["error"] = INTERNAL_ERROR
            raise RpcError(INTERNAL_ERROR, exc.render()) from None
        except Exception:
            audit["error"] = INTERNAL_ERROR
            raise
        finally:
            audit["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
            try:
                chain.append(governance_dir(self.project), audit)
            except GovernanceError:
                pass   # the answer stands; errors.log has the ledger's own complaint
