"""The analysis notebook runs top to bottom (on the small run it makes itself)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "explore.ipynb"


@pytest.mark.slow
def test_explore_notebook_executes(ray_cluster, tmp_path, monkeypatch):
    monkeypatch.delenv("BMN_RUN", raising=False)
    monkeypatch.setenv("RAY_ADDRESS", ray_cluster)  # its searches join the session's cluster, as on a cluster
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "commit it without outputs"
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    # cycles per composition (the census), the atlas's curve, the J- census by gene length and lift, which
    # states cycle (the census by split), length distribution, worker throughput, longest against CPU time (the
    # runs, the benchmarks), the replayed game
    assert len(images) == 9
    text = "".join(o.get("text", "") for o in outputs)
    assert "tail scale:" in text and "finished" in text and "CPU seconds" in text and "census: finished" in text
    assert "Every `J-` cycle of the standard deck whose genes have at most" in text
    for family in ("standard", "camicia", "two-suit", "camicia-style"):  # the curves, a full deck's hunt priced
        assert f"{family}, per deal:" in text and f"{family}, per state:" in text
    assert "exponential fit: rate x" in text and "H200-hours" in text
    assert "0:6,1:2,2:2,3:2,4:2: states with imbalance <= 1 cycle" in text
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "e1fabb73dac32ded" in html  # the records run contributes the Casella cycle
