"""Reads a page of Prometheus' text format on stdin with the official Python client's parser
and prints what it read as JSON: each family's name as its TYPE line spells it, its type, its
help and its samples. A page the parser refuses fails with its error."""

import json
import sys

from prometheus_client.parser import text_string_to_metric_families

families = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    # The parser names a counter's family without its `_total`, as OpenMetrics does.
    name = family.name + "_total" if family.type == "counter" else family.name
    families[name] = {
        "type": family.type,
        "help": family.documentation,
        "samples": [
            {"name": sample.name, "labels": sample.labels, "value": sample.value}
            for sample in family.samples
        ],
    }
json.dump(families, sys.stdout)
