# Las dos órdenes del README son `make book` y `make test`; el resto son
# herramientas para quien mantiene el libro.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.instalado
# PyTorch's CPU kernels (and MKL's and oneDNN's) pinned on x86-64, the same on Intel and AMD, see
# dldna/cpu.py: the stored outputs were computed so, on any x86 processor.
export ATEN_CPU_CAPABILITY := avx2
export MKL_CBWR := COMPATIBLE
export ONEDNN_MAX_CPU_ISA := AVX2
# The package is imported from this checkout (also from a git worktree of it,
# whose .venv may be shared with the main checkout's editable install).
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: book test notebooks sync figures lint clean bench colab colab-env

# Colab's own stack (requirements-colab.txt): ipywidgets 7.7, IPython 7.34, torch 2.11...
COLAB_VENV  := .venv-colab
COLAB_STAMP := $(COLAB_VENV)/.instalado

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Se necesita Python 3.10 o superior; tienes " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -e .
	@touch $@

## Construye el libro en _build/html (los cuadernos ya guardan sus salidas).
book: $(STAMP)
	$(BIN)/jupyter-book build . --warningiserror --keep-going
	@echo "Libro construido: file://$(CURDIR)/_build/html/index.html"

## Ejecuta todas las pruebas: unitarias, nbval sobre cada cuaderno, ruff,
## construcción del libro y pruebas en un navegador sin interfaz, también de
## los exploradores en un Jupyter real (instala Chromium y ChromeDriver si
## faltan: scripts/install-chromium.sh, y crea el entorno de Colab).
# pytest exits 5 when it collected no test: a failure too, said plainly.
test: $(STAMP) $(COLAB_STAMP)
	@bash scripts/install-chromium.sh
	$(BIN)/python -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest no encontró ninguna prueba: revisa testpaths en pyproject.toml." >&2; fi; \
	exit $$status

$(COLAB_STAMP): requirements-colab.txt | $(STAMP)
	$(BIN)/python tools/colab.py env --venv $(COLAB_VENV)

## Crea el entorno de Colab (.venv-colab) con las versiones que publica Colab.
colab-env: $(COLAB_STAMP)

## Cada capítulo como lo ejecuta Colab (todos, o NB=chapters/xx.ipynb), con las
## versiones de Colab: la instalación solo añade dldna, ninguna salida trae un
## error y ninguna comprobación impresa cambia; lista las líneas de salida que
## difieren de las guardadas (sin los tiempos). DEVICE=cuda lo hace en una GPU.
DEVICE ?= cpu
colab: $(STAMP) $(COLAB_STAMP)
	$(BIN)/python tools/colab.py check-install --venv $(COLAB_VENV)
	$(BIN)/python tools/colab.py run --venv $(COLAB_VENV) --device $(DEVICE) $(NB)

## Vuelve a ejecutar los cuadernos (todos, o NB=chapters/xx.ipynb) y guarda
## sus salidas y el estado de sus widgets.
notebooks: $(STAMP)
	$(BIN)/python tools/notebooks.py execute $(NB)

## Regenera la insignia de Colab y la celda de preparación de cada cuaderno.
sync: $(STAMP)
	$(BIN)/python tools/notebooks.py sync

## Entrena cada tarea de dldna.tasks con su receta: tabla de tarea,
## dispositivo, pasos, tiempo y exactitud sobre datos nuevos (en GPU si la hay).
bench: $(STAMP)
	$(BIN)/python tools/bench.py

## Vuelve a dibujar los diagramas (figures/*.py escribe dldna/diagrams/*.svg).
figures: $(STAMP)
	cd figures && for f in [!c]*.py; do ../$(BIN)/python $$f || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf _build
