"""ssfs: semi-supervised and ensemble feature selection for high-dimensional matrices."""

from .constraints import Constraints
from .errors import ConfigError, InputError, MethodError, SSFSError, SupervisionError
from .methods._shared.class_stats import ClassStatistics, class_statistics
from .registry import SelectionResult, get_method, list_methods, register
from .runner import run_method

__version__ = "0.1.0"


#: the scikit-learn door's names (loaded on first use: scikit-learn takes about 0.5 s)
_SKLEARN_NAMES = ("SemiSupervisedSelector", "labeled_scorer", "LabeledOnly")


def __getattr__(name):  # lazy: the selector imports scikit-learn, tl and pl anndata and matplotlib
    import importlib

    if name in _SKLEARN_NAMES:
        return getattr(importlib.import_module(".selector", __name__), name)
    if name in ("tl", "pl"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'ssfs' has no attribute {name!r}")

__all__ = [
    "ClassStatistics",
    "class_statistics",
    "Constraints",
    "ConfigError",
    "InputError",
    "MethodError",
    "SSFSError",
    "SupervisionError",
    "SelectionResult",
    "SemiSupervisedSelector",
    "LabeledOnly",
    "labeled_scorer",
    "get_method",
    "list_methods",
    "register",
    "run_method",
    "tl",
    "pl",
    "__version__",
]
