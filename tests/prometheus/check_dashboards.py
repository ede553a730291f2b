#!/usr/bin/python3
"""Every stoker_ metric the Grafana dashboard and the alert rules use is documented in
docs/metrics.md (CTest label `prometheus`). usage: check_dashboards.py SOURCE_DIR"""

import json
import os
import re
import sys


def main():
    source = sys.argv[1]
    with open(os.path.join(source, "docs", "metrics.md")) as f:
        documented = set(re.findall(r"`(stoker_[a-z0-9_]+)`", f.read()))
    with open(os.path.join(source, "docs", "grafana", "stoker.json")) as f:
        dashboard = json.load(f)
    used = {}
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            used.setdefault("grafana", set()).update(re.findall(r"stoker_[a-z0-9_]+", target["expr"]))
    with open(os.path.join(source, "docs", "prometheus", "alerts.yml")) as f:
        used["alerts"] = set(re.findall(r"expr: .*?(stoker_[a-z0-9_]+)", f.read()))
    for where, names in used.items():
        missing = names - documented
        assert not missing, f"{where} uses undocumented metrics: {sorted(missing)}"
        assert names, f"{where} uses no stoker_ metric"
    print(f"OK: {sum(len(n) for n in used.values())} metric uses, all documented")


if __name__ == "__main__":
    main()
