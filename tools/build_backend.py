"""The build backend: setuptools', with editable installs made as a path entry.

setuptools makes an editable install of a package whose folders are mapped (our
``graphdb.storage`` is the top-level ``storage/``) with an import finder that Python asks only
after its own path search; run from the clone's parent directory, that search finds the clone's
folder, named ``graphdb`` like the package, takes it for a namespace package, and
``import graphdb`` gives an empty module. As a path entry (setuptools' ``compat`` mode) the
checkout's ``graphdb/`` package is found by the path search itself, and a regular package wins
over a namespace folder; ``graphdb/_layout.py`` maps the inner layers from the same checkout.
Wheels and source distributions are built by setuptools unchanged.
"""

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every hook as setuptools has it)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    settings = dict(config_settings or {})
    settings.setdefault("editable_mode", "compat")
    return _setuptools.build_editable(wheel_directory, settings, metadata_directory)
