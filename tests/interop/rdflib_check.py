#!/usr/bin/env python3
"""rdflib (RDF 1.1) reads `cuga-flo graph export --annotations reified` (tests/suite/graph.rs).

Usage: rdflib_check.py EXPORT.ttl EXPORT.trig

Parses the Turtle and the TriG with rdflib (which has no RDF 1.2 `{| |}` support) and
prints one JSON object: the number of triples read from each, and named checks (true or
false) that find the annotations on the conditional edges through their rdf:Statement
nodes with SPARQL 1.1.
"""

import json
import sys

import rdflib

PREFIXES = (
    "PREFIX agentflow: <http://example.org/ontology/agentflow#> "
    "PREFIX cf: <urn:cuga-flo:vocab#> "
    "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> "
)


def rows(graph, query):
    return [[str(t) if t is not None else None for t in r] for r in graph.query(PREFIXES + query)]


def local(iri):
    return iri.rsplit("#", 1)[1]


def main():
    ttl, trig = sys.argv[1:3]
    report = {"rdflib": {}, "checks": {}}
    turtle = rdflib.Graph()
    turtle.parse(ttl, format="turtle")
    report["rdflib"]["turtle"] = len(turtle)
    dataset = rdflib.Dataset()
    dataset.parse(trig, format="trig")
    report["rdflib"]["trig"] = sum(len(g) for g in dataset.graphs())
    checks = report["checks"]
    default = rows(
        turtle,
        "SELECT ?t WHERE { ?r a rdf:Statement ; rdf:subject ?g ; rdf:predicate agentflow:nextTask ; "
        "rdf:object ?t ; agentflow:isDefault true . ?g cf:bpmnId 'Gateway_09ad5fc' }",
    )
    checks["default_edge"] = [local(r[0]) for r in default] == ["Activity_131ar38"]
    routing = rows(
        turtle,
        "SELECT ?t ?var ?op ?th WHERE { ?r rdf:subject ?g ; rdf:predicate agentflow:nextTask ; "
        "rdf:object ?t ; agentflow:varName ?var ; agentflow:operator ?op ; "
        "agentflow:threshold ?th ; cf:routingCondition ?c }",
    )
    checks["routing_condition"] = [[local(r[0]), r[1], r[2], r[3]] for r in routing] == [
        ["Activity_1h9ix55", "credit_score", ">", "0.6"]
    ]
    edges = rows(turtle, "SELECT (COUNT(*) AS ?n) WHERE { ?s agentflow:nextTask ?o }")[0][0]
    ids = rows(
        turtle,
        "SELECT (COUNT(DISTINCT ?id) AS ?n) WHERE { ?r rdf:predicate agentflow:nextTask ; cf:bpmnId ?id }",
    )[0][0]
    checks["one_statement_per_edge"] = edges == ids and int(edges) > 0
    # Every reified statement is also asserted.
    checks["statements_asserted"] = not turtle.query(
        PREFIXES
        + "ASK { ?r a rdf:Statement ; rdf:subject ?s ; rdf:predicate ?p ; rdf:object ?o "
        "FILTER NOT EXISTS { ?s ?p ?o } }"
    ).askAnswer
    checks["same_triples_in_trig"] = report["rdflib"]["trig"] == len(turtle)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
