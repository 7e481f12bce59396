"""Publishing: the CI workflow, the GitHub Pages deployment and the book's own address.

Everything that names the repository or the published site (Colab badges,
install cells, launch buttons, canonical links, "edit this page") is derived
from ``repository.url`` in ``_config.yml``; ``make sync`` (tools/notebooks.py)
writes what cannot be computed at build time, such as ``html_baseurl``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from book import ROOT, chapter_notebooks, notebook_tool, toc_files

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
OFFICIAL_PAGES_ACTIONS = ("actions/configure-pages", "actions/upload-pages-artifact", "actions/deploy-pages")


def _config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def _workflow() -> dict:
    assert len(WORKFLOWS) == 1, f"se espera un flujo de trabajo en .github/workflows: {WORKFLOWS}"
    return yaml.safe_load(WORKFLOWS[0].read_text(encoding="utf-8"))


def _triggers(workflow: dict) -> dict:
    # YAML 1.1 reads the key `on` as the boolean True.
    return workflow.get("on", workflow.get(True))


def _jobs_by_role(workflow: dict) -> tuple[dict, dict]:
    """(the job that runs .ci/run, the job that deploys to Pages)."""
    jobs = workflow["jobs"]
    test = [j for j in jobs.values() if any(".ci/run" in s.get("run", "") for s in j["steps"])]
    deploy = [j for j in jobs.values()
              if any(s.get("uses", "").startswith("actions/deploy-pages@") for s in j["steps"])]
    assert len(test) == 1 and len(deploy) == 1, "un trabajo de pruebas (.ci/run) y uno de publicación"
    return test[0], deploy[0]


def test_actionlint_accepts_the_workflows():
    actionlint = Path(sys.executable).with_name("actionlint")
    assert actionlint.exists(), "falta actionlint (requirements.txt): make test lo instala"
    assert WORKFLOWS, "no hay flujos de trabajo en .github/workflows"
    result = subprocess.run([str(actionlint), "-no-color", *map(str, WORKFLOWS)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ci_job_runs_ci_run_on_pull_requests_and_pushes_with_the_readme_python_and_pip_cache():
    workflow = _workflow()
    assert {"push", "pull_request"} <= set(_triggers(workflow))
    test, _ = _jobs_by_role(workflow)
    setup = [s for s in test["steps"] if s.get("uses", "").startswith("actions/setup-python@")]
    assert len(setup) == 1 and setup[0]["with"]["cache"] == "pip"
    python = str(setup[0]["with"]["python-version"])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"Python {python}" in readme, f"el README no dice la versión de Python del CI ({python})"


def test_deploy_job_publishes_the_make_book_output_with_the_documented_permissions():
    workflow = _workflow()
    triggers = _triggers(workflow)
    test, deploy = _jobs_by_role(workflow)
    name_of_test = next(k for k, v in workflow["jobs"].items() if v is test)
    needs = [deploy["needs"]] if isinstance(deploy["needs"], str) else deploy["needs"]
    # The tests and, beside them, every chapter on Colab's stack (the colab job).
    assert set(needs) == {name_of_test, "colab"}, "solo se publica un libro que pasa las pruebas"
    assert "main" in deploy["if"] and "pull_request" in deploy["if"]
    assert triggers["push"] is None or "main" in triggers["push"].get("branches", ["main"])
    assert deploy["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    assert deploy["concurrency"] == {"group": "pages", "cancel-in-progress": False}
    assert deploy["environment"]["name"] == "github-pages"
    assert "steps.deployment.outputs.page_url" in deploy["environment"]["url"]

    steps = deploy["steps"]
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert all(action in uses for action in OFFICIAL_PAGES_ACTIONS)
    build = next(i for i, s in enumerate(steps) if s.get("run", "").strip() == "make book")
    upload = uses.index("actions/upload-pages-artifact")
    assert build < upload < uses.index("actions/deploy-pages")
    between = steps[build + 1:upload]
    assert not any("run" in s for s in between), "nada debe tocar el libro entre build y upload"
    assert steps[upload]["with"]["path"] == "_build/html"
    assert steps[uses.index("actions/deploy-pages")]["id"] == "deployment"


def test_make_book_writes_where_the_deploy_step_uploads():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^book:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE).group(1)
    # `jupyter-book build .` writes to ./_build/html unless told otherwise.
    assert "jupyter-book build . " in recipe and "--path-output" not in recipe
    assert "_build/html/index.html" in recipe
    upload = next(s for s in _jobs_by_role(_workflow())[1]["steps"]
                  if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/html"


def test_html_baseurl_is_the_pages_site_of_the_configured_repository():
    tool = notebook_tool()
    assert _config()["sphinx"]["config"]["html_baseurl"] == tool.pages_url()
    assert tool.pages_url() == "https://" + tool.owner_repo().split("/")[0].lower() + ".github.io/" + \
        tool.owner_repo().split("/")[1] + "/"
    assert tool.sync(chapter_notebooks(), check_only=True) == 0, "make sync cambiaría algo"


def test_a_fork_that_changes_the_url_and_runs_sync_gets_its_own_site_and_links(tmp_path, monkeypatch):
    tool = notebook_tool()
    fork = tmp_path / "_config.yml"
    original, url = (ROOT / "_config.yml").read_text(encoding="utf-8"), tool.repo_url()
    fork.write_text(original.replace(url, "https://github.com/Lectora/mi-copia"), encoding="utf-8")
    monkeypatch.setattr(tool, "CONFIG", fork)
    synced = tool.synced_config(fork.read_text(encoding="utf-8"))
    assert yaml.safe_load(synced)["sphinx"]["config"]["html_baseurl"] == "https://lectora.github.io/mi-copia/"
    nb = chapter_notebooks()[0]
    assert "/github/Lectora/mi-copia/blob/main/chapters/" in tool.colab_badge(nb)
    assert "git+https://github.com/Lectora/mi-copia.git@main" in tool.setup_source()
    # A user site (OWNER.github.io) is served from the root of its host.
    fork.write_text(original.replace(url, "https://github.com/Lectora/lectora.github.io"), encoding="utf-8")
    assert tool.pages_url() == "https://lectora.github.io/"


def test_no_source_links_to_colab_binder_or_an_install_of_another_repository():
    owner_repo = notebook_tool().owner_repo()
    patterns = [r"colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/",
                r"mybinder\.org/v2/gh/([\w.-]+/[\w.-]+)/",
                r"git\+https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git|@|\")"]
    sources = [*chapter_notebooks(), *(ROOT / "chapters").glob("*.md"), ROOT / "README.md"]
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for pattern in patterns:
            for found in re.findall(pattern, text):
                assert found == owner_repo, f"{path.name} enlaza otro repositorio: {found}"


def test_readme_gives_the_site_the_ci_badge_and_how_a_fork_publishes():
    tool = notebook_tool()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert tool.pages_url() in readme, "el README no da la dirección del libro publicado"
    badge = f"{tool.repo_url()}/actions/workflows/{WORKFLOWS[0].name}/badge.svg"
    assert badge in readme, "falta la insignia del CI en el README"
    fork = readme[readme.index("copia (*fork*)"):]
    assert "_config.yml" in fork and "make sync" in fork and "Pages" in fork


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.canonical: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link" and attrs.get("rel") == "canonical":
            self.canonical.append(attrs["href"])
        elif tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


@pytest.mark.book
@pytest.mark.parametrize("entry", [e for e in toc_files() if e.split("/")[-1][:2].isdigit()])
def test_built_chapter_links_point_to_the_configured_repository_and_site(built_book, entry):
    tool = notebook_tool()
    repo, owner_repo, branch = tool.repo_url(), tool.owner_repo(), tool.branch()
    parser = _Links()
    parser.feed((built_book / f"{entry}.html").read_text(encoding="utf-8"))
    assert parser.canonical == [f"{tool.pages_url()}{entry}.html"]

    launch = [h for h in parser.hrefs
              if h.startswith(("https://colab.research.google.com/github/", "https://mybinder.org/v2/gh/",
                               "https://github.com/"))]
    assert launch, f"{entry}: sin enlaces de Colab, Binder ni GitHub"
    for href in launch:
        assert owner_repo in href, f"{entry}: enlace a otro repositorio: {href}"
    assert f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/{entry}.ipynb" in launch
    assert any(h.startswith(f"https://mybinder.org/v2/gh/{owner_repo}/{branch}") for h in launch)
    assert f"{repo}/edit/{branch}/{entry}.ipynb" in launch, f"{entry}: falta «editar esta página»"

    downloads = [h for h in parser.hrefs if h.endswith(f"{entry.split('/')[-1]}.ipynb")
                 and not h.startswith("http")]
    assert downloads, f"{entry}: falta el botón para descargar el .ipynb"
    for href in downloads:
        assert (built_book / entry).parent.joinpath(href).resolve().is_file(), f"{entry}: {href} no existe"


@pytest.mark.book
def test_sitemap_lists_every_page_of_the_book_at_the_configured_site(built_book):
    import xml.etree.ElementTree as ET

    site = notebook_tool().pages_url()
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    urls = [loc.text for loc in ET.parse(built_book / "sitemap.xml").getroot().findall("s:url/s:loc", ns)]
    assert urls and all(u.startswith(site) for u in urls), urls[:3]
    assert {f"{site}{entry}.html" for entry in toc_files()} <= set(urls)
