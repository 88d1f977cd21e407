"""Where policyc's packaged data files live."""

from pathlib import Path


def schemas_dir() -> Path:
    """The ``schemas`` directory: ``policyc/schemas`` in an installed wheel (pyproject
    force-includes it there), else ``<repo>/schemas`` in a source checkout or editable install."""
    package = Path(__file__).resolve().parent
    installed = package / "schemas"
    return installed if installed.is_dir() else package.parent / "schemas"
