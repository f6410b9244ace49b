"""ssfs: semi-supervised and ensemble feature selection for high-dimensional matrices."""

from .constraints import Constraints
from .errors import ConfigError, InputError, MethodError, SSFSError, SupervisionError
from .methods._shared.class_stats import ClassStatistics, class_statistics
from .registry import SelectionResult, get_method, list_methods, register
from .runner import run_method

__version__ = "0.1.0"


def __getattr__(name):  # lazy: the selector imports scikit-learn, tl the runner's AnnData helpers
    if name == "SemiSupervisedSelector":
        from .selector import SemiSupervisedSelector  # lazy: scikit-learn (about 0.5 s)

        return SemiSupervisedSelector
    if name == "tl":
        import importlib

        return importlib.import_module(".tl", __name__)
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
    "get_method",
    "list_methods",
    "register",
    "run_method",
    "tl",
    "__version__",
]
