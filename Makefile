# Two entry points for a fresh machine (see README.md):
#   make demo   set up, then run the main job on a default that needs no hardware
#   make test   set up, then run the whole test suite
# Set-up installs the cross toolchain and QEMU with apt when run as root and they are
# missing, and the Python package with its test extras into .venv.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# Renode (the STM32 boards' emulator) is not packaged in Debian: where none is installed and
# ../shared carries the portable build, `make setup` unpacks it into build/renode-portable,
# where tinyhost looks last (after --renode, $$TINYHOST_RENODE and PATH).
RENODE_TARBALL := ../shared/tools/renode/renode-1.15.1-portable.tar.gz
RENODE_DIR     := build/renode-portable
APT_PACKAGES := gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm cmake ninja-build gcc make chromium ccache clang

.PHONY: setup system-packages renode demo test lint clean

setup: system-packages renode $(VENV)/.installed

renode:
	@if [ -z "$$TINYHOST_RENODE" ] && ! command -v renode >/dev/null 2>&1 \
	    && [ ! -x $(RENODE_DIR)/renode ] && [ -f $(RENODE_TARBALL) ]; then \
	  echo "unpacking Renode into $(RENODE_DIR)"; \
	  mkdir -p build && tar -xzf $(RENODE_TARBALL) -C build; \
	fi

system-packages:
	@missing=""; \
	for tool in arm-none-eabi-gcc qemu-system-arm cmake gcc make chromium ccache clang; do \
	  command -v $$tool >/dev/null 2>&1 || missing="$$missing $$tool"; \
	done; \
	if [ -f /usr/lib/arm-none-eabi/newlib/libc.a ] || [ -d /usr/lib/arm-none-eabi/lib ]; then :; else missing="$$missing newlib"; fi; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing with apt:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES); \
	  else \
	    echo "missing:$$missing -- run as root or: sudo apt-get install $(APT_PACKAGES)"; exit 1; \
	  fi; \
	fi

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@touch $@

demo: setup
	$(VENV)/bin/tinyhost demo

# Two pytest-xdist workers (CI has two cores), one test file each at a time: a file's
# module-scoped builds and QEMU/Renode sessions stay in one process (ARCHITECTURE.md §7).
test: setup
	$(PY) -m pytest -q -n 2 --dist loadfile

lint: setup
	$(VENV)/bin/ruff check host tests bench

clean:
	rm -rf $(VENV) build .pytest_cache
