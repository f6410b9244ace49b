"""ssfs: semi-supervised and ensemble feature selection for high-dimensional matrices."""

from .constraints import Constraints
from .errors import ConfigError, InputError, MethodError, SSFSError, SupervisionError
from .registry import SelectionResult, get_method, list_methods, register
from .runner import run_method

__version__ = "0.1.0"

__all__ = [
    "Constraints",
    "ConfigError",
    "InputError",
    "MethodError",
    "SSFSError",
    "SupervisionError",
    "SelectionResult",
    "get_method",
    "list_methods",
    "register",
    "run_method",
    "__version__",
]
