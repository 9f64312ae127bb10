"""The executor: physical plans run over event tables by one executor per operator (:mod:`.executor`)."""

from .executor import EXECUTORS, execute
from .state import Profile
from .tables import TableContext

__all__ = ["EXECUTORS", "Profile", "TableContext", "execute"]
