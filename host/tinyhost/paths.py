"""Where tinyhost's C sources (boards/, firmware/, kernels_c/, CMakeLists.txt) are.

The Python package builds firmware from those trees. In a checkout (editable install or
PYTHONPATH) they sit beside `host/`; an installed copy of the package finds them through the
explicit setting TINYHOST_ROOT, which must name a tinyhost checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

from tinyhost.errors import DeployError

ROOT_ENV = "TINYHOST_ROOT"
_MARKERS = ("CMakeLists.txt", "kernels_c", "firmware", "boards")


def _is_source_tree(path: Path) -> bool:
    return all((path / m).exists() for m in _MARKERS)


def repo_root() -> Path:
    """The tinyhost source tree: $TINYHOST_ROOT, else the checkout this package lives in."""
    setting = os.environ.get(ROOT_ENV)
    if setting:
        root = Path(setting).expanduser().resolve()
        if not _is_source_tree(root):
            raise DeployError(
                f"{ROOT_ENV}={setting}: not a tinyhost checkout (needs {', '.join(_MARKERS)})"
            )
        return root
    checkout = Path(__file__).resolve().parents[2]  # host/tinyhost/paths.py -> checkout
    if _is_source_tree(checkout):
        return checkout
    raise DeployError(
        f"cannot find tinyhost's C sources beside the installed package ({checkout}): set "
        f"{ROOT_ENV} to a tinyhost checkout (git clone ... && export {ROOT_ENV}=$PWD/tinyhost)"
    )
