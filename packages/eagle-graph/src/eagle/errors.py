"""eagle.errors: the exceptions and warnings every eagle package raises and gives.

:class:`EagleError` is the base of every exception eagle raises, and :class:`EagleWarning` of
every warning it gives (both are in ``eagle`` too).  Each exception is also the builtin that
fits, under that builtin's name: ``eagle.errors.ValueError`` is an ``EagleError`` and a
``ValueError``, so both ``except ValueError`` and ``except eagle.EagleError`` catch it, and
``type(err).__name__`` reads ``"ValueError"``.  (A star import of this module would shadow the
builtins: import the module, or the names you mean.)

>>> import eagle.errors
>>> try:
...     eagle.Graph().build()
... except eagle.EagleError as err:
...     print(type(err) is eagle.errors.ValueError, isinstance(err, ValueError))
True True
"""

from eagle._errors import EagleAssertionError as AssertionError
from eagle._errors import EagleAttributeError as AttributeError
from eagle._errors import EagleError as EagleError
from eagle._errors import EagleImportError as ImportError
from eagle._errors import EagleIndexError as IndexError
from eagle._errors import EagleKeyError as KeyError
from eagle._errors import EagleMemoryError as MemoryError
from eagle._errors import EagleNameError as NameError
from eagle._errors import EagleRuntimeError as RuntimeError
from eagle._errors import EagleSyntaxError as SyntaxError
from eagle._errors import EagleTypeError as TypeError
from eagle._errors import EagleValueError as ValueError
from eagle._errors import EagleWarning as EagleWarning

__all__ = [
    "AssertionError", "AttributeError", "EagleError", "EagleWarning", "ImportError", "IndexError",
    "KeyError", "MemoryError", "NameError", "RuntimeError", "SyntaxError", "TypeError", "ValueError",
]
