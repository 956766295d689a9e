#!/usr/bin/env python3
"""A second RDF reader for `cuga-flo graph export` (tests/suite/graph.rs).

Usage: rdf_check.py EXPORT.ttl EXPORT.trig EXPORT.nq [GUARDED.ttl]

Parses each file with pyoxigraph (RDF 1.2: `{| |}` annotations, N-Quads triple terms) and
prints one JSON object: the number of triples read from each file, and named checks (true
or false) on what the graph says, queried with SPARQL 1.2 reified-triple patterns.
"""

import json
import sys

import pyoxigraph as ox

AF = "http://example.org/ontology/agentflow#"
CF = "urn:cuga-flo:vocab#"
PREFIXES = f"PREFIX agentflow: <{AF}> PREFIX cf: <{CF}> PREFIX sbpmnc: <https://sBPMN.github.io/2.0/classes#> "


def load(path, fmt):
    store = ox.Store()
    with open(path, "rb") as f:
        store.load(f, format=fmt)
    return store


def rows(store, query):
    return [[t.value if t is not None else None for t in r] for r in store.query(PREFIXES + query)]


def main():
    ttl, trig, nq = sys.argv[1:4]
    report = {"pyoxigraph": {}, "checks": {}}
    stores = {}
    for name, path, fmt in [
        ("turtle", ttl, ox.RdfFormat.TURTLE),
        ("trig", trig, ox.RdfFormat.TRIG),
        ("nquads", nq, ox.RdfFormat.N_QUADS),
    ]:
        store = load(path, fmt)
        stores[name] = store
        report["pyoxigraph"][name] = len(store)
    turtle = stores["turtle"]
    checks = report["checks"]
    # The gateway's default edge, read through its annotation.
    default = rows(
        turtle,
        "SELECT ?t WHERE { << ?g agentflow:nextTask ?t >> agentflow:isDefault true . "
        "?g cf:bpmnId 'Gateway_09ad5fc' }",
    )
    checks["default_edge"] = [r[0].rsplit("#", 1)[1] for r in default] == ["Activity_131ar38"]
    # The gateway's config condition, as AgentFLOW's annotations on the edge it routes.
    routing = rows(
        turtle,
        "SELECT ?t ?var ?op ?th WHERE { << ?g agentflow:nextTask ?t >> agentflow:varName ?var ; "
        "agentflow:operator ?op ; agentflow:threshold ?th ; cf:routingCondition ?c }",
    )
    checks["routing_condition"] = [
        [r[0].rsplit("#", 1)[1], r[1], r[2], r[3]] for r in routing
    ] == [["Activity_1h9ix55", "credit_score", ">", "0.6"]]
    # The credit check is an agentic task with its recipe (the agent's name).
    checks["agentic_task"] = bool(
        turtle.query(
            PREFIXES
            + "ASK { ?t a agentflow:AgenticTask ; agentflow:recipe 'credit_checker' ; cf:bpmnId 'Activity_0oydey5' }"
        )
    )
    # Every edge has exactly one annotation (reifier) carrying its flow id.
    edges = rows(turtle, "SELECT (COUNT(*) AS ?n) WHERE { ?s agentflow:nextTask ?o }")[0][0]
    ids = rows(
        turtle,
        "SELECT (COUNT(DISTINCT ?id) AS ?n) WHERE { << ?s agentflow:nextTask ?o >> cf:bpmnId ?id }",
    )[0][0]
    checks["one_id_per_edge"] = edges == ids and int(edges) > 0
    # The three files hold the same triples.
    def triples(store):
        return {(q.subject, q.predicate, q.object) for q in store}

    checks["same_triples_in_every_format"] = (
        len(triples(stores["turtle"])) == len(triples(stores["trig"])) == len(triples(stores["nquads"]))
    )
    if len(sys.argv) > 4:
        guarded = load(sys.argv[4], ox.RdfFormat.TURTLE)
        cond = rows(
            guarded,
            "SELECT ?var ?op ?th ?text WHERE { << ?g agentflow:nextTask ?t >> agentflow:varName ?var ; "
            "agentflow:operator ?op ; agentflow:threshold ?th ; cf:condition ?text }",
        )
        checks["condition_annotation"] = cond == [["approved", "==", "true", "${approved} == true"]]
    print(json.dumps(report))


if __name__ == "__main__":
    main()
