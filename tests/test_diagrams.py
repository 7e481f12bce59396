"""The book's diagrams: one script in figures/ per SVG shipped in dldna/diagrams/."""

import subprocess
import sys
from pathlib import Path

import pytest

from dldna import viz
from dldna.viz import diagrams

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.stem for p in (ROOT / "figures").glob("*.py") if p.stem != "common")


def test_every_script_has_its_svg_and_every_svg_its_script():
    assert SCRIPTS == diagrams.available()


def test_a_diagram_is_an_svg_with_text():
    svg = viz.diagram(SCRIPTS[0])
    assert svg.data.lstrip().startswith(("<?xml", "<svg")) and "<text" in svg.data


def test_unknown_diagram_names_the_available_ones():
    with pytest.raises(ValueError, match="Los disponibles son"):
        viz.diagram("no_existe")


def test_scripts_redraw_the_same_svg(tmp_path, monkeypatch):
    """Running a script again reproduces the committed file byte for byte."""
    script = "mask_graphs" if "mask_graphs" in SCRIPTS else SCRIPTS[0]
    committed = (ROOT / "dldna" / "diagrams" / f"{script}.svg").read_bytes()
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'figures')!r}); import common, runpy; "
            f"common.DIAGRAMS = __import__('pathlib').Path({str(tmp_path)!r}); "
            f"common.ROOT = common.DIAGRAMS; "
            f"runpy.run_path({str(ROOT / 'figures' / f'{script}.py')!r}, run_name='__main__')")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True)
    assert (tmp_path / f"{script}.svg").read_bytes() == committed
