"""The tables of strings that stand for imports: each package's lazy names (`core.lazy.lazy_names`)
and each registry row's factory (`"module:attr"`) name something that is there, and reading a
package imports none of the modules its table names until a name is read."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

from solverspace.core.lazy import resolve
from solverspace.registry.backends import REGISTRY

LAZY_PACKAGES = ["solverspace.io.t1", "solverspace.integrations.optuna", "solverspace.integrations.kernel_tuner"]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_name_of_a_lazy_table_is_its_modules_own(package):
    """Each name reads as the attribute of the module the table gives, which exports it (`__all__`)."""
    if package.endswith("optuna"):
        pytest.importorskip("optuna")
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        owners = [m for m, names in vars(module)["_STRUCTURE"].items() if name in names]
        assert len(owners) == 1, name
        owner = importlib.import_module(f"{package}.{owners[0]}")
        assert value is getattr(owner, name)
        assert name in getattr(owner, "__all__", [name]), (package, name)
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        getattr(module, "nothing_here")


def test_importing_a_lazy_package_imports_none_of_its_modules():
    program = ("import sys, solverspace.integrations.kernel_tuner as kt, solverspace.io.t1\n"
               "print(sorted(m for m in sys.modules if m.startswith(('solverspace.integrations.kernel_tuner.', "
               "'solverspace.io.t1.'))))\n"
               "kt.cache_key\n"
               "print(sorted(m for m in sys.modules if m.startswith('solverspace.integrations.kernel_tuner.')))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", "['solverspace.integrations.kernel_tuner.cache']"]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registry_row_names_a_factory_that_is_there(name):
    factory = REGISTRY[name].factory
    assert isinstance(factory, str) and ":" in factory
    assert callable(resolve(factory))


def test_resolve_names_what_is_missing():
    with pytest.raises(ModuleNotFoundError):
        resolve("solverspace.no_such_module:f")
    with pytest.raises(AttributeError):
        resolve("solverspace.registry.factories:no_such_factory")
