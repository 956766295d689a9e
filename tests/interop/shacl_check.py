#!/usr/bin/env python3
"""The SHACL oracle of tests/suite/shacl.rs: pyshacl validates data graphs with a shapes graph.

Usage: shacl_check.py SHAPES.ttl DATA.nt...

Prints one JSON document: for each data graph (N-Triples, as `cuga-flo graph validate
--data-graph` writes it), `conforms` and the sorted, distinct `[focus node, source
constraint component]` pairs of its results. IRIs are written bare and every blank node
as `_:b` (blank node labels differ between parsers).
"""

import json
import sys

import pyshacl
from rdflib import BNode, Graph, URIRef
from rdflib.namespace import SH


def text(term):
    if isinstance(term, BNode):
        return "_:b"
    if isinstance(term, URIRef):
        return str(term)
    return term.n3()


def main() -> None:
    shapes = Graph().parse(sys.argv[1], format="turtle")
    out = []
    for path in sys.argv[2:]:
        data = Graph().parse(path, format="nt")
        conforms, report, _ = pyshacl.validate(
            data, shacl_graph=shapes, inference="none", advanced=False, meta_shacl=False
        )
        results = set()
        for result in report.objects(None, SH.result):
            focus = report.value(result, SH.focusNode)
            component = report.value(result, SH.sourceConstraintComponent)
            results.add((text(focus), text(component)))
        out.append({"conforms": bool(conforms), "results": sorted([list(r) for r in results])})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
